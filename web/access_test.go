package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/web"
)

// TestRolesDecide: the dashboard reads a member's roles with the bot's token at sign-in (the
// OAuth2 scopes give none) and decides with the stored channel rules, as the bot does: with
// the moderator role Alice sees what was learned in #mods; without it she does not.
func TestRolesDecide(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			m := saveAlices(t, w, s)
			d := newDashboard(t, w, s)

			page := d.browser().signIn(w.alice).body
			if strings.Contains(page, m.mods.Content) || !strings.Contains(page, m.general.Content) {
				t.Fatalf("without the moderator role:\n%s", page)
			}
			var looked bool
			for _, r := range w.fake.Requests() {
				if r.Method == http.MethodGet && r.Path == "/guilds/"+guildHome+"/members/"+w.alice.ID {
					looked = true
					if !strings.HasPrefix(r.Header.Get("Authorization"), "Bot ") {
						t.Errorf("the member lookup was not made with the bot's token: %q", r.Header.Get("Authorization"))
					}
				}
			}
			if !looked {
				t.Error("no member lookup at sign-in")
			}

			w.fake.SetMember(guildHome, &discordgo.Member{User: w.alice, Roles: []string{roleMod}})
			page = d.browser().signIn(w.alice).body
			if !strings.Contains(page, m.mods.Content) {
				t.Errorf("with the moderator role the page misses #%d, learned in #mods:\n%s", m.mods.ID, page)
			}
			if strings.Contains(page, m.elsewhere.Content) {
				t.Errorf("the page shows #%d, learned in a server she is not in", m.elsewhere.ID)
			}
		})
	}
}

// TestRemovedMember: a member removed from the server, or who lost a role, sees nothing more
// of it once their standing is older than the bound and read again; a lookup that fails
// means no access there rather than the last answer.
func TestRemovedMember(t *testing.T) {
	w := newWorld(t)
	eng, _ := sqliteEngine(t)
	s := eng.open(t)
	m := saveAlices(t, w, s)
	clock := &fixedClock{now: time.Now()}
	d := newDashboard(t, w, s, func(c *web.Config) { c.Now = clock.Now; c.MembershipMaxAge = time.Minute })
	w.fake.SetMember(guildHome, &discordgo.Member{User: w.alice, Roles: []string{roleMod}})
	b := d.browser()
	if page := b.signIn(w.alice).body; !strings.Contains(page, m.mods.Content) {
		t.Fatalf("with the moderator role:\n%s", page)
	}

	w.fake.SetMember(guildHome, &discordgo.Member{User: w.alice})
	if page := b.get("/me").body; !strings.Contains(page, m.mods.Content) {
		t.Fatalf("roles were read again before the bound:\n%s", page)
	}
	clock.advance(time.Minute + time.Second)
	if page := b.get("/me").body; strings.Contains(page, m.mods.Content) || !strings.Contains(page, m.general.Content) {
		t.Errorf("after losing the role:\n%s", page)
	}
	if got := b.get(fmt.Sprintf("/me/memories/%d", m.mods.ID)); got.StatusCode != http.StatusNotFound {
		t.Errorf("#mods memory by id after losing the role: %d", got.StatusCode)
	}

	w.fake.RemoveMember(guildHome, w.alice.ID)
	clock.advance(time.Minute + time.Second)
	if page := b.get("/me").body; strings.Contains(page, m.general.Content) {
		t.Errorf("after being removed from the server the page still shows #%d:\n%s", m.general.ID, page)
	}

	// Back in the server, but Discord fails the lookup: unknown means no access.
	w.fake.SetMember(guildHome, &discordgo.Member{User: w.alice})
	clock.advance(time.Minute + time.Second)
	w.fake.FailNext(1, func(r fakediscord.Request) bool { return strings.Contains(r.Path, "/members/") },
		http.StatusInternalServerError, 0, "boom")
	if page := b.get("/me").body; strings.Contains(page, m.general.Content) {
		t.Errorf("with the lookup failing the page shows #%d:\n%s", m.general.ID, page)
	}
	clock.advance(time.Minute + time.Second)
	if page := b.get("/me").body; !strings.Contains(page, m.general.Content) {
		t.Errorf("once the lookup works again the page misses #%d:\n%s", m.general.ID, page)
	}
}

// TestUnknownServerRules: a server whose roles kioku never stored shows nothing, and nobody is
// asked about it.
func TestUnknownServerRules(t *testing.T) {
	w := newWorld(t)
	eng, _ := sqliteEngine(t)
	s := eng.open(t)
	m := saveAlices(t, w, s)
	d := newDashboard(t, w, s)
	page := d.browser().signIn(w.bob).body
	if strings.Contains(page, m.elsewhere.Content) {
		t.Errorf("Bob's page shows a memory of Alice's")
	}
	for _, r := range w.fake.Requests() {
		if strings.Contains(r.Path, "/guilds/"+guildOther+"/members/") {
			t.Errorf("asked Discord about a server kioku holds no rules for: %s", r.Path)
		}
	}
}
