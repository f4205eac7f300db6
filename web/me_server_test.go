package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// TestWhatKiokuHoldsElsewhere: the server tab lists the server memories the member wrote
// and those about her where her audience allows, and her transcript turns said in DMs and
// channels she may see; memories and turns from a channel she can't view, a server she is
// not in, or another member's own memory about her are counted, never shown.
func TestWhatKiokuHoldsElsewhere(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			storeRules(t, s)
			ctx := t.Context()
			save := func(m memory.Memory) {
				t.Helper()
				if _, err := s.Memories.Remember(ctx, m, memory.UserActor(m.Provenance.AuthorID)); err != nil {
					t.Fatal(err)
				}
			}
			server := func(guild, channel, author, subject, content string) memory.Memory {
				return memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content, SubjectID: subject,
					Provenance: memory.Provenance{AuthorID: author, ChannelID: channel}}
			}
			save(server(guildHome, chanGeneral, w.alice.ID, "", "The server picnic is in May"))
			save(server(guildHome, chanMods, w.alice.ID, "", "Ban list review is every Sunday quietly"))
			save(server(guildHome, chanGeneral, w.bob.ID, w.alice.ID, "Alice hosts the movie night"))
			save(server(guildHome, chanMods, w.bob.ID, w.alice.ID, "Alice got a warning for spam secretly"))
			save(server(guildOther, chanElse, w.bob.ID, w.alice.ID, "Alice was mentioned elsewhere discreetly"))
			save(memory.Memory{Scope: memory.ScopePersonal, UserID: w.bob.ID, Content: "Alice owes me lunch privately",
				SubjectID: w.alice.ID, Provenance: memory.Provenance{AuthorID: w.bob.ID}})
			save(server(guildHome, chanGeneral, w.bob.ID, "", "Bob wrote the rules page"))
			for _, turn := range []memory.Turn{
				{GuildID: "", ChannelID: "dm-alice", UserID: w.alice.ID, Role: memory.RoleUser, Content: "hello from my DM"},
				{GuildID: guildHome, ChannelID: chanGeneral, UserID: w.alice.ID, Role: memory.RoleUser, Content: "hello general"},
				{GuildID: guildHome, ChannelID: chanMods, UserID: w.alice.ID, Role: memory.RoleUser, Content: "whisper in mods"},
				{GuildID: guildHome, ChannelID: chanGeneral, UserID: w.bob.ID, Role: memory.RoleUser, Content: "bob talking"},
			} {
				if _, err := s.Turns.AppendTurn(ctx, turn); err != nil {
					t.Fatal(err)
				}
			}
			d := newDashboard(t, w, s)
			b := d.browser()
			b.signIn(w.alice)
			page := b.get("/me?view=server")
			if page.StatusCode != http.StatusOK {
				t.Fatalf("server tab: %d\n%s", page.StatusCode, page.body)
			}
			for _, shown := range []string{"The server picnic is in May", "Alice hosts the movie night", "hello from my DM", "hello general",
				"1 more you wrote is in a channel", "3 more memories about you", "kioku holds 3 turns", "1 of the newest was said"} {
				if !strings.Contains(page.body, shown) {
					t.Errorf("the tab lacks %q:\n%s", shown, page.body)
				}
			}
			for _, hidden := range []string{"quietly", "secretly", "discreetly", "privately", "whisper in mods", "bob talking", "Bob wrote"} {
				if strings.Contains(page.body, hidden) {
					t.Errorf("the tab shows %q, which it may not", hidden)
				}
			}
			// Bob, a member of both servers, sees none of Alice's.
			bob := d.browser()
			bob.signIn(w.bob)
			if got := bob.get("/me?view=server").body; strings.Contains(got, "hello general") || strings.Contains(got, "The server picnic") ||
				!strings.Contains(got, "Bob wrote the rules page") {
				t.Errorf("Bob's tab:\n%s", got)
			}
		})
	}
}
