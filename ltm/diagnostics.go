package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
	"github.com/kioku-bot/kioku/migrations"
)

// DiagnosticsWindow is how far back the diagnostics count recent events (dead jobs,
// recoveries, blocked proposals, contradictions): a day covers every hour of a server's
// activity without remembering last week's incident forever.
const DiagnosticsWindow = 24 * time.Hour

// Names of the full-text indexes (migrations 0001 and 0004): the word index and the
// trigram index. Each keeps one row per indexed memory in its %_docsize shadow table,
// which is what the diagnostics count: counting the trigram table itself would read the
// memories table it takes its content from.
const (
	wordIndex    = "memories_fts"
	trigramIndex = "memories_tri"
)

// wordHolds is the condition under which the word index holds a live memory m (migration
// 0019): it is not waiting to be indexed (indexwrite.go).
const wordHolds = `m.index_pending = 0`

// trigramRuleHolds is migration 0018's condition under which the trigram index holds a
// live memory m: its content has a character beyond ASCII (more bytes than characters), or
// the memory was written before the index left plain ASCII to the word index.
const trigramRuleHolds = `(length(CAST(m.content AS BLOB)) > length(m.content) OR m.id <= (SELECT max_id FROM ` + trigramLegacyTable + `))`

// trigramHolds is the condition since 0019: the word index holds m, and 0018's rule holds.
// The triggers test the same condition.
const trigramHolds = wordHolds + ` AND ` + trigramRuleHolds

// trigramLegacyTable holds the highest id of the memories written before migration 0018.
const trigramLegacyTable = "memories_tri_legacy"

// Diagnose reads the store's health (queue, storage, indexes, recent mutations and the
// self-repair audit) with the embedding model recall uses in this process. It only reads.
// The provider part is left unknown: only the process calling the provider can fill it.
func (s *Maintenance) Diagnose(ctx context.Context) (maintenance.Diagnostics, error) {
	model := ""
	if e := s.db.recall.emb.Load(); e != nil {
		model = e.model
	}
	return s.DiagnoseModel(ctx, model)
}

// DiagnoseModel is Diagnose with the embedding model named: a process that does not embed
// (`kioku doctor`) names the configured one. An empty model skips the embedding counts.
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

func (s *Maintenance) diagnoseQueue(ctx context.Context, now time.Time, q *maintenance.Queue) error {
	q.Window = DiagnosticsWindow
	// A database not yet migrated to 0008 has no auto_requeues column: nothing there was
	// requeued by self-repair.
	requeueable := `state = 'dead'`
	has, err := s.hasColumn(ctx, "memory_jobs", "auto_requeues")
	if err != nil {
		return err
	}
	if has {
		requeueable += ` AND auto_requeues = 0`
	}
	var oldest sql.NullInt64
	nowMS, cut := millis(now), millis(now.Add(-DiagnosticsWindow))
	err = s.db.read.QueryRowContext(ctx, `SELECT
		coalesce(sum(state IN ('queued', 'leased')), 0),
		coalesce(sum(state = 'queued' AND run_after <= ?), 0),
		coalesce(sum(state = 'leased' AND leased_until < ?), 0),
		coalesce(sum(state = 'dead'), 0),
		coalesce(sum(`+requeueable+`), 0),
		coalesce(max(CASE WHEN state = 'dead' THEN id END), 0),
		coalesce(sum(state = 'dead' AND updated_at >= ?), 0),
		coalesce(sum(state IN ('done', 'dead') AND updated_at >= ?), 0),
		min(CASE WHEN state = 'queued' AND run_after <= ? THEN run_after END)
		FROM memory_jobs`, nowMS, nowMS, cut, cut, nowMS).Scan(&q.Depth, &q.Due, &q.Stale, &q.Dead, &q.Requeueable,
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
		(SELECT count(*) FROM memories WHERE deleted_at IS NULL),
		(SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL),
		(SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ?)`,
		millis(now.Add(-s.db.RecoverWindow))).Scan(&st.Live, &st.Forgotten, &st.ExpiredTombstones)
	if err != nil {
		return fmt.Errorf("couldn't count memories: %w", err)
	}
	var pageSize, free int64
	var autoVacuum int
	for _, p := range []struct {
		pragma string
		dst    any
	}{{"page_size", &pageSize}, {"freelist_count", &free}, {"auto_vacuum", &autoVacuum}} {
		if err := s.db.read.QueryRowContext(ctx, `PRAGMA `+p.pragma).Scan(p.dst); err != nil {
			return fmt.Errorf("couldn't read %s: %w", p.pragma, err)
		}
	}
	st.FreeBytes = free * pageSize
	st.AutoVacuum = autoVacuumMode(autoVacuum)
	if fi, err := os.Stat(s.db.path); err == nil {
		st.FileBytes = fi.Size()
	}
	state, err := migrations.Inspect(ctx, s.db.read.db, migrations.FS())
	if err != nil {
		return err
	}
	st.PendingMigrations = state.Pending
	return nil
}

// autoVacuumMode names SQLite's auto_vacuum setting.
func autoVacuumMode(n int) string {
	switch n {
	case 1:
		return "full"
	case 2:
		return "incremental"
	}
	return "none"
}

func (s *Maintenance) diagnoseIndex(ctx context.Context, embedModel string, x *maintenance.Index) error {
	// A database a migration or two behind (read, not migrated, by `kioku doctor`): before
	// 0019 no memory waits to be indexed, before 0018 the trigram index holds every live one.
	pendingKnown, err := s.hasColumn(ctx, "memories", "index_pending")
	if err != nil {
		return err
	}
	ruleKnown, err := s.hasTable(ctx, trigramLegacyTable)
	if err != nil {
		return err
	}
	wordsHold, triHolds := wordHolds, trigramHolds
	switch {
	case !ruleKnown:
		wordsHold, triHolds = "1", "1"
	case !pendingKnown:
		wordsHold, triHolds = "1", trigramRuleHolds
	}
	for _, idx := range []struct {
		table string
		holds string // the condition under which the index holds live memory m
		dst   *maintenance.IndexSync
	}{{wordIndex, wordsHold, &x.Words}, {trigramIndex, triHolds, &x.Trigrams}} {
		idx.dst.Table = idx.table
		docs := idx.table + "_docsize"
		err := s.db.read.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM `+docs+`),
			(SELECT count(*) FROM memories m WHERE m.deleted_at IS NULL AND `+idx.holds+`
				AND NOT EXISTS (SELECT 1 FROM `+docs+` d WHERE d.id = m.id)),
			(SELECT count(*) FROM `+docs+` d WHERE NOT EXISTS (
				SELECT 1 FROM memories m WHERE m.id = d.id AND m.deleted_at IS NULL AND `+idx.holds+`))`).Scan(&idx.dst.Rows, &idx.dst.Missing, &idx.dst.Extra)
		if err != nil {
			return fmt.Errorf("couldn't compare %s with the memories: %w", idx.table, err)
		}
	}
	x.EmbedModel = embedModel
	if embedModel == "" {
		return nil
	}
	err = s.db.read.QueryRowContext(ctx, `SELECT
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

func (s *Maintenance) diagnoseMutations(ctx context.Context, now time.Time, m *maintenance.Mutations) error {
	m.Window = DiagnosticsWindow
	cut := millis(now.Add(-DiagnosticsWindow))
	err := s.db.read.QueryRowContext(ctx, `SELECT
		coalesce(sum(action = ?), 0), coalesce(sum(action = ?), 0), coalesce(sum(action = ?), 0),
		coalesce(sum(actor = ?), 0), coalesce(sum(action = ?), 0)
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

func (s *Maintenance) diagnoseRepairs(ctx context.Context, st *maintenance.RepairState) error {
	// A database not yet migrated to 0008 has no audit: self-repair never ran on it.
	if ok, err := s.hasTable(ctx, repairsTable); err != nil || !ok {
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

func (s *Maintenance) hasTable(ctx context.Context, name string) (bool, error) {
	var n int
	if err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n); err != nil {
		return false, fmt.Errorf("couldn't read the schema: %w", err)
	}
	return n > 0, nil
}

func (s *Maintenance) hasColumn(ctx context.Context, table, column string) (bool, error) {
	var n int
	if err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n); err != nil {
		return false, fmt.Errorf("couldn't read the schema of %s: %w", table, err)
	}
	return n > 0, nil
}
