package maintenance

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Status is the health verdict of a score.
type Status string

// Statuses, from best to worst.
const (
	StatusHealthy   Status = "healthy"
	StatusDegraded  Status = "degraded"
	StatusUnhealthy Status = "unhealthy"
)

// Score thresholds: a score at or above HealthyScore is healthy, at or above DegradedScore
// degraded, below it unhealthy (and `kioku doctor` exits non-zero).
const (
	HealthyScore  = 80
	DegradedScore = 50
)

// StatusOf is the verdict of a score.
func StatusOf(score int) Status {
	switch {
	case score >= HealthyScore:
		return StatusHealthy
	case score >= DegradedScore:
		return StatusDegraded
	}
	return StatusUnhealthy
}

// Severity says how much a finding matters.
type Severity string

// Severities, from least to most serious.
const (
	SeverityInfo     Severity = "info"
	SeverityWarn     Severity = "warn"
	SeverityCritical Severity = "critical"
)

func (s Severity) rank() int {
	switch s {
	case SeverityCritical:
		return 2
	case SeverityWarn:
		return 1
	}
	return 0
}

// Domains of the score, in report order. DomainMaintenance holds findings about
// self-repair itself; it has no score.
const (
	DomainQueue       = "queue"
	DomainStorage     = "storage"
	DomainIndex       = "index"
	DomainProvider    = "provider"
	DomainMutations   = "mutations"
	DomainMaintenance = "maintenance"
)

// domainWeights weigh the domains in the composite score. The index weighs most because a
// broken index makes memories unfindable, which is the product failing; the queue next,
// because a stuck queue stops learning; storage, the provider and mutations are slower or
// partial harms.
var domainWeights = []struct {
	name   string
	weight int
}{
	{DomainQueue, 25}, {DomainStorage, 15}, {DomainIndex, 30}, {DomainProvider, 15}, {DomainMutations, 15},
}

// compositeSlack caps the composite score at the worst domain's score plus this much, so
// one broken domain cannot hide behind four healthy ones: a domain at 0 makes the whole
// unhealthy, one below 50 keeps it from being healthy.
const compositeSlack = 30

// Commands named as fixes. maintenanceFix is the bot itself in execute mode: its
// maintenance task does the repair (there is no separate command for retention, embedding
// or vacuum).
const (
	maintenanceFix = "KIOKU_MAINTENANCE_MODE=execute kioku run"
	runFix         = "kioku run"
	doctorFix      = "kioku doctor"
	reindexFix     = "kioku reindex"
	migrateFix     = "kioku migrate"
	jobsListFix    = "kioku jobs list"
	controlledFix  = "KIOKU_PIPELINE_MODE=controlled kioku run"
)

// Finding is one problem a report found.
type Finding struct {
	Domain   string   `json:"domain"`
	Severity Severity `json:"severity"`
	// Detail says what is wrong, in counts and sizes; never what people wrote.
	Detail string `json:"detail"`
	// Fix is the command that fixes it.
	Fix string `json:"fix"`
	// Action is the repair self-repair runs for it; empty when it needs a person.
	Action Action `json:"action,omitempty"`
	// Found is how many items are at issue (jobs, memories, entries), for the audit.
	Found int `json:"found,omitempty"`
	// Scope is the scope key of the memory Fix names, empty when it names none; a view
	// for one server hides the fix when it names another scope.
	Scope string `json:"scope,omitempty"`
	// Penalty is what the finding takes off its domain's score.
	Penalty int `json:"penalty"`
}

// DomainScore is one domain's score. Known is false when this process cannot tell (the
// provider in `kioku doctor`); such a domain counts for nothing in the composite.
type DomainScore struct {
	Name  string `json:"name"`
	Score int    `json:"score"`
	Known bool   `json:"known"`
}

// Report is the assessment of one Diagnostics.
type Report struct {
	At     time.Time `json:"at"`
	Score  int       `json:"score"`
	Status Status    `json:"status"`
	// Domains are the per-domain scores in a fixed order.
	Domains []DomainScore `json:"domains"`
	// Findings are ordered most serious first.
	Findings []Finding `json:"findings"`
}

// Domain returns the named domain's score and whether it is known.
func (r Report) Domain(name string) (int, bool) {
	for _, d := range r.Domains {
		if d.Name == name {
			return d.Score, d.Known
		}
	}
	return 0, false
}

// Actions are the repairs the findings call for, each once, in the order they should run.
func (r Report) Actions() []Action {
	var out []Action
	for _, a := range actionOrder {
		for _, f := range r.Findings {
			if f.Action == a {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// Found is the number of items at issue for action a, summed over its findings.
func (r Report) Found(a Action) int {
	n := 0
	for _, f := range r.Findings {
		if f.Action == a {
			n += f.Found
		}
	}
	return n
}

// Assess scores d: each domain starts at 100 and loses its findings' penalties (never
// below 0); the composite is the weighted mean of the known domains, capped at the worst
// domain's score plus compositeSlack.
func Assess(d Diagnostics) Report {
	r := Report{At: d.At}
	parts := []struct {
		name     string
		known    bool
		findings []Finding
	}{
		{DomainQueue, true, queueFindings(d.Queue, d.Provider, d.At)},
		{DomainStorage, true, storageFindings(d.Storage)},
		{DomainIndex, true, indexFindings(d.Index, d.Provider)},
		{DomainProvider, d.Provider.Known, providerFindings(d.Provider)},
		{DomainMutations, true, mutationFindings(d.Mutations)},
	}
	weights := map[string]int{}
	for _, w := range domainWeights {
		weights[w.name] = w.weight
	}
	var sum, total int
	worst := 100
	for _, p := range parts {
		score := 100
		for i := range p.findings {
			p.findings[i].Domain = p.name
			score -= p.findings[i].Penalty
		}
		score = max(score, 0)
		r.Domains = append(r.Domains, DomainScore{Name: p.name, Score: score, Known: p.known})
		if !p.known {
			continue
		}
		r.Findings = append(r.Findings, p.findings...)
		sum += score * weights[p.name]
		total += weights[p.name]
		worst = min(worst, score)
	}
	r.Score = 100
	if total > 0 {
		r.Score = min(int(math.Round(float64(sum)/float64(total))), worst+compositeSlack)
	}
	r.Status = StatusOf(r.Score)
	if d.Repairs.Halted {
		r.Findings = append(r.Findings, Finding{Domain: DomainMaintenance, Severity: SeverityWarn, Fix: runFix,
			Detail: fmt.Sprintf("self-repair halted at %s: %d runs in a row did not improve the score; it still diagnoses, and resumes when the score improves or kioku restarts",
				d.Repairs.LastRunAt.UTC().Format(time.RFC3339), HaltAfter)})
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Severity.rank(), a.Severity.rank()), cmp.Compare(b.Penalty, a.Penalty))
	})
	return r
}

// Queue thresholds.
const (
	// deadSample is the least number of finished jobs a dead rate is taken over: one dead
	// job out of one finished is bad luck, not a 100 % failure rate.
	deadSample = 20
	// dueWarnAfter and dueCriticalAfter: a due job waiting this long means no worker runs,
	// or the model budget is spent for hours.
	dueWarnAfter     = time.Hour
	dueCriticalAfter = 6 * time.Hour
	// deepQueue is a backlog worth mentioning: several hours of the default budget.
	deepQueue = 1000
)

func queueFindings(q Queue, p Provider, now time.Time) []Finding {
	var out []Finding
	if q.Dead > 0 {
		rate := float64(q.DeadRecent) / float64(max(q.FinishedRecent, deadSample))
		f := Finding{Severity: SeverityWarn, Found: q.Dead, Fix: jobsListFix,
			Detail: fmt.Sprintf("%d dead jobs; %d of %d jobs finished in the last %s died", q.Dead, q.DeadRecent, q.FinishedRecent, hours(q.Window))}
		switch {
		case rate >= 0.5:
			f.Severity, f.Penalty = SeverityCritical, 50
		case rate >= 0.2:
			f.Penalty = 30
		case rate > 0:
			f.Penalty = 15
		default:
			f.Severity, f.Penalty = SeverityInfo, 5
		}
		if q.NewestDead > 0 {
			f.Fix = fmt.Sprintf("kioku jobs requeue %d", q.NewestDead)
		}
		// Requeuing while the provider fails only kills the jobs again.
		if q.Requeueable > 0 && !providerFailing(p) {
			f.Action, f.Found = ActionRequeueDead, q.Requeueable
		}
		out = append(out, f)
	}
	if q.Stale > 0 {
		out = append(out, Finding{Severity: SeverityWarn, Penalty: 20, Fix: runFix, Action: ActionReapStale, Found: q.Stale,
			Detail: fmt.Sprintf("%d jobs hold expired leases: their worker stopped, and no reaper has taken them back", q.Stale)})
	}
	if !q.OldestDue.IsZero() {
		wait := now.Sub(q.OldestDue)
		f := Finding{Severity: SeverityWarn, Penalty: 20, Fix: runFix, Found: q.Due,
			Detail: fmt.Sprintf("the oldest of %d due jobs has waited %s: is `kioku run` running, or is the pipeline's model budget spent?", q.Due, wait.Round(time.Minute))}
		if wait >= dueCriticalAfter {
			f.Severity, f.Penalty = SeverityCritical, 40
		}
		if wait >= dueWarnAfter {
			out = append(out, f)
		}
	}
	if q.Depth >= deepQueue {
		out = append(out, Finding{Severity: SeverityInfo, Penalty: 10, Fix: jobsListFix, Found: q.Depth,
			Detail: fmt.Sprintf("%d jobs are waiting or running", q.Depth)})
	}
	return out
}

// Storage thresholds.
const (
	// tombstoneSample is the least number of memories a forgotten share is taken over.
	tombstoneSample = 50
	// vacuumMinFree and vacuumMinShare: free pages worth a vacuum, which rewrites the
	// whole file under the write lock, so only when a lot of the file is free.
	vacuumMinFree  = 64 << 20
	vacuumMinShare = 4 // free bytes ≥ file bytes / vacuumMinShare
)

// VacuumWorthwhile reports whether s has enough free pages for a vacuum to be worth its
// cost. With auto_vacuum full SQLite frees pages at every commit, so never.
func VacuumWorthwhile(s Storage) bool {
	return s.AutoVacuum != "full" && s.FreeBytes >= vacuumMinFree && s.FreeBytes*vacuumMinShare >= s.FileBytes
}

func storageFindings(s Storage) []Finding {
	var out []Finding
	if n := len(s.PendingMigrations); n > 0 {
		out = append(out, Finding{Severity: SeverityCritical, Penalty: 40, Fix: migrateFix, Found: n,
			Detail: fmt.Sprintf("the database is %d migrations behind this kioku (%s)", n, strings.Join(s.PendingMigrations, ", "))})
	}
	if s.ExpiredTombstones > 0 {
		out = append(out, Finding{Severity: SeverityWarn, Penalty: 15, Fix: maintenanceFix, Action: ActionRetention, Found: s.ExpiredTombstones,
			Detail: fmt.Sprintf("%d forgotten memories are past the recover window and not yet purged", s.ExpiredTombstones)})
	}
	if all := s.Live + s.Forgotten; all >= tombstoneSample {
		share := float64(s.Forgotten) / float64(all)
		f := Finding{Severity: SeverityWarn, Penalty: 15, Fix: maintenanceFix, Found: s.Forgotten,
			Detail: fmt.Sprintf("%d of %d memories (%.0f %%) are forgotten and kept for recovery", s.Forgotten, all, 100*share)}
		switch {
		case share >= 0.8:
			out = append(out, f)
		case share >= 0.5:
			f.Severity, f.Penalty = SeverityInfo, 5
			out = append(out, f)
		}
	}
	if VacuumWorthwhile(s) {
		out = append(out, Finding{Severity: SeverityInfo, Penalty: 10, Fix: maintenanceFix, Action: ActionVacuum,
			Detail: fmt.Sprintf("%.0f MB of the %.0f MB file are free pages (auto_vacuum %s)", mb(s.FreeBytes), mb(s.FileBytes), s.AutoVacuum)})
	}
	return out
}

func indexFindings(x Index, p Provider) []Finding {
	var out []Finding
	for _, s := range []IndexSync{x.Words, x.Trigrams} {
		n := s.OutOfSync()
		if n == 0 {
			continue
		}
		f := Finding{Severity: SeverityWarn, Penalty: 30, Fix: reindexFix, Action: ActionReindex, Found: n,
			Detail: fmt.Sprintf("full-text index %s is out of step with the memories: %d live memories missing, %d stale entries (%d rows for %d live memories)",
				s.Table, s.Missing, s.Extra, s.Rows, x.Live)}
		if float64(n) >= 0.1*float64(max(x.Live, 1)) {
			f.Severity, f.Penalty = SeverityCritical, 60
		}
		out = append(out, f)
	}
	if x.EmbedModel != "" && x.Live > 0 && x.Embedded < x.Live {
		missing := x.Live - x.Embedded
		cov := float64(x.Embedded) / float64(x.Live)
		f := Finding{Severity: SeverityInfo, Penalty: 5, Fix: maintenanceFix, Found: missing,
			Detail: fmt.Sprintf("%d of %d live memories have no %s vector (%.0f %% covered); recall finds them by keywords only", missing, x.Live, x.EmbedModel, 100*cov)}
		switch {
		case cov < 0.5:
			f.Severity, f.Penalty = SeverityCritical, 40
		case cov < 0.9:
			f.Severity, f.Penalty = SeverityWarn, 20
		}
		if !p.EmbedDown {
			f.Action = ActionEmbedMissing
		}
		out = append(out, f)
	}
	if x.EmbedModel != "" && x.Stale >= 100 && 2*x.Stale >= x.Vectors {
		// Informational: vectors of another model are kept in case it comes back, and
		// retention removes those of old content on its own schedule.
		out = append(out, Finding{Severity: SeverityInfo, Fix: maintenanceFix, Found: x.Stale,
			Detail: fmt.Sprintf("%d of %d stored vectors belong to old content or another model than %s", x.Stale, x.Vectors, x.EmbedModel)})
	}
	return out
}

// providerMinCalls is the least number of calls a success rate is taken over.
const providerMinCalls = 5

func providerFailing(p Provider) bool {
	return p.Known && p.Calls >= providerMinCalls && p.SuccessRate() < 0.5
}

func providerFindings(p Provider) []Finding {
	if !p.Known {
		return nil
	}
	var out []Finding
	if p.Calls >= providerMinCalls {
		rate := p.SuccessRate()
		f := Finding{Severity: SeverityWarn, Penalty: 30, Fix: doctorFix, Found: int(p.Errors),
			Detail: fmt.Sprintf("%d of %d model provider calls in the last %s failed (%.0f %% succeeded)", p.Errors, p.Calls, minutes(p.Window), 100*rate)}
		switch {
		case rate < 0.5:
			f.Severity, f.Penalty = SeverityCritical, 60
			out = append(out, f)
		case rate < 0.9:
			out = append(out, f)
		}
	}
	if p.EmbedDown {
		out = append(out, Finding{Severity: SeverityWarn, Penalty: 30, Fix: doctorFix,
			Detail: fmt.Sprintf("the embedding provider failed at %s; recall uses keywords only until it answers", p.EmbedFailedAt.UTC().Format(time.RFC3339))})
	}
	return out
}

// Mutation thresholds.
const (
	// recoverySample and recoveryShare: members bringing back this many and this share of
	// what was forgotten suggests the bot forgets what people want kept.
	recoverySample = 3
	recoveryShare  = 0.2
	// blockedSample: a few blocked proposals are policy working; a majority of many is
	// worth a look.
	blockedSample = 20
)

func mutationFindings(m Mutations) []Finding {
	var out []Finding
	if m.Reviews > 0 {
		out = append(out, Finding{Severity: SeverityWarn, Penalty: 10, Fix: historyFix(m.NewestReview), Scope: m.NewestReview.ScopeKey, Found: m.Reviews,
			Detail: fmt.Sprintf("%d contradictions in the last %s are waiting for someone who may edit server memory to review them", m.Reviews, hours(m.Window))})
	}
	if m.Recoveries >= recoverySample && float64(m.Recoveries) >= recoveryShare*float64(m.Deletes) {
		out = append(out, Finding{Severity: SeverityWarn, Penalty: 20, Fix: controlledFix, Found: m.Recoveries,
			Detail: fmt.Sprintf("%d forgotten memories were recovered in the last %s (%d forgotten): something forgets what people want kept", m.Recoveries, hours(m.Window), m.Deletes)})
	}
	if m.Blocked >= blockedSample && 2*m.Blocked >= m.Proposals {
		out = append(out, Finding{Severity: SeverityInfo, Penalty: 5, Fix: historyFix(m.NewestBlocked), Scope: m.NewestBlocked.ScopeKey, Found: m.Blocked,
			Detail: fmt.Sprintf("%d of %d pipeline proposals in the last %s were blocked by policy", m.Blocked, m.Proposals, hours(m.Window))})
	}
	return out
}

// historyFix is the command that shows ref's history.
func historyFix(ref MemoryRef) string {
	if ref.ID == 0 {
		return "kioku memories history ID --guild GUILD"
	}
	if user, ok := strings.CutPrefix(ref.ScopeKey, "u:"); ok {
		return fmt.Sprintf("kioku memories history %d --user %s", ref.ID, user)
	}
	return fmt.Sprintf("kioku memories history %d --guild %s", ref.ID, strings.TrimPrefix(ref.ScopeKey, "g:"))
}

func hours(d time.Duration) string {
	if d <= 0 {
		return "window"
	}
	return fmt.Sprintf("%.0f h", d.Hours())
}

func minutes(d time.Duration) string {
	if d <= 0 {
		return "while"
	}
	return fmt.Sprintf("%.0f min", d.Minutes())
}

func mb(b int64) float64 { return float64(b) / 1e6 }
