package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// "My memory": the member's personal memories, newest first, searched as /memory search
// does, each with Forget, the member's last change with Undo, and downloads. Every id a
// request names is looked up in the member's own scope and under their audience; whatever
// fails that reads as a page that does not exist.

// myMemory serves the "My memory" pages and their changes and downloads.
type myMemory struct {
	deps     Deps
	view     *views
	log      *slog.Logger
	pageSize int
	now      func() time.Time
	// reviewing is set when the dashboard serves the review queue: the page links to it.
	reviewing bool
}

// maxQueryRunes bounds a search's text.
const maxQueryRunes = 200

// forgetReason is the history reason of a forget made here.
const forgetReason = "forgotten on the web dashboard"

// owner is the member's personal scope: the only one the dashboard reads or writes so far.
func (v *visit) owner() memory.Owner { return memory.PersonalOwner(v.sess.UserID) }

// actor is the member, as history records the changes they make.
func (v *visit) actor() memory.Actor { return memory.UserActor(v.sess.UserID) }

// memoryView is one memory as the pages show it.
type memoryView struct {
	ID                    int64
	Version               int
	Type, Content, Origin string
	Created, CreatedISO   string
	Tags                  []string
	Pinned                bool
}

func viewOf(l i18n.Locale, m *memory.Memory) memoryView {
	origin := i18n.T(l, "line.from_a_server")
	if m.GuildID == "" {
		origin = i18n.T(l, "line.from_dms")
	}
	return memoryView{ID: m.ID, Version: m.Version, Type: i18n.T(l, i18n.Key("choice.type."+string(m.Type))), Content: m.Content,
		Origin: origin, Created: m.CreatedAt.UTC().Format("2006-01-02"), CreatedISO: m.CreatedAt.UTC().Format(time.RFC3339),
		Tags: m.Tags, Pinned: m.Pinned}
}

// meBody is the "My memory" page's.
type meBody struct {
	Query string
	// Filter narrows the list or the search (type, tag, from, to, lifecycle), as on a
	// server's page; Types and Lifecycles are its choices.
	Filter            serverFilter
	Types, Lifecycles []string
	Filtered          bool
	Summary           string
	Memories          []memoryView
	Hidden            int
	KeywordOnly       bool
	PrevURL, NextURL  string
	LastChange        *changeView
	// Review links the member's own review queue.
	Review bool
}

// changeView is the member's last change, offered for undo.
type changeView struct {
	Text     string
	MemoryID int64
	Version  int
}

func (mm *myMemory) mePage(w http.ResponseWriter, r *http.Request, v *visit) {
	if r.URL.Query().Get("view") == "server" {
		mm.elsewherePage(w, r, v)
		return
	}
	f := readFilter(r.URL.Query())
	f.Author, f.Channel, f.Explain = "", "", false // a member's own memories: no author or channel to pick
	if err := f.check(mm.now()); err != nil {
		mm.view.message(w, r, v, http.StatusBadRequest, "web.server.bad_filter", "/me")
		return
	}
	body := meBody{Query: f.Query, Filter: f, Types: typeNames(), Lifecycles: lifecycleNames(),
		Filtered: f.filtered(), Review: mm.reviewing}
	var err error
	if body.Query != "" {
		err = mm.search(r, v, &body)
	} else {
		err = mm.list(r, v, &body)
	}
	if err == nil {
		body.LastChange, err = mm.lastChange(r, v)
	}
	if err != nil {
		mm.view.internal(w, r, v, "couldn't read a member's memories", err)
		return
	}
	mm.view.render(w, r, v, http.StatusOK, "me", "web.me.title", body)
}

// list fills body with one page of the member's memories, newest first, and counts those
// the page may not show.
func (mm *myMemory) list(r *http.Request, v *visit, body *meBody) error {
	ctx, size, f := r.Context(), mm.pageSize, body.Filter
	pageNo := f.Page
	mems, total, err := mm.deps.Memories.List(ctx, v.owner(), f.listOptions(v.audience(r), size, mm.now()))
	if err != nil {
		return err
	}
	// The same filter without the audience: how many the page may not show.
	_, all, err := mm.deps.Memories.List(ctx, v.owner(), f.listOptions(nil, 1, mm.now()))
	if err != nil {
		return err
	}
	body.Hidden = max(all-total, 0)
	for _, m := range mems {
		body.Memories = append(body.Memories, viewOf(v.lang, m))
	}
	pages := max((total+size-1)/size, 1)
	body.Summary = i18n.N(v.lang, "web.me.count", total, pageNo, pages)
	if pageNo > 1 {
		f.Page = pageNo - 1
		body.PrevURL = f.at("/me")
	}
	if pageNo < pages {
		f.Page = pageNo + 1
		body.NextURL = f.at("/me")
	}
	return nil
}

// search fills body with the member's memories that match the query, as /memory search
// finds them: recall over their personal scope and audience, matches only, counted as
// accessed, and paid from their own DMs' budget.
func (mm *myMemory) search(r *http.Request, v *visit, body *meBody) error {
	ctx := memory.WithPayer(r.Context(), memory.Payer{UserID: v.sess.UserID})
	q := body.Filter.searchQuery(v.owner(), v.audience(r), mm.pageSize, mm.now())
	q.CountAccess = true
	results, err := mm.deps.Recall.Search(ctx, q)
	if err != nil {
		return err
	}
	body.KeywordOnly = memory.SpendLimited(ctx)
	for _, res := range results {
		if body.Filter.keep(res.Memory, mm.now()) {
			body.Memories = append(body.Memories, viewOf(v.lang, res.Memory))
		}
	}
	body.Summary = i18n.N(v.lang, "web.me.results", len(body.Memories), body.Query)
	return nil
}

// lastChangeRows is how far back the member's last change is looked for among the rows of
// their scope (the model and the pipeline write there too).
const lastChangeRows = 50

// lastChange is the member's newest change to a memory the page may show, when it is one
// an undo reverts; nil otherwise. It says what happened and when, never the words.
func (mm *myMemory) lastChange(r *http.Request, v *visit) (*changeView, error) {
	hist, err := mm.deps.Memories.ScopeHistory(r.Context(), v.owner(), lastChangeRows)
	if err != nil {
		return nil, err
	}
	for _, ev := range hist {
		if ev.Actor != v.actor() || ev.MemoryID == 0 {
			continue
		}
		switch ev.Action {
		case memory.ActionCreate, memory.ActionImport, memory.ActionUpdate, memory.ActionDelete, memory.ActionRecover:
		default:
			continue // a record of something that changed no memory (a repeated save)
		}
		if _, ok, err := mm.visible(r, v, ev.MemoryID); err != nil || !ok {
			return nil, err
		}
		return &changeView{MemoryID: ev.MemoryID, Version: ev.Version,
			Text: i18n.T(v.lang, i18n.Key("web.last."+string(ev.Action)), ev.MemoryID, ev.CreatedAt.UTC().Format("2006-01-02 15:04 MST"))}, nil
	}
	return nil, nil
}

// visible returns memory id of the member's scope, forgotten or not, when the member may
// see it here; ok is false for an id of another scope, of no memory, or of a channel their
// audience does not include, alike.
func (mm *myMemory) visible(r *http.Request, v *visit, id int64) (*memory.Memory, bool, error) {
	m, err := mm.deps.Finder.Lookup(r.Context(), v.owner(), id)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !v.audience(r).Allows(m) {
		return nil, false, nil
	}
	return m, true, nil
}

// parseID reads a memory id as members see them (a positive number).
func parseID(raw string) (int64, bool) {
	id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(raw), "#"), 10, 64)
	return id, err == nil && id > 0
}

// memoryPage shows one live memory of the member.
func (mm *myMemory) memoryPage(w http.ResponseWriter, r *http.Request, v *visit) {
	m, ok := mm.target(w, r, v, true)
	if !ok {
		return
	}
	mm.view.render(w, r, v, http.StatusOK, "memory", "web.memory.title", viewOf(v.lang, m), m.ID)
}

// forget forgets one memory of the member (soft delete: undo or /memory recover brings it
// back within the recover window).
func (mm *myMemory) forget(w http.ResponseWriter, r *http.Request, v *visit) {
	id, ok := parseID(r.PostForm.Get("id"))
	if !ok {
		mm.view.notFound(w, r, v)
		return
	}
	if _, ok, err := mm.visible(r, v, id); err != nil || !ok {
		mm.refused(w, r, v, err)
		return
	}
	if _, err := mm.deps.Memories.Forget(r.Context(), v.owner(), []int64{id}, v.actor(), forgetReason); err != nil {
		mm.refused(w, r, v, err)
		return
	}
	mm.log.InfoContext(r.Context(), "memory forgotten on the web dashboard", "user_id", v.sess.UserID, "memory_id", id)
	http.Redirect(w, r, "/me", http.StatusSeeOther)
}

// undo reverts the member's change to a memory, while the memory is still at the version
// that change made: a forget is recovered, an edit restored, an addition forgotten.
func (mm *myMemory) undo(w http.ResponseWriter, r *http.Request, v *visit) {
	id, ok := parseID(r.PostForm.Get("id"))
	version, err := strconv.Atoi(r.PostForm.Get("version"))
	if !ok || err != nil || version < 0 {
		mm.view.notFound(w, r, v)
		return
	}
	if _, ok, err := mm.visible(r, v, id); err != nil || !ok {
		mm.refused(w, r, v, err)
		return
	}
	wc := memory.WriteContext{WriterID: v.sess.UserID, Audience: v.audience(r)}
	res, err := mm.deps.Memories.UndoAs(r.Context(), wc, v.owner(), id, version, v.actor())
	if err != nil {
		mm.refused(w, r, v, err)
		return
	}
	mm.log.InfoContext(r.Context(), "memory change undone on the web dashboard", "user_id", v.sess.UserID, "memory_id", id,
		"history_id", res.Change.ID, "undone", res.Change.Action)
	http.Redirect(w, r, "/me", http.StatusSeeOther)
}

// refused answers a change the store (or the visibility check, err nil) refused: a memory
// that is not there, or may not be seen, is a 404; a change that can no longer apply says
// why; anything else is an internal error.
func (mm *myMemory) refused(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	switch {
	case err == nil, memory.ErrorCode(err) == memory.ENOTFOUND:
		mm.view.notFound(w, r, v)
	case errors.Is(err, memory.ErrChangedSince):
		mm.view.message(w, r, v, http.StatusConflict, "web.undo.changed", "/me")
	case memory.ErrorCode(err) == memory.EEXPIRED:
		mm.view.message(w, r, v, http.StatusConflict, "web.undo.expired", "/me")
	case memory.ErrorCode(err) == memory.EINTERNAL || memory.ErrorCode(err) == memory.EUNAVAILABLE:
		mm.view.internal(w, r, v, "couldn't change a memory", err)
	default:
		mm.log.InfoContext(r.Context(), "web change refused by the store", "user_id", v.sess.UserID, "code", memory.ErrorCode(err))
		mm.view.message(w, r, v, http.StatusConflict, "web.error.refused", "/me")
	}
}
