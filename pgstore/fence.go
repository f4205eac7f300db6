package pgstore

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The fences are the service's (ltm fence.go); what stays here is forget-me's fence write
// (forgetme.go), the graph's fence check (graph.go) and the fences' keep (changes.go,
// retention.go), which go when those fold.

// Forget-me fences in-flight pipeline work (SPEC §2, issue "forget-me loses a race"): a job
// leased before a member's forget-me may still hold their words in memory (a checkpointed
// extraction, a decision in progress). Forget-me records when the member was forgotten, and
// the job's one write transaction drops every proposal that involves a member forgotten at
// or after the job started, so nothing about them is written back.

// forgetFenceKeep is how long a forget fence is kept: far longer than any pipeline job
// runs (leases are minutes, a postponed job restarts without its checkpoint), short enough
// that the member's id does not linger. Retention removes older fences.
const forgetFenceKeep = 24 * time.Hour

// fenceForgottenTx is FenceForgotten inside a caller's transaction (forget-me's own), so the
// fence and the deletion commit together.
func (s *db) fenceForgottenTx(ctx context.Context, tx *txn, userID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO forget_fences (user_id, forgotten_at) VALUES (?, ?)
		ON CONFLICT (user_id) DO UPDATE SET forgotten_at = greatest(forget_fences.forgotten_at, excluded.forgotten_at)`,
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
