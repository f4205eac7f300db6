package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// DiagnosticsWindow is how far back the diagnostics count recent events (dead jobs,
// recoveries, blocked proposals, contradictions): a day covers every hour of a server's
// activity without remembering last week's incident forever.
const DiagnosticsWindow = 24 * time.Hour

// Diagnose reads the store's health (queue, storage, indexes, recent mutations and the
// self-repair audit) with the embedding model recall uses in this process. It only reads.
// The provider part is left unknown: only the process calling the provider can fill it.
func (s *Health) Diagnose(ctx context.Context) (maintenance.Diagnostics, error) {
	return s.DiagnoseModel(ctx, embedModel(s.db))
}

// DiagnoseModel is Diagnose with the embedding model named: a process that does not embed
// (`kioku doctor`) names the configured one. An empty model skips the embedding counts.
func (s *Health) DiagnoseModel(ctx context.Context, embedModel string) (maintenance.Diagnostics, error) {
	now := s.db.Now()
	d := maintenance.Diagnostics{At: now}
	for _, read := range []func() error{
		func() error { return s.diagnoseQueue(ctx, now, &d.Queue) },
		func() error { return s.diagnoseStorage(ctx, now, &d.Storage) },
		func() error { return s.diagnoseIndex(ctx, embedModel, &d.Index) },
		func() error { return s.diagnoseMutations(ctx, now, &d.Mutations) },
		func() error { return s.diagnoseRepairs(ctx, &d.Repairs) },
	} {
		if err := read(); err != nil {
			return d, fmt.Errorf("couldn't diagnose the store: %w", err)
		}
	}
	d.Index.Live = d.Storage.Live
	return d, nil
}

func (s *Health) diagnoseQueue(ctx context.Context, now time.Time, q *maintenance.Queue) error {
	q.Window = DiagnosticsWindow
	// A database not yet migrated to 0008 has no auto_requeues column: nothing there was
	// requeued by self-repair.
	requeueable := `state = 'dead'`
	has, err := s.db.upkeep.HasSchema(ctx, "memory_jobs", "auto_requeues")
	if err != nil {
		return err
	}
	if has {
		requeueable += ` AND auto_requeues = 0`
	}
	var oldest sql.NullInt64
	nowMS, cut := millis(now), millis(now.Add(-DiagnosticsWindow))
	err = s.db.read.QueryRowContext(ctx, `SELECT
		count(*) FILTER (WHERE state IN ('queued', 'leased')),
		count(*) FILTER (WHERE state = 'queued' AND run_after <= ?1),
		count(*) FILTER (WHERE state = 'leased' AND leased_until < ?1),
		count(*) FILTER (WHERE state = 'dead'),
		count(*) FILTER (WHERE `+requeueable+`),
		coalesce(max(id) FILTER (WHERE state = 'dead'), 0),
		count(*) FILTER (WHERE state = 'dead' AND updated_at >= ?2),
		count(*) FILTER (WHERE state IN ('done', 'dead') AND updated_at >= ?2),
		min(run_after) FILTER (WHERE state = 'queued' AND run_after <= ?1)
		FROM memory_jobs`, nowMS, cut).Scan(&q.Depth, &q.Due, &q.Stale, &q.Dead, &q.Requeueable,
		&q.NewestDead, &q.DeadRecent, &q.FinishedRecent, &oldest)
	if err != nil {
		return fmt.Errorf("couldn't read the job queue: %w", err)
	}
	if oldest.Valid {
		q.OldestDue = fromMillis(oldest.Int64)
	}
	return nil
}

func (s *Health) diagnoseStorage(ctx context.Context, now time.Time, st *maintenance.Storage) error {
	// Three counts rather than one pass: each is answered from its partial index.
	err := s.db.read.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM memories WHERE deleted_at IS NULL),
		(SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL),
		(SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ?)`, millis(now.Add(-s.db.RecoverWindow))).Scan(&st.Live, &st.Forgotten, &st.ExpiredTombstones)
	if err != nil {
		return fmt.Errorf("couldn't count memories: %w", err)
	}
	return s.db.upkeep.DiagnoseStorage(ctx, st)
}

func (s *Health) diagnoseIndex(ctx context.Context, embedModel string, x *maintenance.Index) error {
	if err := s.db.upkeep.DiagnoseSearch(ctx, x); err != nil {
		return err
	}
	x.EmbedModel = embedModel
	if embedModel == "" {
		return nil
	}
	err := s.db.read.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM memories m WHERE m.deleted_at IS NULL AND EXISTS (
			SELECT 1 FROM embeddings e WHERE e.content_hash = m.content_hash AND e.model = ?)),
		(SELECT count(*) FROM embeddings),
		(SELECT count(*) FROM embeddings e WHERE e.model <> ? OR NOT EXISTS (
			SELECT 1 FROM memories m WHERE m.content_hash = e.content_hash AND m.deleted_at IS NULL))`,
		embedModel, embedModel).Scan(&x.Embedded, &x.Vectors, &x.Stale)
	if err != nil {
		return fmt.Errorf("couldn't count embeddings: %w", err)
	}
	return nil
}

func (s *Health) diagnoseMutations(ctx context.Context, now time.Time, m *maintenance.Mutations) error {
	m.Window = DiagnosticsWindow
	cut := millis(now.Add(-DiagnosticsWindow))
	err := s.db.read.QueryRowContext(ctx, `SELECT
		count(*) FILTER (WHERE action = ?), count(*) FILTER (WHERE action = ?), count(*) FILTER (WHERE action = ?),
		count(*) FILTER (WHERE actor = ?), count(*) FILTER (WHERE action = ?)
		FROM memory_history WHERE created_at >= ?`,
		memory.ActionRecover, memory.ActionDelete, memory.ActionBlock, memory.ActorPipeline, memory.ActionReview, cut).
		Scan(&m.Recoveries, &m.Deletes, &m.Blocked, &m.Proposals, &m.Reviews)
	if err != nil {
		return fmt.Errorf("couldn't count recent changes: %w", err)
	}
	for _, newest := range []struct {
		action memory.Action
		dst    *maintenance.MemoryRef
	}{{memory.ActionReview, &m.NewestReview}, {memory.ActionBlock, &m.NewestBlocked}} {
		err := s.db.read.QueryRowContext(ctx, `SELECT coalesce(memory_id, 0), scope_key FROM memory_history
			WHERE action = ? AND created_at >= ? ORDER BY id DESC LIMIT 1`, newest.action, cut).Scan(&newest.dst.ID, &newest.dst.ScopeKey)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("couldn't read the newest %s: %w", newest.action, err)
		}
	}
	return nil
}

func (s *Health) diagnoseRepairs(ctx context.Context, st *maintenance.RepairState) error {
	// A database not yet migrated to 0008 has no audit: self-repair never ran on it.
	if ok, err := s.db.upkeep.HasSchema(ctx, repairsTable, ""); err != nil || !ok {
		return err
	}
	var last sql.NullInt64
	if err := s.db.read.QueryRowContext(ctx, `SELECT max(run_at) FROM `+repairsTable).Scan(&last); err != nil {
		return fmt.Errorf("couldn't read the repair audit: %w", err)
	}
	if !last.Valid {
		return nil
	}
	st.LastRunAt = fromMillis(last.Int64)
	err := s.db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+repairsTable+` WHERE run_at = ? AND outcome = ?)`,
		last.Int64, maintenance.OutcomeHalted).Scan(&st.Halted)
	if err != nil {
		return fmt.Errorf("couldn't read the repair audit: %w", err)
	}
	return nil
}
