package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// Cookie names. The __Host- prefix makes browsers accept a cookie only when it is Secure,
// for Path=/ and without a Domain: no subdomain or plain-HTTP page can set or read it.
const (
	sessionCookie = "__Host-kioku_session"
	loginCookie   = "__Host-kioku_login"
	langCookie    = "__Host-kioku_lang"
)

// touchEvery is how stale a session's last-seen time may get before a request records it:
// a write per minute at most, not one per page.
const touchEvery = time.Minute

// maxFormBytes bounds a form's body: the largest, the edit form, carries a memory's words
// (2,000 characters, up to 12 bytes each once encoded) besides its tokens.
const maxFormBytes = 64 << 10

// randomToken returns 32 random bytes, base64url without padding (43 characters: also a
// valid PKCE verifier).
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashOf is the hex SHA-256 the store keeps in place of a secret a browser carries.
func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// setCookie sets a cookie of the dashboard: HttpOnly, Secure, SameSite=Lax (sent on the
// top-level navigation back from Discord, never on another site's form post), Path=/.
// maxAge < 0 deletes it.
func setCookie(w http.ResponseWriter, name, value string, maxAge time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
		MaxAge: int(maxAge.Seconds())}
	if maxAge < 0 {
		c.Value, c.MaxAge = "", -1
	}
	http.SetCookie(w, c)
}

// signIn is signing in and out with Discord, and the sessions that follow: which browser is
// signed in as whom, and the checks every change must pass.
type signIn struct {
	sessions   Sessions
	discord    discordClient
	view       *views
	gate       *gate
	log        *slog.Logger
	loginTTL   time.Duration
	sessionTTL time.Duration
	now        func() time.Time
	members    *membership
}

// login starts a sign-in: a fresh state and PKCE verifier recorded in the store, bound to
// this browser by a short-lived cookie, and the browser sent to Discord's authorize page.
func (a *signIn) login(w http.ResponseWriter, r *http.Request) {
	state, verifier, nonce := randomToken(), randomToken(), randomToken()
	err := a.sessions.StartLogin(r.Context(), memory.WebLogin{StateHash: hashOf(state), BrowserHash: hashOf(nonce),
		Verifier: verifier}, a.loginTTL)
	if err != nil {
		a.view.internal(w, r, nil, "couldn't start a sign-in", err)
		return
	}
	setCookie(w, loginCookie, nonce, a.loginTTL)
	http.Redirect(w, r, a.discord.authorizeURL(state, verifier), http.StatusSeeOther)
}

// callback completes a sign-in: the state must be one this browser started and not used
// yet; the code is exchanged with the verifier and the client secret, Discord says who
// the member is and which servers they are in, and a new session is created. A session
// cookie the browser already had is revoked and never reused (the token is rotated).
func (a *signIn) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	nonce, _ := r.Cookie(loginCookie)
	setCookie(w, loginCookie, "", -1)
	if q.Get("error") != "" {
		// The member said no, or Discord refused the request: the sign-in is spent.
		if nonce != nil && q.Get("state") != "" {
			_, _ = a.sessions.TakeLogin(r.Context(), hashOf(q.Get("state")), hashOf(nonce.Value))
		}
		a.view.message(w, r, nil, http.StatusForbidden, "web.login.denied", "/login")
		return
	}
	if nonce == nil || q.Get("state") == "" || q.Get("code") == "" {
		a.view.message(w, r, nil, http.StatusBadRequest, "web.login.invalid", "")
		return
	}
	l, err := a.sessions.TakeLogin(r.Context(), hashOf(q.Get("state")), hashOf(nonce.Value))
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		a.log.InfoContext(r.Context(), "web sign-in refused: unknown, used or expired state, or another browser's")
		a.view.message(w, r, nil, http.StatusBadRequest, "web.login.invalid", "")
		return
	}
	if err != nil {
		a.view.internal(w, r, nil, "couldn't complete a sign-in", err)
		return
	}
	userID, listed, err := a.askDiscord(r, q.Get("code"), l.Verifier)
	if err != nil {
		a.log.WarnContext(r.Context(), "web sign-in failed at discord", "err", err)
		a.view.message(w, r, nil, http.StatusBadGateway, "web.login.discord", "")
		return
	}
	if old, err := r.Cookie(sessionCookie); err == nil {
		if err := a.sessions.Revoke(r.Context(), hashOf(old.Value)); err != nil {
			a.view.internal(w, r, nil, "couldn't revoke the session a sign-in replaces", err)
			return
		}
	}
	guilds := make([]string, len(listed))
	for i, g := range listed {
		guilds[i] = g.GuildID
	}
	token := randomToken()
	ws, err := a.sessions.Create(r.Context(), memory.WebSession{TokenHash: hashOf(token), UserID: userID,
		GuildIDs: guilds, CSRF: randomToken(), Memberships: a.members.read(r.Context(), userID, listed)}, a.sessionTTL)
	if err != nil {
		a.view.internal(w, r, nil, "couldn't create a session", err)
		return
	}
	setCookie(w, sessionCookie, token, ws.ExpiresAt.Sub(ws.CreatedAt))
	a.log.InfoContext(r.Context(), "signed in to the web dashboard", "user_id", userID, "guilds", len(guilds))
	http.Redirect(w, r, "/me", http.StatusSeeOther)
}

// askDiscord exchanges the code and reads the member and their servers.
func (a *signIn) askDiscord(r *http.Request, code, verifier string) (string, []memory.WebMembership, error) {
	token, err := a.discord.exchange(r.Context(), code, verifier)
	if err != nil {
		return "", nil, err
	}
	u, err := a.discord.user(r.Context(), token)
	if err != nil {
		return "", nil, err
	}
	guilds, err := a.discord.guilds(r.Context(), token)
	if err != nil {
		return "", nil, err
	}
	return u.ID, guilds, nil
}

// logout revokes the session: its cookie works nowhere any more, in any process.
func (a *signIn) logout(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := a.sessions.Revoke(r.Context(), v.sess.TokenHash); err != nil {
		a.view.internal(w, r, v, "couldn't revoke a session", err)
		return
	}
	setCookie(w, sessionCookie, "", -1)
	a.log.InfoContext(r.Context(), "signed out of the web dashboard", "user_id", v.sess.UserID)
	http.Redirect(w, r, "/signed-out", http.StatusSeeOther)
}

// signedOut is the page after signing out.
func (a *signIn) signedOut(w http.ResponseWriter, r *http.Request) {
	a.view.message(w, r, nil, http.StatusOK, "web.signed_out", "/login")
}

// visit is one request of a signed-in browser.
type visit struct {
	sess memory.WebSession
	lang i18n.Locale
	// rules decide what the member may see; known and aud are what they decided, read
	// once per request when a handler needs them (servers, audience).
	rules *membership
	known []server
	aud   *memory.Audience
}

// visitHandler serves a request of a signed-in browser.
type visitHandler func(http.ResponseWriter, *http.Request, *visit)

// session returns the live session the request's cookie names.
func (a *signIn) session(r *http.Request) (memory.WebSession, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return memory.WebSession{}, false
	}
	ws, err := a.sessions.Lookup(r.Context(), hashOf(c.Value))
	if err != nil {
		if memory.ErrorCode(err) != memory.ENOTFOUND {
			a.log.ErrorContext(r.Context(), "couldn't read a web session", "err", err)
		}
		return memory.WebSession{}, false
	}
	return ws, true
}

// signedIn serves h to a browser with a live session within its rate, and sends any other
// to sign in.
func (a *signIn) signedIn(h visitHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, ok := a.session(r)
		if !ok {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		v := &visit{sess: ws, lang: a.view.locale(w, r), rules: a.members}
		if wait, ok := a.gate.bySession.allow(ws.TokenHash); !ok {
			a.view.tooMany(w, r, wait)
			return
		}
		if a.members.stale(ws) {
			a.recheck(r, v)
		}
		if a.now().Sub(ws.LastSeenAt) >= touchEvery {
			if err := a.sessions.Touch(r.Context(), ws.TokenHash); err != nil {
				a.log.WarnContext(r.Context(), "couldn't record a web session's visit", "user_id", ws.UserID, "err", err)
			}
		}
		h(w, r, v)
	})
}

// recheck reads the member's standing in their servers again: a member who left a server, or
// lost the roles of a channel, sees nothing more of it from this request on. When the new
// standing cannot be recorded the request is still served by it.
func (a *signIn) recheck(r *http.Request, v *visit) {
	v.sess.Memberships = a.members.read(r.Context(), v.sess.UserID, listed(v.sess))
	v.sess.CheckedAt = a.now()
	if err := a.sessions.SetMemberships(r.Context(), v.sess.TokenHash, v.sess.Memberships); err != nil {
		a.log.WarnContext(r.Context(), "couldn't record a web session's memberships", "user_id", v.sess.UserID, "err", err)
	}
}

// errBadCSRF is a change whose form lacks the session's token.
var errBadCSRF = errors.New("missing or wrong CSRF token")

// changes serves h only to a form that carries the session's CSRF token (compared in
// constant time). Changes are POSTs (the routes say so); the cross-origin protection in
// front of them refuses other sites' posts before they get here.
func (a *signIn) changes(h visitHandler) visitHandler {
	return a.changesWithin(maxFormBytes, h)
}

// changesWithin is changes for a form of up to limit bytes (a bulk action's thousands of ids).
func (a *signIn) changesWithin(limit int64, h visitHandler) visitHandler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if err := r.ParseForm(); err != nil {
			a.view.message(w, r, v, http.StatusBadRequest, "web.error.bad_form", "")
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(v.sess.CSRF)) != 1 {
			a.log.InfoContext(r.Context(), "web change refused", "user_id", v.sess.UserID, "path", r.URL.Path, "err", errBadCSRF)
			a.view.forbidden(w, r, v)
			return
		}
		h(w, r, v)
	}
}
