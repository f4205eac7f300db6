package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/kioku-bot/kioku/memory/maintenance"
)

// TaskMaintenance is the scheduled maintenance task: diagnose, score, repair.
const TaskMaintenance = "maintenance"

// maxAutoRequeue bounds the dead jobs one repair requeues: enough to recover from an
// outage's worth of dead jobs in a few runs, few enough that a wave of poisoned jobs cannot
// spend the hour's model budget at once.
const maxAutoRequeue = 20

// seedWindow is how far back a new process reads the audit to seed cooldowns and budgets:
// a little over the longest cooldown (the vacuum's day).
const seedWindow = 25 * time.Hour

// maintainer is the maintenance task: it diagnoses the store, scores it, runs the repairs
// the policy allows and audits every repair the findings called for.
type maintainer struct {
	*core
	health   Health
	repairer Repairer

	runMu  sync.Mutex // one run at a time; guards policy and seeded
	policy *maintenance.Policy
	seeded bool

	// mu guards the latest report apart from runs, so a metrics scrape never waits for a
	// vacuum.
	mu   sync.Mutex
	last maintenance.Report
	ran  bool
}

// newMaintainer returns the maintenance task, or nil when maintenance is off or the store
// cannot be diagnosed and repaired.
func newMaintainer(c *core, deps Deps) *maintainer {
	if c.cfg.MaintenanceMode == maintenance.ModeOff || deps.Health == nil || deps.Repairer == nil {
		return nil
	}
	return &maintainer{core: c, health: deps.Health, repairer: deps.Repairer,
		policy: maintenance.NewPolicy(c.cfg.MaintenanceMode, c.cfg.RepairLimits, c.now)}
}

// MaintenanceRun is what one maintenance run found and did.
type MaintenanceRun struct {
	// Before is the assessment the run started from; After the one after its repairs
	// (Before itself when nothing ran).
	Before, After maintenance.Report
	// Repairs are the audit rows of the run: one per repair the findings called for.
	Repairs []maintenance.Repair
	// Halted is true when this run's repairs were the last that did not help.
	Halted bool
}

// Summary is one line for the run record: scores and what became of the repairs.
func (r MaintenanceRun) Summary() string {
	counts := map[maintenance.Outcome]int{}
	for _, rep := range r.Repairs {
		counts[rep.Outcome]++
	}
	parts := []string{fmt.Sprintf("score=%d (%s) after=%d", r.Before.Score, r.Before.Status, r.After.Score)}
	for _, o := range []maintenance.Outcome{maintenance.OutcomeExecuted, maintenance.OutcomeFailed, maintenance.OutcomeObserved,
		maintenance.OutcomeCooldown, maintenance.OutcomeBudget, maintenance.OutcomeHalted} {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", o, counts[o]))
		}
	}
	return strings.Join(parts, " ")
}

// Run diagnoses the store, runs the repairs the policy allows (none in observe mode) and
// records every repair the findings called for in the audit.
func (m *maintainer) Run(ctx context.Context) (MaintenanceRun, error) {
	m.runMu.Lock()
	defer m.runMu.Unlock()
	now := m.now()
	if !m.seeded {
		// A restart must not buy a repair loop a fresh budget.
		history, err := m.health.RepairLog(ctx, now.Add(-seedWindow))
		if err != nil {
			return MaintenanceRun{}, fmt.Errorf("couldn't read the repair audit: %w", err)
		}
		m.policy.Seed(history)
		m.seeded = true
	}
	before, err := m.assess(ctx)
	if err != nil {
		return MaintenanceRun{}, err
	}
	run := MaintenanceRun{Before: before, After: before}
	decisions := m.policy.Plan(before)
	changed := make([]int, len(decisions))
	failures := make([]string, len(decisions))
	repaired := false
	for i := range decisions {
		d := &decisions[i]
		if !d.Run {
			continue
		}
		if err := ctx.Err(); err != nil {
			// Shutting down: the repairs not started yet are recorded as failed for it.
			d.Outcome, failures[i] = maintenance.OutcomeFailed, err.Error()
			continue
		}
		repaired = true
		n, err := m.repair(ctx, d.Action)
		changed[i], d.Outcome = n, maintenance.OutcomeExecuted
		if err != nil {
			d.Outcome, failures[i] = maintenance.OutcomeFailed, err.Error()
			m.log.Warn("repair failed", slog.String("action", string(d.Action)), slog.Any("err", err))
		}
	}
	var errs []error
	if repaired {
		after, err := m.assess(context.WithoutCancel(ctx))
		if err != nil {
			errs = append(errs, err)
			after = before
		}
		run.After = after
	}
	run.Halted = m.policy.Finish(before.Score, run.After.Score, repaired)
	for i, d := range decisions {
		run.Repairs = append(run.Repairs, maintenance.Repair{At: now, Action: d.Action, Outcome: d.Outcome, Mode: m.policy.Mode(),
			ScoreBefore: before.Score, ScoreAfter: run.After.Score, Found: d.Found, Changed: changed[i], Error: failures[i]})
	}
	if err := m.health.RecordRepairs(context.WithoutCancel(ctx), run.Repairs); err != nil {
		errs = append(errs, fmt.Errorf("couldn't record repairs: %w", err))
	}
	m.mu.Lock()
	m.last, m.ran = run.After, true
	m.mu.Unlock()
	m.logRun(run)
	return run, errors.Join(errs...)
}

// assess diagnoses the store, adds what this process knows of the provider, and scores it.
func (m *maintainer) assess(ctx context.Context) (maintenance.Report, error) {
	d, err := m.health.Diagnose(ctx)
	if err != nil {
		return maintenance.Report{}, err
	}
	d.Provider = m.providerState()
	return maintenance.Assess(d), nil
}

// repair runs one action and returns how many items it changed.
func (m *maintainer) repair(ctx context.Context, a maintenance.Action) (int, error) {
	switch a {
	case maintenance.ActionReapStale:
		r, err := m.jobs.ReapStale(ctx)
		return r.Requeued + r.Dead, err
	case maintenance.ActionRequeueDead:
		return m.repairer.RequeueDead(ctx, maxAutoRequeue)
	case maintenance.ActionReindex:
		return m.repairer.RepairIndexes(ctx)
	case maintenance.ActionEmbedMissing:
		return m.repairer.EmbedMissing(ctx)
	case maintenance.ActionRetention:
		r, err := m.housekeeping.Retention(ctx, m.cfg.Retention)
		g, _, gerr := m.housekeeping.PurgeDepartedGuilds(ctx)
		return r.Embeddings + r.Tombstones + r.History + r.DoneJobs + r.DeadJobs + r.Transcripts + r.Fences + g.Memories, errors.Join(err, gerr)
	case maintenance.ActionVacuum:
		n, err := m.repairer.Compact(ctx)
		return int(n), err
	}
	return 0, fmt.Errorf("unknown repair %q", a)
}

func (m *maintainer) logRun(run MaintenanceRun) {
	attrs := []any{slog.Int("score", run.Before.Score), slog.String("status", string(run.Before.Status)),
		slog.Int("score_after", run.After.Score), slog.Int("findings", len(run.Before.Findings))}
	for _, r := range run.Repairs {
		attrs = append(attrs, slog.String(string(r.Action), string(r.Outcome)))
	}
	switch {
	case run.Halted:
		m.log.Warn(fmt.Sprintf("self-repair halted: %d runs in a row did not improve the score", maintenance.HaltAfter), attrs...)
	case run.Before.Status != maintenance.StatusHealthy || len(run.Repairs) > 0:
		m.log.Info("maintenance ran", attrs...)
	default:
		m.log.Debug("maintenance ran", attrs...)
	}
}

// report returns the latest assessment, and whether a run made one.
func (m *maintainer) report() (maintenance.Report, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last, m.ran
}

func (m *maintainer) reset() {
	m.runMu.Lock()
	defer m.runMu.Unlock()
	m.policy.Reset()
}

// providerState is the model provider as this process saw it recently; unknown when the
// pipeline was given no counters.
func (c *core) providerState() maintenance.Provider {
	if c.provider == nil {
		return maintenance.Provider{}
	}
	return c.window.Observe(c.now(), c.provider())
}

// Maintain runs the maintenance task once, now (tests drive it by hand). It fails when
// maintenance is off.
func (p *Pipeline) Maintain(ctx context.Context) (MaintenanceRun, error) {
	if p.maint == nil {
		return MaintenanceRun{}, errors.New("maintenance is off")
	}
	return p.maint.Run(ctx)
}

// Health returns the latest health report the maintenance task computed, and false before
// its first run or when maintenance is off. Metrics expose its score.
func (p *Pipeline) Health() (maintenance.Report, bool) {
	if p.maint == nil {
		return maintenance.Report{}, false
	}
	return p.maint.report()
}

// ResetRepairs lifts a halt of self-repair (an operator's decision); a restart does too.
func (p *Pipeline) ResetRepairs() {
	if p.maint != nil {
		p.maint.reset()
	}
}

// Provider is the model provider as this process saw it over the last hour (calls, errors,
// embedding status), for the health score; Known is false when the pipeline was given no
// counters.
func (p *Pipeline) Provider() maintenance.Provider { return p.core.providerState() }
