package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// graphWorld saves the home server's memories about Kate: one in #general, one in #mods
// (which alone names Project Osprey), and a relation the extraction found.
func graphWorld(t testing.TB, s stores, author string) (general, mods *memory.Memory) {
	t.Helper()
	general = rememberServer(t, s, author, chanGeneral, "Kate leads Project Falcon")
	mods = rememberServer(t, s, author, chanMods, "Kate plans Project Osprey in secret")
	if _, err := s.Graph.AddTriples(t.Context(), graph.Batch{Owner: memory.ServerOwner(guildHome), Sources: []string{author},
		Triples: []graph.Triple{{Source: "Kate", Relationship: "mentors", Target: "Quillfeather", Confidence: 0.9}}}); err != nil {
		t.Fatal(err)
	}
	return general, mods
}

// TestGraphPage: the graph around an entity is drawn as SVG with links to the memories the
// member may see and to the entities mentioned with it; a memory of a hidden channel is
// neither drawn, linked nor listed, an entity only it mentions reads as one that does not
// exist, and the relations (which record no channel) show only to a member who sees every
// channel's memories.
func TestGraphPage(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			storePageRules(t, s)
			general, mods := graphWorld(t, s, w.bob.ID)
			d := newDashboard(t, w, s)
			base := "/servers/" + guildHome + "/graph"

			member := signInWith(d, w.alice)
			page := member.get(base + "?entity=Kate")
			if page.StatusCode != http.StatusOK || !strings.Contains(page.body, "<svg") {
				t.Fatalf("graph page: %d\n%s", page.StatusCode, page.body)
			}
			for _, want := range []string{
				fmt.Sprintf(`href="/servers/%s/memories/%d"`, guildHome, general.ID), general.Content,
				`href="` + base + `?entity=Falcon"`,
			} {
				if !strings.Contains(page.body, want) {
					t.Errorf("the graph misses %q", want)
				}
			}
			for _, leak := range []string{fmt.Sprintf("/memories/%d", mods.ID), mods.Content, "Osprey", "mentors", "Quillfeather"} {
				if strings.Contains(page.body, leak) {
					t.Errorf("the graph of a member without #mods shows %q", leak)
				}
			}
			hidden := member.get(base + "?entity=Osprey").body
			nothing := member.get(base + "?entity=Zzyzx").body
			if strings.ReplaceAll(hidden, "Osprey", "X") != strings.ReplaceAll(nothing, "Zzyzx", "X") {
				t.Errorf("an entity only #mods mentions reads unlike a missing one:\n%s\n---\n%s", hidden, nothing)
			}

			mod := signInWith(d, w.alice, roleMod)
			page = mod.get(base + "?entity=Kate")
			for _, want := range []string{mods.Content, "Osprey", "mentors", "Quillfeather", fmt.Sprintf("/memories/%d", mods.ID)} {
				if !strings.Contains(page.body, want) {
					t.Errorf("the graph of a member who sees every channel misses %q", want)
				}
			}
			if got := mod.get("/servers/" + guildOther + "/graph?entity=Kate"); got.StatusCode != http.StatusNotFound {
				t.Errorf("another server's graph: %d", got.StatusCode)
			}
		})
	}
}

// TestGraphLayout: the same graph draws the same, and nodes carry no inline style (the
// content security policy forbids it) and no script.
func TestGraphLayout(t *testing.T) {
	w := newWorld(t)
	eng, _ := sqliteEngine(t)
	s := eng.open(t)
	storePageRules(t, s)
	graphWorld(t, s, w.bob.ID)
	d := newDashboard(t, w, s)
	b := signInWith(d, w.alice, roleMod)
	first, second := b.get("/servers/"+guildHome+"/graph?entity=Kate").body, b.get("/servers/"+guildHome+"/graph?entity=Kate").body
	svg := func(p string) string { return p[strings.Index(p, "<svg"):strings.Index(p, "</svg>")] }
	if svg(first) != svg(second) {
		t.Error("the same graph drew differently")
	}
	for _, bad := range []string{"style=", "<script", " on"} {
		if strings.Contains(svg(first), bad) {
			t.Errorf("the drawing carries %q", bad)
		}
	}
}

// TestGraphEscapes: markup in memories and in the name asked for is inert: shown as text in
// the drawing, the lists and the search box.
func TestGraphEscapes(t *testing.T) {
	w := newWorld(t)
	eng, _ := sqliteEngine(t)
	s := eng.open(t)
	storePageRules(t, s)
	rememberServer(t, s, w.bob.ID, chanGeneral, "Kate said <script>alert(1)</script> at Project Falcon")
	d := newDashboard(t, w, s)
	b := signInWith(d, w.alice)
	page := b.get("/servers/" + guildHome + "/graph?entity=Kate").body
	if strings.Contains(page, "<script>alert(1)</script>") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the memory's markup is not inert:\n%s", page)
	}
	name := `"><svg onload=alert(1)>`
	page = b.get("/servers/" + guildHome + "/graph?entity=" + url.QueryEscape(name)).body
	if strings.Contains(page, "<svg onload") || strings.Contains(page, `"><svg`) {
		t.Errorf("the name asked for is not inert:\n%s", page)
	}
}
