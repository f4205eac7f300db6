package web_test

import (
	"database/sql"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/web"
)

// TestSignIn walks the whole sign-in with a real client and cookie jar against the fake
// Discord: / sends a stranger to /login, /login to Discord's authorize page with the
// request the contract names, Discord back to /auth/callback, and the callback to the
// member's own memory with a new session cookie.
func TestSignIn(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	s := eng.open(t)
	remember(t, s, w.alice.ID, "", "", "Alice keeps her keys under the mat")
	d := newDashboard(t, w, s)
	b := d.browser()

	t.Run("StrangerSentToLogin", func(t *testing.T) {
		for _, path := range []string{"/", "/me", "/me/memories/1", "/me/export.json"} {
			resp := b.getNoFollow(path)
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
				t.Errorf("GET %s without a session: %d to %q", path, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
	})
	t.Run("LoginRedirectsToDiscord", func(t *testing.T) {
		resp := b.getNoFollow("/login")
		loc, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || err != nil || loc.Scheme+"://"+loc.Host+loc.Path != w.fake.AuthorizeURL() {
			t.Fatalf("GET /login: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		q := loc.Query()
		want := map[string]string{"response_type": "code", "client_id": clientID, "redirect_uri": d.srv.URL + "/auth/callback",
			"scope": "identify guilds", "code_challenge_method": "S256"}
		for k, v := range want {
			if q.Get(k) != v {
				t.Errorf("authorize %s = %q, want %q", k, q.Get(k), v)
			}
		}
		if len(q.Get("state")) < 32 || len(q.Get("code_challenge")) != 43 {
			t.Errorf("authorize state %q, code_challenge %q", q.Get("state"), q.Get("code_challenge"))
		}
		if strings.Contains(loc.String(), clientSecret) {
			t.Error("the authorize URL carries the client secret")
		}
	})
	t.Run("CallbackSignsIn", func(t *testing.T) {
		page := b.signIn(w.alice)
		if !strings.Contains(page.body, "Alice keeps her keys under the mat") {
			t.Fatalf("My memory does not show Alice's memory:\n%s", page.body)
		}
		if w.fake.OAuthExchanges() != 1 {
			t.Errorf("%d code exchanges, want 1", w.fake.OAuthExchanges())
		}
		if strings.Contains(d.log.String(), clientSecret) {
			t.Errorf("the log holds the client secret:\n%s", d.log)
		}
	})
	t.Run("SignedInHomeGoesToMe", func(t *testing.T) {
		if resp := b.getNoFollow("/"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/me" {
			t.Errorf("GET / signed in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
}

// TestSessionCookie: the session cookie is HttpOnly, Secure, SameSite=Lax, for the whole
// site and a week; the sign-in's own cookie lasts the sign-in, and the callback deletes it.
// A sign-in rotates the session: the token the browser had before is revoked, not reused.
func TestSessionCookie(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	d := newDashboard(t, w, eng.open(t))
	b := d.browser()
	w.fake.AuthorizeAs(w.alice)

	login := b.getNoFollow("/login")
	checkCookie(t, login.Cookies(), "__Host-kioku_login", web.DefaultLoginTTL)
	toCallback := b.getNoFollow(login.Header.Get("Location"))
	callback := b.getNoFollow(toCallback.Header.Get("Location"))
	if callback.StatusCode != http.StatusSeeOther || callback.Header.Get("Location") != "/me" {
		t.Fatalf("callback: %d to %q\n%s", callback.StatusCode, callback.Header.Get("Location"), callback.body)
	}
	first := checkCookie(t, callback.Cookies(), "__Host-kioku_session", web.DefaultSessionTTL)
	for _, c := range callback.Cookies() {
		if c.Name == "__Host-kioku_login" && c.MaxAge >= 0 {
			t.Errorf("the callback kept the sign-in cookie: %+v", c)
		}
	}

	t.Run("SignInAgainRotatesTheToken", func(t *testing.T) {
		b.signIn(w.alice)
		second := b.cookie("__Host-kioku_session")
		if second == "" || second == first.Value {
			t.Fatalf("session token after a second sign-in: %q (first %q)", second, first.Value)
		}
		old := d.browser()
		old.client.Jar.SetCookies(mustURL(d.srv.URL), []*http.Cookie{{Name: "__Host-kioku_session", Value: first.Value, Path: "/"}})
		if resp := old.getNoFollow("/me"); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("the token from before the sign-in still works: %d", resp.StatusCode)
		}
	})
	t.Run("PreLoginCookieIgnored", func(t *testing.T) {
		// A cookie planted before sign-in (session fixation) is never adopted.
		planted := d.browser()
		planted.client.Jar.SetCookies(mustURL(d.srv.URL), []*http.Cookie{{Name: "__Host-kioku_session", Value: "chosen-by-an-attacker", Path: "/"}})
		planted.signIn(w.alice)
		if got := planted.cookie("__Host-kioku_session"); got == "chosen-by-an-attacker" || got == "" {
			t.Fatalf("session cookie after sign-in: %q", got)
		}
	})
}

func checkCookie(t *testing.T, cookies []*http.Cookie, name string, maxAge time.Duration) *http.Cookie {
	t.Helper()
	for _, c := range cookies {
		if c.Name != name {
			continue
		}
		if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" ||
			c.MaxAge != int(maxAge.Seconds()) || c.Value == "" {
			t.Errorf("cookie %s: %+v; want HttpOnly, Secure, SameSite=Lax, Path=/, no Domain, Max-Age %d", name, c, int(maxAge.Seconds()))
		}
		return c
	}
	t.Fatalf("no %s cookie set among %v", name, cookies)
	return nil
}

func mustURL(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return u
}

// TestStateRefused: a callback completes only a sign-in this browser started and did not
// complete yet. A wrong, missing or replayed state, and a state started in another browser,
// sign nobody in.
func TestStateRefused(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	d := newDashboard(t, w, eng.open(t))
	w.fake.AuthorizeAs(w.alice)

	// callbackURL starts a sign-in in b and returns where Discord sends it back to.
	callbackURL := func(b *browser) *url.URL {
		t.Helper()
		toDiscord := b.getNoFollow("/login")
		back := b.getNoFollow(toDiscord.Header.Get("Location"))
		u, err := url.Parse(back.Header.Get("Location"))
		if err != nil || u.Query().Get("code") == "" {
			t.Fatalf("Discord sent the browser to %q", back.Header.Get("Location"))
		}
		return u
	}
	refused := func(t *testing.T, b *browser, u *url.URL) {
		t.Helper()
		resp := b.getNoFollow(u.String())
		if resp.StatusCode != http.StatusBadRequest || b.cookie("__Host-kioku_session") != "" {
			t.Fatalf("callback %s: %d, session cookie %q", u.RawQuery, resp.StatusCode, b.cookie("__Host-kioku_session"))
		}
	}
	for name, change := range map[string]func(q url.Values){
		"ErrWrongState":   func(q url.Values) { q.Set("state", q.Get("state")+"x") },
		"ErrMissingState": func(q url.Values) { q.Del("state") },
		"ErrMissingCode":  func(q url.Values) { q.Del("code") },
	} {
		t.Run(name, func(t *testing.T) {
			b := d.browser()
			u := callbackURL(b)
			q := u.Query()
			change(q)
			u.RawQuery = q.Encode()
			refused(t, b, u)
		})
	}
	t.Run("ErrReplayedState", func(t *testing.T) {
		b := d.browser()
		u := callbackURL(b)
		nonce := b.cookie("__Host-kioku_login")
		if resp := b.getNoFollow(u.String()); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("first callback: %d\n%s", resp.StatusCode, resp.body)
		}
		// Replayed with the sign-in cookie put back, as by someone who recorded both: the
		// state is spent.
		replay := d.browser()
		replay.client.Jar.SetCookies(mustURL(d.srv.URL), []*http.Cookie{{Name: "__Host-kioku_login", Value: nonce, Path: "/"}})
		refused(t, replay, u)
	})
	t.Run("ErrStateOfAnotherBrowser", func(t *testing.T) {
		// A victim is sent to the callback URL of a sign-in the attacker started (login
		// CSRF): the victim's browser did not start it, so nobody is signed in.
		attacker, victim := d.browser(), d.browser()
		u := callbackURL(attacker)
		victim.getNoFollow("/login") // a sign-in of the victim's own, under way
		refused(t, victim, u)
		// And the state is spent: the attacker cannot complete it afterwards either.
		refused(t, attacker, u)
	})
	t.Run("ErrDiscordDenied", func(t *testing.T) {
		// The member pressed Cancel at Discord (here: nobody is signed in to it).
		w.fake.AuthorizeAs(nil)
		defer w.fake.AuthorizeAs(w.alice)
		b := d.browser()
		resp := b.get("/login")
		if resp.StatusCode != http.StatusForbidden || resp.Request.URL.Path != "/auth/callback" || b.cookie("__Host-kioku_session") != "" {
			t.Fatalf("a denied sign-in ended at %s with %d", resp.Request.URL, resp.StatusCode)
		}
	})
	if n := w.fake.OAuthExchanges(); n != 1 {
		t.Errorf("%d codes exchanged; only the one valid callback should reach Discord", n)
	}
}

// TestPKCE: a code intercepted on its way back is worth nothing without the verifier, which
// never left the server: Discord's token endpoint refuses it without, or with a wrong one.
// A callback whose sign-in lost its verifier is refused by Discord too, and signs nobody in.
func TestPKCE(t *testing.T) {
	eng, path := sqliteEngine(t)
	w := newWorld(t)
	d := newDashboard(t, w, eng.open(t))
	w.fake.AuthorizeAs(w.alice)
	b := d.browser()
	toDiscord := b.getNoFollow("/login")
	back := b.getNoFollow(toDiscord.Header.Get("Location"))
	callback, _ := url.Parse(back.Header.Get("Location"))
	code := callback.Query().Get("code")

	t.Run("ErrStolenCodeWithoutVerifier", func(t *testing.T) {
		for _, verifier := range []string{"", strings.Repeat("v", 43)} {
			form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {d.server.RedirectURI()}}
			if verifier != "" {
				form.Set("code_verifier", verifier)
			}
			req, _ := http.NewRequest("POST", w.fake.URL()+"api/v10/oauth2/token", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth(clientID, clientSecret) // even with the application's secret
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("token exchange with verifier %q: %d, want 400", verifier, resp.StatusCode)
			}
		}
	})
	t.Run("OwnerOfTheVerifierSignsIn", func(t *testing.T) {
		if resp := b.getNoFollow(callback.String()); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/me" {
			t.Fatalf("callback: %d\n%s", resp.StatusCode, resp.body)
		}
	})
	t.Run("ErrCallbackWithoutVerifier", func(t *testing.T) {
		c := d.browser()
		toDiscord := c.getNoFollow("/login")
		back := c.getNoFollow(toDiscord.Header.Get("Location"))
		raw, err := sql.Open("sqlite", sqlite.DSN(path))
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Exec(`UPDATE web_logins SET verifier = ''`); err != nil {
			t.Fatal(err)
		}
		resp := c.getNoFollow(back.Header.Get("Location"))
		if resp.StatusCode != http.StatusBadGateway || c.cookie("__Host-kioku_session") != "" {
			t.Fatalf("callback without its verifier: %d, session %q", resp.StatusCode, c.cookie("__Host-kioku_session"))
		}
		if !strings.Contains(d.log.String(), "invalid_grant") {
			t.Errorf("the log does not say Discord refused the grant:\n%s", d.log)
		}
	})
}
