package pipeline_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/sashabaranov/go-openai"
)

// TestNoModelOrEmbeddingCallInsideAWriteTransaction fails if any request reaches the
// provider while the store holds its write lock (ARCHITECTURE invariant 2).
func TestNoModelOrEmbeddingCallInsideAWriteTransaction(t *testing.T) {
	e := newEnv(t, pipeline.Config{}).withEmbeddings()
	var inTx, calls atomic.Int32
	e.fake.OnRequest(func(r *http.Request) {
		calls.Add(1)
		if e.store.InWriteTx() {
			inTx.Add(1)
			t.Errorf("%s called while a write transaction is open", r.URL.Path)
		}
	})
	seedModes(t, e, memory.PipelineFull)
	e.say("g1", "c2", "u1", "Alice", "I prefer green tea over coffee")
	for range 3 {
		e.tick()
	}
	ex, dec := e.chatCalls()
	if ex < 2 || dec < 3 || e.fake.EmbeddingCount() == 0 {
		t.Fatalf("the scenario made %d extractions, %d decisions, %d embedding calls; it must exercise all three",
			ex, dec, e.fake.EmbeddingCount())
	}
	if got := e.contents(memory.ServerOwner("g1")); !slices.Contains(got, "Raid night is Wednesday instead") {
		t.Fatalf("the scenario did not apply its update: %q", got)
	}
	if inTx.Load() != 0 || calls.Load() == 0 {
		t.Fatalf("%d of %d provider calls inside a write transaction", inTx.Load(), calls.Load())
	}
}

// TestIdempotence: a job that dies after its model calls and before its commit is redone
// exactly once; a worker whose lease was taken over cannot commit twice.
func TestIdempotence(t *testing.T) {
	scenario := func(e *env) {
		e.say("g1", "c1", "u1", "Alice", "I prefer green tea over coffee")
		e.say("g1", "c1", "u2", "Bob", "The raid is on Friday evenings")
		e.say("g1", "c1", "u2", "Bob", decisive)
	}
	clean := newEnv(t, pipeline.Config{})
	scenario(clean)
	clean.tick()
	want := snapshot(t, clean.store)
	if len(want.memories) != 3 {
		t.Fatalf("clean run stored %v", want.memories)
	}

	t.Run("FailureBeforeCommitThenRerun", func(t *testing.T) {
		crash := true
		e := newEnv(t, pipeline.Config{BeforeCommit: func(context.Context, *memory.Job) error {
			if crash {
				crash = false
				return errors.New("disk full")
			}
			return nil
		}})
		scenario(e)
		if r := e.tick(); r.Retried != 1 {
			t.Fatalf("tick %+v", r)
		}
		if got := e.memories(memory.ServerOwner("g1")); len(got) != 0 {
			t.Fatalf("an interrupted job wrote %v", got)
		}
		e.clock.Advance(pipeline.DefaultBackoffBase)
		if r := e.tick(); r.Done != 1 {
			t.Fatalf("rerun %+v", r)
		}
		if got := snapshot(t, e.store); !got.equal(want) {
			t.Fatalf("after a rerun:\n%v\nwant as a clean run:\n%v", got, want)
		}
		if ex, _ := e.chatCalls(); ex != 1 {
			t.Fatalf("%d extraction calls: the rerun did not reuse the checkpoint", ex)
		}
	})
	t.Run("PanicBeforeCommitThenRerun", func(t *testing.T) {
		crash := true
		e := newEnv(t, pipeline.Config{BeforeCommit: func(context.Context, *memory.Job) error {
			if crash {
				crash = false
				panic("worker bug")
			}
			return nil
		}})
		scenario(e)
		if r := e.tick(); r.Retried != 1 {
			t.Fatalf("a panicking job was not recorded as a failed attempt: %+v", r)
		}
		e.clock.Advance(pipeline.DefaultBackoffBase)
		e.tick()
		if got := snapshot(t, e.store); !got.equal(want) {
			t.Fatalf("after a rerun:\n%v\nwant:\n%v", got, want)
		}
	})
	t.Run("LeaseTakenOverWhileBlockedBeforeCommit", func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		var blocked atomic.Bool
		a := newEnv(t, pipeline.Config{BeforeCommit: func(context.Context, *memory.Job) error {
			if blocked.CompareAndSwap(false, true) {
				close(entered)
				<-release
			}
			return nil
		}})
		scenario(a)
		b, err := pipeline.New(pipeline.Config{WorkerID: "b"}, storeDeps(a.store, a.client))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan pipeline.TickResult)
		go func() {
			r, err := a.p.Tick(context.Background())
			if err != nil {
				t.Error(err)
			}
			done <- r
		}()
		<-entered // worker a has made its model calls and hangs before committing
		a.clock.Advance(pipeline.DefaultLeaseFor + time.Second)
		if res, err := b.Reap(t.Context()); err != nil || res.Requeued != 1 {
			t.Fatalf("reap %+v %v", res, err)
		}
		if r, err := b.Tick(t.Context()); err != nil || r.Done != 1 {
			t.Fatalf("worker b: %+v %v", r, err)
		}
		close(release)
		if r := <-done; r.Lost != 1 {
			t.Fatalf("worker a: %+v, want its lease lost", r)
		}
		if got := snapshot(t, a.store); !got.equal(want) {
			t.Fatalf("after a takeover:\n%v\nwant:\n%v", got, want)
		}
	})
}

// state is what a run leaves behind, without ids and times (which differ between runs).
type state struct {
	memories []string
	history  []string
}

func (s state) equal(o state) bool {
	return slices.Equal(s.memories, o.memories) && slices.Equal(s.history, o.history)
}

func (s state) String() string {
	return "memories:\n  " + strings.Join(s.memories, "\n  ") + "\nhistory:\n  " + strings.Join(s.history, "\n  ")
}

func snapshot(t *testing.T, s *ltm.Store) state {
	t.Helper()
	var st state
	for _, owner := range []memory.Owner{memory.ServerOwner("g1"), memory.PersonalOwner("u1"), memory.PersonalOwner("u2")} {
		ms, _, err := s.Memories.List(t.Context(), owner, memory.ListOptions{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			st.memories = append(st.memories, owner.Key()+" "+string(m.Type)+" v"+strconv.Itoa(m.Version)+" "+m.Content)
		}
		evs, err := s.Memories.ScopeHistory(t.Context(), owner, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			st.history = append(st.history, owner.Key()+" "+string(ev.Action)+" "+ev.OldContent+" → "+ev.NewContent+" ("+ev.Reason+")")
		}
	}
	slices.Sort(st.memories)
	slices.Sort(st.history)
	return st
}

func TestCostGuard(t *testing.T) {
	clock := testkit.NewClock(epoch)
	g := pipeline.NewCostGuard(3, time.Hour, clock.Now)
	for i := range 3 {
		if ok, _ := g.Take(); !ok {
			t.Fatalf("call %d refused under the limit", i)
		}
		clock.Advance(10 * time.Minute)
	}
	ok, retry := g.Take()
	if ok || !retry.Equal(epoch.Add(time.Hour)) {
		t.Fatalf("fourth call: ok %v retry %v; want refused until the first leaves the window", ok, retry)
	}
	clock.Advance(30 * time.Minute) // epoch+60m: the first call leaves the window
	if ok, _ := g.Take(); !ok || g.Used() != 3 {
		t.Fatalf("sliding window did not free a call: used %d", g.Used())
	}
	if ok, _ := pipeline.NewCostGuard(-1, time.Hour, clock.Now).Take(); !ok {
		t.Fatal("an unlimited guard refused")
	}
}

// TestCostGuardUnderBurst: a burst of jobs never makes more model calls per hour than the
// budget, and jobs over budget wait (no failed attempts) until the window frees up.
func TestCostGuardUnderBurst(t *testing.T) {
	const budget, channels = 5, 12
	e := newEnv(t, pipeline.Config{CallsPerHour: budget})
	for i := range channels {
		// A number apart: the same words in twelve channels would be one memory (near-duplicates).
		e.say("g1", "c"+strconv.Itoa(i), "u1", "Alice", decisive+" for team "+strconv.Itoa(i+1))
	}
	for hour := 0; ; hour++ {
		if hour > 10 {
			t.Fatal("the burst did not drain in 10 hours")
		}
		before := e.fake.ChatCount()
		for {
			r := e.tick()
			if r.Retried+r.Dead > 0 {
				t.Fatalf("hour %d: jobs failed over budget: %+v", hour, r)
			}
			if r.BudgetWait || r.Done == 0 {
				break
			}
		}
		if calls := e.fake.ChatCount() - before; calls > budget {
			t.Fatalf("hour %d: %d model calls, budget %d", hour, calls, budget)
		}
		for _, j := range e.jobs() {
			if j.Attempts != 0 || j.State == memory.JobDead {
				t.Fatalf("hour %d: job %+v was charged an attempt for waiting", hour, j)
			}
		}
		if st := e.stats(); st.Depth() == 0 {
			break
		}
		e.clock.Advance(time.Hour)
	}
	if got := e.memories(memory.ServerOwner("g1")); len(got) != channels {
		t.Fatalf("%d memories after the burst, want %d", len(got), channels)
	}
}

func TestScheduler(t *testing.T) {
	t.Run("CronRecoversPanics", func(t *testing.T) {
		logs := &syncBuffer{}
		c := pipeline.NewCron(slog.New(slog.NewTextHandler(logs, nil)))
		id, err := c.AddFunc("@every 1h", func() { panic("boom") })
		if err != nil {
			t.Fatal(err)
		}
		c.Entry(id).WrappedJob.Run() // must not panic
		if !strings.Contains(logs.String(), "panic") || !strings.Contains(logs.String(), "boom") {
			t.Fatalf("panic not logged: %s", logs)
		}
	})
	t.Run("CronSkipsWhileStillRunning", func(t *testing.T) {
		logs := &syncBuffer{}
		c := pipeline.NewCron(slog.New(slog.NewTextHandler(logs, nil)))
		var runs atomic.Int32
		started, release, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
		id, _ := c.AddFunc("@every 1h", func() {
			runs.Add(1)
			close(started)
			<-release
		})
		job := c.Entry(id).WrappedJob
		go func() { job.Run(); close(finished) }()
		<-started
		job.Run() // returns at once: the first run still holds the slot
		close(release)
		<-finished
		if runs.Load() != 1 || !strings.Contains(logs.String(), "skipped a scheduled run") {
			t.Fatalf("runs %d, logs %s", runs.Load(), logs)
		}
	})
	t.Run("TasksRecordTheirRuns", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{})
		e.say("g1", "c1", "u1", "Alice", decisive)
		c, err := e.p.Scheduler()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(c.Entries()); n != 4 {
			t.Fatalf("%d scheduled tasks, want work, reap, sweep and retention", n)
		}
		for _, entry := range c.Entries() {
			entry.WrappedJob.Run()
		}
		runs, err := e.store.Jobs.TaskRuns(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range runs {
			names = append(names, r.Name)
			if !r.OK || r.Runs != 1 {
				t.Errorf("run %+v", r)
			}
		}
		if !slices.Equal(names, []string{pipeline.TaskReap, pipeline.TaskRetention, pipeline.TaskSweep, pipeline.TaskWork}) {
			t.Fatalf("recorded tasks %v", names)
		}
		if !strings.Contains(e.logs.String(), "task=work") || !strings.Contains(e.logs.String(), "done=1") {
			t.Fatalf("no structured line for the work run:\n%s", e.logs)
		}
	})
	t.Run("StartStop", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{WorkSchedule: "@every 1h", ReapSchedule: "@every 1h", SweepSchedule: "@every 1h", RetentionSchedule: "@every 1h"})
		if err := e.p.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := e.p.Start(t.Context()); err == nil {
			t.Fatal("started twice")
		}
		st, _ := e.p.Status(t.Context())
		if !st.Running {
			t.Fatal("status does not say running")
		}
		if err := e.p.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := e.p.Stop(t.Context()); err != nil {
			t.Fatalf("second stop: %v", err)
		}
	})
	t.Run("BadSchedule", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{WorkSchedule: "whenever"})
		if err := e.p.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "work") {
			t.Fatalf("start with a bad schedule: %v", err)
		}
	})
}

func TestStatus(t *testing.T) {
	e := newEnv(t, pipeline.Config{MaxAttempts: 1, CallsPerHour: 50})
	ctx := t.Context()
	e.say("g1", "c1", "u1", "Alice", decisive)
	e.fake.Down()
	if err := e.p.RunTask(ctx, pipeline.TaskWork); err != nil {
		t.Fatal(err)
	}
	e.fake.Up()
	e.say("g1", "c2", "u1", "Alice", calm)
	st, err := e.p.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Jobs.Queued != 1 || st.Jobs.Dead != 1 || len(st.DeadJobs) != 1 || st.Budget == nil || st.Budget.Used != 1 || st.Budget.Limit != 50 {
		t.Fatalf("status %+v", st)
	}
	if len(st.Runs) != 1 || st.Runs[0].Name != pipeline.TaskWork || st.Runs[0].Detail == "" {
		t.Fatalf("runs %+v", st.Runs)
	}
	sum := st.Summary()
	for _, want := range []string{"1 queued (0 due)", "1 dead", "1/50 model calls", "work ok"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
	if p := st.Problems(); len(p) != 1 || !strings.Contains(p[0], "503") {
		t.Errorf("problems %q, want the dead job with its error", p)
	}
	doctor, err := pipeline.ReadStatus(ctx, e.store.Jobs, e.store.Now())
	if err != nil || doctor.Budget != nil || doctor.Jobs != st.Jobs {
		t.Fatalf("ReadStatus %+v %v", doctor, err)
	}
}

// TestLongJobKeepsItsLease: a job whose decisions take longer than its lease renews the
// lease as it goes, so the reaper running meanwhile does not hand it to another worker.
func TestLongJobKeepsItsLease(t *testing.T) {
	e := newEnv(t, pipeline.Config{LeaseFor: 3 * time.Minute})
	ctx := t.Context()
	for _, c := range []string{"Raid night is Tuesday", "Movie night is Sunday", "Game night is Monday"} {
		if _, err := e.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: c}, "user:admin"); err != nil {
			t.Fatal(err)
		}
	}
	var reaped atomic.Int32
	e.fake.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		if !isExtraction(req) {
			// Each decision takes two minutes; the reaper runs while the worker waits.
			e.clock.Advance(2 * time.Minute)
			res, err := e.store.Jobs.ReapStale(context.Background())
			if err != nil {
				t.Error(err)
			}
			reaped.Add(int32(res.Requeued + res.Dead))
		}
		return defaultBrain(req)
	})
	e.say("g1", "c1", "u1", "Alice", "Raid night is on Thursday now")
	e.say("g1", "c1", "u1", "Alice", "Movie night is on Friday now")
	e.say("g1", "c1", "u1", "Alice", "Game night is on Wednesday now")
	e.say("g1", "c1", "u1", "Alice", decisive)
	if r := e.tick(); r.Done != 1 || reaped.Load() != 0 {
		t.Fatalf("tick %+v, %d reaped: the lease was not renewed during a long job", r, reaped.Load())
	}
	if _, dec := e.chatCalls(); dec < 3 {
		t.Fatalf("only %d decisions; the test needs a job longer than its lease", dec)
	}
}
