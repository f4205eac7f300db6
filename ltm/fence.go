package ltm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Forget-me fences in-flight pipeline work (SPEC §2, issue "forget-me loses a race"): a job
// leased before a member's forget-me may still hold their words in memory (a checkpointed
// extraction, a decision in progress). Forget-me records when the member was forgotten, and
// the job's one write transaction drops every proposal that involves a member forgotten at
// or after the job started, so nothing about them is written back.

// ForgetFenceKeep is how long a forget fence is kept: far longer than any pipeline job
// runs (leases are minutes, a postponed job restarts without its checkpoint), short enough
// that the member's id does not linger. Retention removes older fences.
const ForgetFenceKeep = 24 * time.Hour

// FenceForgotten records that userID was forgotten now (by the store clock), so that pipeline
// jobs that started before now write nothing about them. Forget-me calls it; calling it again
// moves the fence forward.
func (s *Memories) FenceForgotten(ctx context.Context, userID string) error {
	if userID == "" {
		return fmt.Errorf("couldn't fence forgotten member: a user id is required")
	}
	return s.db.withWriteTx(ctx, func(tx *txn) error { return s.db.fenceForgottenTx(ctx, tx, userID) })
}

// fenceForgottenTx is FenceForgotten inside a caller's transaction (forget-me's own), so the
// fence and the deletion commit together.
func (s *db) fenceForgottenTx(ctx context.Context, tx *txn, userID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO forget_fences (user_id, forgotten_at) VALUES (?, ?)
		ON CONFLICT (user_id) DO UPDATE SET forgotten_at = `+s.dialect.Greatest+`(forget_fences.forgotten_at, excluded.forgotten_at)`,
		userID, s.nowMillis())
	if err != nil {
		return fmt.Errorf("couldn't fence forgotten member %s: %w", userID, err)
	}
	return nil
}

// fencedSinceTx returns which of userIDs were forgotten at or after since.
func fencedSinceTx(ctx context.Context, tx *txn, userIDs []string, since time.Time) (map[string]bool, error) {
	if len(userIDs) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(userIDs)+1)
	args = append(args, millis(since))
	for _, id := range userIDs {
		args = append(args, id)
	}
	rows, err := tx.QueryContext(ctx, `SELECT user_id FROM forget_fences WHERE forgotten_at >= ? AND user_id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(userIDs)), ",")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("couldn't read forget-me fences: %w", err)
	}
	defer rows.Close()
	out := make(map[string]bool)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("couldn't read forget-me fence: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// NoteFenced is the outcome note of a proposal dropped by a forget-me fence; no history row
// is written for it.
const NoteFenced = "fenced: a member it involves was forgotten after the job started"

// batchFencesTx returns the members involved in b's proposals who were forgotten at or
// after b.StartedAt.
func batchFencesTx(ctx context.Context, tx *txn, b memory.PipelineBatch) (map[string]bool, error) {
	if b.StartedAt.IsZero() {
		return nil, nil
	}
	seen := make(map[string]bool)
	var ids []string
	for _, p := range b.Proposals {
		for _, id := range involved(p) {
			if id != "" && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return fencedSinceTx(ctx, tx, ids, b.StartedAt)
}

// involved lists the members a proposal is about or learned from.
func involved(p memory.Proposal) []string {
	ids := []string{p.Owner.UserID, p.Memory.SubjectID, p.Memory.Provenance.AuthorID}
	for _, e := range p.Evidence {
		ids = append(ids, e.AuthorID)
	}
	return ids
}

func involvesAny(p memory.Proposal, users map[string]bool) bool {
	if len(users) == 0 {
		return false
	}
	for _, id := range involved(p) {
		if users[id] {
			return true
		}
	}
	return false
}

// ForgottenSince returns the forget-me fences recorded at or after since, by any process
// on this database. A process that keeps members' words in memory outside the store (the
// short-term memory of the shards it runs) reads it to forget what another process was told
// to forget. Fences are kept ForgetFenceKeep, far longer than such a process waits between
// reads.
func (s *Memories) ForgottenSince(ctx context.Context, since time.Time) ([]memory.ForgetFence, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT user_id, forgotten_at FROM forget_fences WHERE forgotten_at >= ?`, millis(since))
	if err != nil {
		return nil, fmt.Errorf("couldn't read forget-me fences: %w", err)
	}
	defer rows.Close()
	var out []memory.ForgetFence
	for rows.Next() {
		var (
			f  memory.ForgetFence
			at int64
		)
		if err := rows.Scan(&f.UserID, &at); err != nil {
			return nil, fmt.Errorf("couldn't read forget-me fence: %w", err)
		}
		f.ForgottenAt = time.UnixMilli(at).UTC()
		out = append(out, f)
	}
	return out, rows.Err()
}
