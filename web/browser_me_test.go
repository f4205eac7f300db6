//go:build browser

package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"

	"github.com/kioku-bot/kioku/memory"
)

// The steps of TestBrowser's walk through the rest of My memory: editing a memory and
// reading its history, the server tab, and forget-me, which erases the member and so ends
// the walk.

// walk is what the steps of one walk share: the world, the store, Alice's memories, the
// dashboard and the browser walking it.
type walk struct {
	w *world
	s stores
	m alicesMemories
	d *dashboard
	c *chrome
}

// The words the walk gives Alice's board-game memory with the edit form.
const editedWords = "I run the Friday board game night, now on Saturdays"

// The server memories and transcript turns the server tab shows or only counts.
const (
	picnic      = "The server picnic is in May"
	movieNight  = "Alice hosts the movie night"
	warning     = "Alice got a warning for spam"
	dmTurn      = "hello from my DM"
	generalTurn = "hello general"
	modsTurn    = "whisper in mods"
)

// saveAlicesElsewhere stores what kioku holds about Alice beyond her personal memories: a
// server memory she wrote in #general, two of Bob's about her (in #general, and in #mods,
// which she can't view), and three of her transcript turns (a DM, #general, #mods).
func saveAlicesElsewhere(t *testing.T, w *world, s stores) {
	t.Helper()
	ctx := t.Context()
	for _, m := range []memory.Memory{
		{Scope: memory.ScopeServer, GuildID: guildHome, Content: picnic, Provenance: memory.Provenance{AuthorID: w.alice.ID, ChannelID: chanGeneral}},
		{Scope: memory.ScopeServer, GuildID: guildHome, Content: movieNight, SubjectID: w.alice.ID, Provenance: memory.Provenance{AuthorID: w.bob.ID, ChannelID: chanGeneral}},
		{Scope: memory.ScopeServer, GuildID: guildHome, Content: warning, SubjectID: w.alice.ID, Provenance: memory.Provenance{AuthorID: w.bob.ID, ChannelID: chanMods}},
	} {
		if _, err := s.Memories.Remember(ctx, m, memory.UserActor(m.Provenance.AuthorID)); err != nil {
			t.Fatal(err)
		}
	}
	for _, turn := range []memory.Turn{
		{ChannelID: "dm-alice", UserID: w.alice.ID, Role: memory.RoleUser, Content: dmTurn},
		{GuildID: guildHome, ChannelID: chanGeneral, UserID: w.alice.ID, Role: memory.RoleUser, Content: generalTurn},
		{GuildID: guildHome, ChannelID: chanMods, UserID: w.alice.ID, Role: memory.RoleUser, Content: modsTurn},
	} {
		if _, err := s.Turns.AppendTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
}

// editAndHistory edits the board-game memory from its page and reads the edit in its history.
func (wk *walk) editAndHistory() {
	c, id := wk.c, wk.m.general.ID
	memoryPage := memoryPath(id)
	c.step("Edit", func(t *testing.T) {
		c.click(t, fmt.Sprintf(`ol.memories a[href="%s"]`, memoryPage))
		c.click(t, fmt.Sprintf(`article.memory a[href="%s/edit"]`, memoryPage))
		if got := c.location(t).Path; got != memoryPage+"/edit" {
			t.Fatalf("the Edit link went to %s", got)
		}
		if got := c.text(t, "h1"); got != fmt.Sprintf("Edit memory #%d", id) {
			t.Errorf("the edit page is titled %q", got)
		}
		if got := c.script(t, `document.querySelector("#content").value`); got != wk.m.general.Content {
			t.Errorf("the form holds %q, want the memory's words", got)
		}
		if got := c.script(t, `document.querySelector("#type").value`); got != string(wk.m.general.Type) {
			t.Errorf("the form's type is %q, want %q", got, wk.m.general.Type)
		}
		c.replace(t, "#content", editedWords)
		c.shot(t, "edit")
		c.click(t, `form.edit button[type="submit"]`)
		if got := c.location(t).Path; got != memoryPage {
			t.Fatalf("saving the edit ended at %s", got)
		}
		if got := c.text(t, "article.memory p.content"); got != editedWords {
			t.Errorf("after the edit the memory page shows %q", got)
		}
		assertLastChange(t, wk.s, wk.w.alice.ID, id, memory.ActionUpdate)
	})
	c.step("History", func(t *testing.T) {
		c.click(t, fmt.Sprintf(`article.memory a[href="%s/history"]`, memoryPage))
		if got := c.text(t, "h1"); got != fmt.Sprintf("History of memory #%d", id) {
			t.Errorf("the history page is titled %q", got)
		}
		// Saved, forgotten, brought back by the undo, edited: newest first.
		var actions []string
		for i := 1; i <= c.count(t, "ol.history > li"); i++ {
			actions = append(actions, c.text(t, fmt.Sprintf("ol.history > li:nth-child(%d) p.meta strong", i)))
		}
		if want := []string{"edited", "brought back", "forgotten", "saved"}; strings.Join(actions, ",") != strings.Join(want, ",") {
			t.Errorf("the history lists %q, want %q", actions, want)
		}
		if got := c.text(t, "ol.history > li:first-child p.meta"); !strings.Contains(got, "edited · you ·") || !strings.Contains(got, "edited on the web dashboard") {
			t.Errorf("the edit's row says %q, want it made by you on the web dashboard", got)
		}
		if got := c.text(t, "ol.history > li:first-child p.old del"); got != wk.m.general.Content {
			t.Errorf("the edit's row shows the old words %q", got)
		}
		if got := c.text(t, "ol.history > li:first-child p.content:not(.old)"); got != editedWords {
			t.Errorf("the edit's row shows the new words %q", got)
		}
		c.shot(t, "history")
		c.click(t, `main a[href="/me"]`)
		if got := c.text(t, fmt.Sprintf(`ol.memories > li:has(a[href="%s"]) p.content`, memoryPage)); got != editedWords {
			t.Errorf("My memory lists the edited memory as %q", got)
		}
	})
}

// serverTab opens the second tab of My memory: what kioku holds about Alice in servers and
// transcripts, shown where she may see it and counted elsewhere.
func (wk *walk) serverTab() {
	c := wk.c
	c.step("ServerTab", func(t *testing.T) {
		c.click(t, `nav.tabs a[href="/me?view=server"]`)
		if got := c.location(t); got.Path != "/me" || got.Query().Get("view") != "server" {
			t.Fatalf("the tab link went to %s", got)
		}
		if got := c.text(t, `nav.tabs a[aria-current="page"]`); got != "In servers and transcripts" {
			t.Errorf("the current tab is %q", got)
		}
		main := c.text(t, "main")
		for _, shown := range []string{picnic, movieNight, dmTurn, generalTurn,
			"1 more memory about you was learned where this page can't show it",
			"kioku holds 3 turns of your conversations", "1 of the newest was said in a channel this page can't show."} {
			if !strings.Contains(main, shown) {
				t.Errorf("the tab lacks %q:\n%s", shown, main)
			}
		}
		for _, hidden := range []string{warning, modsTurn, wk.m.mods.Content, wk.m.elsewhere.Content} {
			if strings.Contains(main, hidden) {
				t.Errorf("the tab shows %q, from where it may not", hidden)
			}
		}
		if n := c.count(t, "section ol.memories > li"); n != 2 {
			t.Errorf("the tab lists %d memories, want the one she wrote and the one about her", n)
		}
		c.shot(t, "me-server")
		c.click(t, `nav.tabs a[href="/me"]`)
		if got := c.text(t, `nav.tabs a[aria-current="page"]`); got != "Personal memories" {
			t.Errorf("back on the first tab, the current tab is %q", got)
		}
	})
}

// forgetMe signs Alice in again, previews forget-me, confirms it, and checks that she is
// signed out and that the cookie she had opens nothing. It erases her: the walk's last steps.
func (wk *walk) forgetMe() {
	c, w, d := wk.c, wk.w, wk.d
	var session *network.Cookie
	c.step("SignInAgain", func(t *testing.T) {
		w.fake.AuthorizeAs(w.alice)
		c.open(t, "/")
		if got := c.location(t).Path; got != "/me" {
			t.Fatalf("signing in again ended at %s", got)
		}
		if session = c.cookies(t)["__Host-kioku_session"]; session == nil {
			t.Fatal("no session cookie after signing in again")
		}
	})
	c.step("ForgetMePreview", func(t *testing.T) {
		c.click(t, `main a[href="/me/forget-me"]`)
		if got := c.text(t, "h1"); got != "Forget me" {
			t.Errorf("the forget-me page is titled %q", got)
		}
		// Her 4 personal memories (the 2 the dashboard can't show too), Bob's 2 about her
		// (the one from #mods too), her 3 turns; the server memory she wrote stays.
		summary := c.text(t, "ul.summary")
		for _, want := range []string{"4 personal memories", "2 memories about you", "3 conversation turns",
			"1 server memory you wrote stays, without your name"} {
			if !strings.Contains(summary, want) {
				t.Errorf("the preview lacks %q:\n%s", want, summary)
			}
		}
		if _, total, err := wk.s.Memories.List(t.Context(), memory.PersonalOwner(w.alice.ID), memory.ListOptions{}); err != nil || total != 4 {
			t.Errorf("the preview changed her memories: %d left (%v)", total, err)
		}
		c.shot(t, "forget-me")
	})
	c.step("ForgetMe", func(t *testing.T) {
		c.click(t, `form[action="/me/forget-me"] button[type="submit"]`)
		if got := c.location(t).Path; got != "/forgotten" {
			t.Fatalf("forget-me ended at %s", got)
		}
		if got := c.text(t, "p.message"); !strings.HasPrefix(got, "kioku forgot everything it held about you") {
			t.Errorf("the page after forget-me says %q", got)
		}
		if _, ok := c.cookies(t)["__Host-kioku_session"]; ok {
			t.Error("the browser still holds a session cookie after forget-me")
		}
		if _, total, err := wk.s.Memories.List(t.Context(), memory.PersonalOwner(w.alice.ID), memory.ListOptions{}); err != nil || total != 0 {
			t.Errorf("after forget-me she has %d memories left (%v)", total, err)
		}
		c.shot(t, "forget-me-done")
	})
	c.step("ForgetMeOldCookie", func(t *testing.T) {
		// As after sign-out: Discord signs in nobody, so only the copied cookie could let the
		// browser in, and its session went with her data.
		w.fake.AuthorizeAs(nil)
		c.expectError("the server responded with a status of 403")
		c.setCookie(t, session)
		c.takeDocuments()
		c.open(t, "/me")
		assertWentThrough(t, c.takeDocuments(), d.srv.URL+"/me", d.srv.URL+"/login", w.fake.AuthorizeURL())
		if got := c.location(t).Path; got == "/me" {
			t.Fatal("the cookie from before forget-me still opens My memory")
		}
		if page := c.text(t, "body"); strings.Contains(page, editedWords) || strings.Contains(page, wk.m.dm.Content) {
			t.Errorf("the old cookie shows her memories:\n%s", page)
		}
	})
}

// memoryPath is the page of the member's memory id.
func memoryPath(id int64) string { return fmt.Sprintf("/me/memories/%d", id) }
