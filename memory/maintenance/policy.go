package maintenance

import (
	"fmt"
	"strings"
	"time"
)

// Action is a repair self-repair can run.
type Action string

// Repair actions.
const (
	// ActionReapStale returns jobs whose lease expired to the queue (the reaper).
	ActionReapStale Action = "reap_stale"
	// ActionRequeueDead gives dead jobs one more chance, each at most once.
	ActionRequeueDead Action = "requeue_dead"
	// ActionReindex rebuilds the full-text indexes from the rows (`kioku reindex`).
	ActionReindex Action = "reindex"
	// ActionEmbedMissing embeds live memories that have no vector of the model.
	ActionEmbedMissing Action = "embed_missing"
	// ActionRetention runs retention now: purges expired tombstones and old rows.
	ActionRetention Action = "retention"
	// ActionVacuum gives free pages back to the file system.
	ActionVacuum Action = "vacuum"
)

// actionOrder is the order repairs run in: jobs first (cheap, and a reaped job may finish
// before anything else runs), the indexes, then retention, and the vacuum last so it
// returns what retention freed.
var actionOrder = []Action{ActionReapStale, ActionRequeueDead, ActionReindex, ActionEmbedMissing, ActionRetention, ActionVacuum}

// Mode is what the maintenance task does with what it finds (KIOKU_MAINTENANCE_MODE).
type Mode string

// Maintenance modes.
const (
	// ModeExecute diagnoses and repairs within the policy's limits (the default).
	ModeExecute Mode = "execute"
	// ModeObserve diagnoses and records what it would repair, changing nothing.
	ModeObserve Mode = "observe"
	// ModeOff runs no maintenance task; doctor and /kioku status still diagnose.
	ModeOff Mode = "off"
)

// ParseMode reads a mode in any letter case.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	switch m {
	case ModeExecute, ModeObserve, ModeOff:
		return m, nil
	}
	return "", fmt.Errorf("unknown maintenance mode %q: use execute, observe or off", s)
}

// Limit bounds how often one action runs: not again within Cooldown of its last run, and
// at most PerHour times in any hour.
type Limit struct {
	Cooldown time.Duration
	PerHour  int
}

// DefaultLimits are the per-action limits. An action that touches every row (reindex,
// retention) runs at most once an hour; the vacuum, which rewrites the whole file under
// the write lock, once a day; the cheap job repairs more often, but never in a tight loop.
func DefaultLimits() map[Action]Limit {
	return map[Action]Limit{
		ActionReapStale:    {Cooldown: 5 * time.Minute, PerHour: 3},
		ActionRequeueDead:  {Cooldown: 30 * time.Minute, PerHour: 1},
		ActionReindex:      {Cooldown: time.Hour, PerHour: 1},
		ActionEmbedMissing: {Cooldown: 15 * time.Minute, PerHour: 2},
		ActionRetention:    {Cooldown: time.Hour, PerHour: 1},
		ActionVacuum:       {Cooldown: 24 * time.Hour, PerHour: 1},
	}
}

// HaltAfter is how many runs in a row may repair without improving the score before
// self-repair halts: one run can be unlucky, three mean the repairs do not touch the cause.
const HaltAfter = 3

// Outcome is what became of one repair the findings called for.
type Outcome string

// Outcomes, as the audit records them.
const (
	OutcomeExecuted Outcome = "executed"
	OutcomeFailed   Outcome = "failed"
	OutcomeObserved Outcome = "observed"
	OutcomeCooldown Outcome = "skipped_cooldown"
	OutcomeBudget   Outcome = "skipped_budget"
	OutcomeHalted   Outcome = "halted"
)

// Decision is the policy's answer for one action: Run it now, or record Outcome.
type Decision struct {
	Action  Action
	Run     bool
	Outcome Outcome // for Run, set by whoever runs it: executed or failed
	Found   int     // items at issue, from the report
}

// Repair is one audit row: a repair the findings called for, and what became of it.
// It holds counts and scores, never what people wrote.
type Repair struct {
	At          time.Time `json:"at"`
	Action      Action    `json:"action"`
	Outcome     Outcome   `json:"outcome"`
	Mode        Mode      `json:"mode"`
	ScoreBefore int       `json:"score_before"`
	ScoreAfter  int       `json:"score_after"`
	// Found is how many items were at issue; Changed how many the repair changed.
	Found   int `json:"found"`
	Changed int `json:"changed"`
	// Error says why a failed repair failed.
	Error string `json:"error,omitempty"`
}

// Policy decides which repairs may run: per-action cooldowns and hourly budgets, the mode,
// and the halt after HaltAfter runs in a row that repaired without improving the score.
// It is not safe for concurrent use; its owner serialises runs.
type Policy struct {
	mode   Mode
	limits map[Action]Limit
	now    func() time.Time

	last map[Action]time.Time   // latest run (or, observing, would-be run) of each action
	hour map[Action][]time.Time // runs within the last hour

	streak    int  // runs in a row that repaired without improving the score
	halted    bool // no repairs until the score beats haltScore or Reset
	haltScore int
}

// NewPolicy returns a policy in mode with limits (nil: DefaultLimits) on clock now.
func NewPolicy(mode Mode, limits map[Action]Limit, now func() time.Time) *Policy {
	if limits == nil {
		limits = DefaultLimits()
	}
	return &Policy{mode: mode, limits: limits, now: now, last: map[Action]time.Time{}, hour: map[Action][]time.Time{}}
}

// Mode is the policy's mode.
func (p *Policy) Mode() Mode { return p.mode }

// Halted reports whether repairs are halted.
func (p *Policy) Halted() bool { return p.halted }

// Reset lifts a halt and forgets the streak of runs that did not help (an operator's
// decision, or a restart).
func (p *Policy) Reset() { p.halted, p.streak = false, 0 }

// Seed loads the cooldowns and budgets from the audit of earlier processes, so a restart
// does not buy a repair loop a fresh budget. Only repairs that ran count.
func (p *Policy) Seed(history []Repair) {
	now := p.now()
	for _, r := range history {
		if r.Outcome != OutcomeExecuted && r.Outcome != OutcomeFailed {
			continue
		}
		if r.At.After(p.last[r.Action]) {
			p.last[r.Action] = r.At
		}
		if now.Sub(r.At) < time.Hour {
			p.hour[r.Action] = append(p.hour[r.Action], r.At)
		}
	}
}

// Plan decides, for each repair r calls for, whether it runs now. A halt is lifted first
// when r's score beats the best score of the run that halted. In observe mode nothing runs, but cooldowns
// and budgets are kept as if it had, so the audit shows what execute mode would do.
func (p *Policy) Plan(r Report) []Decision {
	if p.halted && r.Score > p.haltScore {
		p.Reset()
	}
	now := p.now()
	var out []Decision
	for _, a := range r.Actions() {
		d := Decision{Action: a, Found: r.Found(a)}
		lim := p.limits[a]
		recent := p.hour[a][:0]
		for _, t := range p.hour[a] {
			if now.Sub(t) < time.Hour {
				recent = append(recent, t)
			}
		}
		p.hour[a] = recent
		last, ran := p.last[a]
		switch {
		case p.halted:
			d.Outcome = OutcomeHalted
		case ran && now.Sub(last) < lim.Cooldown:
			d.Outcome = OutcomeCooldown
		case len(recent) >= lim.PerHour:
			d.Outcome = OutcomeBudget
		default:
			p.last[a] = now
			p.hour[a] = append(p.hour[a], now)
			if p.mode == ModeExecute {
				d.Run = true
			} else {
				d.Outcome = OutcomeObserved
			}
		}
		out = append(out, d)
	}
	return out
}

// Finish records the end of a run that scored before when it started and after when its
// repairs were done. A run that ran no repair leaves the streak alone. It reports whether
// this run halted self-repair.
func (p *Policy) Finish(before, after int, repaired bool) bool {
	if !repaired || p.halted {
		return false
	}
	if after > before {
		p.streak = 0
		return false
	}
	p.streak++
	if p.streak < HaltAfter {
		return false
	}
	// Resuming needs a score above the best this run saw: a provider hiccup that lowered
	// the score after the repairs must not count as an improvement once it passes.
	p.halted, p.haltScore = true, max(before, after)
	return true
}
