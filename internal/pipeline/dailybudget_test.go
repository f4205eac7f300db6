package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
)

// spentBudget is a daily budget where the guilds in spent have none left until resetAt.
type spentBudget struct {
	mu      sync.Mutex
	spent   map[string]bool
	resetAt time.Time
	taken   map[string]int
}

func (b *spentBudget) Take(_ context.Context, guildID, _ string) (bool, time.Time, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent[guildID] {
		return false, b.resetAt, nil
	}
	b.taken[guildID]++
	return true, time.Time{}, nil
}

// A job whose server's daily model budget is spent waits for the reset without losing an
// attempt or asking the model anything, while other servers' jobs run; after the reset it
// runs like any other.
func TestDailyBudgetPostponesJobs(t *testing.T) {
	budget := &spentBudget{spent: map[string]bool{"g1": true}, resetAt: epoch.Truncate(24 * time.Hour).Add(24 * time.Hour), taken: map[string]int{}}
	e := newEnv(t, pipeline.Config{BatchTurns: 1, DailyBudget: budget})
	e.say("g1", "c1", "u1", "Aiko", "We decided to hold raids on Fridays")
	e.say("g2", "c2", "u2", "Ben", "We decided to meet on Mondays")

	res := e.tick()
	if res.Done != 1 || res.Postponed != 1 || res.BudgetWait {
		t.Fatalf("tick %+v, want g2's job done and g1's postponed, the worker going on", res)
	}
	if x, _ := e.chatCalls(); x != 1 || budget.taken["g2"] == 0 {
		t.Fatalf("%d extractions, g2 took %d calls; want only g2's", x, budget.taken["g2"])
	}
	var waiting *memory.Job
	for _, j := range e.jobs() {
		if j.State == memory.JobQueued {
			waiting = j
		}
	}
	if waiting == nil || waiting.Attempts != 0 || !waiting.RunAfter.Equal(budget.resetAt) || waiting.LastError != "" {
		t.Fatalf("g1's job %+v, want queued until %s with no attempt used", waiting, budget.resetAt)
	}
	if len(e.memories(memory.ServerOwner("g1"))) != 0 || len(e.memories(memory.ServerOwner("g2"))) == 0 {
		t.Fatal("memories written for the wrong server")
	}

	budget.mu.Lock()
	budget.spent["g1"] = false
	budget.mu.Unlock()
	if res := e.tick(); res.Done != 0 {
		t.Fatalf("g1's job ran before its reset: %+v", res)
	}
	e.clock.Advance(budget.resetAt.Sub(e.clock.Now()))
	if res := e.tick(); res.Done != 1 {
		t.Fatalf("after the reset: %+v", res)
	}
	if len(e.memories(memory.ServerOwner("g1"))) == 0 {
		t.Fatal("g1's facts were not written after the reset")
	}
}
