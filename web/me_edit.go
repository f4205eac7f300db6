package web

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// Editing one of the member's memories: a form prefilled with its words, type and tags,
// applied by the store's audited write only while the memory is still at the version the
// form was opened at, with the checks /memory edit makes (content length, type, tags, the
// full privacy level).

// editReason is the history reason of an edit made here.
const editReason = "edited on the web dashboard"

// maxTagsInput bounds the tags field, as the bot's edit form does.
const maxTagsInput = 200

// editBody is the edit page's: the form's values and, after a refused submit, why.
type editBody struct {
	ID       int64
	Version  int
	Content  string
	Tags     string
	Types    []typeChoice
	Error    string
	MaxRunes int
}

// typeChoice is one option of the type menu.
type typeChoice struct {
	Value, Label string
	Selected     bool
}

// typeChoices are the memory types in l, selected marking one.
func typeChoices(l i18n.Locale, selected memory.Type) []typeChoice {
	out := make([]typeChoice, len(memory.Types))
	for i, t := range memory.Types {
		out[i] = typeChoice{Value: string(t), Label: i18n.T(l, i18n.Key("choice.type."+string(t))), Selected: t == selected}
	}
	return out
}

// target returns the memory the path's id names when the member may see it (and, with
// liveOnly, when it is not forgotten); otherwise it answers 404 (or 500) itself and returns
// false.
func (mm *myMemory) target(w http.ResponseWriter, r *http.Request, v *visit, liveOnly bool) (*memory.Memory, bool) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		mm.view.notFound(w, r, v)
		return nil, false
	}
	m, ok, err := mm.visible(r, v, id)
	if err != nil {
		mm.view.internal(w, r, v, "couldn't read a memory", err)
		return nil, false
	}
	if !ok || (liveOnly && m.Deleted()) {
		mm.view.notFound(w, r, v)
		return nil, false
	}
	return m, true
}

// mayEdit answers a member at the full privacy level (who asked kioku to keep nothing, so
// writes nothing by hand either, as /memory edit refuses) and returns false.
func (mm *myMemory) mayEdit(w http.ResponseWriter, r *http.Request, v *visit) bool {
	us, err := mm.deps.Privacy.UserSettings(r.Context(), v.sess.UserID)
	if err != nil {
		mm.view.internal(w, r, v, "couldn't read a member's privacy level", err)
		return false
	}
	if us.Privacy == memory.PrivacyFull {
		mm.view.message(w, r, v, http.StatusForbidden, "web.edit.privacy_full", "/me")
		return false
	}
	return true
}

// editPage shows the form to edit one memory, prefilled.
func (mm *myMemory) editPage(w http.ResponseWriter, r *http.Request, v *visit) {
	m, ok := mm.target(w, r, v, true)
	if !ok || !mm.mayEdit(w, r, v) {
		return
	}
	body := editBody{ID: m.ID, Version: m.Version, Content: m.Content, Tags: strings.Join(m.Tags, ", "),
		Types: typeChoices(v.lang, m.Type), MaxRunes: memory.MaxContentRunes}
	mm.view.render(w, r, v, http.StatusOK, "edit", "web.edit.title", body, m.ID)
}

// editForm is what the edit form sent, checked as the bot checks its edit form.
type editForm struct {
	content string
	typ     memory.Type
	tags    []string
}

// readEditForm checks the submitted form; the error is an i18n key with its arguments.
func readEditForm(r *http.Request) (editForm, i18n.Key, []any) {
	f := editForm{content: strings.TrimSpace(r.PostForm.Get("content"))}
	switch n := utf8.RuneCountInString(f.content); {
	case n == 0:
		return f, "ux.modal.invalid.empty", nil
	case n > memory.MaxContentRunes:
		return f, "ux.modal.invalid.long", []any{n, memory.MaxContentRunes}
	}
	f.typ = memory.Type(strings.ToLower(strings.TrimSpace(r.PostForm.Get("type"))))
	if !f.typ.Valid() {
		return f, "web.edit.bad_type", nil
	}
	tags := r.PostForm.Get("tags")
	if utf8.RuneCountInString(tags) > maxTagsInput {
		return f, "ux.modal.invalid.tags", []any{maxTagsInput}
	}
	// Tags are kept in lower case; reading them so here lets the edit see what really changed.
	f.tags = splitTags(strings.ToLower(tags))
	return f, "", nil
}

// splitTags reads a comma-separated tag list, dropping empty entries.
func splitTags(s string) []string {
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// editSubmit applies the edit form, only while the memory is still at the version the form
// was opened at: an edit made meanwhile is reported, never overwritten.
func (mm *myMemory) editSubmit(w http.ResponseWriter, r *http.Request, v *visit) {
	cur, ok := mm.target(w, r, v, true)
	if !ok || !mm.mayEdit(w, r, v) {
		return
	}
	version, err := strconv.Atoi(r.PostForm.Get("version"))
	if err != nil || version <= 0 {
		mm.view.message(w, r, v, http.StatusBadRequest, "web.error.bad_form", "")
		return
	}
	if cur.Version != version {
		mm.view.message(w, r, v, http.StatusConflict, "web.edit.changed", memoryPath(cur.ID))
		return
	}
	f, key, args := readEditForm(r)
	if key != "" {
		mm.editAgain(w, r, v, cur, http.StatusBadRequest, i18n.T(v.lang, key, args...))
		return
	}
	ch := memory.Change{IfVersion: version, Reason: editReason}
	if f.content != cur.Content {
		ch.Content = &f.content
	}
	if f.typ != cur.Type {
		ch.Type = &f.typ
	}
	if !slices.Equal(f.tags, cur.Tags) && (len(f.tags) > 0 || len(cur.Tags) > 0) {
		ch.Tags = &f.tags
	}
	if ch.Content == nil && ch.Type == nil && ch.Tags == nil {
		http.Redirect(w, r, memoryPath(cur.ID), http.StatusSeeOther)
		return
	}
	wc := memory.WriteContext{WriterID: v.sess.UserID, Audience: v.audience(r)}
	m, err := mm.deps.Memories.ModifyAs(r.Context(), wc, v.owner(), cur.ID, ch, v.actor())
	switch {
	case errors.Is(err, memory.ErrChangedSince):
		mm.view.message(w, r, v, http.StatusConflict, "web.edit.changed", memoryPath(cur.ID))
		return
	case memory.ErrorCode(err) == memory.ECONFLICT:
		// Another memory the member can see already says this.
		mm.editAgain(w, r, v, cur, http.StatusConflict, i18n.T(v.lang, "web.edit.duplicate"))
		return
	case memory.ErrorCode(err) == memory.EINVALID:
		// What the store refuses beyond the form's checks: a credential in the words.
		mm.editAgain(w, r, v, cur, http.StatusBadRequest, i18n.T(v.lang, "web.edit.invalid"))
		return
	case err != nil:
		mm.refused(w, r, v, err)
		return
	}
	mm.log.InfoContext(r.Context(), "memory edited on the web dashboard", "user_id", v.sess.UserID, "memory_id", m.ID, "version", m.Version)
	http.Redirect(w, r, memoryPath(m.ID), http.StatusSeeOther)
}

// editAgain shows the form again with what the member sent and why it was not saved.
func (mm *myMemory) editAgain(w http.ResponseWriter, r *http.Request, v *visit, cur *memory.Memory, status int, why string) {
	typ := memory.Type(r.PostForm.Get("type"))
	if !typ.Valid() {
		typ = cur.Type
	}
	body := editBody{ID: cur.ID, Version: cur.Version, Content: r.PostForm.Get("content"), Tags: r.PostForm.Get("tags"),
		Types: typeChoices(v.lang, typ), Error: why, MaxRunes: memory.MaxContentRunes}
	mm.view.render(w, r, v, status, "edit", "web.edit.title", body, cur.ID)
}

// memoryPath is the page of the member's memory id.
func memoryPath(id int64) string { return "/me/memories/" + strconv.FormatInt(id, 10) }
