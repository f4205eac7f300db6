package web

import "net/url"

// The tab bar of a server's pages: Memory for every member who may see the server, Review
// for its editors, Graph for its members, Health for its managers. A tab shows only when the
// member may open its page and this dashboard serves it (review, graph and health need
// their parts in Deps), so the bar never offers a link that answers the missing page.

// serverTab names one of a server's pages.
type serverTab int

const (
	tabMemory serverTab = iota
	tabReview
	tabGraph
	tabHealth
)

// tabBar knows which of a server's optional pages the dashboard serves.
type tabBar struct {
	review, graph, health bool
}

// serverTabs is what the shared "servertabs" template draws; page bodies embed it.
type serverTabs struct {
	Tabs []tabLink
}

// tabLink is one tab: its label's i18n key, its address, and whether it is the page shown.
type tabLink struct {
	Key, URL string
	Current  bool
}

// tabs are the tabs srv's member may open, current marked.
func (b tabBar) tabs(srv server, current serverTab) serverTabs {
	base := "/servers/" + url.PathEscape(srv.GuildID)
	all := []struct {
		tab   serverTab
		shown bool
		key   string
		url   string
	}{
		{tabMemory, true, "web.tabs.memory", base},
		{tabReview, b.review && srv.Editor, "web.tabs.review", base + "/review"},
		{tabGraph, b.graph, "web.tabs.graph", base + "/graph"},
		{tabHealth, b.health && srv.Manager, "web.tabs.health", base + "/health"},
	}
	var out serverTabs
	for _, t := range all {
		if t.shown {
			out.Tabs = append(out.Tabs, tabLink{Key: t.key, URL: t.url, Current: t.tab == current})
		}
	}
	return out
}

// wireTabs gives every server page the tab bar of the pages this dashboard serves, and
// "My memory" its link to the member's own review queue when there is one.
func (s *Server) wireTabs() {
	bar := tabBar{review: s.review != nil, graph: s.graph != nil, health: s.health != nil}
	s.srv.tabs = bar
	s.me.reviewing = bar.review
	if s.review != nil {
		s.review.tabs = bar
	}
	if s.graph != nil {
		s.graph.tabs = bar
	}
	if s.health != nil {
		s.health.tabs = bar
	}
}
