package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
	"github.com/kioku-bot/kioku/memory/recall"
)

// Graph boost constants (docs/recall.md, "Graph boost").
const (
	// DefaultGraphDeadline bounds the graph queries of one recall: past it recall ranks
	// without the graph rather than wait.
	DefaultGraphDeadline = 20 * time.Millisecond
	// graphExtra is the most memories the graph adds that neither leg found.
	graphExtra = 20
	// graphMaxHop is the most relations followed from the query's entities.
	graphMaxHop = 64
)

// graphHits is what the knowledge graph says about one query's candidates.
type graphHits struct {
	link     map[int64]recall.GraphLink
	mentions map[int64][]int
	// extra are the memories only the graph found, to be loaded with the search's scope,
	// filters and audience like every candidate.
	extra []int64
}

// annotate fills the candidates' graph fields. A memory the graph added is a candidate of
// its own, not a neighbour smoothing may drop. A nil g leaves them alone.
func (g *graphHits) annotate(cands []recall.Candidate) {
	if g == nil {
		return
	}
	for i := range cands {
		c := &cands[i]
		if l, ok := g.link[c.ID]; ok {
			c.Graph = l
			if l != recall.GraphNone && c.Neighbour && c.Keyword == 0 && c.Vector <= 0 {
				c.Neighbour = false
			}
		}
		c.EntityMentions = g.mentions[c.ID]
	}
}

// graphLookup links the query text to the entities of the searched scopes (the linker the
// write path uses, matched on canonical names and aliases), follows one hop of relations
// and returns which candidates (ids) mention them, up to graphExtra linked memories the
// legs missed (inside where: scope, filters and audience), and, for the hub stage, the
// mention counts of every candidate's entities. It runs under GraphDeadline; any error or a
// missed deadline returns nil, and recall ranks as if the graph did not exist.
func (s searcher) graphLookup(ctx context.Context, text string, vis []memory.Visible, ids []int64, where string, args []any) *graphHits {
	boost, hub := s.db.Stages.GraphBoost > 0, s.db.Dampen.Hub
	if !boost && !hub {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.db.GraphDeadline)
	defer cancel()
	g := &graphHits{link: map[int64]recall.GraphLink{}, mentions: map[int64][]int{}}
	if boost {
		if err := s.db.graphLinks(ctx, g, text, vis, ids, where, args); err != nil {
			slog.Debug("recall without graph boost", slog.Any("err", err))
			return nil
		}
	}
	if hub {
		all := append(append([]int64(nil), ids...), g.extra...)
		if err := s.graphMentions(ctx, g, all); err != nil {
			slog.Debug("recall without hub dampening", slog.Any("err", err))
			return nil
		}
	}
	return g
}

// graphLinks fills g.link and g.extra.
func (d *db) graphLinks(ctx context.Context, g *graphHits, text string, vis []memory.Visible, ids []int64, where string, args []any) error {
	var aliases []any
	seen := map[string]bool{}
	add := func(a string) {
		if a != "" && !seen[a] {
			seen[a] = true
			aliases = append(aliases, a)
		}
	}
	for _, e := range graph.Link(text, graph.Context{}) {
		for _, a := range e.Aliases() {
			add(a)
		}
		if e.Kind == graph.KindPerson {
			add(graph.Normalize(graph.CanonicalPerson(e.Name)))
		}
	}
	if len(aliases) == 0 {
		return nil
	}
	scopes := make([]any, 0, len(vis))
	for _, v := range vis {
		scopes = append(scopes, v.Owner.Key())
	}
	direct := map[int64]bool{}
	if err := queryEach(ctx, d.read, `SELECT DISTINCT entity_id FROM entity_aliases WHERE scope_key IN (`+placeholders(len(scopes))+
		`) AND alias IN (`+placeholders(len(aliases))+`)`, append(append([]any(nil), scopes...), aliases...), func(rows *sql.Rows) error {
		var id int64
		err := rows.Scan(&id)
		direct[id] = true
		return err
	}); err != nil {
		return fmt.Errorf("couldn't look up the query's entities: %w", err)
	}
	if len(direct) == 0 {
		return nil
	}
	ents := make([]any, 0, len(direct))
	for id := range direct {
		ents = append(ents, id)
	}
	hop := map[int64]bool{}
	qargs := append(append(append(append([]any(nil), scopes...), ents...), ents...), graphMaxHop)
	if err := queryEach(ctx, d.read, `SELECT source_id, target_id FROM relations WHERE scope_key IN (`+placeholders(len(scopes))+
		`) AND (source_id IN (`+placeholders(len(ents))+`) OR target_id IN (`+placeholders(len(ents))+`)) ORDER BY mentions DESC, id LIMIT ?`,
		qargs, func(rows *sql.Rows) error {
			var a, b int64
			err := rows.Scan(&a, &b)
			for _, id := range []int64{a, b} {
				if !direct[id] {
					hop[id] = true
				}
			}
			return err
		}); err != nil {
		return fmt.Errorf("couldn't follow the query's relations: %w", err)
	}
	all := append([]any(nil), ents...)
	for id := range hop {
		all = append(all, id)
	}
	note := func(mid, eid int64) {
		l := recall.GraphHop
		if direct[eid] {
			l = recall.GraphDirect
		}
		g.link[mid] = max(g.link[mid], l)
	}
	if len(ids) > 0 {
		qargs := make([]any, 0, len(ids)+len(all))
		for _, id := range ids {
			qargs = append(qargs, id)
		}
		qargs = append(qargs, all...)
		if err := queryEach(ctx, d.read, `SELECT memory_id, entity_id FROM memory_entities WHERE memory_id IN (`+placeholders(len(ids))+
			`) AND entity_id IN (`+placeholders(len(all))+`)`, qargs, func(rows *sql.Rows) error {
			var mid, eid int64
			err := rows.Scan(&mid, &eid)
			note(mid, eid)
			return err
		}); err != nil {
			return fmt.Errorf("couldn't read the candidates' entities: %w", err)
		}
	}
	// The memories the legs missed: scope, filters and audience apply as in every recall query.
	qargs = append(append([]any(nil), all...), args...)
	notIn := ""
	if len(ids) > 0 {
		notIn = ` AND me.memory_id NOT IN (` + placeholders(len(ids)) + `)`
		for _, id := range ids {
			qargs = append(qargs, id)
		}
	}
	qargs = append(qargs, graphExtra)
	if err := queryEach(ctx, d.read, `SELECT me.memory_id, me.entity_id FROM memory_entities me JOIN memories m ON m.id = me.memory_id
		WHERE me.entity_id IN (`+placeholders(len(all))+`) AND m.deleted_at IS NULL AND `+where+notIn+`
		ORDER BY m.id DESC LIMIT ?`, qargs, func(rows *sql.Rows) error {
		var mid, eid int64
		err := rows.Scan(&mid, &eid)
		if _, ok := g.link[mid]; !ok {
			g.extra = append(g.extra, mid)
		}
		note(mid, eid)
		return err
	}); err != nil {
		return fmt.Errorf("couldn't read the query entities' memories: %w", err)
	}
	return nil
}

// graphMentions fills g.mentions: for each of ids, the mention counts of its entities.
func (s searcher) graphMentions(ctx context.Context, g *graphHits, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	qargs := make([]any, len(ids))
	for i, id := range ids {
		qargs[i] = id
	}
	return queryEach(ctx, s.db.read, `SELECT me.memory_id, e.mentions FROM memory_entities me JOIN entities e ON e.id = me.entity_id
		WHERE me.memory_id IN (`+placeholders(len(ids))+`)`, qargs, func(rows *sql.Rows) error {
		var (
			mid int64
			n   int
		)
		err := rows.Scan(&mid, &n)
		g.mentions[mid] = append(g.mentions[mid], n)
		return err
	})
}
