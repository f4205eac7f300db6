package pgstore

import (
	"context"
	"fmt"
)

// Budgets counts model calls per budget key and UTC day, for the daily model budget that
// chat turns and the background pipeline share, as ltm.Budgets does: one row per key whose
// count starts afresh on a new day, holding ids, a date and a count, nothing anyone said.
// Every process of the bot counts against the same rows.
type Budgets struct{ db *db }

// ModelCalls returns the calls counted for key on day (a UTC date, "2006-01-02").
func (s *Budgets) ModelCalls(ctx context.Context, key, day string) (int, error) {
	var (
		stored string
		calls  int
	)
	err := s.db.read.QueryRowContext(ctx, `SELECT day, calls FROM model_calls WHERE budget_key = ?`, key).Scan(&stored, &calls)
	if errNoRows(err) || (err == nil && stored != day) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't read model calls of %s: %w", key, err)
	}
	return calls, nil
}

// AddModelCalls counts n calls for key on day and returns the day's total. With limit > 0
// the calls are counted only when the total stays within limit; ok reports whether they
// were (the total is then the count before them). The check and the count are one
// statement, an upsert whose update applies only within the limit, so processes counting
// at once neither lose a call nor both take the last one.
func (s *Budgets) AddModelCalls(ctx context.Context, key, day string, n, limit int) (total int, ok bool, err error) {
	err = s.db.withWriteTx(ctx, func(tx *txn) error {
		// A row of an earlier day counts as zero and is replaced by day's count.
		err := tx.QueryRowContext(ctx, `INSERT INTO model_calls (budget_key, day, calls)
			SELECT ?1::text, ?2::text, ?3::integer WHERE ?4::integer <= 0 OR ?3::integer <= ?4::integer
			ON CONFLICT (budget_key) DO UPDATE SET day = excluded.day,
				calls = CASE WHEN model_calls.day = excluded.day THEN model_calls.calls ELSE 0 END + excluded.calls
			WHERE ?4::integer <= 0
				OR CASE WHEN model_calls.day = excluded.day THEN model_calls.calls ELSE 0 END + excluded.calls <= ?4::integer
			RETURNING calls`, key, day, n, limit).Scan(&total)
		if err == nil {
			ok = true
			return nil
		}
		if !errNoRows(err) {
			return fmt.Errorf("couldn't count model calls of %s: %w", key, err)
		}
		// Over the limit: nothing was written. The row, if any, is locked by the upsert
		// until the transaction ends, so the count read is the one the refusal saw.
		var stored string
		err = tx.QueryRowContext(ctx, `SELECT day, calls FROM model_calls WHERE budget_key = ?`, key).Scan(&stored, &total)
		if errNoRows(err) || (err == nil && stored != day) {
			total = 0
			return nil
		}
		if err != nil {
			return fmt.Errorf("couldn't read model calls of %s: %w", key, err)
		}
		return nil
	})
	return total, ok, err
}
