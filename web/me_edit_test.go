package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// editForm is a filled edit form of memory m at version.
func editForm(csrf string, version int, content, typ, tags string) url.Values {
	return url.Values{"csrf": {csrf}, "version": {fmt.Sprint(version)}, "content": {content}, "type": {typ}, "tags": {tags}}
}

// TestEditMemory: the edit form is prefilled; a submit changes the memory through the
// store's versioned write with the member as the actor; a form opened at an older version
// changes nothing and says so; another member's id, a hidden memory's id and no memory's
// id read alike; the full privacy level and a missing CSRF token are refused.
func TestEditMemory(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			m := saveAlices(t, w, s)
			d := newDashboard(t, w, s)
			b := d.browser()
			csrf := csrfOf(t, b.signIn(w.alice).body)
			alice := memory.PersonalOwner(w.alice.ID)
			path := fmt.Sprintf("/me/memories/%d/edit", m.dm.ID)

			t.Run("FormIsPrefilled", func(t *testing.T) {
				page := b.get(path)
				if page.StatusCode != http.StatusOK || !strings.Contains(page.body, ">"+m.dm.Content+"</textarea>") ||
					!strings.Contains(page.body, `name="version" value="1"`) || !strings.Contains(page.body, `value="fact" selected`) {
					t.Fatalf("edit form: %d\n%s", page.StatusCode, page.body)
				}
			})
			t.Run("Saves", func(t *testing.T) {
				resp := b.post(path, editForm(csrf, 1, "I take my tea with honey", "preference", "Drinks, tea, drinks"))
				if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != fmt.Sprintf("/me/memories/%d", m.dm.ID) {
					t.Fatalf("edit: %d %s\n%s", resp.StatusCode, resp.Header.Get("Location"), resp.body)
				}
				got, err := s.Memories.Get(t.Context(), alice, m.dm.ID)
				if err != nil || got.Content != "I take my tea with honey" || got.Type != memory.TypePreference ||
					!slices.Equal(got.Tags, []string{"drinks", "tea"}) || got.Version != 2 {
					t.Fatalf("after the edit: %+v %v", got, err)
				}
				hist, err := s.Memories.History(t.Context(), alice, m.dm.ID)
				if last := hist[len(hist)-1]; err != nil || last.Action != memory.ActionUpdate || last.Actor != memory.UserActor(w.alice.ID) {
					t.Fatalf("history after the edit: %+v %v", hist, err)
				}
				if page := b.get(fmt.Sprintf("/me/memories/%d", m.dm.ID)).body; !strings.Contains(page, "I take my tea with honey") {
					t.Errorf("the memory page after the edit:\n%s", page)
				}
			})
			t.Run("ErrStaleVersion", func(t *testing.T) {
				resp := b.post(path, editForm(csrf, 1, "I take my tea black", "fact", ""))
				if resp.StatusCode != http.StatusConflict || !strings.Contains(resp.body, "changed after you opened the form") {
					t.Fatalf("an edit from version 1 of a memory at version 2: %d\n%s", resp.StatusCode, resp.body)
				}
				if got, _ := s.Memories.Get(t.Context(), alice, m.dm.ID); got.Content != "I take my tea with honey" || got.Version != 2 {
					t.Fatalf("a stale edit changed the memory: %+v", got)
				}
			})
			t.Run("ErrInvalid", func(t *testing.T) {
				for name, f := range map[string]url.Values{
					"Empty":    editForm(csrf, 2, "   ", "fact", ""),
					"TooLong":  editForm(csrf, 2, strings.Repeat("あ", memory.MaxContentRunes+1), "fact", ""),
					"BadType":  editForm(csrf, 2, "I take my tea black", "gossip", ""),
					"Secret":   editForm(csrf, 2, "my password=hunter2hunter2 for the wiki", "fact", ""),
					"Markup":   editForm(csrf, 2, "I take my tea black", "<script>x</script>", ""),
					"TagsLong": editForm(csrf, 2, "I take my tea black", "fact", strings.Repeat("t,", 101)),
				} {
					resp := b.post(path, f)
					if resp.StatusCode != http.StatusBadRequest || strings.Contains(resp.body, "<script>x") {
						t.Errorf("%s: %d\n%s", name, resp.StatusCode, resp.body)
					}
				}
				if got, _ := s.Memories.Get(t.Context(), alice, m.dm.ID); got.Version != 2 {
					t.Fatalf("a refused edit changed the memory: %+v", got)
				}
			})
			t.Run("ErrNoCSRF", func(t *testing.T) {
				f := editForm("", 2, "I take my tea black", "fact", "")
				if resp := b.post(path, f); resp.StatusCode != http.StatusForbidden {
					t.Fatalf("an edit without the CSRF token: %d", resp.StatusCode)
				}
			})
			t.Run("ErrNotHers", func(t *testing.T) {
				bobs := remember(t, s, w.bob.ID, "", "dm-bob", "Bob's locker code is 4512")
				missing := bobs.ID + 1000
				wantGet := b.get(fmt.Sprintf("/me/memories/%d/edit", missing))
				wantPost := b.post(fmt.Sprintf("/me/memories/%d/edit", missing), editForm(csrf, 1, "mine now", "fact", ""))
				if wantGet.StatusCode != http.StatusNotFound || wantPost.StatusCode != http.StatusNotFound {
					t.Fatalf("a missing id: %d %d", wantGet.StatusCode, wantPost.StatusCode)
				}
				for _, id := range []int64{bobs.ID, m.mods.ID, m.elsewhere.ID} {
					p := fmt.Sprintf("/me/memories/%d/edit", id)
					if got := b.get(p); got.StatusCode != wantGet.StatusCode || got.body != wantGet.body {
						t.Errorf("GET %s differs from a missing id: %d\n%s", p, got.StatusCode, got.body)
					}
					if got := b.post(p, editForm(csrf, 1, "mine now", "fact", "")); got.StatusCode != wantPost.StatusCode || got.body != wantPost.body {
						t.Errorf("POST %s differs from a missing id: %d\n%s", p, got.StatusCode, got.body)
					}
				}
				if got, _ := s.Memories.Get(t.Context(), memory.PersonalOwner(w.bob.ID), bobs.ID); got.Version != 1 {
					t.Errorf("Bob's memory changed: %+v", got)
				}
				if got, _ := s.Memories.Get(t.Context(), alice, m.mods.ID); got.Version != 1 {
					t.Errorf("Alice's hidden memory changed: %+v", got)
				}
			})
			t.Run("ErrFullPrivacy", func(t *testing.T) {
				if err := s.Settings.SetPrivacy(t.Context(), w.alice.ID, memory.PrivacyFull); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Settings.SetPrivacy(t.Context(), w.alice.ID, memory.PrivacyNormal) })
				if got := b.get(path); got.StatusCode != http.StatusForbidden || !strings.Contains(got.body, "privacy level is full") {
					t.Errorf("the edit form at full privacy: %d\n%s", got.StatusCode, got.body)
				}
				if got := b.post(path, editForm(csrf, 2, "I take my tea black", "fact", "")); got.StatusCode != http.StatusForbidden {
					t.Errorf("an edit at full privacy: %d\n%s", got.StatusCode, got.body)
				}
				if got, _ := s.Memories.Get(t.Context(), alice, m.dm.ID); got.Version != 2 {
					t.Fatalf("an edit at full privacy changed the memory: %+v", got)
				}
			})
		})
	}
}

// TestMemoryHistory: a memory's history page shows the member's edit and forget as theirs,
// the words before and after, and still opens once the memory is forgotten; another
// member's memory's history reads as a missing one.
func TestMemoryHistory(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			m := saveAlices(t, w, s)
			d := newDashboard(t, w, s)
			b := d.browser()
			csrf := csrfOf(t, b.signIn(w.alice).body)
			edit := b.post(fmt.Sprintf("/me/memories/%d/edit", m.general.ID), editForm(csrf, 1, "I run the Saturday board game night", "event", ""))
			if edit.StatusCode != http.StatusSeeOther {
				t.Fatalf("edit: %d\n%s", edit.StatusCode, edit.body)
			}
			if resp := b.post("/me/forget", url.Values{"csrf": {csrf}, "id": {fmt.Sprint(m.general.ID)}}); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("forget: %d", resp.StatusCode)
			}
			page := b.get(fmt.Sprintf("/me/memories/%d/history", m.general.ID))
			if page.StatusCode != http.StatusOK {
				t.Fatalf("history: %d\n%s", page.StatusCode, page.body)
			}
			for _, want := range []string{"<strong>forgotten</strong> · you", "<strong>edited</strong> · you", "<strong>saved</strong> · you",
				"<del>I run the Friday board game night</del>", "I run the Saturday board game night"} {
				if !strings.Contains(page.body, want) {
					t.Errorf("the history page lacks %q:\n%s", want, page.body)
				}
			}
			if strings.Index(page.body, "forgotten</strong>") > strings.Index(page.body, "edited</strong>") {
				t.Error("the history page does not show the newest change first")
			}
			bob := d.browser()
			bob.signIn(w.bob)
			want := bob.get("/me/memories/999999/history")
			if got := bob.get(fmt.Sprintf("/me/memories/%d/history", m.dm.ID)); got.StatusCode != http.StatusNotFound || got.body != want.body {
				t.Errorf("Bob reads Alice's memory's history: %d\n%s", got.StatusCode, got.body)
			}
			if got := b.get(fmt.Sprintf("/me/memories/%d/history", m.mods.ID)); got.StatusCode != http.StatusNotFound {
				t.Errorf("Alice reads the history of a memory the page may not show: %d", got.StatusCode)
			}
		})
	}
}
