package ltm

import (
	"context"
	"fmt"
)

// The store's side of self-repair (internal/pipeline's maintenance task): the repairs that
// need SQL, what the engine does its own way left to its Upkeep. Each repair returns how
// many items it changed; the audit of them is Health's (repairaudit.go).

// RequeueDead gives up to limit dead jobs, newest first, one more chance: each is queued
// again with fresh attempts. A job is requeued this way once in its life; a dead job whose
// work another job already does is marked as handled and left dead. Jobs another process's
// self-repair is requeuing at the same moment are skipped, not waited for.
func (s *Maintenance) RequeueDead(ctx context.Context, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	requeued := 0
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, kind, dedup_key FROM memory_jobs
			WHERE state = 'dead' AND auto_requeues = 0 ORDER BY id DESC LIMIT ?`+s.db.dialect.SkipLocked, limit)
		if err != nil {
			return fmt.Errorf("couldn't list dead jobs: %w", err)
		}
		type job struct {
			id        int64
			kind, key string
		}
		var dead []job
		for rows.Next() {
			var j job
			if err := rows.Scan(&j.id, &j.kind, &j.key); err != nil {
				rows.Close()
				return fmt.Errorf("couldn't list dead jobs: %w", err)
			}
			dead = append(dead, j)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("couldn't list dead jobs: %w", err)
		}
		now := s.db.nowMillis()
		for _, j := range dead {
			// One queued or running job per kind and key: a dead job whose work is already
			// queued (or was requeued earlier in this batch) stays dead. Checked under
			// Enqueue's lock, so a job enqueued meanwhile by any process is seen.
			if err := s.db.eng.LockKey(ctx, tx, "job:"+j.kind+"\x1f"+j.key); err != nil {
				return err
			}
			var live int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memory_jobs WHERE kind = ? AND dedup_key = ?
				AND state IN ('queued', 'leased')`, j.kind, j.key).Scan(&live); err != nil {
				return fmt.Errorf("couldn't check duplicates of job %d: %w", j.id, err)
			}
			if live > 0 {
				_, err = tx.ExecContext(ctx, `UPDATE memory_jobs SET auto_requeues = auto_requeues + 1 WHERE id = ?`, j.id)
			} else {
				_, err = tx.ExecContext(ctx, `UPDATE memory_jobs SET state = 'queued', attempts = 0, run_after = ?, updated_at = ?,
					auto_requeues = auto_requeues + 1 WHERE id = ?`, now, now, j.id)
				requeued++
			}
			if err != nil {
				return fmt.Errorf("couldn't requeue job %d: %w", j.id, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return requeued, nil
}

// RepairIndexes mends the full-text search (Upkeep.RepairSearch): on SQLite it rebuilds
// the indexes from the rows and returns how many live memories the word index holds
// afterwards; on PostgreSQL it rewrites the search columns that differ from what the store
// writes and returns how many it rewrote.
func (s *Maintenance) RepairIndexes(ctx context.Context) (int, error) {
	return s.db.upkeep.RepairSearch(ctx)
}

// EmbedMissing embeds the live memories that have no vector of the configured model and
// loads every vector into recall's index (the embedding tracker's run, with no cap on
// calls); it returns how many texts were embedded. Without an embedding model it does
// nothing.
func (s *Maintenance) EmbedMissing(ctx context.Context) (int, error) {
	return embedMissing(ctx, s.db)
}

// Compact gives the database's free space back to the file system and returns how many
// bytes it freed (Upkeep.Compact). On SQLite that may rewrite the file while holding the
// write lock, so the caller runs it only when many pages are free
// (maintenance.VacuumWorthwhile); PostgreSQL leaves it to autovacuum and frees nothing here.
func (s *Maintenance) Compact(ctx context.Context) (int64, error) {
	return s.db.upkeep.Compact(ctx)
}
