package ltm

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// What the pipeline records about where a memory came from, and the rule for changing
// server memory through it.

// addEvidenceTx links memory id to the messages it was learned from.
func addEvidenceTx(ctx context.Context, tx *sql.Tx, id int64, evidence []ProposalEvidence) error {
	for _, e := range evidence {
		if e.MessageID == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO memory_evidence (memory_id, message_id, user_id)
			VALUES (?, ?, ?)`, id, e.MessageID, e.UserID); err != nil {
			return fmt.Errorf("couldn't record evidence of memory %d: %w", id, err)
		}
	}
	return nil
}

// NoteNeedsEditor is the note of a server-memory UPDATE or DELETE recorded as review_needed
// because nobody whose messages proposed it may change server memory or wrote the target.
const NoteNeedsEditor = "needs a member with the server-memory permission or the memory's author"

// authoredByEvidence reports whether one of the evidence speakers wrote m.
func authoredByEvidence(m *memory.Memory, evidence []ProposalEvidence) bool {
	if m.Provenance.AuthorID == "" {
		return false
	}
	for _, e := range evidence {
		if e.UserID == m.Provenance.AuthorID {
			return true
		}
	}
	return false
}
