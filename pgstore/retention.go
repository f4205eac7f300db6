package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// orphanEmbeddingGrace spares vectors cached moments before the memory that uses them is
// written (the pipeline prefetches embeddings before its commit), as ltm's retention does.
const orphanEmbeddingGrace = 24 * time.Hour

// fillRetention copies ltm's defaults into p's zero fields: both stores keep rows equally
// long.
func fillRetention(p *memory.RetentionPolicy) {
	defaults := []struct {
		dst *time.Duration
		def time.Duration
	}{
		{&p.History, ltm.DefaultHistoryRetention}, {&p.DoneJobs, ltm.DefaultDoneJobRetention},
		{&p.DeadJobs, ltm.DefaultDeadJobRetention}, {&p.Transcripts, ltm.DefaultTranscriptRetention},
	}
	for _, d := range defaults {
		if *d.dst <= 0 {
			*d.dst = d.def
		}
	}
	if p.Batch <= 0 {
		p.Batch = ltm.DefaultRetentionBatch
	}
	if p.MaxBatches <= 0 {
		p.MaxBatches = ltm.DefaultRetentionMaxBatches
	}
}

// Retention deletes what has outlived its keeping, as ltm's retention does and in its
// order: graph links of expired tombstones, vectors no live or recoverable memory uses,
// tombstones past the recover window (each leaving a content-free "purge" history row and
// taking its history rows' text and its evidence), entities nothing mentions any more,
// history rows, finished jobs, dead jobs, transcript turns and forget fences older than a
// day. Two steps of ltm's have nothing to do here: PostgreSQL has no change log for
// in-process keyword indexes (Changes stays 0), and its word index is a GIN index on live
// rows only, so no full-text merge is needed after a purge.
//
// Every step deletes in its own short transactions of at most pol.Batch rows, skipping rows
// another transaction holds (a recovery, another process's retention), which the next run
// takes. It returns what was done so far with the first error.
func (s *Maintenance) Retention(ctx context.Context, pol memory.RetentionPolicy) (memory.RetentionResult, error) {
	fillRetention(&pol)
	now := s.db.Now()
	var res memory.RetentionResult
	tombstoneCut := millis(now.Add(-s.db.RecoverWindow))
	steps := []struct {
		name string
		dst  *int
		run  func(tx *txn, limit int) (int, error)
	}{
		{"graph links", &res.GraphLinks, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM memory_entities WHERE (memory_id, entity_id) IN (
				SELECT me.memory_id, me.entity_id FROM memory_entities me JOIN memories m ON m.id = me.memory_id
				WHERE m.deleted_at IS NOT NULL AND m.deleted_at < ? LIMIT ? FOR UPDATE OF me SKIP LOCKED)`, tombstoneCut, limit)
		}},
		{"embeddings", &res.Embeddings, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM embeddings WHERE (content_hash, model) IN (
				SELECT e.content_hash, e.model FROM embeddings e
				WHERE e.created_at < ? AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = e.content_hash
					AND (m.deleted_at IS NULL OR m.deleted_at >= ?))
				LIMIT ? FOR UPDATE OF e SKIP LOCKED)`, millis(now.Add(-orphanEmbeddingGrace)), tombstoneCut, limit)
		}},
		{"tombstones", &res.Tombstones, func(tx *txn, limit int) (int, error) {
			return s.purgeTombstonesTx(ctx, tx, tombstoneCut, limit)
		}},
		{"unmentioned entities", &res.Entities, func(tx *txn, limit int) (int, error) {
			return collectOrphansTx(ctx, tx, limit)
		}},
		{"history", &res.History, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM memory_history WHERE id IN (
				SELECT id FROM memory_history WHERE created_at < ? ORDER BY created_at LIMIT ? FOR UPDATE SKIP LOCKED)`,
				millis(now.Add(-pol.History)), limit)
		}},
		{"done jobs", &res.DoneJobs, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM memory_jobs WHERE id IN (
				SELECT id FROM memory_jobs WHERE state = 'done' AND updated_at < ? LIMIT ? FOR UPDATE SKIP LOCKED)`,
				millis(now.Add(-pol.DoneJobs)), limit)
		}},
		{"dead jobs", &res.DeadJobs, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM memory_jobs WHERE id IN (
				SELECT id FROM memory_jobs WHERE state = 'dead' AND updated_at < ? LIMIT ? FOR UPDATE SKIP LOCKED)`,
				millis(now.Add(-pol.DeadJobs)), limit)
		}},
		{"transcripts", &res.Transcripts, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM transcripts WHERE id IN (
				SELECT id FROM transcripts WHERE created_at < ? ORDER BY created_at LIMIT ? FOR UPDATE SKIP LOCKED)`,
				millis(now.Add(-pol.Transcripts)), limit)
		}},
		{"forget fences", &res.Fences, func(tx *txn, limit int) (int, error) {
			return execCount(ctx, tx, `DELETE FROM forget_fences WHERE user_id IN (
				SELECT user_id FROM forget_fences WHERE forgotten_at < ? LIMIT ? FOR UPDATE SKIP LOCKED)`,
				millis(now.Add(-forgetFenceKeep)), limit)
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
			*step.dst += n
			if n < pol.Batch {
				break
			}
		}
	}
	return res, nil
}

// purgeTombstonesTx hard-deletes up to limit memories forgotten before cut and records each
// purge in history without content. The purged memories' history rows stay as an audit
// trail (who did what, when) but lose their text: old and new content, the reason (the
// pipeline's reasons quote facts) and the metadata. Their evidence rows go.
func (s *Maintenance) purgeTombstonesTx(ctx context.Context, tx *txn, cut int64, limit int) (int, error) {
	rows, err := tx.QueryContext(ctx, `DELETE FROM memories WHERE id IN (
		SELECT id FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? ORDER BY deleted_at LIMIT ?
		FOR UPDATE SKIP LOCKED)
		RETURNING id, scope_key, version`, cut, limit)
	if err != nil {
		return 0, err
	}
	var (
		ids      []int64
		scopes   []string
		versions []int64
	)
	for rows.Next() {
		var (
			id, version int64
			scope       string
		)
		if err := rows.Scan(&id, &scope, &version); err != nil {
			rows.Close()
			return 0, err
		}
		ids, scopes, versions = append(ids, id), append(scopes, scope), append(versions, version)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE memory_history SET old_content = '', new_content = '', reason = '',
		metadata = '{}' WHERE memory_id = ANY(?)`, ids); err != nil {
		return 0, fmt.Errorf("couldn't purge the history text of forgotten memories: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM memory_evidence WHERE memory_id = ANY(?)`, ids); err != nil {
		return 0, fmt.Errorf("couldn't purge the evidence of forgotten memories: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO memory_history (memory_id, scope_key, action, old_content,
		new_content, version, actor, reason, metadata, created_at)
		SELECT p.id, p.scope_key, ?, '', '', p.version, ?, ?, '{}', ?
		FROM unnest(?::bigint[], ?::text[], ?::bigint[]) AS p(id, scope_key, version)`,
		memory.ActionPurge, memory.ActorRetention, "forgotten longer than the recover window", s.db.nowMillis(),
		ids, scopes, versions); err != nil {
		return 0, fmt.Errorf("couldn't record purges: %w", err)
	}
	return len(ids), nil
}
