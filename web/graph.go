package web

import (
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// The graph page: one entity of a server's knowledge graph with what surrounds it, drawn as
// SVG on the server (no script), each node a link to a memory's page or to another entity's
// graph. The graph's entities, aliases and relations record no channel, so the page shows
// only what the memories the member may see support: the entity only when one of those
// mentions it, the entities mentioned with it counted over those memories alone, and its
// aliases and relations only to a member who may see every memory of the server. An entity
// only hidden memories mention reads exactly as one that does not exist.

// graphPage serves a server's graph around an entity.
type graphPage struct {
	guildGate
	graph    GraphReader
	finder   Finder
	memories Memories
	log      *slog.Logger
	tabs     tabBar
}

// Bounds of one drawing: enough to see what an entity goes with, few enough to read.
const (
	graphEntities  = 10
	graphMemories  = 8
	maxEntityRunes = 100
	graphLabel     = 24
)

// newGraphPage returns the graph page, or nil when deps lack the graph.
func newGraphPage(deps Deps, view *views, cfg Config) *graphPage {
	if deps.Graph == nil {
		return nil
	}
	return &graphPage{guildGate: guildGate{view: view}, graph: deps.Graph, finder: deps.Finder, memories: deps.Memories, log: cfg.Logger}
}

// routes adds the graph page to mux; without the graph there is none.
func (gp *graphPage) routes(mux *http.ServeMux, a *signIn) {
	if gp == nil {
		return
	}
	mux.Handle("GET /servers/{guild}/graph", a.signedIn(gp.page))
}

// graphBody is the graph page's.
type graphBody struct {
	serverTabs
	Base, Query string
	// Found is set when the entity is shown; NotFound when the query named none the member
	// may see (the same words for an entity that is not there and one only hidden memories
	// mention).
	Found, NotFound bool
	Entity          string
	Aliases         []string
	Relations       []relationView
	With            []graphNode
	Memories        []graphMemory
	// Partial is set when aliases and relations are left out because some of the server's
	// memories are hidden from the member.
	Partial bool
	Drawing drawing
}

// relationView is one relation of the entity, in its direction.
type relationView struct {
	Source, Type, Target   string
	SourceLink, TargetLink string
}

// graphNode is an entity mentioned with the centre and in how many visible memories.
type graphNode struct {
	Name, Link string
	Count      int
}

// graphMemory is a visible memory that mentions the entity.
type graphMemory struct {
	ID      int64
	Link    string
	Content string
}

// page shows the neighbourhood of ?entity= in the path's server.
func (gp *graphPage) page(w http.ResponseWriter, r *http.Request, v *visit) {
	srv, ok := gp.open(w, r, v, needMember)
	if !ok {
		return
	}
	base := "/servers/" + srv.GuildID
	body := graphBody{Base: base + "/graph", Query: strings.TrimSpace(r.URL.Query().Get("entity")), serverTabs: gp.tabs.tabs(srv, tabGraph)}
	if utf8.RuneCountInString(body.Query) > maxEntityRunes {
		body.Query = string([]rune(body.Query)[:maxEntityRunes])
	}
	if body.Query == "" {
		gp.view.render(w, r, v, http.StatusOK, "graph", "web.graph.title", body, srv.Name)
		return
	}
	if err := gp.fill(r, srv, &body); err != nil {
		gp.view.internal(w, r, v, "couldn't read a server's graph", err)
		return
	}
	gp.view.render(w, r, v, http.StatusOK, "graph", "web.graph.title", body, srv.Name)
}

// fill reads the entity body.Query names in srv's graph and what the member may see of it.
func (gp *graphPage) fill(r *http.Request, srv server, body *graphBody) error {
	ctx, owner, aud := r.Context(), memory.ServerOwner(srv.GuildID), channelAudience(srv)
	nb, err := gp.graph.Neighbourhood(ctx, owner, body.Query)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		body.NotFound = true
		return nil
	}
	if err != nil {
		return err
	}
	var contents []string
	for _, id := range nb.Memories {
		m, err := gp.finder.Lookup(ctx, owner, id)
		if memory.ErrorCode(err) == memory.ENOTFOUND {
			continue
		}
		if err != nil {
			return err
		}
		if m.Deleted() || !aud.Allows(m) {
			continue
		}
		contents = append(contents, graph.Normalize(m.Content))
		if len(body.Memories) < graphMemories {
			body.Memories = append(body.Memories, graphMemory{ID: m.ID, Link: body.memoryLink(m.ID), Content: m.Content})
		}
	}
	if len(contents) == 0 {
		body.NotFound = true // only memories the member may not see mention it
		return nil
	}
	body.Found, body.Entity = true, nb.Entity.Name
	with, err := gp.graph.MentionedWith(ctx, memory.Visible{Owner: owner}, nb.Entity.ID, aud, graphEntities)
	if err != nil {
		return err
	}
	for _, c := range with {
		body.With = append(body.With, graphNode{Name: c.Node.Name, Link: body.entityLink(c.Node.Name), Count: c.Count})
	}
	whole, err := gp.seesWholeServer(r, owner, aud)
	if err != nil {
		return err
	}
	body.Partial = !whole
	for _, a := range nb.Aliases {
		if a != graph.Normalize(nb.Entity.Name) && (whole || mentionedIn(contents, a)) {
			body.Aliases = append(body.Aliases, a)
		}
	}
	if whole {
		for _, e := range nb.Relations {
			body.Relations = append(body.Relations, relationView{Source: e.Source.Name, Type: e.Type, Target: e.Target.Name,
				SourceLink: body.entityLink(e.Source.Name), TargetLink: body.entityLink(e.Target.Name)})
		}
	}
	body.Drawing = draw(body)
	return nil
}

// mentionedIn reports whether alias (normalized) appears in one of the normalized contents:
// an alias a visible memory says tells the member nothing new.
func mentionedIn(contents []string, alias string) bool {
	for _, c := range contents {
		if strings.Contains(c, alias) {
			return true
		}
	}
	return false
}

// shelvedLifecycles are the listings that together cover every live memory: the default
// one leaves the superseded and the archived out.
var shelvedLifecycles = []memory.Lifecycle{"", memory.LifecycleSuperseded, memory.LifecycleArchived}

// seesWholeServer reports whether aud allows every live memory of owner's scope: only then
// may the graph's unrecorded-channel parts (aliases, relations) be shown whole.
func (gp *graphPage) seesWholeServer(r *http.Request, owner memory.Owner, aud *memory.Audience) (bool, error) {
	for _, lc := range shelvedLifecycles {
		_, seen, err := gp.memories.List(r.Context(), owner, memory.ListOptions{Limit: 1, Audience: aud, Lifecycle: lc})
		if err != nil {
			return false, err
		}
		_, all, err := gp.memories.List(r.Context(), owner, memory.ListOptions{Limit: 1, Lifecycle: lc})
		if err != nil {
			return false, err
		}
		if seen != all {
			return false, nil
		}
	}
	return true, nil
}

// entityLink is the graph page of the entity name.
func (b *graphBody) entityLink(name string) string {
	return b.Base + "?entity=" + url.QueryEscape(name)
}

// memoryLink is the page of the server's memory id.
func (b *graphBody) memoryLink(id int64) string {
	return strings.TrimSuffix(b.Base, "/graph") + "/memories/" + strconv.FormatInt(id, 10)
}

// label shortens a node's name to what fits beside it.
func label(s string) string {
	if utf8.RuneCountInString(s) <= graphLabel {
		return s
	}
	return string([]rune(s)[:graphLabel-1]) + "…"
}
