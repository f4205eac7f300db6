//go:build browser

package web_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"

	"github.com/kioku-bot/kioku/memory"
)

// TestBrowser walks the dashboard in headless Chromium as Alice, on each engine: she signs
// in through the fake Discord's authorize page, sees and searches her memories, opens one,
// forgets it with its Forget button and undoes that, downloads her memories, reads the
// page in Japanese, edits the memory and reads the edit in its history, opens the server
// tab, signs out, and the cookie she had no longer signs anyone in; last, signed in again,
// she previews and confirms forget-me, and the cookie from before opens nothing either.
// A second walk (walkServer) goes through a server's pages as its editor and manager.
// Every step fails on any console error, exception or Content-Security-Policy violation.
//
// Run it with `go test -tags browser -run TestBrowser ./web/` (add `-browser.shots
// docs/images/web` to save the docs' screenshots).
func TestBrowser(t *testing.T) {
	browserPath(t) // one line, not one per engine, on a machine without a browser
	// Each walk has a database of its own: forget-me at the end of the first leaves the
	// server memories Alice wrote, which the second would find.
	servers := engines(t)
	for i, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) { walkMyMemory(t, eng, i == 0) })
		t.Run(eng.name+"/Server", func(t *testing.T) { walkServer(t, servers[i], i == 0) })
	}
}

// walkMyMemory is TestBrowser's walk on one engine; shots says whether it saves the
// screenshots (one engine's are enough).
func walkMyMemory(t *testing.T, eng engine, shots bool) {
	w := newWorld(t)
	s := eng.open(t)
	m := saveAlices(t, w, s)
	saveAlicesElsewhere(t, w, s)
	d := newDashboard(t, w, s)
	c := startChrome(t, d, shots)
	wk := &walk{w: w, s: s, m: m, d: d, c: c}
	memoryLink := fmt.Sprintf(`ol.memories a[href="/me/memories/%d"]`, m.general.ID)
	var session *network.Cookie

	c.step("SignIn", func(t *testing.T) {
		w.fake.AuthorizeAs(w.alice)
		c.open(t, "/")
		if got := c.location(t); got.Path != "/me" {
			t.Fatalf("signing in ended at %s", got)
		}
		assertWentThrough(t, c.takeDocuments(), d.srv.URL+"/login", w.fake.AuthorizeURL(), d.srv.URL+"/auth/callback", d.srv.URL+"/me")
		if got := c.text(t, "h1"); got != "My memory" {
			t.Errorf("the page after signing in is titled %q", got)
		}
		session = c.cookies(t)["__Host-kioku_session"]
		if session == nil || !session.HTTPOnly || !session.Secure || session.SameSite != network.CookieSameSiteLax || session.Path != "/" {
			t.Errorf("the session cookie is not HttpOnly, Secure, SameSite=Lax for /: %+v", session)
		}
		if got := c.script(t, "document.cookie"); got != "" {
			t.Errorf("a script of the page reads the cookies %q", got)
		}
	})
	c.step("MyMemory", func(t *testing.T) {
		if n := c.count(t, "ol.memories > li"); n != 2 {
			t.Errorf("the page lists %d memories, want her 2 visible ones", n)
		}
		list := c.text(t, "ol.memories")
		for _, seen := range []*memory.Memory{m.dm, m.general} {
			if !strings.Contains(list, seen.Content) {
				t.Errorf("the list misses %q:\n%s", seen.Content, list)
			}
		}
		for _, hidden := range []*memory.Memory{m.mods, m.elsewhere} {
			if strings.Contains(list, hidden.Content) {
				t.Errorf("the list shows %q, learned where the page may not show it", hidden.Content)
			}
		}
		if got := c.text(t, "p.note"); !strings.Contains(got, "2 more memories") {
			t.Errorf("the page does not count the 2 memories it hides: %q", got)
		}
		c.shot(t, "me")
	})
	c.step("Download", func(t *testing.T) {
		var f memory.ExportFile
		raw := c.download(t, `.downloads a[href="/me/export.json"]`)
		if err := json.Unmarshal(raw, &f); err != nil || len(f.Memories) != 2 {
			t.Errorf("the JSON download holds %d memories (%v):\n%s", len(f.Memories), err, raw)
		}
		md := string(c.download(t, `.downloads a[href="/me/export.md"]`))
		if !strings.Contains(md, "> "+m.general.Content) || strings.Contains(md, m.mods.Content) {
			t.Errorf("the Markdown download:\n%s", md)
		}
	})
	c.step("Search", func(t *testing.T) {
		c.fill(t, "#q", "board game")
		c.click(t, `form.search button[type="submit"]`)
		if got := c.location(t); got.Path != "/me" || got.Query().Get("q") != "board game" {
			t.Errorf("searching went to %s", got)
		}
		if got := c.text(t, "p.summary"); got != "1 memory matches “board game”" {
			t.Errorf("the search says %q", got)
		}
		if n := c.count(t, "ol.memories > li"); n != 1 || c.count(t, memoryLink) != 1 {
			t.Errorf("the search found %d memories, want #%d alone", n, m.general.ID)
		}
		c.shot(t, "search")
	})
	c.step("MemoryPage", func(t *testing.T) {
		c.click(t, memoryLink)
		if got := c.location(t).Path; got != fmt.Sprintf("/me/memories/%d", m.general.ID) {
			t.Fatalf("the link went to %s", got)
		}
		if got := c.text(t, "h1"); got != fmt.Sprintf("Memory #%d", m.general.ID) {
			t.Errorf("the memory page is titled %q", got)
		}
		if got := c.text(t, "article.memory p.content"); got != m.general.Content {
			t.Errorf("the memory page shows %q", got)
		}
		c.shot(t, "memory")
	})
	c.step("Forget", func(t *testing.T) {
		c.click(t, `article.memory form[action="/me/forget"] button`)
		if got := c.location(t).Path; got != "/me" {
			t.Fatalf("forgetting ended at %s", got)
		}
		if c.count(t, memoryLink) != 0 || c.count(t, "ol.memories > li") != 1 {
			t.Errorf("the forgotten memory is still listed:\n%s", c.text(t, "main"))
		}
		want := fmt.Sprintf("You forgot memory #%d", m.general.ID)
		if got := c.text(t, "section.last-change p"); !strings.HasPrefix(got, want) {
			t.Errorf("the page offers to undo %q, want %q", got, want)
		}
		assertLastChange(t, s, w.alice.ID, m.general.ID, memory.ActionDelete)
		c.shot(t, "forgotten")
	})
	c.step("Undo", func(t *testing.T) {
		c.click(t, `section.last-change form[action="/me/undo"] button`)
		if got := c.location(t).Path; got != "/me" {
			t.Fatalf("undoing ended at %s", got)
		}
		if c.count(t, memoryLink) != 1 || c.count(t, "ol.memories > li") != 2 {
			t.Errorf("the memory did not come back:\n%s", c.text(t, "main"))
		}
		assertLastChange(t, s, w.alice.ID, m.general.ID, memory.ActionRecover)
	})
	c.step("Japanese", func(t *testing.T) {
		c.click(t, `header a[lang="ja"]`)
		if got := c.text(t, "h1"); got != "自分の記憶" {
			t.Errorf("after 日本語 the page is titled %q", got)
		}
		if got := c.attr(t, "html", "lang"); got != "ja" {
			t.Errorf("after 日本語 the page's language is %q", got)
		}
		if got := c.text(t, `form[action="/logout"] button`); got != "サインアウト" {
			t.Errorf("after 日本語 the sign-out button says %q", got)
		}
		c.shot(t, "me-ja")
		if got := c.script(t, "document.cookie"); got != "" {
			t.Errorf("a script of the page reads the cookies %q", got)
		}
		c.click(t, `header a[lang="en"]`)
		if got := c.text(t, "h1"); got != "My memory" {
			t.Errorf("after English the page is titled %q", got)
		}
	})
	wk.editAndHistory()
	wk.serverTab()
	c.step("SignOut", func(t *testing.T) {
		c.click(t, `form[action="/logout"] button`)
		if got := c.location(t).Path; got != "/signed-out" {
			t.Fatalf("signing out ended at %s", got)
		}
		if got := c.text(t, "p.message"); !strings.HasPrefix(got, "You are signed out.") {
			t.Errorf("the signed-out page says %q", got)
		}
		if _, ok := c.cookies(t)["__Host-kioku_session"]; ok {
			t.Error("the browser still holds a session cookie")
		}
		c.shot(t, "signed-out")
	})
	c.step("OldCookie", func(t *testing.T) {
		if session == nil {
			t.Fatal("no session cookie was kept at sign-in")
		}
		// The cookie comes back as if copied before sign-out; Discord would sign in nobody
		// now, so only the cookie could let the browser in.
		w.fake.AuthorizeAs(nil)
		c.expectError("the server responded with a status of 403")
		c.setCookie(t, session)
		c.takeDocuments()
		c.open(t, "/me")
		assertWentThrough(t, c.takeDocuments(), d.srv.URL+"/me", d.srv.URL+"/login", w.fake.AuthorizeURL())
		if got := c.location(t).Path; got == "/me" {
			t.Fatal("the old cookie still opens My memory")
		}
		if got := c.text(t, "p.message"); !strings.HasPrefix(got, "Discord did not sign you in") {
			t.Errorf("the page after the old cookie says %q", got)
		}
		if page := c.text(t, "body"); strings.Contains(page, m.dm.Content) || strings.Contains(page, m.general.Content) {
			t.Errorf("the old cookie shows her memories:\n%s", page)
		}
	})
	wk.forgetMe()
}

// assertWentThrough fails t unless the browser loaded each of want, in that order (other
// pages may come between); the query of a loaded URL is ignored.
func assertWentThrough(t *testing.T, loaded []string, want ...string) {
	t.Helper()
	var paths []string
	for _, l := range loaded {
		u, err := url.Parse(l)
		if err != nil {
			t.Fatal(err)
		}
		u.RawQuery = ""
		paths = append(paths, u.String())
	}
	i := 0
	for _, p := range paths {
		if i < len(want) && p == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("the browser loaded %v, want %v in that order", paths, want)
	}
}

// assertLastChange fails t unless the newest change of user's scope is action on memory
// id, made by user: a change on the dashboard is recorded as theirs, like a command's.
func assertLastChange(t *testing.T, s stores, user string, id int64, action memory.Action) {
	t.Helper()
	hist, err := s.Memories.ScopeHistory(t.Context(), memory.PersonalOwner(user), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || hist[0].MemoryID != id || hist[0].Action != action || hist[0].Actor != memory.UserActor(user) {
		t.Errorf("the newest change is %+v, want %s of #%d by %s", hist, action, id, memory.UserActor(user))
	}
}
