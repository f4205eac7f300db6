package ltm

import "github.com/kioku-bot/kioku/memory"

// The rule for changing server memory through the pipeline.

// NoteNeedsEditor is the note of a server-memory UPDATE or DELETE recorded as review_needed
// because nobody whose messages proposed it may change server memory or wrote the target.
const NoteNeedsEditor = "needs a member with the server-memory permission or the memory's author"

// authoredByEvidence reports whether one of the evidence speakers wrote m.
func authoredByEvidence(m *memory.Memory, evidence []memory.MessageRef) bool {
	if m.Provenance.AuthorID == "" {
		return false
	}
	for _, e := range evidence {
		if e.AuthorID == m.Provenance.AuthorID {
			return true
		}
	}
	return false
}
