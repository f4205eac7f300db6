package web

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// healthBody is the health page's.
type healthBody struct {
	serverTabs
	// Base is the page, under which its actions post.
	Base, Note string
	// Score is "score/100: verdict"; Domains each area's score.
	Score    string
	Domains  []string
	Findings []findingView
	// Embedding is the embedding tracker's progress ("" without an embedding model).
	Embedding string
	Index     string
	Jobs      []jobGroup
	// Dead is how many dead jobs the page lists: the requeue button shows when there are.
	Dead    int
	Budget  string
	Runs    []taskRunView
	Repairs []repairView
}

// findingView is one of the doctor's findings.
type findingView struct {
	Severity, Domain, Detail, Fix string
}

// jobGroup is the server's jobs of one state, newest first; Full when there may be more.
type jobGroup struct {
	State string
	Jobs  []jobView
	Full  bool
}

// jobView is one job: never its payload, which may hold what people said.
type jobView struct {
	ID                            int64
	Kind, Attempts, When, Channel string
	Error                         string
}

// taskRunView is a scheduled task's latest run.
type taskRunView struct {
	Name, Finished string
	OK             bool
	Runs, Failures int
}

// repairView is one audited repair.
type repairView struct {
	At, Action, Outcome string
	Found, Changed      int
}

// fillReport sets the score, the domains and the findings of r, as /kioku status shows
// them: a finding's fix only when it names nothing outside the server (scope key here).
func (b *healthBody) fillReport(v *visit, r maintenance.Report, here string) {
	b.Score = textFor(v, "status.score.value", r.Score, textFor(v, "status.verdict."+string(r.Status)))
	for _, d := range r.Domains {
		if !d.Known {
			b.Domains = append(b.Domains, textFor(v, "status.domain.unknown", d.Name))
			continue
		}
		b.Domains = append(b.Domains, d.Name+" "+itoa(d.Score))
	}
	for _, f := range r.Findings {
		fix := f.Fix
		if f.Scope != "" && f.Scope != here {
			fix = "kioku doctor"
		}
		b.Findings = append(b.Findings, findingView{Severity: string(f.Severity), Domain: f.Domain, Detail: f.Detail, Fix: fix})
	}
}

// fillIndex says how far the embedding tracker and the word index are.
func (b *healthBody) fillIndex(x maintenance.Index) {
	if x.EmbedModel != "" {
		b.Embedding = x.EmbedModel + ": " + itoa(x.Embedded) + "/" + itoa(x.Live)
		if x.Stale > 0 {
			b.Embedding += " (" + itoa(x.Stale) + " stale)"
		}
	}
	b.Index = x.Words.Table + ": " + itoa(x.Words.Rows) + "/" + itoa(x.Live)
	if x.Words.Missing > 0 || x.Words.Extra > 0 {
		b.Index += " (−" + itoa(x.Words.Missing) + " +" + itoa(x.Words.Extra) + ")"
	}
}

// jobStateWord names a stored job state in the words of /kioku jobs.
func jobStateWord(v *visit, state string) string {
	switch state {
	case memory.JobQueued:
		state = "due"
	case memory.JobLeased:
		state = "running"
	}
	return textFor(v, "choice.state."+state)
}

// jobViewOf is job j of srv. Its channel is named only when the member can view it.
func jobViewOf(v *visit, srv server, j *memory.Job, now time.Time) jobView {
	var where struct {
		ChannelID string `json:"channel_id"`
	}
	_ = json.Unmarshal(j.Payload, &where) // only the channel is read; a payload of another shape names none
	out := jobView{ID: j.ID, Kind: j.Kind, Attempts: i18n.N(v.lang, "jobs.attempts", j.MaxAttempts, j.Attempts)}
	if where.ChannelID != "" && srv.Channels[where.ChannelID] {
		out.Channel = where.ChannelID
	}
	if j.State == memory.JobQueued {
		out.When = textFor(v, "web.health.runs_now")
		if j.RunAfter.After(now) {
			out.When = textFor(v, "web.health.runs_at", stamp(j.RunAfter))
		}
	}
	if j.LastError != "" {
		out.Error = textFor(v, "jobs.last_error", oneLineText(j.LastError, 200))
	}
	return out
}

// stamp is a time as the page shows it, in UTC; "" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 MST")
}

// oneLineText is s on one line, cut to n runes.
func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
