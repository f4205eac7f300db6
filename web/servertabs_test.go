package web_test

import (
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var (
	tabBarPattern = regexp.MustCompile(`(?s)<nav class="tabs server-tabs"[^>]*>(.*?)</nav>`)
	tabPattern    = regexp.MustCompile(`<a href="([^"]+)"( aria-current="page")?>([^<]+)</a>`)
)

// tabsOf returns a page's server tabs as "label path" lines, the current one marked "*".
func tabsOf(page string) []string {
	bar := tabBarPattern.FindStringSubmatch(page)
	if bar == nil {
		return nil
	}
	var out []string
	for _, m := range tabPattern.FindAllStringSubmatch(bar[1], -1) {
		line := m[3] + " " + m[1]
		if m[2] != "" {
			line = "*" + line
		}
		out = append(out, line)
	}
	return out
}

// TestServerTabs: each server page carries the tab bar of the pages its member may open,
// the page shown marked current: a manager and editor sees Memory, Review, Graph and Health;
// an editor no Health; a member who may do neither only Memory and Graph, and no
// checkboxes for a bulk action. "My memory" links the member's own review queue.
func TestServerTabs(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			storePageRules(t, s)
			rememberServer(t, s, w.alice.ID, chanGeneral, "The raid is on Friday at nine")
			d := newDashboard(t, w, s)
			carol := w.fake.NewUser("carol")
			admin := signInWith(d, w.alice, roleMod, roleEditor, roleManager)
			editor := signInWith(d, carol, roleEditor)
			member := signInWith(d, w.bob)

			const (
				memoryTab = "Memory " + home
				reviewTab = "Review " + home + "/review"
				graphTab  = "Graph " + home + "/graph"
				healthTab = "Health " + home + "/health"
			)
			cases := []struct {
				who  string
				b    *browser
				path string
				want []string
			}{
				{"manager", admin, home, []string{"*" + memoryTab, reviewTab, graphTab, healthTab}},
				{"manager", admin, home + "/review", []string{memoryTab, "*" + reviewTab, graphTab, healthTab}},
				{"manager", admin, home + "/graph", []string{memoryTab, reviewTab, "*" + graphTab, healthTab}},
				{"manager", admin, home + "/health", []string{memoryTab, reviewTab, graphTab, "*" + healthTab}},
				{"editor", editor, home, []string{"*" + memoryTab, reviewTab, graphTab}},
				{"editor", editor, home + "/review", []string{memoryTab, "*" + reviewTab, graphTab}},
				{"member", member, home, []string{"*" + memoryTab, graphTab}},
				{"member", member, home + "/graph", []string{memoryTab, "*" + graphTab}},
			}
			for _, c := range cases {
				page := c.b.get(c.path)
				if page.StatusCode != http.StatusOK {
					t.Fatalf("%s opening %s: %d", c.who, c.path, page.StatusCode)
				}
				if got := tabsOf(page.body); !reflect.DeepEqual(got, c.want) {
					t.Errorf("%s's tabs on %s: %q, want %q", c.who, c.path, got, c.want)
				}
			}

			// A memory's page is under the Memory tab.
			id := firstMemoryLink(t, admin.get(home).body)
			if got := tabsOf(admin.get(id).body); len(got) != 4 || got[0] != "*"+memoryTab {
				t.Errorf("the memory page's tabs: %q", got)
			}

			// The member who may not edit has nothing to check, nor pages to reach by URL.
			if page := member.get(home); strings.Contains(page.body, `type="checkbox" name="id"`) || strings.Contains(page.body, "/bulk/preview") {
				t.Errorf("a member who may not edit is offered a bulk action:\n%s", page.body)
			}
			for _, path := range []string{home + "/review", home + "/health"} {
				if got := member.get(path); got.StatusCode != http.StatusNotFound {
					t.Errorf("%s for a member who may not open it: %d", path, got.StatusCode)
				}
			}
			if got := editor.get(home + "/health"); got.StatusCode != http.StatusNotFound {
				t.Errorf("health for an editor who does not manage: %d", got.StatusCode)
			}

			// "My memory" has no server tabs, and links the member's own review queue.
			me := member.get("/me")
			if tabsOf(me.body) != nil || !strings.Contains(me.body, `<a href="/me/review">Waiting for review</a>`) {
				t.Errorf("/me's tabs:\n%s", me.body)
			}
			if page := member.get("/me/review"); page.StatusCode != http.StatusOK || tabsOf(page.body) != nil {
				t.Errorf("the personal review queue: %d, tabs %q", page.StatusCode, tabsOf(page.body))
			}
		})
	}
}

var memoryLinkPattern = regexp.MustCompile(`href="(/servers/[0-9]+/memories/[0-9]+)"`)

// firstMemoryLink is the first memory page a server page links.
func firstMemoryLink(t *testing.T, page string) string {
	t.Helper()
	m := memoryLinkPattern.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no memory link on the page:\n%s", page)
	}
	return m[1]
}
