package ltm_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

var diagEpoch = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

// diagStore is a real store on a hand-driven clock, with a raw connection for breaking
// things the store's API never would.
func diagStore(t *testing.T) (*ltm.Store, *testkit.Clock, *sql.DB) {
	t.Helper()
	s := testkit.MustOpenStore(t)
	clock := testkit.NewClock(diagEpoch)
	s.Now = clock.Now
	raw, err := sql.Open("sqlite", sqlite.DSN(s.Path()))
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	t.Cleanup(func() { raw.Close() })
	return s, clock, raw
}

func rememberN(t *testing.T, s *ltm.Store, guild string, n int) []*memory.Memory {
	t.Helper()
	var out []*memory.Memory
	for i := range n {
		// Every other one has text beyond ASCII, which the trigram index holds too.
		content := fmt.Sprintf("Fact number %d about the %s project", i, guild)
		if i%2 == 1 {
			content += " (メモ)"
		}
		res, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: guild,
			Content: content}, "user:u1")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.Memory)
	}
	// The diagnostics read the full-text indexes, which take single writes a moment later.
	if err := s.Memories.FlushIndex(t.Context()); err != nil {
		t.Fatal(err)
	}
	return out
}

// killJobs makes n dead jobs (one attempt each) of distinct keys.
func killJobs(t *testing.T, s *ltm.Store, prefix string, n int) {
	t.Helper()
	ctx := t.Context()
	for i := range n {
		if _, _, err := s.Jobs.Enqueue(ctx, "extract", fmt.Sprintf("%s-%d", prefix, i), nil, memory.EnqueueOptions{MaxAttempts: 1}); err != nil {
			t.Fatal(err)
		}
		j, err := s.Jobs.Lease(ctx, "w", nil, time.Minute)
		if err != nil || j == nil {
			t.Fatalf("lease: %v %v", j, err)
		}
		if _, err := s.Jobs.Fail(ctx, j.ID, "w", errors.New("provider returned 503"), 0); err != nil {
			t.Fatal(err)
		}
	}
}

func diagnose(t *testing.T, s *ltm.Store) (maintenance.Diagnostics, maintenance.Report) {
	t.Helper()
	d, err := s.Health.Diagnose(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return d, maintenance.Assess(d)
}

func TestDiagnoseHealthyStore(t *testing.T) {
	s, _, _ := diagStore(t)
	rememberN(t, s, "g1", 30)
	d, r := diagnose(t, s)
	if d.Index.Live != 30 || d.Index.Words.Rows != 30 || d.Index.Trigrams.Rows != 15 || d.Index.Words.OutOfSync()+d.Index.Trigrams.OutOfSync() != 0 {
		t.Fatalf("index %+v", d.Index)
	}
	if d.Storage.AutoVacuum != "none" || d.Storage.FileBytes == 0 || len(d.Storage.PendingMigrations) != 0 {
		t.Fatalf("storage %+v", d.Storage)
	}
	if r.Score != 100 || r.Status != maintenance.StatusHealthy || len(r.Findings) != 0 {
		t.Fatalf("report %+v", r)
	}
}

// TestDiagnoseUnhealthyStore breaks a real database the ways a crash, a bug or another
// SQLite client can, and checks each shows in its domain with the command that fixes it.
func TestDiagnoseUnhealthyStore(t *testing.T) {
	ctx := context.Background()
	s, clock, raw := diagStore(t)
	mems := rememberN(t, s, "g1", 40)

	t.Run("DeadJobsAndExpiredLeases", func(t *testing.T) {
		killJobs(t, s, "dead", 12)
		for i := range 3 {
			if _, _, err := s.Jobs.Enqueue(ctx, "extract", fmt.Sprintf("done-%d", i), nil, memory.EnqueueOptions{}); err != nil {
				t.Fatal(err)
			}
			j, _ := s.Jobs.Lease(ctx, "w", nil, time.Minute)
			if err := s.Jobs.Complete(ctx, j.ID, "w"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 {
			if _, _, err := s.Jobs.Enqueue(ctx, "extract", fmt.Sprintf("stuck-%d", i), nil, memory.EnqueueOptions{}); err != nil {
				t.Fatal(err)
			}
			if j, err := s.Jobs.Lease(ctx, "crashed", nil, time.Minute); err != nil || j == nil {
				t.Fatalf("lease: %v", err)
			}
		}
		clock.Advance(5 * time.Minute)
		d, r := diagnose(t, s)
		q := d.Queue
		if q.Dead != 12 || q.Requeueable != 12 || q.DeadRecent != 12 || q.FinishedRecent != 15 || q.Stale != 2 || q.Depth != 2 || q.NewestDead == 0 {
			t.Fatalf("queue %+v", q)
		}
		// 12 of max(15, 20) finished died: 60 % → critical (-50); stale leases -20.
		if score, _ := r.Domain("queue"); score != 30 {
			t.Fatalf("queue score %d, findings %+v", score, r.Findings)
		}
		wantFinding(t, r, "queue", maintenance.SeverityCritical, fmt.Sprintf("kioku jobs requeue %d", q.NewestDead), maintenance.ActionRequeueDead)
		wantFinding(t, r, "queue", maintenance.SeverityWarn, "kioku run", maintenance.ActionReapStale)
	})

	t.Run("IndexesOutOfStep", func(t *testing.T) {
		// Another client deleted index rows directly: five memories vanish from the word
		// index, three from the trigram index.
		for _, m := range mems[:5] {
			if _, err := raw.ExecContext(ctx, `DELETE FROM memories_fts WHERE rowid = ?`, m.ID); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []*memory.Memory{mems[5], mems[7], mems[9]} { // held by the trigram index
			if _, err := raw.ExecContext(ctx, `INSERT INTO memories_tri (memories_tri, rowid, content) VALUES ('delete', ?, ?)`, m.ID, m.Content); err != nil {
				t.Fatal(err)
			}
		}
		d, r := diagnose(t, s)
		if d.Index.Words.Missing != 5 || d.Index.Words.Rows != 35 || d.Index.Trigrams.Missing != 3 || d.Index.Trigrams.Extra != 0 {
			t.Fatalf("index %+v", d.Index)
		}
		// 5 of 40 missing is over 10 %: critical (-60); 3 of 40: warn (-30).
		if score, _ := r.Domain("index"); score != 10 {
			t.Fatalf("index score %d, findings %+v", score, r.Findings)
		}
		wantFinding(t, r, "index", maintenance.SeverityCritical, "kioku reindex", maintenance.ActionReindex)
		if n, err := s.Maintenance.RepairIndexes(ctx); err != nil || n != 40 {
			t.Fatalf("repair indexes: %d, %v", n, err)
		}
		if d, _ := diagnose(t, s); d.Index.Words.OutOfSync()+d.Index.Trigrams.OutOfSync() != 0 {
			t.Fatalf("after the repair: %+v", d.Index)
		}
	})

	t.Run("TombstonesPastTheRecoverWindow", func(t *testing.T) {
		ids := make([]int64, 0, 30)
		for _, m := range mems[10:40] {
			ids = append(ids, m.ID)
		}
		if _, err := s.Memories.Forget(ctx, memory.ServerOwner("g1"), ids, "user:u1", ""); err != nil {
			t.Fatal(err)
		}
		rememberN(t, s, "g2", 20) // 30 live, 30 forgotten: 50 %
		clock.Advance(s.RecoverWindow + time.Hour)
		d, r := diagnose(t, s)
		if d.Storage.Live != 30 || d.Storage.Forgotten != 30 || d.Storage.ExpiredTombstones != 30 {
			t.Fatalf("storage %+v", d.Storage)
		}
		if score, _ := r.Domain("storage"); score != 80 { // expired -15, half forgotten -5
			t.Fatalf("storage score %d, findings %+v", score, r.Findings)
		}
		wantFinding(t, r, "storage", maintenance.SeverityWarn, "KIOKU_MAINTENANCE_MODE=execute kioku run", maintenance.ActionRetention)
	})

	t.Run("RecoveriesAndContradictions", func(t *testing.T) {
		g2 := rememberN(t, s, "g3", 4)
		for _, m := range g2 {
			if _, err := s.Memories.Forget(ctx, memory.ServerOwner("g3"), []int64{m.ID}, "user:u1", ""); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Memories.Recover(ctx, memory.ServerOwner("g3"), m.ID, 0, "user:u1"); err != nil {
				t.Fatal(err)
			}
		}
		// Two contradictions the pipeline recorded for review, as memory_history rows.
		for _, m := range g2[:2] {
			if _, err := raw.ExecContext(ctx, `INSERT INTO memory_history (memory_id, scope_key, action, actor, created_at)
				VALUES (?, 'g:g3', 'review_needed', 'pipeline', ?)`, m.ID, clock.Now().UnixMilli()); err != nil {
				t.Fatal(err)
			}
		}
		d, r := diagnose(t, s)
		m := d.Mutations
		if m.Recoveries != 4 || m.Deletes != 4 || m.Reviews != 2 || m.NewestReview != (maintenance.MemoryRef{ID: g2[1].ID, ScopeKey: "g:g3"}) {
			t.Fatalf("mutations %+v", m)
		}
		if score, _ := r.Domain("mutations"); score != 70 { // recoveries -20, reviews -10
			t.Fatalf("mutations score %d, findings %+v", score, r.Findings)
		}
		wantFinding(t, r, "mutations", maintenance.SeverityWarn, "KIOKU_PIPELINE_MODE=controlled kioku run", "")
		wantFinding(t, r, "mutations", maintenance.SeverityWarn, fmt.Sprintf("kioku memories history %d --guild g3", g2[1].ID), "")
	})
}

// TestDiagnoseEmbeddings: with an embedding model, coverage counts live memories that have
// a vector of that model, and EmbedMissing fills the gap.
func TestDiagnoseEmbeddings(t *testing.T) {
	ctx := t.Context()
	s, clock, raw := diagStore(t)
	mems := rememberN(t, s, "g1", 10) // before the embedder: no vectors
	fail := true
	s.Recall.SetEmbedder(func(_ context.Context, texts []string) ([][]float32, error) {
		if fail {
			return nil, errors.New("provider down")
		}
		out := make([][]float32, len(texts))
		for i := range texts {
			out[i] = []float32{1, float32(i + 1)}
		}
		return out, nil
	}, "embed-a")
	if _, err := raw.ExecContext(ctx, `INSERT INTO embeddings (content_hash, model, dims, vector, created_at) VALUES (?, 'old-model', 1, x'0000803f', 0)`, mems[0].Hash); err != nil {
		t.Fatal(err)
	}
	d, r := diagnose(t, s)
	if d.Index.EmbedModel != "embed-a" || d.Index.Embedded != 0 || d.Index.Vectors != 1 || d.Index.Stale != 1 {
		t.Fatalf("index %+v", d.Index)
	}
	if score, _ := r.Domain("index"); score != 60 {
		t.Fatalf("index score %d, findings %+v", score, r.Findings)
	}
	wantFinding(t, r, "index", maintenance.SeverityCritical, "KIOKU_MAINTENANCE_MODE=execute kioku run", maintenance.ActionEmbedMissing)
	if _, err := s.Maintenance.EmbedMissing(ctx); err == nil {
		t.Fatal("embedding with the provider down succeeded")
	}
	fail = false
	// The failure marked the provider down; the repair waits that out like the tracker.
	clock.Advance(s.EmbedRetryAfter + time.Second)
	if n, err := s.Maintenance.EmbedMissing(ctx); err != nil || n != 10 {
		t.Fatalf("embed missing: %d, %v", n, err)
	}
	if d, _ := diagnose(t, s); d.Index.Embedded != 10 {
		t.Fatalf("after embedding: %+v", d.Index)
	}
}

// Self-repair requeues a dead job once in its life; a job whose work is already queued
// stays dead.
func TestRequeueDeadOnce(t *testing.T) {
	ctx := t.Context()
	s, _, _ := diagStore(t)
	killJobs(t, s, "k", 3)
	// Job k-0's work is queued again by a new trigger.
	if _, _, err := s.Jobs.Enqueue(ctx, "extract", "k-0", nil, memory.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	n, err := s.Maintenance.RequeueDead(ctx, 10)
	if err != nil || n != 2 {
		t.Fatalf("requeued %d, %v; want 2", n, err)
	}
	d, _ := diagnose(t, s)
	if d.Queue.Dead != 1 || d.Queue.Requeueable != 0 || d.Queue.Depth != 3 {
		t.Fatalf("queue after requeue %+v", d.Queue)
	}
	// The trigger's job succeeds; both requeued jobs die again: nothing is requeued a
	// second time.
	for range 3 {
		j, err := s.Jobs.Lease(ctx, "w", nil, time.Minute)
		if err != nil || j == nil {
			t.Fatalf("lease: %v %v", j, err)
		}
		if j.DedupKey == "k-0" {
			err = s.Jobs.Complete(ctx, j.ID, "w")
		} else {
			err = s.Jobs.Bury(ctx, j.ID, "w", errors.New("bad again"))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.Maintenance.RequeueDead(ctx, 10); err != nil || n != 0 {
		t.Fatalf("second requeue: %d, %v; want none", n, err)
	}
	if err := s.Jobs.Requeue(ctx, mustDeadID(t, s)); err != nil {
		t.Fatalf("an operator's requeue is not limited: %v", err)
	}
}

func mustDeadID(t *testing.T, s *ltm.Store) int64 {
	t.Helper()
	jobs, err := s.Jobs.ListJobs(t.Context(), memory.JobDead, 1)
	if err != nil || len(jobs) == 0 {
		t.Fatalf("no dead job: %v", err)
	}
	return jobs[0].ID
}

// Compact returns free pages: the database is in auto_vacuum none, so it is a VACUUM.
func TestCompactFreesPages(t *testing.T) {
	ctx := t.Context()
	s, _, raw := diagStore(t)
	big := strings.Repeat("x", 4000)
	for i := range 200 {
		if _, err := raw.ExecContext(ctx, `INSERT INTO transcripts (channel_id, user_id, role, content, created_at) VALUES ('c', 'u', 'user', ?, 0)`, fmt.Sprint(i, big)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.ExecContext(ctx, `DELETE FROM transcripts`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	d, _ := diagnose(t, s)
	if d.Storage.FreeBytes < 500_000 {
		t.Fatalf("free bytes %d before compacting", d.Storage.FreeBytes)
	}
	freed, err := s.Maintenance.Compact(ctx)
	if err != nil || freed != d.Storage.FreeBytes {
		t.Fatalf("compact freed %d (%v), want %d", freed, err, d.Storage.FreeBytes)
	}
	if d, _ := diagnose(t, s); d.Storage.FreeBytes != 0 {
		t.Fatalf("free bytes after compacting: %d", d.Storage.FreeBytes)
	}
}

func TestRepairAuditRoundTripAndPrune(t *testing.T) {
	ctx := t.Context()
	s, clock, _ := diagStore(t)
	old := maintenance.Repair{At: clock.Now(), Action: maintenance.ActionReindex, Outcome: maintenance.OutcomeExecuted, Mode: maintenance.ModeExecute,
		ScoreBefore: 40, ScoreAfter: 90, Found: 5, Changed: 40}
	if err := s.Health.RecordRepairs(ctx, []maintenance.Repair{old}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(ltm.RepairLogRetention + time.Hour)
	halted := maintenance.Repair{At: clock.Now(), Action: maintenance.ActionRequeueDead, Outcome: maintenance.OutcomeHalted, Mode: maintenance.ModeExecute,
		ScoreBefore: 60, ScoreAfter: 60, Found: 3, Error: "Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz0123456789"}
	if err := s.Health.RecordRepairs(ctx, []maintenance.Repair{halted}); err != nil {
		t.Fatal(err)
	}
	log, err := s.Health.RepairLog(ctx, time.Time{})
	if err != nil || len(log) != 1 {
		t.Fatalf("log %+v, %v: want only the new row", log, err)
	}
	if log[0].Action != halted.Action || log[0].Outcome != halted.Outcome || log[0].Found != 3 || strings.Contains(log[0].Error, "sk-abc") {
		t.Fatalf("row %+v", log[0])
	}
	d, _ := diagnose(t, s)
	if !d.Repairs.Halted || !d.Repairs.LastRunAt.Equal(clock.Now()) {
		t.Fatalf("repair state %+v", d.Repairs)
	}
}

func wantFinding(t *testing.T, r maintenance.Report, domain string, sev maintenance.Severity, fix string, action maintenance.Action) {
	t.Helper()
	if !slices.ContainsFunc(r.Findings, func(f maintenance.Finding) bool {
		return f.Domain == domain && f.Severity == sev && f.Fix == fix && f.Action == action
	}) {
		t.Fatalf("no %s %s finding with fix %q and action %q in %+v", sev, domain, fix, action, r.Findings)
	}
}
