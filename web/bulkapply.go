package web

import (
	"errors"
	"net/http"

	"github.com/kioku-bot/kioku/memory"
)

// Applying a previewed batch and undoing an applied one. Each memory is changed through the
// store's audited writes with the member as the actor, only while it is still at the
// version the batch names; the others are counted and listed as changed since.

// bulkResultBody is the page after an apply or an undo.
type bulkResultBody struct {
	serverTabs
	ServerName, ServerURL, UndoURL string
	Action                         string
	Done                           []bulkRow
	// Skipped changed since the batch was made (or can no longer be seen); Refused were
	// refused by the store (a tag too many, a forget too old to undo).
	Skipped, Refused []bulkRow
	// Undo is the signed batch that undoes this one; empty after an undo.
	Undo   string
	Undone bool
}

// bulkForgetReason is the history reason of a bulk forget.
const bulkForgetReason = "bulk forget on the web dashboard"

// openSigned reads the form's batch for this session and server, of kind; a batch that is
// tampered, another session's, another server's or of another kind is refused, and so is
// its action when it is not one the dashboard makes.
func (sm *serverMemory) openSigned(w http.ResponseWriter, r *http.Request, v *visit, p place, kind string) (batch, bulkAction, bool) {
	b, ok := openBatch(v.sess.CSRF, r.PostForm.Get("batch"))
	act, known := readAction(b.Action, b.Value)
	if !ok || !known || b.Kind != kind || b.Guild != p.srv.GuildID || len(b.Items) == 0 || len(b.Items) > maxBatch {
		sm.log.InfoContext(r.Context(), "web bulk batch refused", "user_id", v.sess.UserID, "guild_id", p.srv.GuildID, "signed", ok)
		sm.view.message(w, r, v, http.StatusBadRequest, "web.bulk.bad_batch", serverFilter{Page: 1}.url(p.srv.GuildID))
		return batch{}, bulkAction{}, false
	}
	return b, act, true
}

// editorPlace is the request's server when the member may change its memory now.
func (sm *serverMemory) editorPlace(w http.ResponseWriter, r *http.Request, v *visit) (place, bool) {
	p, ok := sm.place(w, r, v)
	if !ok {
		return p, false
	}
	if !p.srv.Editor {
		sm.notEditor(w, r, v, p)
		return p, false
	}
	return p, true
}

func (sm *serverMemory) bulkApply(w http.ResponseWriter, r *http.Request, v *visit) {
	p, ok := sm.editorPlace(w, r, v)
	if !ok {
		return
	}
	b, act, ok := sm.openSigned(w, r, v, p, batchApply)
	if !ok {
		return
	}
	body := bulkResultBody{ServerName: p.srv.Name, ServerURL: serverFilter{Page: 1}.url(p.srv.GuildID),
		UndoURL: "/servers/" + p.srv.GuildID + "/bulk/undo", Action: act.describe(v.lang), serverTabs: sm.tabs.tabs(p.srv, tabMemory)}
	undo := batch{Kind: batchUndo, Guild: b.Guild, Action: b.Action, Value: b.Value}
	var forget []*memory.Memory
	for _, it := range b.Items {
		m, ok, err := sm.visibleIn(r, p, it[0])
		if err != nil {
			sm.view.internal(w, r, v, "couldn't read a server memory for a bulk action", err)
			return
		}
		if !ok || m.Deleted() || int64(m.Version) != it[1] {
			body.Skipped = append(body.Skipped, idRow(p.srv.GuildID, it[0]))
			continue
		}
		if act.Name == actForget {
			forget = append(forget, m)
			continue
		}
		ch, _ := act.change(m)
		ch.IfVersion = m.Version
		done, err := sm.deps.Memories.ModifyAs(r.Context(), p.writeContext(v), p.owner, m.ID, ch, v.actor())
		if sm.sortOut(r, v, err, m, &body) {
			body.Done = append(body.Done, sm.row(p, done))
			undo.Items = append(undo.Items, [2]int64{done.ID, int64(done.Version)})
		}
	}
	for _, m := range sm.forgetAll(r, v, p, forget, &body) {
		body.Done = append(body.Done, sm.row(p, m))
		undo.Items = append(undo.Items, [2]int64{m.ID, int64(m.Version)})
	}
	if len(undo.Items) > 0 {
		body.Undo = undo.seal(v.sess.CSRF)
	}
	sm.log.InfoContext(r.Context(), "web bulk action applied", "user_id", v.sess.UserID, "guild_id", p.srv.GuildID,
		"action", act.Name, "done", len(body.Done), "skipped", len(body.Skipped), "refused", len(body.Refused))
	sm.view.render(w, r, v, http.StatusOK, "bulkresult", countedKey("web.bulk.result_title", len(body.Done)), body, len(body.Done))
}

// forgetAll forgets ms, each only at the version the batch previewed (ForgetAt checks it
// in the forget's own transaction), in one audited write; when one of them changed or went
// meanwhile (the write is all or nothing) each is forgotten on its own and those are
// skipped.
func (sm *serverMemory) forgetAll(r *http.Request, v *visit, p place, ms []*memory.Memory, body *bulkResultBody) []*memory.Memory {
	if len(ms) == 0 {
		return nil
	}
	at := make(map[int64]int, len(ms))
	for _, m := range ms {
		at[m.ID] = m.Version
	}
	done, err := sm.deps.Memories.ForgetAt(r.Context(), p.owner, at, v.actor(), bulkForgetReason)
	if err == nil {
		return done
	}
	done = done[:0]
	for _, m := range ms {
		gone, err := sm.deps.Memories.ForgetAt(r.Context(), p.owner, map[int64]int{m.ID: m.Version}, v.actor(), bulkForgetReason)
		if sm.sortOut(r, v, err, m, body) {
			done = append(done, gone[0])
		}
	}
	return done
}

// sortOut files a write's failure for m: changed since (a conflict, a memory gone) or
// refused by the store. It reports whether the write was made.
func (sm *serverMemory) sortOut(r *http.Request, v *visit, err error, m *memory.Memory, body *bulkResultBody) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, memory.ErrChangedSince), memory.ErrorCode(err) == memory.ECONFLICT, memory.ErrorCode(err) == memory.ENOTFOUND:
		body.Skipped = append(body.Skipped, idRow(m.GuildID, m.ID))
	default:
		sm.log.WarnContext(r.Context(), "web bulk action: a memory's write was refused", "user_id", v.sess.UserID,
			"memory_id", m.ID, "code", memory.ErrorCode(err), "err", err)
		body.Refused = append(body.Refused, idRow(m.GuildID, m.ID))
	}
	return false
}

func (sm *serverMemory) bulkUndo(w http.ResponseWriter, r *http.Request, v *visit) {
	p, ok := sm.editorPlace(w, r, v)
	if !ok {
		return
	}
	b, act, ok := sm.openSigned(w, r, v, p, batchUndo)
	if !ok {
		return
	}
	body := bulkResultBody{ServerName: p.srv.Name, ServerURL: serverFilter{Page: 1}.url(p.srv.GuildID),
		Action: act.describe(v.lang), Undone: true, serverTabs: sm.tabs.tabs(p.srv, tabMemory)}
	for _, it := range b.Items {
		m, ok, err := sm.visibleIn(r, p, it[0])
		if err != nil {
			sm.view.internal(w, r, v, "couldn't read a server memory for a bulk undo", err)
			return
		}
		if !ok || int64(m.Version) != it[1] {
			body.Skipped = append(body.Skipped, idRow(p.srv.GuildID, it[0]))
			continue
		}
		if _, err := sm.deps.Memories.UndoAs(r.Context(), p.writeContext(v), p.owner, m.ID, m.Version, v.actor()); sm.sortOut(r, v, err, m, &body) {
			body.Done = append(body.Done, sm.row(p, m))
		}
	}
	sm.log.InfoContext(r.Context(), "web bulk action undone", "user_id", v.sess.UserID, "guild_id", p.srv.GuildID,
		"action", act.Name, "done", len(body.Done), "skipped", len(body.Skipped), "refused", len(body.Refused))
	sm.view.render(w, r, v, http.StatusOK, "bulkresult", countedKey("web.bulk.undo_title", len(body.Done)), body, len(body.Done))
}
