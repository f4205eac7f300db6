package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// tokenOf returns the forget-me token the preview's form carries.
func tokenOf(t *testing.T, page string) string {
	t.Helper()
	const mark = `name="token" value="`
	i := strings.Index(page, mark)
	if i < 0 {
		t.Fatalf("the page has no token field:\n%s", page)
	}
	rest := page[i+len(mark):]
	return rest[:strings.IndexByte(rest, '"')]
}

// TestForgetMe: the preview counts what forget-me erases and changes nothing; a wrong
// token erases nothing; the confirmation erases the member's memories (those the page may
// not show too), signs the browser out, and the old cookie then opens nothing.
func TestForgetMe(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			m := saveAlices(t, w, s)
			bobs := remember(t, s, w.bob.ID, "", "dm-bob", "Bob keeps bees")
			d := newDashboard(t, w, s)
			b := d.browser()
			csrf := csrfOf(t, b.signIn(w.alice).body)
			alice := memory.PersonalOwner(w.alice.ID)

			preview := b.get("/me/forget-me")
			if preview.StatusCode != http.StatusOK || !strings.Contains(preview.body, "4 personal memories") {
				t.Fatalf("preview: %d\n%s", preview.StatusCode, preview.body)
			}
			token := tokenOf(t, preview.body)
			if _, total, err := s.Memories.List(t.Context(), alice, memory.ListOptions{}); err != nil || total != 4 {
				t.Fatalf("the preview changed her memories: %d %v", total, err)
			}
			t.Run("ErrWrongToken", func(t *testing.T) {
				resp := b.post("/me/forget-me", url.Values{"csrf": {csrf}, "token": {"not-the-token"}})
				if resp.StatusCode != http.StatusConflict {
					t.Fatalf("a wrong token: %d\n%s", resp.StatusCode, resp.body)
				}
				if _, total, _ := s.Memories.List(t.Context(), alice, memory.ListOptions{}); total != 4 {
					t.Fatalf("a wrong token erased memories: %d left", total)
				}
			})
			t.Run("ErrNoCSRF", func(t *testing.T) {
				if resp := b.post("/me/forget-me", url.Values{"token": {token}}); resp.StatusCode != http.StatusForbidden {
					t.Fatalf("forget-me without the CSRF token: %d", resp.StatusCode)
				}
			})
			oldCookie := b.cookie("__Host-kioku_session")
			resp := b.post("/me/forget-me", url.Values{"csrf": {csrf}, "token": {token}})
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/forgotten" {
				t.Fatalf("confirm: %d %s\n%s", resp.StatusCode, resp.Header.Get("Location"), resp.body)
			}
			for _, mm := range []*memory.Memory{m.dm, m.general, m.mods, m.elsewhere} {
				if _, err := s.Channels.Lookup(t.Context(), alice, mm.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
					t.Errorf("#%d after forget-me: %v", mm.ID, err)
				}
			}
			if _, err := s.Memories.Get(t.Context(), memory.PersonalOwner(w.bob.ID), bobs.ID); err != nil {
				t.Errorf("Bob's memory after Alice's forget-me: %v", err)
			}
			if b.cookie("__Host-kioku_session") != "" {
				t.Error("the session cookie was not cleared")
			}
			if got := b.get("/forgotten"); got.StatusCode != http.StatusOK || !strings.Contains(got.body, "forgot everything") {
				t.Errorf("/forgotten: %d\n%s", got.StatusCode, got.body)
			}
			// The cookie copied before forget-me opens nothing: its session is gone.
			thief := d.browser()
			u, _ := url.Parse(d.srv.URL)
			thief.client.Jar.SetCookies(u, []*http.Cookie{{Name: "__Host-kioku_session", Value: oldCookie, Path: "/", Secure: true}})
			if got := thief.getNoFollow("/me"); got.StatusCode != http.StatusSeeOther || got.Header.Get("Location") != "/login" {
				t.Errorf("the old cookie after forget-me: %d %s", got.StatusCode, got.Header.Get("Location"))
			}
			if got := thief.post("/me/forget-me", url.Values{"csrf": {csrf}, "token": {token}}); got.StatusCode != http.StatusSeeOther || got.Header.Get("Location") != "/login" {
				t.Errorf("a replayed confirmation with the old cookie: %d %s", got.StatusCode, got.Header.Get("Location"))
			}
		})
	}
}
