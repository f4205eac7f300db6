package ltm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Retention defaults (SPEC §4). Forgotten memories are purged after Store.RecoverWindow.
const (
	// DefaultHistoryRetention keeps the audit trail for half a year: long enough to answer
	// "when did the bot learn that?", short enough that old content does not linger.
	DefaultHistoryRetention = 180 * 24 * time.Hour
	// DefaultDoneJobRetention keeps finished jobs two weeks, for debugging recent runs.
	DefaultDoneJobRetention = 14 * 24 * time.Hour
	// DefaultDeadJobRetention keeps dead jobs a month, so an operator back from holiday
	// can still requeue them.
	DefaultDeadJobRetention = 30 * 24 * time.Hour
	// DefaultTranscriptRetention keeps raw conversation turns a month (SPEC §2).
	DefaultTranscriptRetention = 30 * 24 * time.Hour
	// DefaultRetentionBatch is the most rows one retention transaction deletes, so the
	// write lock is never held long enough for a chat turn to notice.
	DefaultRetentionBatch = 500
	// DefaultRetentionMaxBatches bounds the transactions of one step per run; a backlog
	// larger than that is finished by the next runs.
	DefaultRetentionMaxBatches = 200
	// orphanEmbeddingGrace spares vectors cached moments before the memory that uses
	// them is written (the pipeline prefetches embeddings before its commit).
	orphanEmbeddingGrace = 24 * time.Hour
)

// fillRetention copies the defaults into p's zero fields.
func fillRetention(p *memory.RetentionPolicy) {
	if p.History <= 0 {
		p.History = DefaultHistoryRetention
	}
	if p.DoneJobs <= 0 {
		p.DoneJobs = DefaultDoneJobRetention
	}
	if p.DeadJobs <= 0 {
		p.DeadJobs = DefaultDeadJobRetention
	}
	if p.Transcripts <= 0 {
		p.Transcripts = DefaultTranscriptRetention
	}
	if p.Batch <= 0 {
		p.Batch = DefaultRetentionBatch
	}
	if p.MaxBatches <= 0 {
		p.MaxBatches = DefaultRetentionMaxBatches
	}
}

// Retention deletes what has outlived its keeping, in order: vectors only expired
// tombstones (or nothing) use, tombstones past the recover window (each leaving a content-
// free "purge" history row and taking its history rows' text), history rows, finished
// jobs, dead jobs, transcript turns, the change log in-process keyword indexes follow
// (where the engine keeps one), forget fences older than a day; after purging it has the
// engine drop the purged words from its full-text search (Upkeep.MergeSearch).
// Every step deletes in its own short transactions of at most pol.Batch rows, skipping
// rows another writer holds (a recovery, another process's retention) where writers run
// at once: the next run takes them. It returns what was done so far with the first error.
func (s *Maintenance) Retention(ctx context.Context, pol memory.RetentionPolicy) (memory.RetentionResult, error) {
	fillRetention(&pol)
	now := s.db.Now()
	var res memory.RetentionResult
	// The memories archived, for the recall indexes once their transactions committed.
	var archived, pending []*memory.Memory
	defer func() { s.db.written(ctx, archived, nil) }()
	tombstoneCut := millis(now.Add(-s.db.RecoverWindow))
	skipLocked := s.db.dialect.SkipLocked
	// The knowledge graph's links of expired tombstones go first, before the rows they
	// point at; the entities they leave unmentioned go after the tombstones.
	steps := []struct {
		name string
		dst  *int
		run  func(tx *txn, limit int) (int, error)
	}{
		{"graph links", &res.GraphLinks, func(tx *txn, limit int) (int, error) {
			// The tombstones are a subquery, not a join, so that a row lock takes the links alone.
			return execCount(ctx, tx, `DELETE FROM memory_entities WHERE (memory_id, entity_id) IN (
				SELECT me.memory_id, me.entity_id FROM memory_entities me WHERE me.memory_id IN (
					SELECT m.id FROM memories m WHERE m.deleted_at IS NOT NULL AND m.deleted_at < ?)
				LIMIT ?`+skipLocked+`)`, tombstoneCut, limit)
		}},
		{"embeddings", &res.Embeddings, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM embeddings WHERE (content_hash, model) IN (
				SELECT e.content_hash, e.model FROM embeddings e
				WHERE e.created_at < ? AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = e.content_hash
					AND m.deleted_at IS NULL)
				AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = e.content_hash
					AND m.deleted_at IS NOT NULL AND m.deleted_at >= ?)
				LIMIT ?`+skipLocked+`)`, millis(now.Add(-orphanEmbeddingGrace)), tombstoneCut, limit)
		}},
		{"tombstones", &res.Tombstones, func(tx *txn, limit int) (int, error) {
			return s.purgeTombstonesTx(ctx, tx, tombstoneCut, limit)
		}},
		{"unmentioned entities", &res.Entities, func(tx *txn, limit int) (int, error) {
			return collectOrphansTx(ctx, tx, limit)
		}},
		{"history", &res.History, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM memory_history WHERE id IN (
				SELECT id FROM memory_history WHERE created_at < ? ORDER BY created_at LIMIT ?`+skipLocked+`)`,
				millis(now.Add(-pol.History)), limit)
		}},
		{"done jobs", &res.DoneJobs, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM memory_jobs WHERE id IN (
				SELECT id FROM memory_jobs WHERE state = 'done' AND updated_at < ? LIMIT ?`+skipLocked+`)`,
				millis(now.Add(-pol.DoneJobs)), limit)
		}},
		{"dead jobs", &res.DeadJobs, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM memory_jobs WHERE id IN (
				SELECT id FROM memory_jobs WHERE state = 'dead' AND updated_at < ? LIMIT ?`+skipLocked+`)`,
				millis(now.Add(-pol.DeadJobs)), limit)
		}},
		{"transcripts", &res.Transcripts, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM transcripts WHERE id IN (
				SELECT id FROM transcripts WHERE created_at < ? ORDER BY created_at LIMIT ?`+skipLocked+`)`,
				millis(now.Add(-pol.Transcripts)), limit)
		}},
		{"change log", &res.Changes, func(tx *txn, limit int) (int, error) {
			if !s.db.dialect.ChangeLog {
				return 0, nil
			}
			return execCount(ctx, tx, `DELETE FROM memory_changes WHERE seq IN (
				SELECT seq FROM memory_changes WHERE seq <= (SELECT max(seq) FROM memory_changes) - ? ORDER BY seq LIMIT ?)`,
				changeLogKeep, limit)
		}},
		{"past memories", &res.Archived, func(tx *txn, limit int) (int, error) {
			var err error
			pending, err = s.archivePastTx(ctx, tx, now, pol.ArchivePast, limit)
			return len(pending), err
		}},
		{"expired confirmations", &res.Confirmations, func(tx *txn, limit int) (int, error) {
			// Held saves keep words; once expired (an hour, so a late press still reads
			// "expired") nothing can use them, and a quiet server makes no new confirmation
			// that would prune them.
			return execCount(ctx, tx, `DELETE FROM confirmations WHERE token IN (
				SELECT token FROM confirmations WHERE expires_at < ? LIMIT ?`+skipLocked+`)`,
				millis(now.Add(-confirmPruneAfter)), limit)
		}},
		{"forget fences", &res.Fences, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM forget_fences WHERE user_id IN (
				SELECT user_id FROM forget_fences WHERE forgotten_at < ? LIMIT ?`+skipLocked+`)`,
				millis(now.Add(-ForgetFenceKeep)), limit)
		}},
	}
	for _, step := range steps {
		for range pol.MaxBatches {
			var n int
			err := s.db.withWriteTx(ctx, func(tx *txn) error {
				var err error
				n, err = step.run(tx, pol.Batch)
				return err
			})
			if err != nil {
				return res, fmt.Errorf("couldn't purge %s: %w", step.name, err)
			}
			archived, pending = append(archived, pending...), nil
			*step.dst += n
			if n < pol.Batch {
				break
			}
		}
	}
	if res.Tombstones > 0 {
		// The full-text search may still hold the purged memories' words (SQLite's word index
		// as deleted entries until its segments are merged): they go now that their text is
		// gone everywhere else.
		if err := s.db.upkeep.MergeSearch(ctx); err != nil {
			return res, err
		}
	}
	return res, nil
}

// purgeTombstonesTx hard-deletes up to limit memories forgotten before cut and records
// each purge in history without content. The purged memories' history rows stay as an
// audit trail (who did what, when) but lose their text: old and new content, the reason
// (the pipeline's reasons quote facts) and the metadata. Their evidence rows go. A batch
// takes three statements whatever its size: on a database across the network, a round
// trip per memory would hold the transaction open hundreds of times longer.
func (s *Maintenance) purgeTombstonesTx(ctx context.Context, tx *txn, cut int64, limit int) (int, error) {
	rows, err := tx.QueryContext(ctx, `DELETE FROM memories WHERE id IN (
		SELECT id FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? ORDER BY deleted_at LIMIT ?`+
		s.db.dialect.SkipLocked+`)
		RETURNING id, scope_key, version`, cut, limit)
	if err != nil {
		return 0, err
	}
	var (
		ids     []any
		history []any
	)
	now := s.db.nowMillis()
	for rows.Next() {
		var (
			id, version int64
			scopeKey    string
		)
		if err := rows.Scan(&id, &scopeKey, &version); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
		history = append(history, id, scopeKey, memory.ActionPurge, version, memory.ActorRetention,
			"forgotten longer than the recover window", now)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	in := `IN (` + placeholders(len(ids)) + `)`
	if _, err := tx.ExecContext(ctx, `UPDATE memory_history SET old_content = '', new_content = '', reason = '',
		metadata = '{}' WHERE memory_id `+in, ids...); err != nil {
		return 0, fmt.Errorf("couldn't purge the history text of forgotten memories: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM memory_evidence WHERE memory_id `+in, ids...); err != nil {
		return 0, fmt.Errorf("couldn't purge the evidence of forgotten memories: %w", err)
	}
	// The purge rows of addHistory, with nothing to redact and no origin.
	row := `(?, ?, ?, '', '', ?, ?, ?, '{}', ?, NULL, NULL, NULL, NULL)`
	if _, err := tx.ExecContext(ctx, `INSERT INTO memory_history (memory_id, scope_key, action, old_content,
		new_content, version, actor, reason, metadata, created_at, `+historyOriginColumns+`)
		VALUES `+strings.TrimSuffix(strings.Repeat(row+`, `, len(ids)), `, `), history...); err != nil {
		return 0, fmt.Errorf("couldn't record purges: %w", err)
	}
	return len(ids), nil
}

func execCount(ctx context.Context, tx *txn, query string, args ...any) (int, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
