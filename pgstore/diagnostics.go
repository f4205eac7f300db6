package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// Names the diagnostics give PostgreSQL's search indexes (0001_schema.sql): the word index
// is a GIN index on a tsvector generated from search_text and search_author, the trigram
// index a GIN index on normalized. PostgreSQL keeps both in step with the rows, and both
// are partial on live rows, so neither can hold a forgotten memory (Extra is always 0). What
// can be out of step is the search columns the store writes and the word index is built
// from: a row written by hand or copied without them is found by nothing.
const (
	wordIndex    = "memories_words"
	trigramIndex = "memories_trigrams"
)

// postgresAutovacuum is what Storage.AutoVacuum says on PostgreSQL: space of deleted rows
// is reused by autovacuum, and no file has free pages to give back (FreeBytes stays 0), so
// the diagnostics never ask for a vacuum.
const postgresAutovacuum = "autovacuum"

// Diagnose reads the store's health (queue, storage, search columns, recent mutations and
// the self-repair audit) with the embedding model recall uses in this process, as ltm's
// does. It only reads.
func (s *Maintenance) Diagnose(ctx context.Context) (maintenance.Diagnostics, error) {
	model := ""
	if e := s.db.recall.emb.Load(); e != nil {
		model = e.model
	}
	return s.DiagnoseModel(ctx, model)
}

// DiagnoseModel is Diagnose with the embedding model named (`kioku doctor` names the
// configured one): the stored vectors of that model are counted against the live memories.
// An empty model skips the embedding counts. The provider part is left unknown: only the
// process calling the provider can fill it.
func (s *Maintenance) DiagnoseModel(ctx context.Context, embedModel string) (maintenance.Diagnostics, error) {
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

// diagnoseQueue counts the job queue in one pass. A stale job is a lease that expired and
// that no reaper has taken back: its worker (in any process) died or hung.
func (s *Maintenance) diagnoseQueue(ctx context.Context, now time.Time, q *maintenance.Queue) error {
	q.Window = ltm.DiagnosticsWindow
	var oldest sql.NullInt64
	nowMS, cut := millis(now), millis(now.Add(-ltm.DiagnosticsWindow))
	err := s.db.read.QueryRowContext(ctx, `SELECT
		count(*) FILTER (WHERE state IN ('queued', 'leased')),
		count(*) FILTER (WHERE state = 'queued' AND run_after <= ?1),
		count(*) FILTER (WHERE state = 'leased' AND leased_until < ?1),
		count(*) FILTER (WHERE state = 'dead'),
		count(*) FILTER (WHERE state = 'dead' AND auto_requeues = 0),
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

func (s *Maintenance) diagnoseStorage(ctx context.Context, now time.Time, st *maintenance.Storage) error {
	err := s.db.read.QueryRowContext(ctx, `SELECT
		count(*) FILTER (WHERE deleted_at IS NULL),
		count(*) FILTER (WHERE deleted_at IS NOT NULL),
		count(*) FILTER (WHERE deleted_at IS NOT NULL AND deleted_at < ?)
		FROM memories`, millis(now.Add(-s.db.RecoverWindow))).Scan(&st.Live, &st.Forgotten, &st.ExpiredTombstones)
	if err != nil {
		return fmt.Errorf("couldn't count memories: %w", err)
	}
	if err := s.db.read.QueryRowContext(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&st.FileBytes); err != nil {
		return fmt.Errorf("couldn't read the size of the tables: %w", err)
	}
	st.AutoVacuum = postgresAutovacuum
	pending, err := s.pendingMigrations(ctx)
	if err != nil {
		return err
	}
	st.PendingMigrations = pending
	return nil
}

// pendingMigrations lists the migrations of this binary the database has not applied. Open
// applies them all, so this is empty unless the schema was changed by hand since.
func (s *Maintenance) pendingMigrations(ctx context.Context) ([]string, error) {
	files, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("couldn't list migrations: %w", err)
	}
	applied := map[string]bool{}
	rows, err := s.db.read.QueryContext(ctx, `SELECT name FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
		}
		applied[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
	}
	var pending []string
	for _, f := range files {
		if name := path.Base(f); !applied[name] {
			pending = append(pending, name)
		}
	}
	return pending, nil
}

// searchColumnsStale is the SQL condition of a memory whose search columns do not hold what
// the store writes (memory.SearchText of the content and of the author's name), as far as
// SQL can tell without Go's Unicode folding: an empty column beside a non-empty source, or
// ASCII text (which SearchText keeps as it is) that differs. RepairIndexes recomputes every
// row in Go.
const searchColumnsStale = `(search_text = ''
	OR (octet_length(content) = char_length(content) AND search_text <> content)
	OR (author_name <> '' AND search_author = '')
	OR (octet_length(author_name) = char_length(author_name) AND search_author <> author_name))`

func (s *Maintenance) diagnoseIndex(ctx context.Context, embedModel string, x *maintenance.Index) error {
	var live, stale int
	err := s.db.read.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE `+searchColumnsStale+`)
		FROM memories WHERE deleted_at IS NULL`).Scan(&live, &stale)
	if err != nil {
		return fmt.Errorf("couldn't compare the search columns with the memories: %w", err)
	}
	x.Words = maintenance.IndexSync{Table: wordIndex, Rows: live - stale, Missing: stale}
	x.Trigrams = maintenance.IndexSync{Table: trigramIndex, Rows: live}
	x.EmbedModel = embedModel
	if embedModel == "" {
		return nil
	}
	err = s.db.read.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM memories m WHERE m.deleted_at IS NULL AND EXISTS (
			SELECT 1 FROM embeddings e WHERE e.content_hash = m.content_hash AND e.model = ?1)),
		(SELECT count(*) FROM embeddings),
		(SELECT count(*) FROM embeddings e WHERE e.model <> ?1 OR NOT EXISTS (
			SELECT 1 FROM memories m WHERE m.content_hash = e.content_hash AND m.deleted_at IS NULL))`,
		embedModel).Scan(&x.Embedded, &x.Vectors, &x.Stale)
	if err != nil {
		return fmt.Errorf("couldn't count embeddings: %w", err)
	}
	return nil
}

func (s *Maintenance) diagnoseMutations(ctx context.Context, now time.Time, m *maintenance.Mutations) error {
	m.Window = ltm.DiagnosticsWindow
	cut := millis(now.Add(-ltm.DiagnosticsWindow))
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
		if err != nil && !errNoRows(err) {
			return fmt.Errorf("couldn't read the newest %s: %w", newest.action, err)
		}
	}
	return nil
}

func (s *Maintenance) diagnoseRepairs(ctx context.Context, st *maintenance.RepairState) error {
	var last sql.NullInt64
	if err := s.db.read.QueryRowContext(ctx, `SELECT max(run_at) FROM maintenance_repairs`).Scan(&last); err != nil {
		return fmt.Errorf("couldn't read the repair audit: %w", err)
	}
	if !last.Valid {
		return nil
	}
	st.LastRunAt = fromMillis(last.Int64)
	err := s.db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM maintenance_repairs WHERE run_at = ? AND outcome = ?)`,
		last.Int64, maintenance.OutcomeHalted).Scan(&st.Halted)
	if err != nil {
		return fmt.Errorf("couldn't read the repair audit: %w", err)
	}
	return nil
}
