package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// providerCounts reads this process's model provider counters for the health score: the
// model client's calls and errors (chat and embeddings) and recall's embedding status.
func providerCounts(store *backend, model *llm.Client) func() maintenance.ProviderCounts {
	return func() maintenance.ProviderCounts {
		u, es := model.Usage(), store.Recall.EmbedStatus()
		return maintenance.ProviderCounts{Calls: u.Calls, Errors: u.Errors, EmbedModel: es.Model,
			EmbedDown: es.Down, EmbedFailedAt: es.LastErrorAt}
	}
}

// healthJSON is the health part of `kioku doctor --json`.
type healthJSON struct {
	Status maintenance.Status `json:"status"`
	Score  int                `json:"score"`
	// Domains maps each domain to its score, null when this process cannot know it.
	Domains     map[string]*int          `json:"domains"`
	Findings    []findingJSON            `json:"findings"`
	Diagnostics *maintenance.Diagnostics `json:"diagnostics,omitempty"`
}

type findingJSON struct {
	Domain   string               `json:"domain"`
	Severity maintenance.Severity `json:"severity"`
	Detail   string               `json:"detail"`
	Fix      string               `json:"fix"`
	Action   maintenance.Action   `json:"action,omitempty"`
}

// newHealthJSON is r (with d, when read) as doctor prints it.
func newHealthJSON(r maintenance.Report, d *maintenance.Diagnostics) healthJSON {
	h := healthJSON{Status: r.Status, Score: r.Score, Domains: map[string]*int{}, Findings: []findingJSON{}, Diagnostics: d}
	for _, dom := range r.Domains {
		var score *int
		if dom.Known {
			score = &dom.Score
		}
		h.Domains[dom.Name] = score
	}
	for _, f := range r.Findings {
		h.Findings = append(h.Findings, findingJSON{Domain: f.Domain, Severity: f.Severity, Detail: f.Detail, Fix: f.Fix, Action: f.Action})
	}
	return h
}

// writeVerdict prints doctor's one verdict, then the store's health report when its
// diagnostics were read. A failed check (the model endpoint, the database) makes the
// verdict unhealthy whatever the store's score, and the line says which check failed.
func writeVerdict(w io.Writer, d *maintenance.Diagnostics, r maintenance.Report, failed []string) {
	scale := fmt.Sprintf("healthy from %d, degraded from %d", maintenance.HealthyScore, maintenance.DegradedScore)
	switch {
	case len(failed) > 0 && d != nil:
		fmt.Fprintf(w, "\nhealth: unhealthy: the %s %s failed (the store alone scores %d/100; %s)\n",
			strings.Join(failed, " and "), plural(len(failed), "check", "checks"), r.Score, scale)
	case len(failed) > 0:
		fmt.Fprintf(w, "\nhealth: unhealthy: the %s %s failed\n", strings.Join(failed, " and "), plural(len(failed), "check", "checks"))
		return
	case d == nil:
		return
	default:
		fmt.Fprintf(w, "\nhealth %d/100: %s (%s)\n", r.Score, r.Status, scale)
	}
	writeHealthDetail(w, *d, r)
}

// writeHealthDetail prints the health report below its verdict line: one line of numbers
// per domain, self-repair's state and the findings with their fixes.
func writeHealthDetail(w io.Writer, d maintenance.Diagnostics, r maintenance.Report) {
	for _, dom := range r.Domains {
		score := fmt.Sprintf("%3d", dom.Score)
		if !dom.Known {
			score = "  -"
		}
		fmt.Fprintf(w, "  %-10s %s  %s\n", dom.Name, score, domainLine(dom.Name, d))
	}
	if !d.Repairs.LastRunAt.IsZero() {
		state := "repairing"
		if d.Repairs.Halted {
			state = "halted"
		}
		fmt.Fprintf(w, "  self-repair last recorded a repair at %s (%s)\n", d.Repairs.LastRunAt.Format("2006-01-02 15:04 MST"), state)
	}
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "no findings")
		return
	}
	fmt.Fprintln(w, "findings (most serious first):")
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  %-8s %-11s %s\n           fix: %s\n", f.Severity, f.Domain, f.Detail, f.Fix)
	}
}

// domainLine is the numbers behind one domain's score.
func domainLine(name string, d maintenance.Diagnostics) string {
	switch name {
	case maintenance.DomainQueue:
		q := d.Queue
		return fmt.Sprintf("%d waiting or running (%d due), %d expired leases, %d dead (%d of %d jobs finished in %s died)",
			q.Depth, q.Due, q.Stale, q.Dead, q.DeadRecent, q.FinishedRecent, span(q.Window))
	case maintenance.DomainStorage:
		s := d.Storage
		line := fmt.Sprintf("%.1f MB file, %.1f MB in free pages (auto_vacuum %s); %d live and %d forgotten memories, %d past the recover window",
			float64(s.FileBytes)/1e6, float64(s.FreeBytes)/1e6, s.AutoVacuum, s.Live, s.Forgotten, s.ExpiredTombstones)
		if len(s.PendingMigrations) > 0 {
			line += "; pending migrations: " + strings.Join(s.PendingMigrations, ", ")
		}
		return line
	case maintenance.DomainIndex:
		x := d.Index
		line := fmt.Sprintf("%d live memories; word index %d rows (%d missing, %d stale), trigram index %d rows (%d missing, %d stale)",
			x.Live, x.Words.Rows, x.Words.Missing, x.Words.Extra, x.Trigrams.Rows, x.Trigrams.Missing, x.Trigrams.Extra)
		if x.EmbedModel == "" {
			return line + "; no embedding model"
		}
		return line + fmt.Sprintf("; %d with a %s vector, %d stale vectors of %d", x.Embedded, x.EmbedModel, x.Stale, x.Vectors)
	case maintenance.DomainProvider:
		p := d.Provider
		if !p.Known {
			return "not known here: the counts live in the running bot's process (/kioku status shows them)"
		}
		return fmt.Sprintf("%d of %d calls failed in %s", p.Errors, p.Calls, span(p.Window))
	case maintenance.DomainMutations:
		m := d.Mutations
		return fmt.Sprintf("in %s: %d recovered of %d forgotten, %d blocked of %d pipeline proposals, %d contradictions to review",
			span(m.Window), m.Recoveries, m.Deletes, m.Blocked, m.Proposals, m.Reviews)
	}
	return ""
}

// span is a window's length for people: "24 h", "40 min".
func span(d time.Duration) string {
	if d >= time.Hour {
		return fmt.Sprintf("%.0f h", d.Hours())
	}
	return fmt.Sprintf("%.0f min", d.Minutes())
}
