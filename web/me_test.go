package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// alicesMemories saves what TestMyMemory's Alice has: memories she may see here (said in a
// DM, in #general), and memories the dashboard may not show her (said in #mods, which
// only moderators read, and in a server she is not in).
type alicesMemories struct {
	dm, general, mods, elsewhere *memory.Memory
}

func saveAlices(t *testing.T, w *world, s stores) alicesMemories {
	t.Helper()
	storeRules(t, s)
	return alicesMemories{
		dm:        remember(t, s, w.alice.ID, "", "dm-alice", "I take my tea with lemon"),
		general:   remember(t, s, w.alice.ID, guildHome, chanGeneral, "I run the Friday board game night"),
		mods:      remember(t, s, w.alice.ID, guildHome, chanMods, "I am handling the ban appeal of zephyrquasar"),
		elsewhere: remember(t, s, w.alice.ID, guildOther, chanElse, "I once lived in a lighthouse"),
	}
}

// TestMyMemory: the page lists the member's memories they may see, newest first, counts
// (never shows) the others, searches as /memory search does, and downloads exactly what it
// shows as JSON and Markdown.
func TestMyMemory(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	s := eng.open(t)
	m := saveAlices(t, w, s)
	d := newDashboard(t, w, s)
	b := d.browser()
	page := b.signIn(w.alice).body

	t.Run("ShowsWhatSheMaySee", func(t *testing.T) {
		if !strings.Contains(page, m.dm.Content) || !strings.Contains(page, m.general.Content) {
			t.Errorf("the page misses her visible memories:\n%s", page)
		}
		if strings.Index(page, m.general.Content) > strings.Index(page, m.dm.Content) {
			t.Error("the page does not list the newest first")
		}
		for _, hidden := range []*memory.Memory{m.mods, m.elsewhere} {
			if strings.Contains(page, hidden.Content) || strings.Contains(page, fmt.Sprintf("#%d<", hidden.ID)) {
				t.Errorf("the page shows #%d, learned where the dashboard may not show it", hidden.ID)
			}
		}
		if !strings.Contains(page, "2 more memories were learned in channels or servers this page can") {
			t.Errorf("the page does not count the 2 memories it may not show:\n%s", page)
		}
	})
	t.Run("Search", func(t *testing.T) {
		got := b.get("/me?q=" + url.QueryEscape("board game")).body
		if !strings.Contains(got, m.general.Content) || strings.Contains(got, m.dm.Content) {
			t.Errorf("search for board game:\n%s", got)
		}
		if got := b.get("/me?q=zephyrquasar").body; strings.Contains(got, "zephyrquasar</p>") || !strings.Contains(got, "0 memories match") {
			t.Errorf("search found the memory of #mods:\n%s", got)
		}
	})
	t.Run("Paging", func(t *testing.T) {
		for i := range 21 {
			remember(t, s, w.alice.ID, "", "dm-alice", fmt.Sprintf("Note number %d of many", i))
		}
		first := b.get("/me").body
		if !strings.Contains(first, "23 memories · page 1 of 2") || !strings.Contains(first, `href="/me?p=2"`) {
			t.Fatalf("first page:\n%s", first)
		}
		second := b.get("/me?p=2").body
		if !strings.Contains(second, m.dm.Content) || strings.Contains(second, "Note number 20 of many") {
			t.Errorf("second page:\n%s", second)
		}
	})
	t.Run("DownloadJSON", func(t *testing.T) {
		resp := b.get("/me/export.json")
		var f memory.ExportFile
		if err := json.Unmarshal([]byte(resp.body), &f); err != nil || f.Format != memory.ExportFormat {
			t.Fatalf("JSON export: %v\n%s", err, resp.body)
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment;") {
			t.Errorf("Content-Disposition %q", resp.Header.Get("Content-Disposition"))
		}
		ids := map[int64]bool{}
		for _, em := range f.Memories {
			ids[em.ID] = true
		}
		if len(f.Memories) != 23 || !ids[m.dm.ID] || !ids[m.general.ID] || ids[m.mods.ID] || ids[m.elsewhere.ID] {
			t.Errorf("JSON export holds %d memories: %v", len(f.Memories), ids)
		}
	})
	t.Run("DownloadMarkdown", func(t *testing.T) {
		resp := b.get("/me/export.md")
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") || !strings.Contains(resp.body, "> "+m.general.Content) ||
			strings.Contains(resp.body, m.mods.Content) || !strings.Contains(resp.body, fmt.Sprintf("## #%d · fact · from DMs", m.dm.ID)) {
			t.Errorf("Markdown export (%s):\n%s", resp.Header.Get("Content-Type"), resp.body)
		}
	})
	t.Run("Japanese", func(t *testing.T) {
		jp := d.browser()
		jp.headers.Set("Accept-Language", "ja-JP,ja;q=0.9,en;q=0.5")
		if got := jp.signIn(w.alice).body; !strings.Contains(got, "自分の記憶") || !strings.Contains(got, `lang="ja"`) {
			t.Errorf("Accept-Language ja:\n%s", got)
		}
		// ?lang= wins over the browser's language, and is remembered.
		if got := jp.get("/me?lang=en").body; !strings.Contains(got, "<h1>My memory</h1>") {
			t.Errorf("?lang=en:\n%s", got)
		}
		if got := jp.get("/me").body; !strings.Contains(got, "<h1>My memory</h1>") {
			t.Errorf("the language chosen with ?lang= was not remembered:\n%s", got)
		}
	})
}

// TestForgetAndUndo: Forget soft-deletes through the store with the member as the actor,
// and the page then offers to undo that change, which brings the memory back.
func TestForgetAndUndo(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	s := eng.open(t)
	m := saveAlices(t, w, s)
	d := newDashboard(t, w, s)
	b := d.browser()
	page := b.signIn(w.alice).body
	csrf := csrfOf(t, page)
	alice := memory.PersonalOwner(w.alice.ID)

	resp := b.post("/me/forget", url.Values{"csrf": {csrf}, "id": {fmt.Sprint(m.general.ID)}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/me" {
		t.Fatalf("forget: %d\n%s", resp.StatusCode, resp.body)
	}
	if _, err := s.Memories.Get(t.Context(), alice, m.general.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Fatalf("the memory is still live after Forget: %v", err)
	}
	hist, err := s.Memories.History(t.Context(), alice, m.general.ID)
	if err != nil || hist[len(hist)-1].Actor != memory.UserActor(w.alice.ID) || hist[len(hist)-1].Action != memory.ActionDelete {
		t.Fatalf("history after Forget: %+v %v", hist, err)
	}
	page = b.get("/me").body
	if strings.Contains(page, m.general.Content) || !strings.Contains(page, fmt.Sprintf("You forgot memory #%d", m.general.ID)) {
		t.Fatalf("after Forget the page shows:\n%s", page)
	}
	version := hist[len(hist)-1].Version
	resp = b.post("/me/undo", url.Values{"csrf": {csrf}, "id": {fmt.Sprint(m.general.ID)}, "version": {fmt.Sprint(version)}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("undo: %d\n%s", resp.StatusCode, resp.body)
	}
	if got, err := s.Memories.Get(t.Context(), alice, m.general.ID); err != nil || got.Content != m.general.Content {
		t.Fatalf("after Undo: %+v %v", got, err)
	}
	t.Run("ErrUndoTwice", func(t *testing.T) {
		resp := b.post("/me/undo", url.Values{"csrf": {csrf}, "id": {fmt.Sprint(m.general.ID)}, "version": {fmt.Sprint(version)}})
		if resp.StatusCode != http.StatusConflict {
			t.Fatalf("an undo of a change undone already: %d\n%s", resp.StatusCode, resp.body)
		}
	})
	t.Run("MarkupIsInert", func(t *testing.T) {
		evil := remember(t, s, w.alice.ID, "", "dm-alice", `<script>alert("hi")</script><img src=x onerror=alert(1)>`)
		got := b.get("/me").body + b.get(fmt.Sprintf("/me/memories/%d", evil.ID)).body
		if strings.Contains(got, "<script>alert") || strings.Contains(got, "<img src=x") || !strings.Contains(got, "&lt;script&gt;alert(") {
			t.Errorf("a memory's markup reached the page unescaped:\n%s", got)
		}
	})
}

// TestOtherMembersMemory: an id of another member's memory, and of a memory of her own the
// dashboard may not show her, reads exactly as an id of no memory (the same 404 page, byte
// for byte) when it is viewed, forgotten or undone, and nothing changes.
func TestOtherMembersMemory(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	s := eng.open(t)
	m := saveAlices(t, w, s)
	bobs := remember(t, s, w.bob.ID, "", "dm-bob", "Bob's locker code is 4512")
	d := newDashboard(t, w, s)
	alice, bob := d.browser(), d.browser()
	alice.signIn(w.alice)
	csrf := csrfOf(t, bob.signIn(w.bob).body)

	missing := m.elsewhere.ID + 1000
	attempts := map[string]func(b *browser, id int64) response{
		"View": func(b *browser, id int64) response { return b.get(fmt.Sprintf("/me/memories/%d", id)) },
		"Forget": func(b *browser, id int64) response {
			return b.post("/me/forget", url.Values{"csrf": {csrf}, "id": {fmt.Sprint(id)}})
		},
		"Undo": func(b *browser, id int64) response {
			return b.post("/me/undo", url.Values{"csrf": {csrf}, "id": {fmt.Sprint(id)}, "version": {"1"}})
		},
	}
	for name, try := range attempts {
		t.Run(name, func(t *testing.T) {
			want := try(bob, missing)
			if want.StatusCode != http.StatusNotFound {
				t.Fatalf("%s of a missing id: %d", name, want.StatusCode)
			}
			for _, id := range []int64{m.dm.ID, m.general.ID, m.mods.ID} {
				if got := try(bob, id); got.StatusCode != want.StatusCode || got.body != want.body {
					t.Errorf("%s of Alice's #%d by Bob: %d, differs from a missing id:\n%s", name, id, got.StatusCode, got.body)
				}
			}
		})
	}
	t.Run("HerOwnHiddenMemory", func(t *testing.T) {
		aliceCSRF := csrfOf(t, alice.get("/me").body)
		want := alice.get(fmt.Sprintf("/me/memories/%d", missing))
		for _, id := range []int64{m.mods.ID, m.elsewhere.ID, bobs.ID} {
			if got := alice.get(fmt.Sprintf("/me/memories/%d", id)); got.StatusCode != http.StatusNotFound || got.body != want.body {
				t.Errorf("Alice views #%d: %d, differs from a missing id", id, got.StatusCode)
			}
			if got := alice.post("/me/forget", url.Values{"csrf": {aliceCSRF}, "id": {fmt.Sprint(id)}}); got.StatusCode != http.StatusNotFound {
				t.Errorf("Alice forgets #%d: %d", id, got.StatusCode)
			}
		}
	})
	for _, mm := range []*memory.Memory{m.dm, m.general, m.mods, m.elsewhere} {
		got, err := s.Memories.Get(t.Context(), memory.PersonalOwner(w.alice.ID), mm.ID)
		if err != nil || got.Version != mm.Version {
			t.Errorf("Alice's #%d after the attempts: %+v %v", mm.ID, got, err)
		}
	}
	if got, err := s.Memories.Get(t.Context(), memory.PersonalOwner(w.bob.ID), bobs.ID); err != nil || got.Version != bobs.Version {
		t.Errorf("Bob's memory after Alice's attempts: %+v %v", got, err)
	}
}

// TestMyMemoryFilters: "My memory" narrows its list and its search by type, tag, day and
// lifecycle, keeps the filter across pages, still counts what the page may not show under
// the same filter, and answers a filter that means nothing with 400.
func TestMyMemoryFilters(t *testing.T) {
	eng, _ := sqliteEngine(t)
	w := newWorld(t)
	s := eng.open(t)
	m := saveAlices(t, w, s)
	ctx := t.Context()
	pref, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopePersonal, UserID: w.alice.ID, Type: memory.TypePreference,
		Tags: []string{"food"}, Content: "I prefer green tea to coffee", Provenance: memory.Provenance{AuthorID: w.alice.ID, ChannelID: "dm-alice"}},
		memory.UserActor(w.alice.ID))
	if err != nil {
		t.Fatal(err)
	}
	d := newDashboard(t, w, s)
	b := d.browser()
	b.signIn(w.alice)

	byType := b.get("/me?type=preference").body
	if !strings.Contains(byType, pref.Memory.Content) || strings.Contains(byType, m.dm.Content) || !strings.Contains(byType, `value="preference" selected`) {
		t.Errorf("type filter:\n%s", byType)
	}
	byTag := b.get("/me?tag=food").body
	if !strings.Contains(byTag, pref.Memory.Content) || strings.Contains(byTag, m.general.Content) {
		t.Errorf("tag filter:\n%s", byTag)
	}
	if got := b.get("/me?q=tea&type=fact").body; !strings.Contains(got, m.dm.Content) || strings.Contains(got, pref.Memory.Content) {
		t.Errorf("search for tea among facts:\n%s", got)
	}
	if got := b.get("/me?to=2000-01-01").body; strings.Contains(got, m.dm.Content) || !strings.Contains(got, "0 memories") {
		t.Errorf("memories saved before 2000:\n%s", got)
	}
	if got := b.get("/me?lifecycle=archived").body; strings.Contains(got, m.dm.Content) {
		t.Errorf("archived memories list an active one:\n%s", got)
	}
	// The hidden count follows the filter: both hidden memories are facts, none a preference.
	if got := b.get("/me?type=fact").body; !strings.Contains(got, "2 more memories") {
		t.Errorf("the fact filter does not count the 2 hidden facts:\n%s", got)
	}
	if got := b.get("/me?type=preference").body; strings.Contains(got, "more memor") {
		t.Errorf("the preference filter counts hidden facts:\n%s", got)
	}
	for i := range 21 {
		remember(t, s, w.alice.ID, "", "dm-alice", fmt.Sprintf("Fact number %d of many", i))
	}
	if got := b.get("/me?type=fact").body; !strings.Contains(got, `href="/me?p=2&amp;type=fact"`) {
		t.Errorf("the next page link drops the filter:\n%s", got)
	}
	for _, bad := range []string{"/me?type=nonsense", "/me?lifecycle=whenever", "/me?from=2026-02-01&to=2026-01-01", "/me?from=yesterdayish"} {
		if got := b.get(bad); got.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, got.StatusCode)
		}
	}
}
