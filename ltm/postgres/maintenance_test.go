package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// The bot and the pipeline take PostgreSQL's aggregates as they take SQLite's.
var (
	_ bot.Transfer      = postgres.Store{}.Transfer // ltm's, on PostgreSQL
	_ bot.Maintenance   = (*ltm.Health)(nil)
	_ pipeline.Health   = (*ltm.Health)(nil)
	_ pipeline.Repairer = (*ltm.Maintenance)(nil)
	// Housekeeping's other half, PurgeDepartedGuilds, belongs to the departed servers.
	_ interface {
		Retention(ctx context.Context, pol memory.RetentionPolicy) (memory.RetentionResult, error)
	} = (*ltm.Maintenance)(nil)
)

// openClocked opens a PostgreSQL store on a hand-driven clock.
func openClocked(t *testing.T) (*postgres.Store, *testkit.Clock) {
	t.Helper()
	s := pgtest.Open(t)
	clock := testkit.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	s.Now = clock.Now
	return s, clock
}

// TestPostgresDiagnose: a store with live memories and finished work is healthy; an
// expired lease, a dead job, a memory whose search columns were lost and a tombstone past
// the recover window are each reported, and the repairs for them set them right.
func TestPostgresDiagnose(t *testing.T) {
	ctx := context.Background()
	s, clock := openClocked(t)
	for _, c := range []string{"Raid night is Thursday", "猫の名前はミソ", "Backups run at three"} {
		if _, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: c,
			Provenance: memory.Provenance{AuthorID: "u1", Author: "Ålice"}}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	done, _, err := s.Jobs.Enqueue(ctx, "extract", "c1", map[string]string{"guild_id": "g1"}, memory.EnqueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := s.Jobs.Lease(ctx, "w1", []string{"extract"}, time.Minute); err != nil || j.ID != done {
		t.Fatalf("lease = %+v, %v", j, err)
	}
	if err := s.Jobs.Complete(ctx, done, "w1"); err != nil {
		t.Fatal(err)
	}
	assess := func() (maintenance.Diagnostics, maintenance.Report) {
		t.Helper()
		d, err := s.Health.Diagnose(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d, maintenance.Assess(d)
	}

	d, r := assess()
	if r.Status != maintenance.StatusHealthy || len(r.Findings) != 0 {
		t.Fatalf("a healthy store is %s with findings %+v", r.Status, r.Findings)
	}
	if d.Storage.Live != 3 || d.Index.Live != 3 || d.Index.Words.Rows != 3 || d.Queue.FinishedRecent != 1 ||
		d.Storage.FileBytes <= 0 || len(d.Storage.PendingMigrations) != 0 {
		t.Fatalf("healthy diagnostics = %+v", d)
	}

	t.Run("ExpiredLease", func(t *testing.T) {
		id, _, err := s.Jobs.Enqueue(ctx, "extract", "c2", map[string]string{"guild_id": "g1"}, memory.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs.Lease(ctx, "w-crashed", []string{"extract"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		clock.Advance(2 * time.Minute)
		d, r := assess()
		if d.Queue.Stale != 1 || d.Queue.Depth != 1 || r.Found(maintenance.ActionReapStale) != 1 {
			t.Fatalf("queue with an expired lease = %+v, findings %+v; want one stale job to reap", d.Queue, r.Findings)
		}
		if res, err := s.Jobs.ReapStale(ctx); err != nil || res.Requeued != 1 {
			t.Fatalf("reap = %+v, %v", res, err)
		}
		if d, _ := assess(); d.Queue.Stale != 0 || d.Queue.Due != 1 {
			t.Fatalf("after the reap, queue = %+v; want the job due again", d.Queue)
		}
		if j, err := s.Jobs.Lease(ctx, "w2", []string{"extract"}, time.Minute); err != nil || j.ID != id {
			t.Fatalf("lease after the reap = %+v, %v; want job %d", j, err, id)
		}
		if err := s.Jobs.Complete(ctx, id, "w2"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("DeadJob", func(t *testing.T) {
		id, _, err := s.Jobs.Enqueue(ctx, "embed", "m1", nil, memory.EnqueueOptions{MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs.Lease(ctx, "w1", []string{"embed"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if dead, err := s.Jobs.Fail(ctx, id, "w1", errors.New("provider down"), time.Minute); err != nil || !dead {
			t.Fatalf("fail = %v, %v; want dead", dead, err)
		}
		d, r := assess()
		if d.Queue.Dead != 1 || d.Queue.Requeueable != 1 || d.Queue.NewestDead != id || r.Found(maintenance.ActionRequeueDead) != 1 {
			t.Fatalf("queue with a dead job = %+v, findings %+v; want job %d dead and requeueable", d.Queue, r.Findings, id)
		}
		if n, err := s.Maintenance.RequeueDead(ctx, 10); err != nil || n != 1 {
			t.Fatalf("RequeueDead = %d, %v; want 1", n, err)
		}
		j, err := s.Jobs.GetJob(ctx, id)
		if err != nil || j.State != memory.JobQueued || j.Attempts != 0 {
			t.Fatalf("requeued job = %+v, %v", j, err)
		}
		// Once in its life: dead again, self-repair leaves it.
		if _, err := s.Jobs.Lease(ctx, "w1", []string{"embed"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs.Fail(ctx, id, "w1", errors.New("provider down"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Maintenance.RequeueDead(ctx, 10); err != nil || n != 0 {
			t.Fatalf("RequeueDead of a job requeued before = %d, %v; want 0", n, err)
		}
		if d, _ := assess(); d.Queue.Dead != 1 || d.Queue.Requeueable != 0 {
			t.Fatalf("queue = %+v; want one dead job, not requeueable", d.Queue)
		}
	})

	t.Run("SearchColumnsLost", func(t *testing.T) {
		// Rows copied in without their search columns: the word index finds nothing in them.
		if _, err := s.Pool().Exec(ctx, `UPDATE memories SET search_text = '', search_author = ''`); err != nil {
			t.Fatal(err)
		}
		d, r := assess()
		if d.Index.Words.Missing != 3 || r.Found(maintenance.ActionReindex) != 3 || r.Status == maintenance.StatusHealthy {
			t.Fatalf("index = %+v, status %s; want 3 memories out of the word index", d.Index, r.Status)
		}
		if n, err := s.Maintenance.RepairIndexes(ctx); err != nil || n != 3 {
			t.Fatalf("RepairIndexes = %d, %v; want 3", n, err)
		}
		if d, _ := assess(); d.Index.Words.OutOfSync() != 0 {
			t.Fatalf("after the repair, index = %+v", d.Index.Words)
		}
		if n, err := s.Maintenance.RepairIndexes(ctx); err != nil || n != 0 {
			t.Fatalf("RepairIndexes of a sound store = %d, %v; want 0", n, err)
		}
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Owners: []memory.Owner{memory.ServerOwner("g1")}, Text: "raid", Limit: 5})
		if err != nil || len(res) != 1 {
			t.Fatalf("search after the repair = %d results, %v; want the raid memory", len(res), err)
		}
		// `kioku reindex` does the same and reports it as on SQLite.
		if _, err := s.Pool().Exec(ctx, `UPDATE memories SET search_text = '' WHERE content LIKE 'Raid%'`); err != nil {
			t.Fatal(err)
		}
		rep, err := s.Maintenance.Reindex(ctx)
		if want := (maintenance.ReindexReport{Memories: 3, SearchText: 1, Words: 3, Trigrams: 3}); err != nil || rep != want {
			t.Fatalf("Reindex = %+v, %v; want %+v", rep, err, want)
		}
	})

	t.Run("ExpiredTombstone", func(t *testing.T) {
		res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Old rule"}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Memories.Forget(ctx, memory.ServerOwner("g1"), []int64{res.Memory.ID}, "user:u1", ""); err != nil {
			t.Fatal(err)
		}
		clock.Advance(s.RecoverWindow + time.Hour)
		d, r := assess()
		if d.Storage.ExpiredTombstones != 1 || r.Found(maintenance.ActionRetention) != 1 {
			t.Fatalf("storage = %+v, findings %+v; want one tombstone for retention", d.Storage, r.Findings)
		}
		if _, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{}); err != nil {
			t.Fatal(err)
		}
		if d, _ := assess(); d.Storage.ExpiredTombstones != 0 || d.Storage.Forgotten != 0 {
			t.Fatalf("after retention, storage = %+v", d.Storage)
		}
	})

	t.Run("EmbeddingCoverage", func(t *testing.T) {
		const model = "text-embedding-3-small"
		d, err := s.Health.DiagnoseModel(ctx, model)
		if err != nil {
			t.Fatal(err)
		}
		if d.Index.EmbedModel != model || d.Index.Embedded != 0 || d.Index.Vectors != 0 {
			t.Fatalf("index without vectors = %+v", d.Index)
		}
		// One live memory's vector, and one of a model no longer used.
		if _, err := s.Pool().Exec(ctx, `INSERT INTO embeddings (content_hash, model, dims, vector, created_at)
			SELECT content_hash, m, 2, '\x0000'::bytea, 0 FROM (SELECT content_hash FROM memories
				WHERE deleted_at IS NULL ORDER BY id LIMIT 1) h, unnest(ARRAY[$1, 'old-model']) m`, model); err != nil {
			t.Fatal(err)
		}
		d, err = s.Health.DiagnoseModel(ctx, model)
		if err != nil {
			t.Fatal(err)
		}
		if d.Index.Embedded != 1 || d.Index.Vectors != 2 || d.Index.Stale != 1 || d.Index.Live != 3 {
			t.Fatalf("index with one vector = %+v; want 1 of 3 embedded, 2 vectors, 1 stale", d.Index)
		}
		if d, err := s.Health.Diagnose(ctx); err != nil || d.Index.EmbedModel != "" {
			t.Fatalf("Diagnose = %+v, %v; recall without an embedder names no embedding model", d.Index, err)
		}
	})

	t.Run("Compact", func(t *testing.T) {
		if n, err := s.Maintenance.Compact(ctx); err != nil || n != 0 {
			t.Fatalf("Compact = %d, %v; autovacuum owns free space", n, err)
		}
		if n, err := s.Maintenance.EmbedMissing(ctx); err != nil || n != 0 {
			t.Fatalf("EmbedMissing = %d, %v; without an embedder there is nothing to embed", n, err)
		}
	})
}

// TestPostgresRepairLog: the audit keeps what RecordRepairs wrote, cleans errors, drops rows
// older than 30 days and tells Diagnose about the latest run.
func TestPostgresRepairLog(t *testing.T) {
	ctx := context.Background()
	s, clock := openClocked(t)
	old := clock.Now().Add(-31 * 24 * time.Hour)
	now := clock.Now()
	repairs := []maintenance.Repair{
		{At: old, Action: maintenance.ActionReindex, Outcome: maintenance.OutcomeExecuted, Mode: maintenance.ModeExecute,
			ScoreBefore: 40, ScoreAfter: 100, Found: 3, Changed: 3},
		{At: now, Action: maintenance.ActionReapStale, Outcome: maintenance.OutcomeExecuted, Mode: maintenance.ModeExecute,
			ScoreBefore: 80, ScoreAfter: 100, Found: 1, Changed: 1},
		{At: now, Action: maintenance.ActionRequeueDead, Outcome: maintenance.OutcomeHalted, Mode: maintenance.ModeExecute,
			ScoreBefore: 80, ScoreAfter: 80, Found: 2,
			Error: `requeue failed: {"content":"my password is hunter2"}`},
	}
	if err := s.Health.RecordRepairs(ctx, repairs); err != nil {
		t.Fatal(err)
	}
	got, err := s.Health.RepairLog(ctx, old.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []maintenance.Repair{repairs[1], repairs[2]}
	want[0].At, want[1].At = now.UTC(), now.UTC()
	want[1].Error = "requeue failed"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("repair log (-want +got):\n%s", diff)
	}
	d, err := s.Health.Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Repairs.LastRunAt.Equal(now) || !d.Repairs.Halted {
		t.Errorf("diagnosed repairs = %+v; want the run at %s, halted", d.Repairs, now)
	}
	if none, err := s.Health.RepairLog(ctx, now.Add(time.Second)); err != nil || len(none) != 0 {
		t.Errorf("repair log since later = %+v, %v; want none", none, err)
	}
}

// TestPostgresBackupRefuses: `kioku backup` on PostgreSQL says to use pg_dump and writes
// nothing.
func TestPostgresBackupRefuses(t *testing.T) {
	s := pgtest.Open(t)
	path := filepath.Join(t.TempDir(), "kioku-backup.db")
	err := s.Maintenance.Backup(context.Background(), path)
	if !errors.Is(err, postgres.ErrBackupOnPostgres) {
		t.Fatalf("Backup = %v, want ErrBackupOnPostgres", err)
	}
	for _, says := range []string{"pg_dump", "pg_restore", "PostgreSQL", "nothing was written to " + path} {
		if !strings.Contains(err.Error(), says) {
			t.Errorf("Backup's refusal %q does not say %q", err, says)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Backup left a file at %s (%v)", path, err)
	}
}

// TestPostgresStats: the counts of /kioku status, doctor and the metrics.
func TestPostgresStats(t *testing.T) {
	ctx := context.Background()
	s, _ := openClocked(t)
	for _, m := range []memory.Memory{
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raid night is Thursday", Type: memory.TypeEvent},
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "We use Go", Type: memory.TypeDecision},
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "Forget me soon", Type: memory.TypeFact},
		{Scope: memory.ScopeServer, GuildID: "g2", Content: "Another server"},
		{Scope: memory.ScopePersonal, UserID: "u1", GuildID: "g1", Content: "I work nights"},
	} {
		res, err := s.Memories.Remember(ctx, m, "test")
		if err != nil {
			t.Fatal(err)
		}
		if m.Content == "Forget me soon" {
			if _, err := s.Memories.Forget(ctx, memory.ServerOwner("g1"), []int64{res.Memory.ID}, "user:u1", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: memory.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Jobs.Enqueue(ctx, "extract", "c1", nil, memory.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}

	st, err := s.Health.Stats(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != 4 || st.Forgotten != 1 || st.Turns != 1 || st.Jobs[memory.JobQueued] != 1 || st.HistoryRows != 6 ||
		st.Migrations < 3 || st.DBBytes <= 0 || !st.IntegrityOK {
		t.Errorf("stats = %+v", st)
	}
	if st, err := s.Health.Counts(ctx, memory.ServerOwner("g1").Key()); err != nil || st.Memories != 2 || st.Forgotten != 1 || st.IntegrityOK {
		t.Errorf("counts of g1 = %+v, %v; want 2 live, 1 forgotten, integrity unknown", st, err)
	}
	gc, err := s.Health.GuildMemoryCounts(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if gc.Server != 2 || gc.Forgotten != 1 || gc.Personal != 1 ||
		!cmp.Equal(gc.ServerByType, map[memory.Type]int{memory.TypeEvent: 1, memory.TypeDecision: 1}) {
		t.Errorf("guild counts = %+v", gc)
	}
	mc, err := s.Health.MemoryCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts := []memory.MemoryCount{
		{Scope: memory.ScopePersonal, Type: memory.TypeFact, Count: 1},
		{Scope: memory.ScopeServer, Type: memory.TypeDecision, Count: 1},
		{Scope: memory.ScopeServer, Type: memory.TypeEvent, Count: 1},
		{Scope: memory.ScopeServer, Type: memory.TypeFact, Count: 1},
	}
	if diff := cmp.Diff(wantCounts, mc); diff != "" {
		t.Errorf("memory counts (-want +got):\n%s", diff)
	}

	t.Run("InvalidIndex", func(t *testing.T) {
		// An index an interrupted build left invalid answers nothing: Stats says which.
		if _, err := s.Pool().Exec(ctx, `UPDATE pg_index SET indisvalid = false
			WHERE indexrelid = 'memories_guild'::regclass`); err != nil {
			pgtest.Skip(t, fmt.Sprintf("can't mark an index invalid here (%v)", err))
		}
		st, err := s.Health.Stats(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.IntegrityOK || !strings.Contains(st.IntegrityErr, "memories_guild") {
			t.Errorf("stats with an invalid index = ok %v, %q", st.IntegrityOK, st.IntegrityErr)
		}
	})
}
