package web

import (
	"net/http"

	"github.com/kioku-bot/kioku/memory"
)

// One server memory's page: its words, where and by whom it was learned, its lifecycle and
// its history, as /memory show and /memory history tell them, under the member's audience
// in that server.

// serverMemoryBody is a server memory page's.
type serverMemoryBody struct {
	serverMemoryView
	serverTabs
	ServerName, ServerURL string
	History               []historyRow
}

// visibleIn returns memory id of the place's server, forgotten or not, when the member may
// see it there; ok is false for an id of another scope, of no memory, or of a channel the
// member cannot view, alike.
func (sm *serverMemory) visibleIn(r *http.Request, p place, id int64) (*memory.Memory, bool, error) {
	m, err := sm.deps.Finder.Lookup(r.Context(), p.owner, id)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if m.Scope != memory.ScopeServer || m.GuildID != p.srv.GuildID || !p.aud.Allows(m) {
		return nil, false, nil
	}
	return m, true, nil
}

func (sm *serverMemory) memoryPage(w http.ResponseWriter, r *http.Request, v *visit) {
	p, ok := sm.place(w, r, v)
	if !ok {
		return
	}
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		sm.view.notFound(w, r, v)
		return
	}
	m, ok, err := sm.visibleIn(r, p, id)
	if err != nil {
		sm.view.internal(w, r, v, "couldn't read a server memory", err)
		return
	}
	if !ok || m.Deleted() {
		sm.view.notFound(w, r, v)
		return
	}
	events, err := sm.deps.Memories.History(r.Context(), p.owner, id)
	if err != nil {
		sm.view.internal(w, r, v, "couldn't read a server memory's history", err)
		return
	}
	body := serverMemoryBody{serverMemoryView: sm.viewOf(v.lang, p.srv.GuildID, serverFilter{Page: 1}, m),
		ServerName: p.srv.Name, ServerURL: serverFilter{Page: 1}.url(p.srv.GuildID), serverTabs: sm.tabs.tabs(p.srv, tabMemory)}
	if len(events) > maxHistoryRows {
		events = events[len(events)-maxHistoryRows:]
	}
	// Newest first, as on "My memory"'s history page, by the same rules.
	for i := len(events) - 1; i >= 0; i-- {
		body.History = append(body.History, historyRowOf(v, events[i], p.aud))
	}
	sm.view.render(w, r, v, http.StatusOK, "servermemory", "web.memory.title", body, m.ID)
}
