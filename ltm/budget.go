package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Budgets counts model calls per budget key and UTC day, for the daily model budget that
// chat turns and the background pipeline share (chat.DailyBudget decides the keys, the day
// and the limit). The count is in the database, so it survives a restart and is shared by
// every process on it (`kioku run`, `kioku chat`). Each key has one row, whose count starts
// afresh on a new day; rows hold ids, a date and a count, nothing anyone said.
// See Store.Budgets.
type Budgets struct{ db *db }

// ModelCalls returns the calls counted for key on day (a UTC date, "2006-01-02").
func (s *Budgets) ModelCalls(ctx context.Context, key, day string) (int, error) {
	return modelCalls(ctx, s.db.read, key, day)
}

func modelCalls(ctx context.Context, q querier, key, day string) (int, error) {
	var (
		stored string
		calls  int
	)
	err := q.QueryRowContext(ctx, `SELECT day, calls FROM model_calls WHERE budget_key = ?`, key).Scan(&stored, &calls)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && stored != day) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't read model calls of %s: %w", key, err)
	}
	return calls, nil
}

// AddModelCalls counts n calls for key on day and returns the day's total. With limit > 0
// the calls are counted only when the total stays within limit; ok reports whether they
// were (the total is then the count before them). The check and the count are one write
// transaction under the key's lock, so processes sharing the database cannot both take the
// last call.
func (s *Budgets) AddModelCalls(ctx context.Context, key, day string, n, limit int) (total int, ok bool, err error) {
	err = s.db.withWriteTx(ctx, func(tx *txn) error {
		// Where writers run at once (PostgreSQL), two that read the same count must not
		// both write it plus their own calls: one would be lost, or both take the last.
		if err := s.db.eng.LockKey(ctx, tx, "model_calls:"+key); err != nil {
			return err
		}
		cur, err := modelCalls(ctx, tx, key, day)
		if err != nil {
			return err
		}
		if limit > 0 && cur+n > limit {
			total, ok = cur, false
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO model_calls (budget_key, day, calls) VALUES (?, ?, ?)
			ON CONFLICT (budget_key) DO UPDATE SET day = excluded.day, calls = excluded.calls`, key, day, cur+n); err != nil {
			return fmt.Errorf("couldn't count model calls of %s: %w", key, err)
		}
		total, ok = cur+n, true
		return nil
	})
	return total, ok, err
}
