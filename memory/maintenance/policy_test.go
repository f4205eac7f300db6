package maintenance_test

import (
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory/maintenance"
)

// clock is a hand-driven clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) Advance(d time.Duration) { c.now = c.now.Add(d) }

// reportWanting is a report at score whose findings call for actions.
func reportWanting(score int, actions ...maintenance.Action) maintenance.Report {
	r := maintenance.Report{Score: score, Status: maintenance.StatusOf(score)}
	for _, a := range actions {
		r.Findings = append(r.Findings, maintenance.Finding{Domain: "queue", Action: a, Found: 2, Fix: "x", Detail: "y"})
	}
	return r
}

func outcomes(ds []maintenance.Decision) map[maintenance.Action]maintenance.Outcome {
	out := map[maintenance.Action]maintenance.Outcome{}
	for _, d := range ds {
		o := d.Outcome
		if d.Run {
			o = "run"
		}
		out[d.Action] = o
	}
	return out
}

func TestPolicyCooldownAndBudget(t *testing.T) {
	c := &clock{now: at}
	limits := map[maintenance.Action]maintenance.Limit{
		maintenance.ActionReapStale: {Cooldown: 10 * time.Minute, PerHour: 2},
		maintenance.ActionReindex:   {Cooldown: time.Hour, PerHour: 1},
	}
	p := maintenance.NewPolicy(maintenance.ModeExecute, limits, c.Now)
	steps := []struct {
		advance time.Duration
		want    map[maintenance.Action]maintenance.Outcome
	}{
		{0, map[maintenance.Action]maintenance.Outcome{"reap_stale": "run", "reindex": "run"}},
		{5 * time.Minute, map[maintenance.Action]maintenance.Outcome{"reap_stale": maintenance.OutcomeCooldown, "reindex": maintenance.OutcomeCooldown}},
		{5 * time.Minute, map[maintenance.Action]maintenance.Outcome{"reap_stale": "run", "reindex": maintenance.OutcomeCooldown}},
		// 20 minutes after the first reap: out of cooldown, but two runs this hour.
		{10 * time.Minute, map[maintenance.Action]maintenance.Outcome{"reap_stale": maintenance.OutcomeBudget, "reindex": maintenance.OutcomeCooldown}},
		// 60 minutes after the first run: the first reap left the hour.
		{40 * time.Minute, map[maintenance.Action]maintenance.Outcome{"reap_stale": "run", "reindex": "run"}},
	}
	for i, s := range steps {
		c.Advance(s.advance)
		got := outcomes(p.Plan(reportWanting(60, maintenance.ActionReapStale, maintenance.ActionReindex)))
		for a, want := range s.want {
			if got[a] != want {
				t.Errorf("step %d (%s): %s = %q, want %q", i, c.now.Sub(at), a, got[a], want)
			}
		}
		p.Finish(60, 70, true) // improving: never halts
	}
}

func TestPolicyHaltsAfterThreeRunsThatDoNotHelp(t *testing.T) {
	c := &clock{now: at}
	p := maintenance.NewPolicy(maintenance.ModeExecute, map[maintenance.Action]maintenance.Limit{
		maintenance.ActionRequeueDead: {Cooldown: time.Minute, PerHour: 100}}, c.Now)
	run := func(before, after int) (maintenance.Outcome, bool) {
		c.Advance(2 * time.Minute)
		ds := p.Plan(reportWanting(before, maintenance.ActionRequeueDead))
		o := ds[0].Outcome
		if ds[0].Run {
			o = "run"
		}
		return o, p.Finish(before, after, ds[0].Run)
	}
	// An improving run resets the streak.
	for i, s := range []struct {
		before, after int
		want          maintenance.Outcome
		halts         bool
	}{
		{60, 60, "run", false},
		{60, 60, "run", false},
		{60, 65, "run", false}, // improved: streak back to 0
		{65, 65, "run", false},
		{65, 60, "run", false},
		{60, 60, "run", true}, // third in a row that did not help
		{60, 60, maintenance.OutcomeHalted, false},
		{59, 59, maintenance.OutcomeHalted, false},
		{60, 60, maintenance.OutcomeHalted, false}, // not better than the score it halted at
	} {
		o, halted := run(s.before, s.after)
		if o != s.want || halted != s.halts {
			t.Fatalf("run %d: outcome %q halted %v, want %q %v", i, o, halted, s.want, s.halts)
		}
	}
	if !p.Halted() {
		t.Fatal("not halted")
	}
	// The score improved on its own: repairs resume.
	if o, _ := run(61, 61); o != "run" || p.Halted() {
		t.Fatalf("after the score improved: %q, halted %v", o, p.Halted())
	}
	// Halt again, then an operator resets.
	run(61, 61)
	run(61, 61)
	if !p.Halted() {
		t.Fatal("three more runs that did not help did not halt")
	}
	p.Reset()
	if o, _ := run(61, 61); o != "run" {
		t.Fatalf("after reset: %q", o)
	}
	// A run that repaired nothing (healthy, or everything cooling down) is not counted.
	for range 5 {
		p.Finish(61, 61, false)
	}
	if p.Halted() {
		t.Fatal("runs without repairs halted self-repair")
	}
}

// Observe mode runs nothing but keeps cooldowns and budgets as if it had, so the audit
// shows exactly what execute mode would do.
func TestPolicyObserveRunsNothing(t *testing.T) {
	c := &clock{now: at}
	p := maintenance.NewPolicy(maintenance.ModeObserve, nil, c.Now)
	got := outcomes(p.Plan(reportWanting(40, maintenance.ActionReindex, maintenance.ActionVacuum)))
	if got["reindex"] != maintenance.OutcomeObserved || got["vacuum"] != maintenance.OutcomeObserved {
		t.Fatalf("observe: %v", got)
	}
	c.Advance(15 * time.Minute)
	got = outcomes(p.Plan(reportWanting(40, maintenance.ActionReindex)))
	if got["reindex"] != maintenance.OutcomeCooldown {
		t.Fatalf("observe, 15 min later: %v, want the cooldown execute mode would hit", got)
	}
}

// A restart reads the audit: a repair run minutes before keeps its cooldown and budget.
func TestPolicySeedFromAudit(t *testing.T) {
	c := &clock{now: at}
	p := maintenance.NewPolicy(maintenance.ModeExecute, nil, c.Now)
	p.Seed([]maintenance.Repair{
		{At: at.Add(-10 * time.Minute), Action: maintenance.ActionReindex, Outcome: maintenance.OutcomeExecuted},
		{At: at.Add(-10 * time.Minute), Action: maintenance.ActionVacuum, Outcome: maintenance.OutcomeObserved},
		{At: at.Add(-20 * time.Minute), Action: maintenance.ActionRequeueDead, Outcome: maintenance.OutcomeFailed},
	})
	got := outcomes(p.Plan(reportWanting(40, maintenance.ActionReindex, maintenance.ActionVacuum, maintenance.ActionRequeueDead)))
	want := map[maintenance.Action]maintenance.Outcome{"reindex": maintenance.OutcomeCooldown, "vacuum": "run",
		"requeue_dead": maintenance.OutcomeCooldown}
	for a, w := range want {
		if got[a] != w {
			t.Errorf("%s = %q, want %q", a, got[a], w)
		}
	}
	c.Advance(15 * time.Minute) // requeue: out of its 30 min cooldown, but its hour's budget of 1 is spent
	got = outcomes(p.Plan(reportWanting(40, maintenance.ActionRequeueDead)))
	if got["requeue_dead"] != maintenance.OutcomeBudget {
		t.Errorf("requeue 35 min after a seeded run = %q, want skipped_budget", got["requeue_dead"])
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]maintenance.Mode{"execute": "execute", "Observe": "observe", "OFF": "off"} {
		if got, err := maintenance.ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := maintenance.ParseMode("sometimes"); err == nil {
		t.Error("ParseMode accepted sometimes")
	}
}

func TestProviderWindow(t *testing.T) {
	start := at
	w := maintenance.NewProviderWindow(time.Hour, start)
	// Ten minutes in: everything since the start counts.
	p := w.Observe(start.Add(10*time.Minute), maintenance.ProviderCounts{Calls: 10, Errors: 5})
	if !p.Known || p.Calls != 10 || p.Errors != 5 || p.Window != 10*time.Minute {
		t.Fatalf("first sample: %+v", p)
	}
	w.Observe(start.Add(40*time.Minute), maintenance.ProviderCounts{Calls: 20, Errors: 10})
	// 90 minutes in: the baseline is the newest sample at least an hour old (minute 10).
	p = w.Observe(start.Add(90*time.Minute), maintenance.ProviderCounts{Calls: 50, Errors: 10, EmbedDown: true})
	if p.Calls != 40 || p.Errors != 5 || p.Window != 80*time.Minute || !p.EmbedDown {
		t.Fatalf("after an hour: %+v", p)
	}
	if r := p.SuccessRate(); r != 0.875 {
		t.Fatalf("success rate %v", r)
	}
	// An outage that ended more than an hour ago no longer counts.
	p = w.Observe(start.Add(200*time.Minute), maintenance.ProviderCounts{Calls: 60, Errors: 10})
	if p.Errors != 0 || p.Calls != 10 {
		t.Fatalf("two hours later: %+v", p)
	}
}
