package pipeline_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestCostGuardShare: with a share, a key that used its part of the window is reported as
// spent until enough of its calls leave the window; other keys are not affected.
func TestCostGuardShare(t *testing.T) {
	clock := testkit.NewClock(epoch)
	g := pipeline.NewCostGuard(10, time.Hour, clock.Now).WithShare(0.5)
	for i := range 5 {
		if spent, _ := g.ShareSpent("g:a"); spent {
			t.Fatalf("call %d: share spent early", i)
		}
		if ok, _ := g.TakeFor("g:a"); !ok {
			t.Fatalf("call %d refused", i)
		}
		clock.Advance(time.Minute)
	}
	spent, retry := g.ShareSpent("g:a")
	if !spent || !retry.Equal(epoch.Add(time.Hour)) {
		t.Fatalf("after 5 of 10 calls: spent %v until %v; want spent until the first call leaves the window", spent, retry)
	}
	if spent, _ := g.ShareSpent("g:b"); spent || g.UsedBy("g:a") != 5 || g.Used() != 5 {
		t.Fatalf("another key is charged for g:a's calls (used %d/%d)", g.UsedBy("g:a"), g.Used())
	}
	// The guard only counts: calls over the share are still possible when nobody waits.
	if ok, _ := g.TakeFor("g:a"); !ok {
		t.Fatal("a call over the share was refused by the guard itself")
	}
	if _, retry := g.ShareSpent("g:a"); !retry.Equal(epoch.Add(time.Hour + time.Minute)) {
		t.Fatalf("six calls with a share of five: retry %v, want when the second call leaves", retry)
	}
	clock.Advance(time.Hour)
	if spent, _ := g.ShareSpent("g:a"); spent {
		t.Fatal("the share did not free up with the window")
	}
	if spent, _ := pipeline.NewCostGuard(10, time.Hour, clock.Now).ShareSpent("g:a"); spent {
		t.Fatal("a guard without a share reported one spent")
	}
}

// TestOneServerCannotDrainTheBudget (issue item 14): a busy server uses at most its share
// of the hourly budget while another server's job waits; that job runs in the same hour.
// A server alone still gets the whole budget.
func TestOneServerCannotDrainTheBudget(t *testing.T) {
	const budget = 4
	e := newEnv(t, pipeline.Config{CallsPerHour: budget})
	for i := range 6 {
		c := "c" + strconv.Itoa(i)
		e.say("busy", c, "u1", "Alice", decisive+" in channel "+string(rune('a'+i)))
	}
	e.say("quiet", "c1", "u2", "Bob", "We decided to meet at the lake on Sunday")
	for range 3 {
		e.tick()
	}
	if got := e.memories(memory.ServerOwner("quiet")); len(got) != 1 {
		t.Fatalf("the quiet server's job did not run this hour: %v\n%s", got, e.logs)
	}
	if used := e.p.Guard().UsedBy("g:busy"); used > budget/2 {
		t.Fatalf("the busy server used %d of %d calls while another waited", used, budget)
	}
	if n := e.fake.ChatCount(); n > budget {
		t.Fatalf("%d model calls, budget %d", n, budget)
	}
	for _, j := range e.jobs() {
		if j.Attempts != 0 || j.State == memory.JobDead {
			t.Fatalf("job %+v was charged an attempt for waiting its turn", j)
		}
	}

	t.Run("AloneItGetsTheWholeBudget", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{CallsPerHour: budget})
		for i := range 6 {
			e.say("busy", "c"+strconv.Itoa(i), "u1", "Alice", decisive+" in channel "+string(rune('a'+i)))
		}
		for range 3 {
			e.tick()
		}
		if used := e.p.Guard().UsedBy("g:busy"); used != budget {
			t.Fatalf("a server alone used %d of %d calls", used, budget)
		}
	})
}

// TestHighSignalTriggersPerMember (issue item 14): one member's high-signal turns start at
// most HighSignalPerHour extractions at once; beyond that their turns wait for the idle or
// batch trigger, and the allowance comes back with time. Others are not affected.
func TestHighSignalTriggersPerMember(t *testing.T) {
	e := newEnv(t, pipeline.Config{HighSignalPerHour: 2})
	due := func(channel string) bool {
		t.Helper()
		for _, j := range e.jobs() {
			if j.DedupKey == "g1/"+channel && j.State == memory.JobQueued {
				return !j.RunAfter.After(e.clock.Now())
			}
		}
		t.Fatalf("no job for %s", channel)
		return false
	}
	for i, want := range []bool{true, true, false, false} {
		c := "c" + strconv.Itoa(i)
		e.say("g1", c, "u1", "Alice", decisive)
		if got := due(c); got != want {
			t.Fatalf("Alice's high-signal turn %d: due now = %v, want %v", i+1, got, want)
		}
	}
	e.say("g1", "c9", "u2", "Bob", decisive)
	if !due("c9") {
		t.Fatal("another member's high-signal turn was limited by Alice's")
	}
	if !due("c0") || due("c2") {
		t.Fatal("job states changed unexpectedly")
	}
	e.clock.Advance(30 * time.Minute) // one trigger back (2 per hour)
	e.say("g1", "c5", "u1", "Alice", decisive)
	if !due("c5") {
		t.Fatal("Alice's allowance did not come back with time")
	}
}
