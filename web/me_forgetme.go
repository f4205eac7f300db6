package web

import (
	"net/http"

	"github.com/kioku-bot/kioku/memory"
)

// Forget-me, as /memory forget-me does it: a preview counting everything that would be
// erased, with a single-use token, and a confirmation that erases it for good. Forget-me
// deletes every web session of the member with the rest of their data, so the browser that
// confirmed is signed out too: its cookie is cleared and it lands on a page that needs no
// session.

// forgetMeBody is the preview page's.
type forgetMeBody struct {
	Summary   memory.ForgetMeSummary
	Token     string
	ExpiresAt string
}

// forgetMePage previews forget-me for the member.
func (mm *myMemory) forgetMePage(w http.ResponseWriter, r *http.Request, v *visit) {
	sum, err := mm.deps.ForgetMe.PreviewForgetMe(r.Context(), v.sess.UserID)
	if err != nil {
		mm.view.internal(w, r, v, "couldn't preview forget-me", err)
		return
	}
	body := forgetMeBody{Summary: sum, Token: sum.Token, ExpiresAt: sum.ExpiresAt.UTC().Format("15:04 MST")}
	mm.view.render(w, r, v, http.StatusOK, "forgetme", "web.forgetme.title", body)
}

// forgetMe erases everything kioku holds about the member, with the token of a preview
// they saw, and signs the browser out.
func (mm *myMemory) forgetMe(w http.ResponseWriter, r *http.Request, v *visit) {
	token := r.PostForm.Get("token")
	if token == "" {
		mm.view.message(w, r, v, http.StatusBadRequest, "web.error.bad_form", "")
		return
	}
	sum, err := mm.deps.ForgetMe.ConfirmForgetMe(r.Context(), v.sess.UserID, token)
	switch memory.ErrorCode(err) {
	case "":
	case memory.ENOTFOUND, memory.ECONFLICT, memory.EEXPIRED:
		// Not this member's preview, used already, or too old: nothing was erased.
		mm.view.message(w, r, v, http.StatusConflict, "web.forgetme.stale", "/me/forget-me")
		return
	default:
		mm.view.internal(w, r, v, "couldn't erase a member's data", err)
		return
	}
	setCookie(w, sessionCookie, "", -1)
	mm.log.InfoContext(r.Context(), "forget-me done on the web dashboard", "user_id", v.sess.UserID,
		"memories", sum.Memories, "about", sum.About, "from_messages", sum.FromMessages, "turns", sum.Turns)
	http.Redirect(w, r, "/forgotten", http.StatusSeeOther)
}

// forgotten is the page after forget-me; the member is signed out by then.
func (a *signIn) forgotten(w http.ResponseWriter, r *http.Request) {
	a.view.message(w, r, nil, http.StatusOK, "web.forgotten", "/login")
}
