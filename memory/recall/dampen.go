package recall

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/kioku-bot/kioku/memory"
)

// Dampening switches the post-fusion stages of Rank. Each multiplies a candidate's blended
// relevance by a factor at most 1, after the legs are fused and the boosts applied and
// before the tie-breakers, MinScore and Limit: it reorders matches and lowers scores, it
// never adds a candidate.
type Dampening struct {
	// Gravity dampens semantic-only matches: candidates the vector leg found that share no
	// word with the query. An embedding model finds paraphrases, but it also pulls in
	// memories that are merely about the same kind of thing ("pizza" for a question about
	// sushi); a match that also shares a word is far more often the one asked about.
	Gravity bool
	// Resolution dampens, for "when" and "what did we decide" questions, the candidates
	// that cannot answer them: neither a decision (type decision) nor stating a date or
	// time.
	Resolution bool
	// Hub dampens candidates linked only to the most-mentioned entities of the knowledge
	// graph (Candidate.EntityMentions): a memory that merely mentions the server's main
	// topic matches many questions without answering any.
	Hub bool
}

// DefaultDampening is what the product runs: every stage off until it is shown to help
// on more than one dev set. Resolution lifted only dev-conv-ja (recall@10 +0.007, the
// others unchanged); gravity needs an embedding model, which the offline eval does not
// have, so it is unmeasured; hub, with Candidate.EntityMentions from the knowledge graph,
// lifted only dev-conv-ja (recall@10 +0.007, MRR −0.004). docs/recall.md has the numbers.
var DefaultDampening = Dampening{}

// Dampening factors and thresholds (docs/recall.md has the measurements).
const (
	// gravityFactor scales a semantic-only match without a shared word.
	gravityFactor = 0.5
	// resolutionFactor scales a candidate that neither is a decision nor states a date,
	// for a question asking when or what was decided.
	resolutionFactor = 0.7
	// hubFactor scales a candidate linked only to hub entities.
	hubFactor = 0.7
	// hubMinMentions is the fewest memories an entity must be mentioned in to be a hub, so
	// a young graph, where every entity is rare, has none.
	hubMinMentions = 10
	// hubShare makes an entity a hub when it is mentioned in at least this share of the
	// mentions of the most-mentioned entity among the candidates.
	hubShare = 0.5
)

// gravity returns the factor for a candidate: gravityFactor when the vector leg ran and
// found it, the keyword leg did not, and its text shares no word with the query; else 1.
func gravity(c *Candidate, plan *Plan, vecOn bool) float64 {
	if !vecOn || c.Vector <= 0 || c.Keyword > 0 || overlapsQuery(plan, c.Content) {
		return 1
	}
	return gravityFactor
}

// resolution returns the factor for a candidate: resolutionFactor when the question asks
// when or what was decided and the candidate is neither a decision nor states a date or
// time; else 1.
func resolution(c *Candidate, plan *Plan, decide bool) float64 {
	if !plan.When && !decide {
		return 1
	}
	if c.Type == memory.TypeDecision || hasDateOrTime(c.Content) {
		return 1
	}
	return resolutionFactor
}

// HubFactors returns the hub factor of each candidate given, per candidate, the mention
// counts of the entities it is linked to (how many memories mention each). An entity is a
// hub when its count is at least hubMinMentions and at least hubShare × the largest count
// among all the candidates' entities; a candidate linked to at least one entity, all of
// them hubs, gets hubFactor, any other 1. Candidates without entities are left alone: the
// graph knowing nothing of a memory says nothing against it.
func HubFactors(mentions [][]int) []float64 {
	most := 0
	for _, counts := range mentions {
		for _, n := range counts {
			most = max(most, n)
		}
	}
	threshold := max(float64(hubMinMentions), hubShare*float64(most))
	out := make([]float64, len(mentions))
	for i, counts := range mentions {
		out[i] = 1
		if len(counts) == 0 {
			continue
		}
		allHubs := true
		for _, n := range counts {
			if float64(n) < threshold {
				allHubs = false
				break
			}
		}
		if allHubs {
			out[i] = hubFactor
		}
	}
	return out
}

// asksDecision reports whether the query asks what was decided ("what did we decide",
// "which one did they pick", 何に決めた).
func asksDecision(plan *Plan) bool {
	for _, t := range plan.Terms {
		if decisionWords[t] {
			return true
		}
	}
	for _, run := range plan.CJK {
		for _, cue := range cjkDecisionCues {
			if strings.Contains(run, cue) {
				return true
			}
		}
	}
	return false
}

var decisionWords = toSet(`decide decided decides deciding decision decisions agree agreed agreement settle settled
choose chose chosen pick picked vote voted final finalized finalised`)

var cjkDecisionCues = []string{"決め", "決定", "決まっ", "決まり", "決議"}

// overlapsQuery reports whether text shares a word with the query: a query term equal to
// one of its words or sharing a stem-sized prefix with it ("hikes" and "hiking"), or one of
// the query's CJK bigrams inside it.
func overlapsQuery(plan *Plan, text string) bool {
	s := strings.ToLower(text)
	if !isASCIIString(s) {
		s = strings.ToLower(norm.NFKC.String(s))
	}
	for _, g := range plan.CJKGrams(2) {
		if strings.Contains(s, g) {
			return true
		}
	}
	if len(plan.Terms) == 0 {
		return false
	}
	for _, w := range splitWords(s) {
		for _, t := range plan.Terms {
			if sameStem(t, w) {
				return true
			}
		}
	}
	return false
}

// sameStem is a small stand-in for the index's Porter stemmer: a and b match when equal, or
// when they share a prefix of at least three characters that leaves at most three of the
// shorter word ("hike"/"hiking", "deploy"/"deployment", but not "cat"/"car").
func sameStem(a, b string) bool {
	if a == b {
		return true
	}
	na, nb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if min(na, nb) < 3 {
		return false
	}
	common := 0
	for ra, rb := []rune(a), []rune(b); common < len(ra) && common < len(rb) && ra[common] == rb[common]; common++ {
	}
	return common >= 3 && common >= min(na, nb)-3
}

// dampener is one query's Dampening made ready for its candidates.
type dampener struct {
	d      Dampening
	decide bool
	hub    []float64
}

func (d Dampening) prepare(cands []Candidate, plan *Plan) dampener {
	dp := dampener{d: d, decide: d.Resolution && asksDecision(plan)}
	if d.Hub {
		mentions := make([][]int, len(cands))
		for i := range cands {
			mentions[i] = cands[i].EntityMentions
		}
		dp.hub = HubFactors(mentions)
	}
	return dp
}

// factor is the product of the enabled stages' factors for candidate i.
func (dp *dampener) factor(i int, c *Candidate, plan *Plan, vecOn bool) float64 {
	f := 1.0
	if dp.d.Gravity {
		f *= gravity(c, plan, vecOn)
	}
	if dp.d.Resolution {
		f *= resolution(c, plan, dp.decide)
	}
	if dp.hub != nil {
		f *= dp.hub[i]
	}
	return f
}
