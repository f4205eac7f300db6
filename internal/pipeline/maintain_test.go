package pipeline_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// maintEnv is env with a pipeline whose maintenance task works on the real store, and a
// raw connection to break the database the way another client or a crash would.
type maintEnv struct {
	*env
	mp  *pipeline.Pipeline
	raw *sql.DB
}

func newMaintEnv(t *testing.T, cfg pipeline.Config) *maintEnv {
	t.Helper()
	e := newEnv(t, pipeline.Config{})
	deps := storeDeps(e.store, e.client)
	deps.Health, deps.Repairer = e.store.Health, e.store.Maintenance
	deps.Provider = func() maintenance.ProviderCounts {
		u, es := e.client.Usage(), e.store.Recall.EmbedStatus()
		return maintenance.ProviderCounts{Calls: u.Calls, Errors: u.Errors, EmbedModel: es.Model, EmbedDown: es.Down, EmbedFailedAt: es.LastErrorAt}
	}
	cfg.Logger = e.p.Config().Logger
	mp, err := pipeline.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", sqlite.DSN(e.store.Path()))
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	t.Cleanup(func() { raw.Close() })
	return &maintEnv{env: e, mp: mp, raw: raw}
}

// remember stores n server memories in g1.
func (m *maintEnv) remember(n int) []*memory.Memory {
	m.t.Helper()
	var out []*memory.Memory
	for i := range n {
		res, err := m.store.Memories.Remember(m.t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
			Content: fmt.Sprintf("The team agreed on rule %d for releases", i)}, "user:u1")
		if err != nil {
			m.t.Fatal(err)
		}
		out = append(out, res.Memory)
	}
	return out
}

// dropFromWordIndex deletes memories' word-index rows directly (once single writes' memories
// are in it).
func (m *maintEnv) dropFromWordIndex(mems ...*memory.Memory) {
	m.t.Helper()
	if err := m.store.Memories.FlushIndex(m.t.Context()); err != nil {
		m.t.Fatal(err)
	}
	for _, mem := range mems {
		if _, err := m.raw.Exec(`DELETE FROM memories_fts WHERE rowid = ?`, mem.ID); err != nil {
			m.t.Fatal(err)
		}
	}
}

// staleLease leaves a job leased by a worker that died, its lease expired.
func (m *maintEnv) staleLease(key string) {
	m.t.Helper()
	ctx := m.t.Context()
	if _, _, err := m.store.Jobs.Enqueue(ctx, "test", key, nil, memory.EnqueueOptions{}); err != nil {
		m.t.Fatal(err)
	}
	if j, err := m.store.Jobs.Lease(ctx, "crashed", []string{"test"}, time.Minute); err != nil || j == nil {
		m.t.Fatalf("lease: %v %v", j, err)
	}
	m.clock.Advance(2 * time.Minute)
}

// deadJob makes one dead job.
func (m *maintEnv) deadJob(key string) {
	m.t.Helper()
	ctx := m.t.Context()
	if _, _, err := m.store.Jobs.Enqueue(ctx, "test", key, nil, memory.EnqueueOptions{MaxAttempts: 1}); err != nil {
		m.t.Fatal(err)
	}
	j, err := m.store.Jobs.Lease(ctx, "w", []string{"test"}, time.Minute)
	if err != nil || j == nil {
		m.t.Fatalf("lease: %v %v", j, err)
	}
	if _, err := m.store.Jobs.Fail(ctx, j.ID, "w", errors.New("provider returned 503"), 0); err != nil {
		m.t.Fatal(err)
	}
}

func (m *maintEnv) maintain() pipeline.MaintenanceRun {
	m.t.Helper()
	r, err := m.mp.Maintain(m.t.Context())
	if err != nil {
		m.t.Fatal(err)
	}
	return r
}

func outcomeOf(r pipeline.MaintenanceRun, a maintenance.Action) maintenance.Outcome {
	for _, rep := range r.Repairs {
		if rep.Action == a {
			return rep.Outcome
		}
	}
	return ""
}

// TestMaintenanceRepairsABrokenStore: one run mends the word index, reaps the expired lease
// and requeues the dead job; the score goes up and every repair is audited. The next
// breakage within the hour waits for the reindex cooldown.
func TestMaintenanceRepairsABrokenStore(t *testing.T) {
	m := newMaintEnv(t, pipeline.Config{})
	mems := m.remember(20)
	m.dropFromWordIndex(mems[:5]...)
	m.deadJob("d1")
	m.staleLease("s1")

	r := m.maintain()
	if r.Before.Status == maintenance.StatusHealthy || r.After.Score <= r.Before.Score || r.After.Score != 100 {
		t.Fatalf("scores %d (%s) → %d; findings %+v", r.Before.Score, r.Before.Status, r.After.Score, r.After.Findings)
	}
	for _, a := range []maintenance.Action{maintenance.ActionReindex, maintenance.ActionReapStale, maintenance.ActionRequeueDead} {
		if o := outcomeOf(r, a); o != maintenance.OutcomeExecuted {
			t.Errorf("%s: %q, want executed", a, o)
		}
	}
	d, err := m.store.Health.Diagnose(t.Context())
	if err != nil || d.Index.Words.OutOfSync() != 0 || d.Queue.Stale != 0 || d.Queue.Dead != 0 {
		t.Fatalf("after the run: %+v %v", d, err)
	}
	audit, err := m.store.Health.RepairLog(t.Context(), time.Time{})
	if err != nil || len(audit) != 3 {
		t.Fatalf("audit %+v, %v", audit, err)
	}
	for _, row := range audit {
		if row.ScoreBefore != r.Before.Score || row.ScoreAfter != 100 || row.Mode != maintenance.ModeExecute || row.Found == 0 {
			t.Errorf("audit row %+v", row)
		}
	}
	if got, ok := m.mp.Health(); !ok || got.Score != 100 {
		t.Fatalf("Health() = %d, %v", got.Score, ok)
	}

	// Broken again ten minutes later: the reindex waits out its hour.
	m.clock.Advance(10 * time.Minute)
	m.dropFromWordIndex(mems[7])
	r = m.maintain()
	if o := outcomeOf(r, maintenance.ActionReindex); o != maintenance.OutcomeCooldown {
		t.Fatalf("reindex within its cooldown: %q", o)
	}
	m.clock.Advance(time.Hour)
	if o := outcomeOf(m.maintain(), maintenance.ActionReindex); o != maintenance.OutcomeExecuted {
		t.Fatalf("reindex after its cooldown: %q", o)
	}
}

// TestMaintenanceHourlyBudget: the reaper repair (5-minute cooldown, 3 an hour) runs three
// times in the hour however often a lease goes stale, then waits for the hour to pass.
func TestMaintenanceHourlyBudget(t *testing.T) {
	m := newMaintEnv(t, pipeline.Config{})
	want := []maintenance.Outcome{maintenance.OutcomeExecuted, maintenance.OutcomeExecuted, maintenance.OutcomeExecuted,
		maintenance.OutcomeBudget, maintenance.OutcomeBudget}
	for i, w := range want {
		m.staleLease(fmt.Sprintf("s%d", i))
		if o := outcomeOf(m.maintain(), maintenance.ActionReapStale); o != w {
			t.Fatalf("stale lease %d (%s in): %q, want %q", i, m.clock.Now().Sub(epoch), o, w)
		}
		m.clock.Advance(8 * time.Minute) // past the cooldown each time
	}
	// The first reap ran 2 minutes in; an hour later it has left the budget's hour (the
	// last stale lease is still waiting).
	m.clock.Advance(epoch.Add(62 * time.Minute).Sub(m.clock.Now()))
	if o := outcomeOf(m.maintain(), maintenance.ActionReapStale); o != maintenance.OutcomeExecuted {
		t.Fatalf("an hour after the first reap: %q", o)
	}
}

// TestMaintenanceObserveChangesNothing: observe mode diagnoses and audits what it would do,
// and the database stays exactly as broken as it was.
func TestMaintenanceObserveChangesNothing(t *testing.T) {
	m := newMaintEnv(t, pipeline.Config{MaintenanceMode: maintenance.ModeObserve})
	mems := m.remember(10)
	m.dropFromWordIndex(mems[:3]...)
	m.deadJob("d1")
	m.staleLease("s1")
	before, err := m.store.Health.Diagnose(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := m.maintain()
	if len(r.Repairs) != 3 || r.After.Score != r.Before.Score {
		t.Fatalf("run %+v", r)
	}
	for _, rep := range r.Repairs {
		if rep.Outcome != maintenance.OutcomeObserved || rep.Mode != maintenance.ModeObserve || rep.Changed != 0 {
			t.Errorf("repair %+v, want observed and nothing changed", rep)
		}
	}
	after, err := m.store.Health.Diagnose(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after.Index.Words != before.Index.Words || after.Queue.Dead != 1 || after.Queue.Stale != 1 || after.Queue.Requeueable != 1 {
		t.Fatalf("observe changed the store: before %+v after %+v", before, after)
	}
	audit, err := m.store.Health.RepairLog(t.Context(), time.Time{})
	if err != nil || len(audit) != 3 {
		t.Fatalf("audit %+v, %v", audit, err)
	}
}

// TestMaintenanceHaltsAfterThreeRunsThatDoNotHelp: the embedding provider keeps failing, so
// embedding the missing vectors never improves the score; after three such runs self-repair
// halts (and says so in the audit and the diagnostics) until an operator resets it.
func TestMaintenanceHaltsAfterThreeRunsThatDoNotHelp(t *testing.T) {
	m := newMaintEnv(t, pipeline.Config{RepairLimits: map[maintenance.Action]maintenance.Limit{
		maintenance.ActionEmbedMissing: {Cooldown: time.Minute, PerHour: 100}}})
	m.remember(10)
	m.withEmbeddings()
	m.fake.Down()
	for i := range maintenance.HaltAfter {
		m.clock.Advance(2 * time.Minute) // past the embedding back-off and the cooldown
		r := m.maintain()
		if o := outcomeOf(r, maintenance.ActionEmbedMissing); o != maintenance.OutcomeFailed {
			t.Fatalf("run %d: embed %q, want failed", i, o)
		}
		if r.Halted != (i == maintenance.HaltAfter-1) {
			t.Fatalf("run %d: halted %v", i, r.Halted)
		}
	}
	calls := m.fake.EmbeddingCount()
	m.clock.Advance(2 * time.Minute)
	r := m.maintain()
	if o := outcomeOf(r, maintenance.ActionEmbedMissing); o != maintenance.OutcomeHalted {
		t.Fatalf("after the halt: embed %q", o)
	}
	if m.fake.EmbeddingCount() != calls {
		t.Fatal("a halted run called the provider")
	}
	d, err := m.store.Health.Diagnose(t.Context())
	if err != nil || !d.Repairs.Halted {
		t.Fatalf("diagnostics do not show the halt: %+v %v", d.Repairs, err)
	}
	if rep := maintenance.Assess(d); !hasDomainFinding(rep, maintenance.DomainMaintenance) {
		t.Fatalf("no finding about the halt: %+v", rep.Findings)
	}
	m.fake.Up()
	m.clock.Advance(2 * time.Minute)
	if o := outcomeOf(m.maintain(), maintenance.ActionEmbedMissing); o != maintenance.OutcomeHalted {
		t.Fatalf("provider back, score unchanged: embed %q, want still halted", o)
	}
	m.mp.ResetRepairs()
	m.clock.Advance(2 * time.Minute)
	r = m.maintain()
	// The index is whole again; the composite stays held down by the provider's failed
	// calls of the last hour.
	before, _ := r.Before.Domain(maintenance.DomainIndex)
	after, _ := r.After.Domain(maintenance.DomainIndex)
	if o := outcomeOf(r, maintenance.ActionEmbedMissing); o != maintenance.OutcomeExecuted || before >= after || after != 100 {
		t.Fatalf("after reset: embed %q, index score %d → %d", o, before, after)
	}
}

func hasDomainFinding(r maintenance.Report, domain string) bool {
	for _, f := range r.Findings {
		if f.Domain == domain {
			return true
		}
	}
	return false
}

// The maintenance task is scheduled unless it is off, and runs like any task: recorded in
// the ledger for doctor.
func TestMaintenanceTaskScheduledAndRecorded(t *testing.T) {
	m := newMaintEnv(t, pipeline.Config{})
	c, err := m.mp.Scheduler()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Entries()); n != 5 {
		t.Fatalf("%d scheduled tasks, want 5 with maintenance", n)
	}
	if err := m.mp.RunTask(t.Context(), pipeline.TaskMaintenance); err != nil {
		t.Fatal(err)
	}
	runs, err := m.store.Jobs.TaskRuns(t.Context())
	if err != nil || len(runs) != 1 || runs[0].Name != pipeline.TaskMaintenance || !runs[0].OK {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	off := newMaintEnv(t, pipeline.Config{MaintenanceMode: maintenance.ModeOff})
	c, _ = off.mp.Scheduler()
	if n := len(c.Entries()); n != 4 {
		t.Fatalf("%d scheduled tasks with maintenance off, want 4", n)
	}
	if _, err := off.mp.Maintain(t.Context()); err == nil {
		t.Fatal("Maintain ran with maintenance off")
	}
}
