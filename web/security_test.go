package web_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/web"
)

// TestSignOutRevokes: signing out revokes the session in the store, so its cookie works
// nowhere afterwards: not in this process, not in another one on the same database (a
// second dashboard, standing for another shard), which served it before.
func TestSignOutRevokes(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			one, two := newDashboard(t, w, eng.open(t)), newDashboard(t, w, eng.open(t))
			b := one.browser()
			page := b.signIn(w.alice).body
			stolen := b.cookie("__Host-kioku_session")
			thief := two.browser()
			thief.client.Jar.SetCookies(mustURL(two.srv.URL), []*http.Cookie{{Name: "__Host-kioku_session", Value: stolen, Path: "/"}})
			if resp := thief.getNoFollow("/me"); resp.StatusCode != http.StatusOK {
				t.Fatalf("the other process does not serve the session: %d", resp.StatusCode)
			}
			resp := b.post("/logout", url.Values{"csrf": {csrfOf(t, page)}})
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signed-out" {
				t.Fatalf("sign out: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			if b.cookie("__Host-kioku_session") != "" {
				t.Error("sign out left the session cookie in the browser")
			}
			for name, who := range map[string]*browser{"this process": thief.on(one), "another process": thief} {
				if resp := who.getNoFollow("/me"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
					t.Errorf("the revoked cookie in %s: %d to %q", name, resp.StatusCode, resp.Header.Get("Location"))
				}
			}
		})
	}
}

// TestForgetMeSignsOut: forget-me deletes the member's sessions, so every browser of theirs
// is signed out; another member's session stays.
func TestForgetMeSignsOut(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			d := newDashboard(t, w, s)
			alice, alice2, bob := d.browser(), d.browser(), d.browser()
			alice.signIn(w.alice)
			alice2.signIn(w.alice)
			bob.signIn(w.bob)
			preview, err := s.ForgetMe.PreviewForgetMe(t.Context(), w.alice.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.ForgetMe.ConfirmForgetMe(t.Context(), w.alice.ID, preview.Token); err != nil {
				t.Fatal(err)
			}
			for i, b := range []*browser{alice, alice2} {
				if resp := b.getNoFollow("/me"); resp.StatusCode != http.StatusSeeOther {
					t.Errorf("Alice's browser %d after forget-me: %d", i+1, resp.StatusCode)
				}
			}
			if resp := bob.getNoFollow("/me"); resp.StatusCode != http.StatusOK {
				t.Errorf("Bob's browser after Alice's forget-me: %d", resp.StatusCode)
			}
		})
	}
}

// TestHeadersOnEveryPage: every answer, signed in or not, page or error or redirect,
// carries a Content-Security-Policy that allows no script and no framing, and the other
// headers that keep a page inert elsewhere; no page carries a script.
func TestHeadersOnEveryPage(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	s := eng.open(t)
	m := remember(t, s, w.alice.ID, "", "dm", "A memory to show")
	d := newDashboard(t, w, s)
	b := d.browser()
	check := func(what string, resp response) {
		t.Helper()
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") ||
			strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
			t.Errorf("%s: Content-Security-Policy %q", what, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") != "no-referrer" ||
			resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", what, resp.Header)
		}
		if strings.Contains(strings.ToLower(resp.body), "<script") || strings.Contains(resp.body, " style=") {
			t.Errorf("%s: the page carries a script or an inline style:\n%s", what, resp.body)
		}
	}
	for _, path := range []string{"/", "/login", "/signed-out", "/no/such/page", "/metrics", "/healthz", "/auth/callback?state=x&code=y"} {
		check("signed out GET "+path, b.getNoFollow(path))
	}
	page := b.signIn(w.alice)
	check("GET /me", page)
	for _, path := range []string{"/me", "/me?q=memory", fmt.Sprintf("/me/memories/%d", m.ID), "/me/memories/999", "/me/export.json",
		"/me/export.md", "/static/style.css", "/metrics"} {
		check("signed in GET "+path, b.getNoFollow(path))
	}
	check("POST /me/forget without a token", b.post("/me/forget", url.Values{"id": {"1"}}))
	if resp := b.getNoFollow("/static/style.css"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Errorf("stylesheet: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// Browsers ask every site for an icon; "none" must not be a 404 in every page's console.
	if resp := b.getNoFollow("/favicon.ico"); resp.StatusCode != http.StatusNoContent || resp.body != "" {
		t.Errorf("GET /favicon.ico: %d, want 204 and nothing", resp.StatusCode)
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		if resp := b.getNoFollow(path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on the dashboard: %d, want 404 (the operator's endpoints stay on KIOKU_HTTP_ADDR)", path, resp.StatusCode)
		}
	}
}

// TestCSRF: a change without the session's token, with another token, or posted from
// another site is refused and changes nothing; a GET never changes anything.
func TestCSRF(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	s := eng.open(t)
	m := remember(t, s, w.alice.ID, "", "dm", "Keep me")
	d := newDashboard(t, w, s)
	alice, bob := d.browser(), d.browser()
	token := csrfOf(t, alice.signIn(w.alice).body)
	bobsToken := csrfOf(t, bob.signIn(w.bob).body)
	id := fmt.Sprint(m.ID)

	for name, try := range map[string]func() response{
		"ErrNoToken":       func() response { return alice.post("/me/forget", url.Values{"id": {id}}) },
		"ErrWrongToken":    func() response { return alice.post("/me/forget", url.Values{"id": {id}, "csrf": {token + "x"}}) },
		"ErrOthersToken":   func() response { return alice.post("/me/forget", url.Values{"id": {id}, "csrf": {bobsToken}}) },
		"ErrLogoutNoToken": func() response { return alice.post("/logout", nil) },
		"ErrCrossSite": func() response {
			req := alice.request("POST", "/me/forget", strings.NewReader(url.Values{"id": {id}, "csrf": {token}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			req.Header.Set("Origin", "https://evil.example")
			return alice.do(req, false)
		},
		"ErrGETChangesNothing": func() response { return alice.getNoFollow("/me/forget?id=" + id + "&csrf=" + token) },
	} {
		t.Run(name, func(t *testing.T) {
			resp := try()
			if resp.StatusCode != http.StatusForbidden && !(name == "ErrGETChangesNothing" && resp.StatusCode == http.StatusNotFound) {
				t.Errorf("status %d, want 403 (404 for a GET: no page answers it)", resp.StatusCode)
			}
			if got, err := s.Memories.Get(t.Context(), memory.PersonalOwner(w.alice.ID), m.ID); err != nil || got.Version != m.Version {
				t.Fatalf("the memory changed: %+v %v", got, err)
			}
			if resp := alice.getNoFollow("/me"); resp.StatusCode != http.StatusOK {
				t.Fatalf("Alice was signed out: %d", resp.StatusCode)
			}
		})
	}
}

// TestRateLimits: a client address past its rate, and a session past its own, are
// answered 429 with when to try again. X-Forwarded-For names the client only when the
// peer is a trusted proxy.
func TestRateLimits(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	s := eng.open(t)
	clock := &fixedClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	limits := func(address, session int, proxies ...string) options {
		return func(c *web.Config) {
			c.AddressPerMinute, c.SessionPerMinute, c.Now = address, session, clock.Now
			for _, p := range proxies {
				c.TrustedProxies = append(c.TrustedProxies, netip.MustParsePrefix(p))
			}
		}
	}
	exhaust := func(t *testing.T, b *browser, path string, n int) {
		t.Helper()
		for i := range n {
			if resp := b.getNoFollow(path); resp.StatusCode == http.StatusTooManyRequests {
				t.Fatalf("request %d of %d refused", i+1, n)
			}
		}
		resp := b.getNoFollow(path)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("request %d: %d, Retry-After %q; want 429", n+1, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	t.Run("PerAddress", func(t *testing.T) {
		d := newDashboard(t, w, s, limits(5, 100))
		exhaust(t, d.browser(), "/signed-out", 5)
		// X-Forwarded-For from an untrusted peer is not believed: still the same client.
		other := d.browser()
		other.headers.Set("X-Forwarded-For", "203.0.113.7")
		if resp := other.getNoFollow("/signed-out"); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("a made-up X-Forwarded-For escaped the limit: %d", resp.StatusCode)
		}
	})
	t.Run("PerAddressBehindTrustedProxy", func(t *testing.T) {
		d := newDashboard(t, w, s, limits(5, 100, "127.0.0.1/32"))
		first := d.browser()
		first.headers.Set("X-Forwarded-For", "198.51.100.1")
		exhaust(t, first, "/signed-out", 5)
		second := d.browser()
		// What the client wrote first, then what the proxy appended: the client is the last.
		second.headers.Set("X-Forwarded-For", "198.51.100.1, 198.51.100.2")
		if resp := second.getNoFollow("/signed-out"); resp.StatusCode != http.StatusOK {
			t.Errorf("another client behind the proxy was limited: %d", resp.StatusCode)
		}
	})
	t.Run("PerSession", func(t *testing.T) {
		d := newDashboard(t, w, s, limits(100, 3))
		b := d.browser()
		b.signIn(w.alice) // the landing page is the session's first request
		exhaust(t, b, "/me", 2)
		other := d.browser()
		other.signIn(w.bob)
		if resp := other.getNoFollow("/me"); resp.StatusCode != http.StatusOK {
			t.Errorf("another session was limited: %d", resp.StatusCode)
		}
		clock.mu.Lock()
		clock.now = clock.now.Add(time.Minute)
		clock.mu.Unlock()
		if resp := b.getNoFollow("/me"); resp.StatusCode != http.StatusOK {
			t.Errorf("a minute later: %d", resp.StatusCode)
		}
	})
}
