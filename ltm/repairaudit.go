package ltm

import (
	"context"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory/maintenance"
)

// The audit of self-repair: every repair the health findings called for, what it found and
// what it changed, read back by the diagnostics and the maintenance task.

// repairsTable is the audit of self-repair (migration 0008).
const repairsTable = "maintenance_repairs"

// RepairLogRetention is how long the audit keeps a repair: long enough to see a pattern
// over weeks, short enough that a bot observing a broken store every 15 minutes does not
// grow the table without bound.
const RepairLogRetention = 30 * 24 * time.Hour

// RecordRepairs appends repairs to the audit and drops rows older than
// RepairLogRetention, in one transaction. Errors are stored without anything that looks
// like a credential, and cut short.
func (s *Health) RecordRepairs(ctx context.Context, repairs []maintenance.Repair) error {
	if len(repairs) == 0 {
		return nil
	}
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		for _, r := range repairs {
			_, err := tx.ExecContext(ctx, `INSERT INTO `+repairsTable+` (run_at, action, outcome, mode, score_before,
				score_after, found, changed, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				millis(r.At), string(r.Action), string(r.Outcome), string(r.Mode), r.ScoreBefore, r.ScoreAfter, r.Found, r.Changed,
				repairErrorText(r))
			if err != nil {
				return fmt.Errorf("couldn't record repair %s: %w", r.Action, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+repairsTable+` WHERE run_at < ?`,
			millis(s.db.Now().Add(-RepairLogRetention))); err != nil {
			return fmt.Errorf("couldn't prune the repair audit: %w", err)
		}
		return nil
	})
}

// repairErrorText is the error stored with a repair: empty when it had none (a job's
// cleaning would call that "job failed"), else cleaned as a job's error is.
func repairErrorText(r maintenance.Repair) string {
	if r.Error == "" {
		return ""
	}
	return cleanJobError(r.Error, "")
}

// RepairLog returns the audited repairs since since, oldest first.
func (s *Health) RepairLog(ctx context.Context, since time.Time) ([]maintenance.Repair, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT run_at, action, outcome, mode, score_before, score_after, found,
		changed, error FROM `+repairsTable+` WHERE run_at >= ? ORDER BY id`, millis(since))
	if err != nil {
		return nil, fmt.Errorf("couldn't read the repair audit: %w", err)
	}
	defer rows.Close()
	var out []maintenance.Repair
	for rows.Next() {
		var (
			r  maintenance.Repair
			at int64
		)
		if err := rows.Scan(&at, &r.Action, &r.Outcome, &r.Mode, &r.ScoreBefore, &r.ScoreAfter, &r.Found, &r.Changed, &r.Error); err != nil {
			return nil, fmt.Errorf("couldn't read the repair audit: %w", err)
		}
		r.At = fromMillis(at)
		out = append(out, r)
	}
	return out, rows.Err()
}
