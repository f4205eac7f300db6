//go:build browser

package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// TestBrowser's second walk: a server's pages, as Alice, who reads #mods, edits the home
// server's memory and manages it. She goes from the servers list to the server's memory,
// searches it, filters it by a tag, asks why each result is there, opens a memory, forgets
// two with a bulk action (preview, apply, gone from the list, undo, back), settles a review
// item, opens an entity's graph and follows a memory's node to its page, and reads the
// server's health. Members who may not edit or manage see none of that: TestServerTabs.

// serverWalkWorld is what the walk seeds: the home server's memories it looks for.
type serverWalkWorld struct {
	kate, raid, loot, potions, banned, games, picnic *memory.Memory
	// all are every memory the server page lists at first.
	all []*memory.Memory
}

// seedServerWalk stores the home server's memories (some in #mods, some tagged), two
// disputed pairs for the review queue, a relation for the graph, and a dead job for health.
func seedServerWalk(t *testing.T, w *world, s stores) serverWalkWorld {
	t.Helper()
	var sw serverWalkWorld
	save := func(channel, content string, tags ...string) *memory.Memory {
		t.Helper()
		res, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: guildHome, Content: content,
			Tags: tags, Provenance: memory.Provenance{AuthorID: w.bob.ID, Author: "bob", ChannelID: channel}}, memory.UserActor(w.bob.ID))
		if err != nil || !res.Created {
			t.Fatalf("remember %q: %+v %v", content, res, err)
		}
		sw.all = append(sw.all, res.Memory)
		return res.Memory
	}
	sw.kate = save(chanGeneral, "Kate leads Project Falcon")
	save(chanMods, "Kate plans Project Osprey in secret")
	sw.raid = save(chanGeneral, "The raid is on Friday at nine", "raid")
	sw.loot = save(chanGeneral, "Raid loot is split evenly", "raid")
	sw.potions = save(chanGeneral, "Bring potions to the raid", "raid")
	sw.banned = save(chanMods, "Ban zephyrquasar on sight", "moderation")
	modsSunday := save(chanMods, "Mods meet on Sundays", "moderation")
	modsSaturday := save(chanMods, "Mods meet on Saturdays", "moderation")
	sw.games = save(chanGeneral, "Board games every Thursday")
	sw.picnic = save(chanGeneral, "The server picnic is in May")
	noon := save(chanGeneral, "The tournament starts at noon")
	three := save(chanGeneral, "The tournament starts at three")
	home := memory.ServerOwner(guildHome)
	dispute(t, s, home, noon, three)
	dispute(t, s, home, modsSunday, modsSaturday)
	if _, err := s.Graph.AddTriples(t.Context(), graph.Batch{Owner: home, Sources: []string{w.bob.ID},
		Triples: []graph.Triple{{Source: "Kate", Relationship: "mentors", Target: "Quillfeather", Confidence: 0.9}}}); err != nil {
		t.Fatal(err)
	}
	deadJob(t, s, "web-browser-job", guildHome, chanGeneral)
	return sw
}

// walkServer is TestBrowser's walk through a server's pages on one engine; shots says
// whether it saves the screenshots.
func walkServer(t *testing.T, eng engine, shots bool) {
	w := newWorld(t)
	s := eng.open(t)
	storePageRules(t, s)
	sw := seedServerWalk(t, w, s)
	w.fake.SetMember(guildHome, &discordgo.Member{User: w.alice, Roles: []string{roleMod, roleEditor, roleManager}})
	d := newDashboard(t, w, s)
	c := startChrome(t, d, shots)
	memoryURL := func(m *memory.Memory) string { return fmt.Sprintf("%s/memories/%d", home, m.ID) }
	listed := func(m *memory.Memory) string { return fmt.Sprintf(`ol.memories a[href="%s"]`, memoryURL(m)) }

	c.step("Servers", func(t *testing.T) {
		w.fake.AuthorizeAs(w.alice)
		c.open(t, "/")
		c.click(t, `header nav a[href="/servers"]`)
		if got := c.text(t, "h1"); got != "Servers" {
			t.Errorf("the servers page is titled %q", got)
		}
		if got := c.text(t, "ul.servers"); got != "Home · manager" {
			t.Errorf("the servers page lists %q", got)
		}
		c.shot(t, "servers")
		c.click(t, `ul.servers a[href="`+home+`"]`)
		if got := c.text(t, "h1"); got != "Home: server memory" {
			t.Errorf("the server page is titled %q", got)
		}
		if got := strings.Join(strings.Fields(c.text(t, `nav.server-tabs`)), " "); got != "Memory Review Graph Health" {
			t.Errorf("the server's tabs read %q", got)
		}
		if got := c.text(t, `nav.server-tabs a[aria-current="page"]`); got != "Memory" {
			t.Errorf("the current tab is %q", got)
		}
		if n := c.count(t, "ol.memories > li"); n != len(sw.all) {
			t.Errorf("the server page lists %d memories, want all %d", n, len(sw.all))
		}
		if n := c.count(t, `ol.memories input[type="checkbox"][name="id"]`); n != len(sw.all) {
			t.Errorf("an editor is offered %d checkboxes for %d memories", n, len(sw.all))
		}
		c.shot(t, "server")
	})
	c.step("Search", func(t *testing.T) {
		c.fill(t, "#q", "raid")
		c.click(t, `form.filters button[type="submit"]`)
		if got := c.location(t); got.Path != home || got.Query().Get("q") != "raid" {
			t.Errorf("searching went to %s", got)
		}
		assertListed(t, c, []*memory.Memory{sw.raid, sw.loot, sw.potions}, sw.all)
	})
	c.step("FilterByTag", func(t *testing.T) {
		c.replace(t, "#q", " ")
		c.fill(t, "#f-tag", "moderation")
		c.click(t, `form.filters button[type="submit"]`)
		if got := c.location(t).Query().Get("tag"); got != "moderation" {
			t.Errorf("the filter's URL has tag %q", got)
		}
		if n := c.count(t, "ol.memories > li"); n != 3 || c.count(t, listed(sw.banned)) != 1 {
			t.Errorf("the tag lists %d memories, want the 3 tagged moderation:\n%s", n, c.text(t, "main"))
		}
	})
	c.step("Explain", func(t *testing.T) {
		c.replace(t, "#f-tag", " ")
		c.fill(t, "#q", "raid")
		c.tick(t, `form.filters input[name="explain"]`)
		c.click(t, `form.filters button[type="submit"]`)
		if got := c.location(t).Query().Get("explain"); got != "1" {
			t.Errorf("the explain box set explain=%q", got)
		}
		n := c.count(t, "ol.memories > li")
		if n == 0 || c.count(t, "ol.memories p.why") != n {
			t.Errorf("%d results, %d explained", n, c.count(t, "ol.memories p.why"))
		}
		if got := c.text(t, "ol.memories p.why"); !strings.HasPrefix(got, "Why:") {
			t.Errorf("the explain line reads %q", got)
		}
		c.shot(t, "server-explain")
	})
	c.step("MemoryPage", func(t *testing.T) {
		c.click(t, listed(sw.raid))
		if got := c.location(t).Path; got != memoryURL(sw.raid) {
			t.Fatalf("the link went to %s", got)
		}
		if got := c.text(t, "article.memory p.content"); got != sw.raid.Content {
			t.Errorf("the memory page shows %q", got)
		}
		if got := c.text(t, "ol.history"); !strings.Contains(got, "saved") {
			t.Errorf("the memory's history reads %q", got)
		}
		c.click(t, `nav.server-tabs a[href="`+home+`"]`)
		if got := c.location(t); got.Path != home || got.RawQuery != "" {
			t.Errorf("the Memory tab went to %s", got)
		}
	})
	walkBulk(t, c, sw, listed)
	walkReview(t, c, s)
	c.step("Graph", func(t *testing.T) {
		c.click(t, `nav.server-tabs a[href="`+home+`/graph"]`)
		c.fill(t, "#entity", "Kate")
		c.click(t, `form.search button[type="submit"]`)
		if n := c.count(t, "figure.graph svg"); n != 1 {
			t.Fatalf("the graph page draws %d SVGs", n)
		}
		node := fmt.Sprintf(`figure.graph svg a[href="%s"]`, memoryURL(sw.kate))
		if c.count(t, "figure.graph svg a") < 3 || c.count(t, node) != 1 {
			t.Errorf("the drawing links %d nodes, the memory's %d times", c.count(t, "figure.graph svg a"), c.count(t, node))
		}
		if got := c.text(t, "ul.relations"); !strings.Contains(got, "mentors") {
			t.Errorf("the relations read %q", got)
		}
		c.shot(t, "graph")
		c.click(t, node)
		if got := c.location(t).Path; got != memoryURL(sw.kate) {
			t.Fatalf("the memory's node went to %s", got)
		}
		if got := c.text(t, "article.memory p.content"); got != sw.kate.Content {
			t.Errorf("the node's page shows %q", got)
		}
	})
	c.step("Health", func(t *testing.T) {
		c.click(t, `nav.server-tabs a[href="`+home+`/health"]`)
		if got := c.text(t, "section.score > p"); !strings.Contains(got, "/100") {
			t.Errorf("the score reads %q", got)
		}
		if got := c.text(t, "section.jobs"); !strings.Contains(got, "web-browser-job") {
			t.Errorf("the jobs read %q", got)
		}
		for _, action := range []string{"requeue", "repair"} {
			if c.count(t, fmt.Sprintf(`form[action="%s/health/%s"] button`, home, action)) != 1 {
				t.Errorf("the health page has no %s button", action)
			}
		}
		c.shot(t, "health")
	})
}

// walkBulk checks two memories, previews forgetting them, applies it, sees them gone from
// the list, and undoes the batch.
func walkBulk(t *testing.T, c *chrome, sw serverWalkWorld, listed func(*memory.Memory) string) {
	t.Helper()
	two := []*memory.Memory{sw.games, sw.picnic}
	c.step("BulkPreview", func(t *testing.T) {
		for _, m := range two {
			c.tick(t, fmt.Sprintf(`ol.memories input[name="id"][value="%d"]`, m.ID))
		}
		c.choose(t, "#b-action", "forget")
		c.click(t, `form.bulk button[name="scope"][value="selected"]`)
		if got := c.location(t).Path; got != home+"/bulk/preview" {
			t.Fatalf("the preview is at %s", got)
		}
		if n := c.count(t, "table.changes tbody tr"); n != 2 {
			t.Errorf("the preview shows %d rows, want 2", n)
		}
		rows := c.text(t, "table.changes")
		for _, m := range two {
			if !strings.Contains(rows, m.Content) {
				t.Errorf("the preview misses %q:\n%s", m.Content, rows)
			}
		}
		c.shot(t, "bulk-preview")
	})
	c.step("BulkApply", func(t *testing.T) {
		c.click(t, `form[action="`+home+`/bulk/apply"] button`)
		if got := c.text(t, "main"); !strings.Contains(got, "2 memories were changed") {
			t.Errorf("the result reads:\n%s", got)
		}
		c.shot(t, "bulk-result")
		list := c.peek(t, home, "main")
		for _, m := range two {
			if strings.Contains(list, m.Content) {
				t.Errorf("%q is still listed after the bulk forget", m.Content)
			}
		}
		if !strings.Contains(list, sw.raid.Content) {
			t.Errorf("the list lost a memory the batch did not name:\n%s", list)
		}
	})
	c.step("BulkUndo", func(t *testing.T) {
		c.click(t, `form[action="`+home+`/bulk/undo"] button`)
		if got := c.text(t, "main"); !strings.Contains(got, "2 memories were put back") {
			t.Errorf("the undo reads:\n%s", got)
		}
		c.click(t, `main p a[href="`+home+`"]`)
		for _, m := range two {
			if c.count(t, listed(m)) != 1 {
				t.Errorf("%q did not come back", m.Content)
			}
		}
	})
}

// walkReview opens the review queue and keeps one item: the queue shrinks by one.
func walkReview(t *testing.T, c *chrome, s stores) {
	t.Helper()
	c.step("Review", func(t *testing.T) {
		c.click(t, `nav.server-tabs a[href="`+home+`/review"]`)
		if got := c.text(t, "p.summary"); got != "2 items wait for review." {
			t.Errorf("the queue says %q", got)
		}
		if n := c.count(t, "li.review-item"); n != 2 {
			t.Fatalf("the queue lists %d items", n)
		}
		c.shot(t, "review")
		c.click(t, `li.review-item button[name="choice"][value="keep"]`)
		if got := c.location(t).Path; got != home+"/review" {
			t.Fatalf("keeping ended at %s", got)
		}
		if n := c.count(t, "li.review-item"); n != 1 {
			t.Errorf("after Keep the queue lists %d items, want 1", n)
		}
		if got := c.text(t, "p.summary"); got != "1 item waits for review." {
			t.Errorf("after Keep the queue says %q", got)
		}
		if got := c.text(t, `p.note[role="status"]`); got == "" {
			t.Error("the page does not say what Keep did")
		}
	})
}

// assertListed fails t unless the server page lists exactly want of all.
func assertListed(t *testing.T, c *chrome, want, all []*memory.Memory) {
	t.Helper()
	main := c.text(t, "ol.memories")
	for _, m := range all {
		shown := strings.Contains(main, m.Content)
		wanted := false
		for _, w := range want {
			wanted = wanted || w.ID == m.ID
		}
		if shown != wanted {
			t.Errorf("%q listed: %v, want %v", m.Content, shown, wanted)
		}
	}
}
