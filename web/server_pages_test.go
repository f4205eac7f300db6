package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// TestServerPages: the servers page lists the servers a member may see; a server's page
// lists, searches and filters its memory under the member's audience there: a memory of
// #mods reaches Alice (who reads #mods) and never Bob (who does not), by the list, a
// search, a channel filter, the contributions or its id, which reads exactly as a missing
// one; another server's page and memories read as missing too.
func TestServerPages(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			sw := newServerWorld(t, eng)
			t.Run("ServersPage", func(t *testing.T) {
				page := sw.bob.get("/servers").body
				if !strings.Contains(page, `href="`+home+`"`) || !strings.Contains(page, ">Home</a>") {
					t.Errorf("the servers page misses Home:\n%s", page)
				}
				if strings.Contains(page, guildOther) {
					t.Errorf("the servers page lists a server kioku holds no rules for:\n%s", page)
				}
				if !strings.Contains(page, `href="/servers"`) {
					t.Error("the layout has no Servers link")
				}
			})
			t.Run("Audience", func(t *testing.T) {
				alice, bob := sw.alice.get(home).body, sw.bob.get(home).body
				if !strings.Contains(alice, sw.mods.Content) || !strings.Contains(alice, sw.general.Content) {
					t.Errorf("Alice's page misses a memory she may see:\n%s", alice)
				}
				if !strings.Contains(bob, sw.general.Content) || strings.Contains(bob, sw.mods.Content) {
					t.Errorf("Bob's page:\n%s", bob)
				}
				if strings.Contains(bob, chanMods) || !strings.Contains(alice, "#"+chanMods) {
					t.Errorf("the contributions name #mods to Bob, or not to Alice")
				}
				if got := sw.bob.get(home + "?q=zephyrquasar").body; strings.Contains(got, sw.mods.Content) || !strings.Contains(got, "0 memories match") {
					t.Errorf("Bob's search found the #mods memory:\n%s", got)
				}
				if got := sw.alice.get(home + "?q=zephyrquasar").body; !strings.Contains(got, sw.mods.Content) {
					t.Errorf("Alice's search misses the #mods memory:\n%s", got)
				}
				if got := sw.bob.get(home + "?channel=" + chanMods).body; strings.Contains(got, sw.mods.Content) || !strings.Contains(got, "0 memories") {
					t.Errorf("Bob's #mods filter:\n%s", got)
				}
			})
			t.Run("HiddenReadsAsMissing", func(t *testing.T) {
				missing := sw.bob.get(fmt.Sprintf("%s/memories/%d", home, sw.elsewhere.ID+1000))
				if missing.StatusCode != http.StatusNotFound {
					t.Fatalf("a missing memory: %d", missing.StatusCode)
				}
				for name, path := range map[string]string{
					"HiddenChannel":      fmt.Sprintf("%s/memories/%d", home, sw.mods.ID),
					"OtherServersMemory": fmt.Sprintf("%s/memories/%d", home, sw.elsewhere.ID),
					"OtherServer":        "/servers/" + guildOther,
					"OtherServerMemory":  fmt.Sprintf("/servers/%s/memories/%d", guildOther, sw.elsewhere.ID),
					"UnknownServer":      "/servers/12345",
				} {
					got := sw.bob.get(path)
					if got.StatusCode != http.StatusNotFound || got.body != missing.body {
						t.Errorf("%s (%s): %d, and the page differs from a missing memory's: %v", name, path, got.StatusCode, got.body != missing.body)
					}
				}
				if got := sw.alice.get(fmt.Sprintf("%s/memories/%d", home, sw.mods.ID)); got.StatusCode != http.StatusOK ||
					!strings.Contains(got.body, sw.mods.Content) {
					t.Errorf("Alice's view of the #mods memory: %d", got.StatusCode)
				}
			})
			t.Run("MemoryPageHistory", func(t *testing.T) {
				got := sw.bob.get(fmt.Sprintf("%s/memories/%d", home, sw.pin.ID)).body
				if !strings.Contains(got, sw.pin.Content) || !strings.Contains(got, "v1 · <strong>saved</strong>") || !strings.Contains(got, "v2 · <strong>edited</strong>") ||
					strings.Index(got, "v2 · ") > strings.Index(got, "v1 · ") {
					t.Errorf("the memory page's history:\n%s", got)
				}
			})
			t.Run("Filters", func(t *testing.T) {
				ctx := t.Context()
				owner := memory.ServerOwner(guildHome)
				decision := memory.TypeDecision
				tags := []string{"raids"}
				if _, err := sw.s.Memories.Modify(ctx, owner, sw.general.ID, memory.Change{Type: &decision, Tags: &tags}, "test"); err != nil {
					t.Fatal(err)
				}
				old := serverMemory(t, sw.s, guildHome, chanGeneral, sw.carol.ID, "The old wiki is archived")
				archived := memory.StateArchived
				if _, err := sw.s.Memories.Modify(ctx, owner, old.ID, memory.Change{State: &archived}, "test"); err != nil {
					t.Fatal(err)
				}
				today := time.Now().UTC().Format(time.DateOnly)
				tomorrow := time.Now().UTC().Add(24 * time.Hour).Format(time.DateOnly)
				for _, c := range []struct {
					name  string
					query url.Values
					want  []*memory.Memory
				}{
					{"Type", url.Values{"type": {"decision"}}, []*memory.Memory{sw.general}},
					{"Tag", url.Values{"tag": {"raids"}}, []*memory.Memory{sw.general}},
					{"Author", url.Values{"author": {sw.w.bob.ID}}, []*memory.Memory{sw.pin}},
					{"Channel", url.Values{"channel": {chanGeneral}}, []*memory.Memory{sw.general, sw.pin}},
					{"FromToday", url.Values{"from": {today}}, []*memory.Memory{sw.general, sw.pin}},
					{"FromTomorrow", url.Values{"from": {tomorrow}}, nil},
					{"Lifecycle", url.Values{"lifecycle": {"archived"}}, []*memory.Memory{old}},
					{"SearchWithType", url.Values{"q": {"raid Friday"}, "type": {"fact"}}, nil},
					{"SearchWithTag", url.Values{"q": {"raid Friday"}, "tag": {"raids"}}, []*memory.Memory{sw.general}},
					{"SearchArchived", url.Values{"q": {"wiki"}, "lifecycle": {"archived"}}, []*memory.Memory{old}},
				} {
					t.Run(c.name, func(t *testing.T) {
						got := sw.bob.get(home + "?" + c.query.Encode()).body
						for _, m := range []*memory.Memory{sw.general, sw.pin, old} {
							want := false
							for _, w := range c.want {
								want = want || w.ID == m.ID
							}
							if strings.Contains(got, m.Content) != want {
								t.Errorf("?%s: shows %q = %v, want %v", c.query.Encode(), m.Content, !want, want)
							}
						}
					})
				}
				if got := sw.bob.get(home + "?type=nonsense"); got.StatusCode != http.StatusBadRequest {
					t.Errorf("an unknown type: %d", got.StatusCode)
				}
				if got := sw.bob.get(home); strings.Contains(got.body, old.Content) {
					t.Error("the default listing shows an archived memory")
				}
			})
			t.Run("Explain", func(t *testing.T) {
				got := sw.bob.get(home + "?q=board+games&explain=1").body
				if !strings.Contains(got, `class="why"`) || !strings.Contains(got, "keyword ") {
					t.Errorf("the explain view:\n%s", got)
				}
				if got := sw.bob.get(home + "?q=board+games").body; strings.Contains(got, `class="why"`) {
					t.Error("the explain view shows without explain=1")
				}
			})
			t.Run("Contributions", func(t *testing.T) {
				got := sw.bob.get(home).body
				link := `href="` + home + "?channel=" + chanGeneral + `"`
				if !strings.Contains(got, link) || !strings.Contains(got, `href="`+home+"?author="+sw.w.alice.ID+`"`) {
					t.Errorf("the contributions lack the filter links:\n%s", got)
				}
				if got := sw.bob.get(home + "?q=picnic").body; strings.Contains(got, `class="contributions"`) {
					t.Errorf("a search shows the counts at a glance, which go with the listing:\n%s", got)
				}
			})
		})
	}
}
