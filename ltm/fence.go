package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// forgetFenceKeep is how long a forget fence is kept: far longer than any pipeline job
// runs (leases are minutes, a postponed job restarts without its checkpoint), short enough
// that the member's id does not linger. Retention removes older fences.
const forgetFenceKeep = 24 * time.Hour

// FenceForgotten records that userID was forgotten now (store clock), so pipeline work that
// started earlier writes nothing about them. A second call moves the fence to now.
func (s *Store) FenceForgotten(ctx context.Context, userID string) error {
	return s.withWriteTx(ctx, func(tx *sql.Tx) error { return s.fenceForgottenTx(ctx, tx, userID) })
}

// fenceForgottenTx is FenceForgotten inside a caller's transaction, so forget-me erases and
// fences in one commit.
func (s *Store) fenceForgottenTx(ctx context.Context, tx *sql.Tx, userID string) error {
	if userID == "" {
		return fmt.Errorf("couldn't fence forgotten user: empty user id")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO forget_fences (user_id, forgotten_at) VALUES (?, ?)
		ON CONFLICT (user_id) DO UPDATE SET forgotten_at = excluded.forgotten_at`, userID, s.nowMillis())
	if err != nil {
		return fmt.Errorf("couldn't fence forgotten user %s: %w", userID, err)
	}
	return nil
}
