package pipeline_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
)

// TestJobOutcomesReported: every way a job run ends reaches Config.OnJobOutcome once: a
// failure with a retry left, the last failure, a success, a job that can never run, and
// a run cut short by shutdown that goes back to the queue.
func TestJobOutcomesReported(t *testing.T) {
	var (
		mu  sync.Mutex
		got []pipeline.JobOutcome
	)
	take := func() []pipeline.JobOutcome {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
	// interrupt, when set, ends the tick's context right before the commit, as a shutdown would.
	var interrupt context.CancelFunc
	e := newEnv(t, pipeline.Config{
		MaxAttempts: 2,
		OnJobOutcome: func(o pipeline.JobOutcome) {
			mu.Lock()
			got = append(got, o)
			mu.Unlock()
		},
		BeforeCommit: func(ctx context.Context, _ *memory.Job) error {
			if interrupt != nil {
				interrupt()
				return ctx.Err()
			}
			return nil
		},
	})
	ctx := t.Context()
	check := func(step string, want ...pipeline.JobOutcome) {
		t.Helper()
		if g := take(); !slices.Equal(g, want) {
			t.Errorf("%s: outcomes %v, want %v\n%s", step, g, want, e.logs)
		}
	}

	e.say("g1", "c1", "u1", "Alice", decisive)
	e.fake.Down()
	e.tick()
	check("first failure", pipeline.JobFailed)
	e.clock.Advance(pipeline.DefaultBackoffBase)
	e.tick()
	check("last failure", pipeline.JobDead)

	e.fake.Up()
	if err := e.store.Jobs.Requeue(ctx, e.jobs()[0].ID); err != nil {
		t.Fatal(err)
	}
	e.tick()
	check("success", pipeline.JobCompleted)

	if _, _, err := e.store.Jobs.Enqueue(ctx, pipeline.KindExtract, "bad", map[string]int{"x": 1}, memory.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	e.tick()
	check("bad payload", pipeline.JobBuried)

	e.say("g1", "c2", "u1", "Alice", decisive)
	tickCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupt = cancel
	if _, err := e.p.Tick(tickCtx); err != nil {
		t.Fatal(err)
	}
	check("shutdown", pipeline.JobPostponed)
}
