package pgstore

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// The pipeline's batch (facts.go) completes its job in the transaction that writes its
// decisions; these are the job queue's lease checks it runs there, until the batch writes
// move into the service with the rest of the queue (ltm's jobs.go).

// holdsLease checks inside tx that owner still holds job id.
func holdsLease(ctx context.Context, tx *txn, id int64, owner string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memory_jobs WHERE id = ? AND state = 'leased'
		AND lease_owner = ?`, id, owner).Scan(&n); err != nil {
		return fmt.Errorf("couldn't check lease of job %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("job %d: %w", id, memory.ErrLeaseLost)
	}
	return nil
}

// completeTx marks leased job id done inside tx.
func (s *db) completeTx(ctx context.Context, tx *txn, id int64, owner string) error {
	res, err := tx.ExecContext(ctx, `UPDATE memory_jobs SET state = 'done', payload = `+jobIDsPayload+`, lease_owner = '',
		leased_until = 0, last_error = '', updated_at = ? WHERE id = ? AND state = 'leased' AND lease_owner = ?`,
		s.nowMillis(), id, owner)
	if err != nil {
		return fmt.Errorf("couldn't update job %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("job %d: %w", id, memory.ErrLeaseLost)
	}
	return nil
}
