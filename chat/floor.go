package chat

import "github.com/kioku-bot/kioku/memory"

// RecallFloor is the lowest recall score a memory needs to be put into a reply's prompt
// beside better matches.
//
// Scores are the blended relevance in [0,1) plus tie-breakers of at most 0.01, so a match
// under 0.05 is one whose only shared words are found in most memories (BM25 weighs them
// near 0) or whose cosine is under about 0.07: noise that costs prompt budget and can
// mislead the model. On the dev sets no relevant memory in a top 10 scores under 0.16 and
// no result at all under 0.05 (docs/recall.md), so the floor removes nothing that helps
// there.
//
// The floor applies only when some match clears it. In a small database a word found in
// half the memories or more gets no BM25 weight at all, so every match of a question
// scores under the floor; dropping them all would leave a new server with no recall.
// Pinned memories are always in mind and never dropped by it.
const RecallFloor = 0.05

// aboveFloor returns the results to consider for the prompt: all of them when none clears
// RecallFloor, else those that do and the pinned ones.
func aboveFloor(results []memory.SearchResult) []memory.SearchResult {
	if len(results) == 0 || results[0].Score < RecallFloor {
		return results
	}
	out := make([]memory.SearchResult, 0, len(results))
	for _, r := range results {
		if r.Score >= RecallFloor || r.Memory.Pinned {
			out = append(out, r)
		}
	}
	return out
}
