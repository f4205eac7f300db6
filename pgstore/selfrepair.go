package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// The store's side of self-repair (internal/pipeline's maintenance task): the repairs that
// need SQL, and the audit of every repair the health findings called for. Each repair
// returns how many items it changed.

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
			WHERE state = 'dead' AND auto_requeues = 0 ORDER BY id DESC LIMIT ? FOR UPDATE SKIP LOCKED`, limit)
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
		if err := rows.Err(); err != nil {
			return fmt.Errorf("couldn't list dead jobs: %w", err)
		}
		now := s.db.nowMillis()
		for _, j := range dead {
			// One queued or running job per kind and key, as Enqueue keeps it: under the
			// same lock, so a job enqueued meanwhile by any process is seen.
			if err := lockKey(ctx, tx, "job:"+j.kind+"\x1f"+j.key); err != nil {
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

// repairBatch is how many memories one transaction of a reindex reads.
const repairBatch = 1000

// RepairIndexes rewrites the search columns (search_text and search_author, from which
// PostgreSQL generates the word index) of every memory whose columns differ from what the
// store writes, and returns how many memories it rewrote. PostgreSQL keeps the indexes
// themselves in step with the columns; this mends rows written or copied without them.
func (s *Maintenance) RepairIndexes(ctx context.Context) (int, error) {
	_, rewritten, err := s.rewriteSearchColumns(ctx)
	return rewritten, err
}

// Reindex is `kioku reindex` on PostgreSQL: RepairIndexes, reported as SQLite's reindex
// is. Memories counts the rows read (forgotten ones included, so a recovered memory is
// found), SearchText those rewritten, Words and Trigrams the live memories each index finds.
func (s *Maintenance) Reindex(ctx context.Context) (ltm.ReindexReport, error) {
	var rep ltm.ReindexReport
	var err error
	rep.Memories, rep.SearchText, err = s.rewriteSearchColumns(ctx)
	if err != nil {
		return rep, err
	}
	var x maintenance.Index
	if err := s.diagnoseIndex(ctx, "", &x); err != nil {
		return rep, err
	}
	rep.Words, rep.Trigrams = x.Words.Rows, x.Trigrams.Rows
	return rep, nil
}

// rewriteSearchColumns recomputes the search columns of every memory in batches by id and
// rewrites those that differ; it returns the rows read and the rows rewritten. A memory
// changed while it runs is left to the change, which writes its own columns.
func (s *Maintenance) rewriteSearchColumns(ctx context.Context) (read, rewritten int, err error) {
	type row struct {
		id                 int64
		content, author    string
		text, authorText   string
		oldText, oldAuthor string
	}
	var after int64
	for {
		rows, err := s.db.read.QueryContext(ctx, `SELECT id, content, author_name, search_text, search_author FROM memories
			WHERE id > ? ORDER BY id LIMIT ?`, after, repairBatch)
		if err != nil {
			return read, rewritten, fmt.Errorf("couldn't read the search columns: %w", err)
		}
		var (
			n     int
			stale []row
		)
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.content, &r.author, &r.oldText, &r.oldAuthor); err != nil {
				rows.Close()
				return read, rewritten, fmt.Errorf("couldn't read the search columns: %w", err)
			}
			n++
			after = r.id
			r.text, r.authorText = storedSearchText(r.content), storedSearchText(r.author)
			if r.text != r.oldText || r.authorText != r.oldAuthor {
				stale = append(stale, r)
			}
		}
		if err := rows.Close(); err != nil {
			return read, rewritten, fmt.Errorf("couldn't read the search columns: %w", err)
		}
		if err := rows.Err(); err != nil {
			return read, rewritten, fmt.Errorf("couldn't read the search columns: %w", err)
		}
		read += n
		if len(stale) > 0 {
			ids := make([]int64, len(stale))
			contents, authors, texts, authorTexts := make([]string, len(stale)), make([]string, len(stale)),
				make([]string, len(stale)), make([]string, len(stale))
			for i, r := range stale {
				ids[i], contents[i], authors[i], texts[i], authorTexts[i] = r.id, r.content, r.author, r.text, r.authorText
			}
			var changed int
			err := s.db.withWriteTx(ctx, func(tx *txn) error {
				var err error
				changed, err = execCount(ctx, tx, `UPDATE memories m SET search_text = p.text, search_author = p.author_text
					FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[]) AS p(id, content, author, text, author_text)
					WHERE m.id = p.id AND m.content = p.content AND m.author_name = p.author`,
					ids, contents, authors, texts, authorTexts)
				return err
			})
			if err != nil {
				return read, rewritten, fmt.Errorf("couldn't rewrite the search columns: %w", err)
			}
			rewritten += changed
		}
		if n < repairBatch {
			return read, rewritten, nil
		}
	}
}

// EmbedMissing embeds the live memories without a vector of the configured model (the
// embedding tracker's run with no cap on calls, Recall.EmbedMissing) and returns how many
// were embedded. Without an embedding model it does nothing.
func (s *Maintenance) EmbedMissing(ctx context.Context) (int, error) {
	return (&Recall{s.db}).EmbedMissing(ctx)
}

// Compact gives free space back. On PostgreSQL that is autovacuum's work: it reclaims the
// space of deleted rows for reuse on its own schedule, without a lock that stops writers,
// and the diagnostics report no free pages (Storage.FreeBytes 0), so self-repair never
// asks for this. A VACUUM FULL would give bytes back to the file system but lock every table
// it rewrites, which a bot serving chat must not do on its own; an operator runs it.
func (s *Maintenance) Compact(ctx context.Context) (int64, error) { return 0, nil }

// RecordRepairs appends repairs to the audit and drops rows older than
// ltm.RepairLogRetention, in one transaction. Errors are stored without anything that looks
// like a credential or quotes data, and cut short.
func (s *Maintenance) RecordRepairs(ctx context.Context, repairs []maintenance.Repair) error {
	if len(repairs) == 0 {
		return nil
	}
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		for _, r := range repairs {
			_, err := tx.ExecContext(ctx, `INSERT INTO maintenance_repairs (run_at, action, outcome, mode, score_before,
				score_after, found, changed, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				millis(r.At), string(r.Action), string(r.Outcome), string(r.Mode), r.ScoreBefore, r.ScoreAfter, r.Found, r.Changed,
				repairErrorText(r))
			if err != nil {
				return fmt.Errorf("couldn't record repair %s: %w", r.Action, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM maintenance_repairs WHERE run_at < ?`,
			millis(s.db.Now().Add(-ltm.RepairLogRetention))); err != nil {
			return fmt.Errorf("couldn't prune the repair audit: %w", err)
		}
		return nil
	})
}

// repairErrorText is the error stored with a repair: empty when it had none, else cleaned
// as a job's error is.
func repairErrorText(r maintenance.Repair) string {
	if r.Error == "" {
		return ""
	}
	return cleanJobError(r.Error, "")
}

// RepairLog returns the audited repairs since since, oldest first.
func (s *Maintenance) RepairLog(ctx context.Context, since time.Time) ([]maintenance.Repair, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT run_at, action, outcome, mode, score_before, score_after, found,
		changed, error FROM maintenance_repairs WHERE run_at >= ? ORDER BY id`, millis(since))
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read the repair audit: %w", err)
	}
	return out, nil
}

// ErrBackupOnPostgres is Backup's answer on PostgreSQL: `kioku backup` copies a SQLite
// file, and a PostgreSQL database is backed up with PostgreSQL's own tools.
var ErrBackupOnPostgres = errors.New(`kioku backup copies a SQLite database file; this store is PostgreSQL, which kioku does not back up itself. ` +
	`Back it up with pg_dump, for example pg_dump --format=custom --file=kioku.dump "$KIOKU_DB", and restore with pg_restore; ` +
	`or use the continuous archiving (WAL) or managed snapshots your PostgreSQL already has`)

// Backup refuses: see ErrBackupOnPostgres. Nothing is written to path.
func (s *Maintenance) Backup(ctx context.Context, path string) error {
	return fmt.Errorf("%w (nothing was written to %s)", ErrBackupOnPostgres, path)
}
