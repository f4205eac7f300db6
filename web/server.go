package web

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// "A server's memory": the servers a member may see, and each one's server memory under
// the member's audience there, listed newest first or searched as /memory search does,
// with filters, an explain view, each channel's and member's contributions, one memory's
// page with its history, and, for editors, bulk actions (bulk.go). A server the member may
// not see, and a memory of a channel they cannot view, read exactly as missing pages.

// serverMemory serves the server pages and their bulk actions.
type serverMemory struct {
	deps     Deps
	view     *views
	log      *slog.Logger
	pageSize int
	now      func() time.Time
	// tabs draws the tab bar of the server's pages.
	tabs tabBar
}

// serversBody is the servers page's.
type serversBody struct {
	Servers []serverLink
}

// serverLink is one server of the servers page.
type serverLink struct {
	Name, URL       string
	Editor, Manager bool
}

func (sm *serverMemory) serversPage(w http.ResponseWriter, r *http.Request, v *visit) {
	var body serversBody
	for _, s := range v.servers(r) {
		body.Servers = append(body.Servers, serverLink{Name: s.Name, URL: serverFilter{Page: 1}.url(s.GuildID),
			Editor: s.Editor, Manager: s.Manager})
	}
	sm.view.render(w, r, v, http.StatusOK, "servers", "web.servers.title", body)
}

// place is the server a request names, with the member's audience and writer context
// there; ok is false (and the 404 page written) when they may not see it.
type place struct {
	srv   server
	owner memory.Owner
	aud   *memory.Audience
}

func (sm *serverMemory) place(w http.ResponseWriter, r *http.Request, v *visit) (place, bool) {
	srv, ok := guildGate{view: sm.view}.open(w, r, v, needMember)
	if !ok {
		return place{}, false
	}
	return place{srv: srv, owner: memory.ServerOwner(srv.GuildID), aud: channelAudience(srv)}, true
}

// writeContext is the member writing in this server under their audience.
func (p place) writeContext(v *visit) memory.WriteContext {
	return memory.WriteContext{WriterID: v.sess.UserID, GuildID: p.srv.GuildID, Audience: p.aud}
}

// serverMemoryView is one server memory as the pages show it.
type serverMemoryView struct {
	memoryView
	URL, Channel, ChannelURL, Author, AuthorURL, Lifecycle string
	// Why is the explain view's line, when asked for.
	Why string
}

func (sm *serverMemory) viewOf(l i18n.Locale, guildID string, f serverFilter, m *memory.Memory) serverMemoryView {
	sv := serverMemoryView{memoryView: viewOf(l, m), Channel: m.Provenance.ChannelID, Author: authorName(m.Provenance),
		URL: "/servers/" + guildID + "/memories/" + strconv.FormatInt(m.ID, 10)}
	if lc := m.LifecycleAt(sm.now()); lc != memory.LifecycleActive {
		sv.Lifecycle = i18n.T(l, i18n.Key("choice.lifecycle."+string(lc)))
	}
	base := f
	base.Page = 1
	if sv.Channel != "" {
		c := base
		c.Channel = sv.Channel
		sv.ChannelURL = c.url(guildID)
	}
	if m.Provenance.AuthorID != "" {
		a := base
		a.Author = m.Provenance.AuthorID
		sv.AuthorURL = a.url(guildID)
	}
	return sv
}

// authorName is who a memory's provenance names: their name, else their id.
func authorName(p memory.Provenance) string {
	if p.Author != "" {
		return p.Author
	}
	return p.AuthorID
}

// serverBody is a server page's.
type serverBody struct {
	serverTabs
	GuildID, Name, URL string
	Editor             bool
	Filter             serverFilter
	// Hidden are the filter's fields, for the bulk form's "everything matching".
	Hidden           []formField
	Types            []string
	Lifecycles       []string
	Summary          string
	Memories         []serverMemoryView
	KeywordOnly      bool
	PrevURL, NextURL string
	ClearURL         string
	Filtered         bool
	Channels         []contributionView
	Authors          []contributionView
	Actions          []string
}

// formField is one hidden field of a form.
type formField struct{ Name, Value string }

// contributionView is one line of "contributions at a glance": a link setting the filter.
type contributionView struct {
	Label, URL string
	Count      int
	Current    bool
}

func (sm *serverMemory) serverPage(w http.ResponseWriter, r *http.Request, v *visit) {
	p, ok := sm.place(w, r, v)
	if !ok {
		return
	}
	f := readFilter(r.URL.Query())
	if err := f.check(sm.now()); err != nil {
		sm.view.message(w, r, v, http.StatusBadRequest, "web.server.bad_filter", f.urlWithout(p.srv.GuildID))
		return
	}
	body := serverBody{GuildID: p.srv.GuildID, Name: p.srv.Name, URL: serverFilter{Page: 1}.url(p.srv.GuildID),
		Editor: p.srv.Editor, Filter: f, Types: typeNames(), Lifecycles: lifecycleNames(), Actions: bulkActionNames,
		serverTabs: sm.tabs.tabs(p.srv, tabMemory)}
	body.ClearURL, body.Filtered = body.URL, f.filtered()
	for k, vals := range f.values() {
		if k != "p" {
			body.Hidden = append(body.Hidden, formField{Name: k, Value: vals[0]})
		}
	}
	var err error
	if f.Query != "" {
		err = sm.search(r, v, p, &body)
	} else if err = sm.list(r, v, p, &body); err == nil {
		// The counts at a glance go with the listing, which they filter: they scan the whole
		// server, many times the cost of a search's own reads.
		err = sm.contributions(r, v, p, &body)
	}
	if err != nil {
		sm.view.internal(w, r, v, "couldn't read a server's memories", err)
		return
	}
	sm.view.render(w, r, v, http.StatusOK, "server", "web.server.title", body, p.srv.Name)
}

// urlWithout is the server page without any filter: where a bad filter's page points.
func (f serverFilter) urlWithout(guildID string) string { return serverFilter{Page: 1}.url(guildID) }

// list fills body with one page of the server's memories under the filter, newest first.
func (sm *serverMemory) list(r *http.Request, v *visit, p place, body *serverBody) error {
	f, size := body.Filter, sm.pageSize
	mems, total, err := sm.deps.Memories.List(r.Context(), p.owner, f.listOptions(p.aud, size, sm.now()))
	if err != nil {
		return err
	}
	for _, m := range mems {
		body.Memories = append(body.Memories, sm.viewOf(v.lang, p.srv.GuildID, f, m))
	}
	pages := max((total+size-1)/size, 1)
	body.Summary = i18n.N(v.lang, "web.me.count", total, f.Page, pages)
	if f.Page > 1 {
		prev := f
		prev.Page--
		body.PrevURL = prev.url(p.srv.GuildID)
	}
	if f.Page < pages {
		next := f
		next.Page++
		body.NextURL = next.url(p.srv.GuildID)
	}
	return nil
}

// search fills body with the server's memories that match the query under the filter, as
// /memory search finds them: counted as accessed and paid from the server's budget.
func (sm *serverMemory) search(r *http.Request, v *visit, p place, body *serverBody) error {
	results, keywordOnly, err := sm.searchResults(r, v, p, body.Filter, sm.pageSize, true)
	if err != nil {
		return err
	}
	body.KeywordOnly = keywordOnly
	for _, res := range results {
		sv := sm.viewOf(v.lang, p.srv.GuildID, body.Filter, res.Memory)
		if body.Filter.Explain {
			sv.Why = i18n.Explain(v.lang, res, sm.now())
		}
		body.Memories = append(body.Memories, sv)
	}
	body.Summary = i18n.N(v.lang, "web.me.results", len(body.Memories), body.Filter.Query)
	return nil
}

// searchResults runs the filter's search over the server under the member's audience and
// keeps the results that pass the filters recall has no field for. countAccess is set for
// the page a member reads, not for a bulk preview's selection.
func (sm *serverMemory) searchResults(r *http.Request, v *visit, p place, f serverFilter, limit int, countAccess bool) ([]memory.SearchResult, bool, error) {
	ctx := memory.WithPayer(r.Context(), memory.Payer{GuildID: p.srv.GuildID, UserID: v.sess.UserID})
	q := f.searchQuery(p.owner, p.aud, limit, sm.now())
	q.CountAccess = countAccess
	results, err := sm.deps.Recall.Search(ctx, q)
	if err != nil {
		return nil, false, err
	}
	kept := results[:0]
	for _, res := range results {
		// Recall applied the audience already; checking again costs nothing and keeps a
		// result of a channel the member cannot view off the page whatever recall did.
		if p.aud.Allows(res.Memory) && f.keep(res.Memory, sm.now()) {
			kept = append(kept, res)
		}
	}
	return kept, memory.SpendLimited(ctx), nil
}

// contributions fills the counts by channel and by author, each a link setting that filter.
func (sm *serverMemory) contributions(r *http.Request, v *visit, p place, body *serverBody) error {
	c, err := sm.deps.Overview.Contributions(r.Context(), p.owner, p.aud)
	if err != nil {
		return err
	}
	base := body.Filter
	base.Page = 1
	for _, ch := range c.Channels {
		label := "#" + ch.ID
		if ch.ID == "" {
			label = i18n.T(v.lang, "web.server.no_channel")
			body.Channels = append(body.Channels, contributionView{Label: label, Count: ch.Count})
			continue
		}
		f := base
		f.Channel = ch.ID
		body.Channels = append(body.Channels, contributionView{Label: label, Count: ch.Count, URL: f.url(p.srv.GuildID),
			Current: base.Channel == ch.ID})
	}
	for _, a := range c.Authors {
		f := base
		f.Author = a.ID
		label := a.Name
		if label == "" {
			label = a.ID
		}
		body.Authors = append(body.Authors, contributionView{Label: label, Count: a.Count, URL: f.url(p.srv.GuildID),
			Current: base.Author == a.ID})
	}
	return nil
}

// typeNames are the memory types a filter or an action may name.
func typeNames() []string {
	out := make([]string, len(memory.Types))
	for i, t := range memory.Types {
		out[i] = string(t)
	}
	return out
}

// lifecycleNames are the lifecycles a filter may name.
func lifecycleNames() []string {
	out := make([]string, len(memory.Lifecycles))
	for i, l := range memory.Lifecycles {
		out[i] = string(l)
	}
	return out
}
