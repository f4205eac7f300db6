package web

import (
	"net/http"
	"time"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// The history of one of the member's memories, as /memory history tells it: what happened,
// when and by whom, with the words before and after. A row whose words were said where the
// member may not see them keeps only what happened, when and by whom; a lifecycle change
// never names the memory it points at, which may be one they cannot see.

// maxHistoryRows is how many of a memory's newest history rows the page shows.
const maxHistoryRows = 50

// historyBody is the history page's.
type historyBody struct {
	ID int64
	// Live is set while the memory is not forgotten, for the link back to it.
	Live bool
	Rows []historyRow
}

// historyRow is one change as the page shows it.
type historyRow struct {
	Version            int
	Action, Who        string
	When, WhenISO      string
	Reason             string
	Old, New, Proposed string
	State              string
	Withheld           bool
}

// historyPage shows the history of one memory of the member, forgotten or not.
func (mm *myMemory) historyPage(w http.ResponseWriter, r *http.Request, v *visit) {
	m, ok := mm.target(w, r, v, false)
	if !ok {
		return
	}
	id := m.ID
	events, err := mm.deps.Memories.History(r.Context(), v.owner(), id)
	if err != nil {
		mm.view.internal(w, r, v, "couldn't read a memory's history", err)
		return
	}
	if len(events) > maxHistoryRows {
		events = events[len(events)-maxHistoryRows:]
	}
	body := historyBody{ID: id, Live: !m.Deleted()}
	aud := v.audience(r)
	// Newest first: the change the member just made is at the top.
	for i := len(events) - 1; i >= 0; i-- {
		body.Rows = append(body.Rows, historyRowOf(v, events[i], aud))
	}
	mm.view.render(w, r, v, http.StatusOK, "history", "web.history.title", body, id)
}

// historyRowOf renders ev for the member under their audience.
func historyRowOf(v *visit, ev memory.HistoryEvent, aud *memory.Audience) historyRow {
	l := v.lang
	ev, withheld := ev.ShownTo(aud)
	row := historyRow{Version: ev.Version, Action: actionText(l, ev.Action), Who: actorText(v, ev.Actor),
		When: ev.CreatedAt.UTC().Format("2006-01-02 15:04 MST"), WhenISO: ev.CreatedAt.UTC().Format(time.RFC3339),
		Reason: ev.Reason, Withheld: withheld}
	if from, to, _, ok := ev.StateChange(); ok {
		word := func(s memory.State) string { return i18n.T(l, i18n.Key("choice.lifecycle."+string(s.Lifecycle()))) }
		row.State = i18n.T(l, "history.state", word(from), word(to))
	}
	if withheld {
		return row
	}
	switch {
	case ev.Action == memory.ActionReview, !historyApplied(ev.Action):
		// The memory did not change: the row holds words it was compared with or a
		// proposal that was not applied, never a change of its own.
		row.Proposed = ev.NewContent
	case ev.OldContent != ev.NewContent:
		row.Old, row.New = ev.OldContent, ev.NewContent
	default:
		row.New = ev.NewContent
	}
	return row
}

// historyApplied reports whether a history action changed the memory (as the bot's
// /memory history reads it); the others record what the pipeline considered.
func historyApplied(a memory.Action) bool {
	switch a {
	case memory.ActionCreate, memory.ActionUpdate, memory.ActionDelete, memory.ActionRecover,
		memory.ActionImport, memory.ActionPurge:
		return true
	}
	return false
}

// actionText names an action in l.
func actionText(l i18n.Locale, a memory.Action) string {
	switch a {
	case memory.ActionCreate, memory.ActionUpdate, memory.ActionDelete, memory.ActionRecover, memory.ActionImport,
		memory.ActionPurge, memory.ActionDedup, memory.ActionSkip, memory.ActionBlock, memory.ActionShadow, memory.ActionReview:
		return i18n.T(l, i18n.Key("web.history.action."+string(a)))
	}
	return string(a)
}

// actorText says who made a change: "you" for the member, other people only as "another
// member" (the page names no one else), and kioku's own parts by what they are.
func actorText(v *visit, a memory.Actor) string {
	l := v.lang
	switch {
	case a == v.actor():
		return i18n.T(l, "web.actor.you")
	case a.UserID() != "":
		return i18n.T(l, "web.actor.member")
	case a == memory.ModelActor(v.sess.UserID):
		return i18n.T(l, "web.actor.model_you")
	case a.ModelUserID() != "":
		return i18n.T(l, "web.actor.model")
	}
	switch a {
	case memory.ActorPipeline:
		return i18n.T(l, "web.actor.pipeline")
	case memory.ActorRetention:
		return i18n.T(l, "web.actor.retention")
	case memory.ActorCLI:
		return i18n.T(l, "web.actor.cli")
	case memory.ActorDiscord:
		return i18n.T(l, "web.actor.discord")
	case memory.ActorForgotten:
		return i18n.T(l, "web.actor.forgotten")
	}
	return i18n.T(l, "web.actor.kioku")
}
