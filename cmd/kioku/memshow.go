package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Showing memories: one in full, and what placed a search result.

// memShow is `kioku memories show ID`: one live memory in full. Its JSON is the memory's
// with "lifecycle" (memory.Lifecycle) beside it; a time-bound memory's "refers_to" and
// "refers_to_end" are RFC 3339.
func memShow(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories show")
	var sf scopeFlags
	sf.register(fs)
	owner, id, err := oneMemory(fs, &sf, args, "kioku memories show ID")
	if err != nil {
		return err
	}
	m, err := store.Memories.Get(ctx, owner, id)
	if err != nil {
		return err
	}
	now := store.Now()
	if sf.asJSON {
		return writeJSON(app.Stdout, struct {
			*memory.Memory
			Lifecycle memory.Lifecycle `json:"lifecycle"`
		}{m, m.LifecycleAt(now)})
	}
	w := app.Stdout
	head := fmt.Sprintf("#%d %s", m.ID, m.Type)
	if m.Pinned {
		head += " · pinned"
	}
	fmt.Fprintln(w, head+" · "+string(m.LifecycleAt(now))+stateRefText(m))
	fmt.Fprintln(w, m.Content)
	fmt.Fprintf(w, "saved %s", m.CreatedAt.Local().Format("2006-01-02 15:04"))
	if !m.UpdatedAt.IsZero() && !m.UpdatedAt.Equal(m.CreatedAt) {
		fmt.Fprintf(w, " · updated %s (version %d)", m.UpdatedAt.Local().Format("2006-01-02 15:04"), m.Version)
	}
	fmt.Fprintln(w)
	if !m.RefersTo.IsZero() {
		fmt.Fprintf(w, "about %s (%s)\n", m.RefersTo.Local().Format("Mon 2006-01-02"), m.TimingAt(now))
	}
	if len(m.Tags) > 0 {
		fmt.Fprintln(w, "tags: "+strings.Join(m.Tags, ", "))
	}
	if m.Provenance.Author != "" || m.Provenance.ChannelID != "" {
		fmt.Fprintf(w, "from %s", orDash(m.Provenance.Author))
		if m.Provenance.ChannelID != "" {
			fmt.Fprintf(w, " in channel %s", m.Provenance.ChannelID)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "importance %.2f (now %.2f) · recalled %d times\n", m.Importance, m.EffectiveImportance(now), m.AccessCount)
	return nil
}

// stateRefText names the memory a superseded or disputed memory's state names.
func stateRefText(m *memory.Memory) string {
	switch {
	case m.StateRef == 0:
		return ""
	case m.State == memory.StateSuperseded:
		return fmt.Sprintf(" by #%d", m.StateRef)
	default:
		return fmt.Sprintf(" with #%d", m.StateRef)
	}
}

func lifecycleNames() string {
	names := make([]string, len(memory.Lifecycles))
	for i, l := range memory.Lifecycles {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// explainLine says what placed a search result: "keyword 0.412 · vector 0.000 · date ×1.85
// · conversation ×1.20 (lent by #12) · lifecycle past".
func explainLine(r memory.SearchResult, now time.Time) string {
	parts := []string{fmt.Sprintf("keyword %.3f", r.Keyword), fmt.Sprintf("vector %.3f", r.Vector)}
	for _, f := range r.Why {
		p := fmt.Sprintf("%s ×%.2f", f.Stage, f.Times)
		if f.By != 0 {
			p += fmt.Sprintf(" (lent by #%d)", f.By)
		}
		parts = append(parts, p)
	}
	parts = append(parts, "lifecycle "+string(r.Memory.LifecycleAt(now)))
	return "↳ " + strings.Join(parts, " · ")
}
