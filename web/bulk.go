package web

import (
	"net/http"
	"strconv"

	"github.com/kioku-bot/kioku/memory"
)

// Bulk actions on a server's memory, for its editors: a selection (the list's checkboxes)
// or everything a filter matches is previewed memory by memory (id, words, before ->
// after) with a confirm form carrying the signed batch (batch.go); the apply changes
// exactly those memories, each only while still at the previewed version, and offers one
// undo for the batch (bulkapply.go). Editor rights and every id's visibility are checked
// again at each step: roles change, and a form can be forged.

// maxBatch is the most memories one bulk action takes.
const maxBatch = memory.MaxListLimit

// maxBulkFormBytes bounds a bulk form: 5,000 ids, or a batch of 5,000 ids and versions,
// with room to spare.
const maxBulkFormBytes = 1 << 20

// maxPreviewWords is how much of each memory's words the preview shows.
const maxPreviewWords = 200

// bulkPreviewBody is the preview page's.
type bulkPreviewBody struct {
	serverTabs
	ServerName, ServerURL, ApplyURL string
	Action                          string
	Rows                            []bulkRow
	Unchanged                       int
	Batch                           string
}

// bulkRow is one memory of a preview or a result.
type bulkRow struct {
	ID            int64
	URL, Words    string
	Before, After string
}

// notEditor answers a bulk form from a member who may not change the server's memory.
func (sm *serverMemory) notEditor(w http.ResponseWriter, r *http.Request, v *visit, p place) {
	sm.log.InfoContext(r.Context(), "web bulk action refused: not an editor", "user_id", v.sess.UserID, "guild_id", p.srv.GuildID)
	sm.view.message(w, r, v, http.StatusForbidden, "web.bulk.not_editor", serverFilter{Page: 1}.url(p.srv.GuildID))
}

func (sm *serverMemory) bulkPreview(w http.ResponseWriter, r *http.Request, v *visit) {
	p, ok := sm.place(w, r, v)
	if !ok {
		return
	}
	if !p.srv.Editor {
		sm.notEditor(w, r, v, p)
		return
	}
	act, ok := readAction(r.PostForm.Get("action"), r.PostForm.Get("value"))
	if !ok {
		sm.view.message(w, r, v, http.StatusBadRequest, "web.bulk.bad_action", serverFilter{Page: 1}.url(p.srv.GuildID))
		return
	}
	var mems []*memory.Memory
	if r.PostForm.Get("scope") == "filter" {
		mems, ok = sm.matching(w, r, v, p)
	} else {
		mems, ok = sm.selected(w, r, v, p)
	}
	if !ok {
		return
	}
	body := bulkPreviewBody{ServerName: p.srv.Name, ServerURL: serverFilter{Page: 1}.url(p.srv.GuildID),
		ApplyURL: "/servers/" + p.srv.GuildID + "/bulk/apply", Action: act.describe(v.lang), serverTabs: sm.tabs.tabs(p.srv, tabMemory)}
	b := batch{Kind: batchApply, Guild: p.srv.GuildID, Action: act.Name, Value: act.Value}
	for _, m := range mems {
		if _, changes := act.change(m); !changes {
			body.Unchanged++
			continue
		}
		row := sm.row(p, m)
		row.Before, row.After = act.beforeAfter(v.lang, m)
		body.Rows = append(body.Rows, row)
		b.Items = append(b.Items, [2]int64{m.ID, int64(m.Version)})
	}
	if len(b.Items) > 0 {
		body.Batch = b.seal(v.sess.CSRF)
	}
	sm.view.render(w, r, v, http.StatusOK, "bulkpreview", countedKey("web.bulk.preview_title", len(body.Rows)), body, len(body.Rows))
}

// countedKey is the plural form of a catalogue key for a page title counting n (render
// takes a key, not a count).
func countedKey(key string, n int) string {
	if n == 1 {
		return key + ".one"
	}
	return key + ".other"
}

// row is m as a preview or result line: its id, link and the start of its words.
func (sm *serverMemory) row(p place, m *memory.Memory) bulkRow {
	words := m.Content
	if rs := []rune(words); len(rs) > maxPreviewWords {
		words = string(rs[:maxPreviewWords]) + "…"
	}
	row := idRow(p.srv.GuildID, m.ID)
	row.Words = words
	return row
}

// idRow is a line naming only a memory's id, linked to its page.
func idRow(guildID string, id int64) bulkRow {
	return bulkRow{ID: id, URL: "/servers/" + guildID + "/memories/" + strconv.FormatInt(id, 10)}
}

// selected reads the form's checked ids: every one must be a live memory of this server the
// member may see, or the preview is the 404 page (an id of another server, of a hidden
// channel or of nothing reads alike), and there may be at most maxBatch.
func (sm *serverMemory) selected(w http.ResponseWriter, r *http.Request, v *visit, p place) ([]*memory.Memory, bool) {
	raw := r.PostForm["id"]
	if len(raw) == 0 {
		sm.view.message(w, r, v, http.StatusBadRequest, "web.bulk.none", serverFilter{Page: 1}.url(p.srv.GuildID))
		return nil, false
	}
	if len(raw) > maxBatch {
		sm.view.message(w, r, v, http.StatusBadRequest, "web.bulk.too_many", serverFilter{Page: 1}.url(p.srv.GuildID))
		return nil, false
	}
	seen := make(map[int64]bool, len(raw))
	out := make([]*memory.Memory, 0, len(raw))
	for _, s := range raw {
		id, ok := parseID(s)
		if !ok {
			sm.view.notFound(w, r, v)
			return nil, false
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		m, ok, err := sm.visibleIn(r, p, id)
		if err != nil {
			sm.view.internal(w, r, v, "couldn't read a server memory for a bulk preview", err)
			return nil, false
		}
		if !ok || m.Deleted() {
			sm.view.notFound(w, r, v)
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
}

// matching is every memory the form's filter matches under the member's audience: the
// search's matches when it has words (recall's most, 100), else the whole listing, which
// may hold at most maxBatch.
func (sm *serverMemory) matching(w http.ResponseWriter, r *http.Request, v *visit, p place) ([]*memory.Memory, bool) {
	f := readFilter(r.PostForm)
	f.Page = 1
	if err := f.check(sm.now()); err != nil {
		sm.view.message(w, r, v, http.StatusBadRequest, "web.server.bad_filter", serverFilter{Page: 1}.url(p.srv.GuildID))
		return nil, false
	}
	var out []*memory.Memory
	if f.Query != "" {
		results, _, err := sm.searchResults(r, v, p, f, maxSearchResults, false)
		if err != nil {
			sm.view.internal(w, r, v, "couldn't search a server's memories for a bulk preview", err)
			return nil, false
		}
		for _, res := range results {
			out = append(out, res.Memory)
		}
		return out, true
	}
	// One read of the whole batch: each page of a paged read would count and scan the
	// scope again (ten times for 5,000 memories).
	mems, total, err := sm.deps.Memories.List(r.Context(), p.owner, f.listOptions(p.aud, maxBatch, sm.now()))
	if err != nil {
		sm.view.internal(w, r, v, "couldn't list a server's memories for a bulk preview", err)
		return nil, false
	}
	if total > maxBatch {
		sm.view.message(w, r, v, http.StatusBadRequest, "web.bulk.too_many", f.url(p.srv.GuildID))
		return nil, false
	}
	return mems, true
}

// maxSearchResults is the most results one search returns (recall's bound).
const maxSearchResults = 100
