package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/web"
)

// Roles of the server pages' tests, beside roleMod: an editor of server memory (the guild's
// editor role) and a manager (Manage Server).
const (
	roleEditor  = "500000000000000002"
	roleManager = "500000000000000003"
)

// storePageRules stores the home server's rules with the editor and manager roles, and
// makes roleEditor the server's editor role.
func storePageRules(t testing.TB, s stores) {
	t.Helper()
	storeRules(t, s)
	ctx := t.Context()
	if err := s.Channels.SaveGuildRoles(ctx, memory.GuildRoles{GuildID: guildHome, OwnerID: "999", Roles: map[string]int64{
		guildHome: discordgo.PermissionViewChannel, roleMod: discordgo.PermissionViewChannel,
		roleEditor: discordgo.PermissionViewChannel, roleManager: discordgo.PermissionViewChannel | discordgo.PermissionManageGuild,
	}}); err != nil {
		t.Fatal(err)
	}
	gs, err := s.Settings.GuildSettings(ctx, guildHome)
	if err != nil {
		t.Fatal(err)
	}
	gs.GuildID, gs.EditorRoleID = guildHome, roleEditor
	if err := s.Settings.SaveGuildSettings(ctx, gs); err != nil {
		t.Fatal(err)
	}
}

// signInWith gives u roles in the home server, then signs a new browser in as them.
func signInWith(d *dashboard, u *discordgo.User, roles ...string) *browser {
	d.w.fake.SetMember(guildHome, &discordgo.Member{User: u, Roles: roles})
	b := d.browser()
	b.signIn(u)
	return b
}

// rememberServer saves a server memory of the home server, learned in channel.
func rememberServer(t testing.TB, s stores, author, channel, content string) *memory.Memory {
	t.Helper()
	res, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: guildHome, Content: content,
		Provenance: memory.Provenance{AuthorID: author, ChannelID: channel}}, memory.UserActor(author))
	if err != nil || !res.Created {
		t.Fatalf("remember %q: %+v %v", content, res, err)
	}
	return res.Memory
}

// dispute marks a and b of owner as disputed with each other.
func dispute(t testing.TB, s stores, owner memory.Owner, a, b *memory.Memory) {
	t.Helper()
	if _, err := s.Review.Dispute(t.Context(), owner, a.ID, b.ID, memory.ActorPipeline, "they conflict"); err != nil {
		t.Fatal(err)
	}
}

// refOf is the ref of the review item of owner that shows memory id, as an audience of
// channels sees the queue.
func refOf(t testing.TB, s stores, owner memory.Owner, id int64, channels ...string) string {
	t.Helper()
	aud := &memory.Audience{Channels: map[string]bool{}}
	for _, c := range channels {
		aud.Channels[c] = true
	}
	items, _, err := s.Review.Queue(t.Context(), owner, aud, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Memory.ID == id || (it.Other != nil && it.Other.ID == id) {
			return it.Ref
		}
	}
	t.Fatalf("no review item shows #%d", id)
	return ""
}

// lookup reads memory id of owner, forgotten or not.
func lookup(t testing.TB, s stores, owner memory.Owner, id int64) *memory.Memory {
	t.Helper()
	m, err := s.Channels.Lookup(t.Context(), owner, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// lastActor is the actor of the newest history event of memory id.
func lastActor(t testing.TB, s stores, owner memory.Owner, id int64) memory.Actor {
	t.Helper()
	hist, err := s.Memories.History(t.Context(), owner, id)
	if err != nil || len(hist) == 0 {
		t.Fatalf("history of #%d: %v %v", id, hist, err)
	}
	newest := hist[0]
	for _, ev := range hist {
		if ev.ID > newest.ID {
			newest = ev
		}
	}
	return newest.Actor
}

// press posts a review choice for ref to path with the page's CSRF token.
func press(b *browser, path, csrf, ref, choice, text string) response {
	b.t.Helper()
	form := url.Values{"csrf": {csrf}, "ref": {ref}, "choice": {choice}}
	if text != "" {
		form.Set("text", text)
	}
	return b.post(path, form)
}

// TestReviewServerQueue: an editor sees the server's disputed pairs they may see, keeps,
// forgets and merges through the page, each change in history with them as the actor; a pair
// with a memory of a hidden channel is neither listed nor settled by a forged press, which
// reads exactly like a press for an item that never existed.
func TestReviewServerQueue(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			storePageRules(t, s)
			home := memory.ServerOwner(guildHome)
			a := rememberServer(t, s, w.bob.ID, chanGeneral, "The raid starts at eight on Fridays")
			b := rememberServer(t, s, w.bob.ID, chanGeneral, "The raid starts at nine on Fridays")
			dispute(t, s, home, a, b)
			c := rememberServer(t, s, w.bob.ID, chanMods, "Moderators meet on Mondays")
			hidden := rememberServer(t, s, w.bob.ID, chanMods, "Moderators meet on Tuesdays in the back room")
			dispute(t, s, home, c, hidden)
			e := rememberServer(t, s, w.bob.ID, chanGeneral, "The guild bank holds the spare armour")
			f := rememberServer(t, s, w.bob.ID, chanGeneral, "Spare armour is kept in the guild bank")
			dispute(t, s, home, e, f)

			d := newDashboard(t, w, s)
			br := signInWith(d, w.alice, roleEditor)
			path := "/servers/" + guildHome + "/review"
			page := br.get(path)
			if page.StatusCode != http.StatusOK {
				t.Fatalf("review page: %d\n%s", page.StatusCode, page.body)
			}
			for _, m := range []*memory.Memory{a, b, e, f} {
				if !strings.Contains(page.body, m.Content) || !strings.Contains(page.body, fmt.Sprintf(`href="/servers/%s/memories/%d"`, guildHome, m.ID)) {
					t.Errorf("the queue misses #%d", m.ID)
				}
			}
			if strings.Contains(page.body, hidden.Content) || strings.Contains(page.body, c.Content) {
				t.Errorf("the queue shows the pair with a memory of #mods:\n%s", page.body)
			}
			csrf := csrfOf(t, page.body)

			// A forged press for the hidden pair, and one for an item that never was.
			hiddenRef := refOf(t, s, home, hidden.ID, chanGeneral, chanMods)
			forged, missing := press(br, path, csrf, hiddenRef, "forget", ""), press(br, path, csrf, "d999999", "forget", "")
			if forged.StatusCode != http.StatusSeeOther || forged.StatusCode != missing.StatusCode ||
				forged.Header.Get("Location") != missing.Header.Get("Location") || forged.body != missing.body {
				t.Errorf("a press for a hidden item (%d %s) reads unlike one for a missing item (%d %s)", forged.StatusCode,
					forged.Header.Get("Location"), missing.StatusCode, missing.Header.Get("Location"))
			}
			if m := lookup(t, s, home, hidden.ID); m.Deleted() || m.State != memory.StateDisputed {
				t.Errorf("the forged press changed #%d: %+v", hidden.ID, m)
			}

			// Forget: the newer of the pair is forgotten, by Alice.
			res := press(br, path, csrf, refOf(t, s, home, a.ID, chanGeneral), "forget", "")
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != path+"?done=forget" {
				t.Fatalf("forget: %d %s\n%s", res.StatusCode, res.Header.Get("Location"), res.body)
			}
			if m := lookup(t, s, home, b.ID); !m.Deleted() {
				t.Errorf("forget left #%d", b.ID)
			}
			if got := lastActor(t, s, home, b.ID); got != memory.UserActor(w.alice.ID) {
				t.Errorf("history of #%d names %q, want Alice", b.ID, got)
			}

			// Merge: #e says the confirmed words, #f is forgotten.
			eRef := refOf(t, s, home, e.ID, chanGeneral)
			res = press(br, path, csrf, eRef, "merge", "The guild bank holds the spare armour and shields")
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("merge: %d\n%s", res.StatusCode, res.body)
			}
			if m := lookup(t, s, home, e.ID); m.Content != "The guild bank holds the spare armour and shields" {
				t.Errorf("merge left #%d saying %q", e.ID, m.Content)
			}
			if got := lastActor(t, s, home, e.ID); got != memory.UserActor(w.alice.ID) {
				t.Errorf("history of #%d names %q, want Alice", e.ID, got)
			}
			if page := br.get(path + "?done=merge"); !strings.Contains(page.body, "Merge: done.") ||
				strings.Contains(page.body, a.Content) {
				t.Errorf("after settling both pairs the queue reads:\n%s", page.body)
			}
			// A settled item: pressing again reads as not waiting any more.
			again := press(br, path, csrf, eRef, "keep", "")
			if again.Header.Get("Location") != path+"?gone=1" {
				t.Errorf("a second press for a settled item: %s", again.Header.Get("Location"))
			}
		})
	}
}

// TestReviewRefusals: a member who does not edit the server's memory gets the page of a
// missing server for its queue and for a press, and nothing changes; a press without the
// CSRF token is refused; a member who lost the editor role is refused from then on.
func TestReviewRefusals(t *testing.T) {
	w := newWorld(t)
	eng, _ := sqliteEngine(t)
	s := eng.open(t)
	storePageRules(t, s)
	home := memory.ServerOwner(guildHome)
	a := rememberServer(t, s, w.bob.ID, chanGeneral, "Voice chat opens at seven")
	b := rememberServer(t, s, w.bob.ID, chanGeneral, "Voice chat opens at six")
	dispute(t, s, home, a, b)
	ref := refOf(t, s, home, a.ID, chanGeneral)
	clock := &fixedClock{now: time.Now()}
	d := newDashboard(t, w, s, func(c *web.Config) { c.Now = clock.Now; c.MembershipMaxAge = time.Minute })

	member := signInWith(d, w.alice)
	missing := member.get("/servers/" + guildOther + "/review")
	if missing.StatusCode != http.StatusNotFound {
		t.Fatalf("another server's queue: %d", missing.StatusCode)
	}
	for _, path := range []string{"/servers/" + guildHome + "/review", "/servers/" + guildHome + "/review?item=" + ref} {
		if got := member.get(path); got.StatusCode != http.StatusNotFound || got.body != missing.body {
			t.Errorf("%s for a member who does not edit: %d\n%s", path, got.StatusCode, got.body)
		}
	}
	csrf := csrfOf(t, member.get("/me").body)
	if got := press(member, "/servers/"+guildHome+"/review", csrf, ref, "forget", ""); got.StatusCode != http.StatusNotFound || got.body != missing.body {
		t.Errorf("a non-editor's press: %d", got.StatusCode)
	}
	if got := press(member, "/servers/"+guildHome+"/review", "", ref, "forget", ""); got.StatusCode != http.StatusForbidden {
		t.Errorf("a press without the CSRF token: %d", got.StatusCode)
	}
	if m := lookup(t, s, home, b.ID); m.Deleted() || m.State != memory.StateDisputed {
		t.Errorf("a refused press changed #%d", b.ID)
	}

	// The editor role taken away: once her roles are read again, her press is refused.
	editor := signInWith(d, w.bob, roleEditor)
	csrf = csrfOf(t, editor.get("/servers/"+guildHome+"/review").body)
	w.fake.SetMember(guildHome, &discordgo.Member{User: w.bob})
	clock.advance(time.Minute + time.Second)
	if got := press(editor, "/servers/"+guildHome+"/review", csrf, ref, "forget", ""); got.StatusCode != http.StatusNotFound {
		t.Errorf("a press after losing the editor role: %d", got.StatusCode)
	}
	if m := lookup(t, s, home, b.ID); m.Deleted() || m.State != memory.StateDisputed {
		t.Errorf("a press after losing the role changed #%d", b.ID)
	}
}

// TestReviewPersonal: the member's own queue lists their disputed pairs they may see here,
// a Replace supersedes the older memory by them; at the full privacy level a Merge is
// refused and a Keep still works.
func TestReviewPersonal(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			storePageRules(t, s)
			mine := memory.PersonalOwner(w.alice.ID)
			a := remember(t, s, w.alice.ID, "", "", "My favourite tea is sencha")
			b := remember(t, s, w.alice.ID, "", "", "My favourite tea is hojicha")
			dispute(t, s, mine, a, b)
			c := remember(t, s, w.alice.ID, guildHome, chanMods, "I mod on weekdays")
			hidden := remember(t, s, w.alice.ID, guildHome, chanMods, "I mod on weekends only, secretly")
			dispute(t, s, mine, c, hidden)
			e := remember(t, s, w.alice.ID, "", "", "I walk the dog at six")
			f := remember(t, s, w.alice.ID, "", "", "I walk the dog at seven")
			dispute(t, s, mine, e, f)

			d := newDashboard(t, w, s)
			br := signInWith(d, w.alice)
			page := br.get("/me/review")
			if page.StatusCode != http.StatusOK || !strings.Contains(page.body, a.Content) || !strings.Contains(page.body, "/me/memories/") {
				t.Fatalf("personal queue: %d\n%s", page.StatusCode, page.body)
			}
			if strings.Contains(page.body, hidden.Content) {
				t.Errorf("the personal queue shows a memory learned in #mods")
			}
			csrf := csrfOf(t, page.body)
			res := press(br, "/me/review", csrf, refOf(t, s, mine, a.ID), "replace", "")
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("replace: %d\n%s", res.StatusCode, res.body)
			}
			if m := lookup(t, s, mine, a.ID); m.State != memory.StateSuperseded {
				t.Errorf("replace left #%d %q", a.ID, m.State)
			}
			if got := lastActor(t, s, mine, a.ID); got != memory.UserActor(w.alice.ID) {
				t.Errorf("history of #%d names %q", a.ID, got)
			}
			if got := press(br, "/me/review", csrf, refOf(t, s, mine, c.ID, chanGeneral, chanMods), "forget", ""); got.Header.Get("Location") != "/me/review?gone=1" {
				t.Errorf("a press for the pair with a #mods memory: %d %s", got.StatusCode, got.Header.Get("Location"))
			}

			if err := s.Settings.SetPrivacy(t.Context(), w.alice.ID, memory.PrivacyFull); err != nil {
				t.Fatal(err)
			}
			ref := refOf(t, s, mine, e.ID)
			if got := press(br, "/me/review", csrf, ref, "merge", "I walk the dog at half past six"); got.StatusCode != http.StatusForbidden {
				t.Errorf("a merge at the full privacy level: %d", got.StatusCode)
			}
			if m := lookup(t, s, mine, e.ID); m.Content != e.Content {
				t.Errorf("a refused merge wrote %q", m.Content)
			}
			if got := press(br, "/me/review", csrf, ref, "keep", ""); got.StatusCode != http.StatusSeeOther {
				t.Errorf("a keep at the full privacy level: %d", got.StatusCode)
			}
		})
	}
}

// TestReviewEscapes: words carrying markup show as text on the review page.
func TestReviewEscapes(t *testing.T) {
	w := newWorld(t)
	eng, _ := sqliteEngine(t)
	s := eng.open(t)
	storePageRules(t, s)
	home := memory.ServerOwner(guildHome)
	a := rememberServer(t, s, w.bob.ID, chanGeneral, "Pinned note <script>alert(1)</script> about the raid")
	b := rememberServer(t, s, w.bob.ID, chanGeneral, `Pinned note "><svg onload=alert(1)> about the raid`)
	dispute(t, s, home, a, b)
	d := newDashboard(t, w, s)
	page := signInWith(d, w.alice, roleEditor).get("/servers/" + guildHome + "/review")
	for _, raw := range []string{"<script>alert(1)</script>", "<svg onload=alert(1)>"} {
		if strings.Contains(page.body, raw) {
			t.Errorf("the page carries %q unescaped", raw)
		}
	}
	if !strings.Contains(page.body, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page.body, "&lt;svg onload=alert(1)&gt;") {
		t.Errorf("the words are not shown as text:\n%s", page.body)
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}
}
