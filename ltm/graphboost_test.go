package ltm

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// graphStore holds William (the canonical name of "Bill") and Valheim in two servers and a
// stranger's personal memory, with the relation William plays Valheim in g1.
func graphStore(t *testing.T) (*Store, map[string]int64) {
	t.Helper()
	ctx := t.Context()
	s, err := OpenTestStore(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// The graph's answers are what these tests check, not how fast a loaded machine gives
	// them; the deadline test sets its own.
	s.GraphDeadline = time.Minute
	ids := map[string]int64{}
	for name, m := range map[string]memory.Memory{
		"g1-william": {Scope: memory.ScopeServer, GuildID: "g1", Content: "William runs the Minecraft server"},
		"g1-valheim": {Scope: memory.ScopeServer, GuildID: "g1", Content: "Valheim night moved to Friday"},
		"g1-other":   {Scope: memory.ScopeServer, GuildID: "g1", Content: "the server rules are pinned in the lobby"},
		"g2-william": {Scope: memory.ScopeServer, GuildID: "g2", Content: "William runs the Terraria server"},
		"g2-valheim": {Scope: memory.ScopeServer, GuildID: "g2", Content: "Valheim night is on Saturday"},
		"u2-william": {Scope: memory.ScopePersonal, UserID: "u2", GuildID: "g1", Content: "William is my brother"},
	} {
		res, err := s.Memories.Remember(ctx, m, memory.UserActor("1"))
		if err != nil {
			t.Fatalf("remember %s: %v", name, err)
		}
		ids[name] = res.Memory.ID
	}
	for _, g := range []string{"g1", "g2"} {
		if _, err := s.Graph.AddTriples(ctx, graph.Batch{Owner: memory.ServerOwner(g), Sources: []string{"u1"},
			Triples: []graph.Triple{{Source: "William", Relationship: "plays", Target: "Valheim", Confidence: 0.9}}}); err != nil {
			t.Fatal(err)
		}
	}
	return s, ids
}

func withGraphBoost(t *testing.T, s *Store, boost float64) {
	t.Helper()
	s.Stages.GraphBoost, s.Stages.GraphHop = boost, 0.5
}

func resultIDs(t *testing.T, s *Store, text string) ([]int64, []float64) {
	t.Helper()
	res, err := s.Recall.Search(t.Context(), memory.SearchQuery{Text: text, Owners: []memory.Owner{memory.ServerOwner("g1"), memory.PersonalOwner("u1")}, KeywordOnly: true})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	var ids []int64
	var scores []float64
	for _, r := range res {
		ids = append(ids, r.Memory.ID)
		scores = append(scores, r.Score)
	}
	return ids, scores
}

func TestGraphBoostFindsLinkedMemoriesInScopeOnly(t *testing.T) {
	s, ids := graphStore(t)
	if got, _ := resultIDs(t, s, "what does Bill do"); len(got) != 0 {
		t.Fatalf("without the boost the keyword leg should find nothing: %v", got)
	}
	withGraphBoost(t, s, 0.3)
	got, _ := resultIDs(t, s, "what does Bill do")
	if !slices.Contains(got, ids["g1-william"]) || !slices.Contains(got, ids["g1-valheim"]) {
		t.Errorf("got %v, want g1's William memory %d and its one-hop Valheim memory %d", got, ids["g1-william"], ids["g1-valheim"])
	}
	for _, name := range []string{"g2-william", "g2-valheim", "u2-william", "g1-other"} {
		if slices.Contains(got, ids[name]) {
			t.Errorf("%s (%d) recalled through the graph: %v", name, ids[name], got)
		}
	}
	if len(got) > 0 && got[0] != ids["g1-william"] {
		t.Errorf("the memory naming the query's entity should rank above its neighbour's: %v", got)
	}
}

func TestGraphBoostDeadlineFallsBack(t *testing.T) {
	s, _ := graphStore(t)
	query := "who runs the server, Bill?"
	plainIDs, plainScores := resultIDs(t, s, query)
	if len(plainIDs) == 0 {
		t.Fatal("the keyword leg should match the server memories")
	}
	withGraphBoost(t, s, 0.3)
	s.GraphDeadline = 0 // expired before the first graph query
	gotIDs, gotScores := resultIDs(t, s, query)
	if !slices.Equal(gotIDs, plainIDs) || !slices.Equal(gotScores, plainScores) {
		t.Errorf("past the deadline: %v %v, want plain recall %v %v", gotIDs, gotScores, plainIDs, plainScores)
	}
	if g := s.Recall.searcher.graphLookup(t.Context(), query, []memory.Visible{{Owner: memory.ServerOwner("g1")}}, nil, "1", nil); g != nil {
		t.Errorf("an expired lookup returned %+v", g)
	}
}

func TestGraphBoostSurvivesBrokenGraph(t *testing.T) {
	s, ids := graphStore(t)
	query := "who runs the server, Bill?"
	plainIDs, plainScores := resultIDs(t, s, query)
	if err := s.withWriteTx(t.Context(), func(tx *txn) error {
		_, err := tx.ExecContext(context.Background(), `ALTER TABLE relations RENAME TO relations_gone`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	withGraphBoost(t, s, 0.3)
	gotIDs, gotScores := resultIDs(t, s, query)
	if !slices.Equal(gotIDs, plainIDs) || !slices.Equal(gotScores, plainScores) {
		t.Errorf("with the relations table gone: %v %v, want plain recall %v %v", gotIDs, gotScores, plainIDs, plainScores)
	}
	if !slices.Contains(gotIDs, ids["g1-william"]) {
		t.Errorf("recall lost its keyword match: %v", gotIDs)
	}
}

func TestGraphLookupFillsEntityMentions(t *testing.T) {
	s, ids := graphStore(t)
	s.db.Dampen.Hub = true
	t.Cleanup(func() { s.db.Dampen.Hub = false })
	g := s.Recall.searcher.graphLookup(t.Context(), "server", []memory.Visible{{Owner: memory.ServerOwner("g1")}},
		[]int64{ids["g1-william"], ids["g1-other"]}, "m.scope_key = ?", []any{"g:g1"})
	if g == nil {
		t.Fatal("no graph hits")
	}
	if len(g.mentions[ids["g1-william"]]) == 0 {
		t.Errorf("no mention counts for a linked memory: %+v", g.mentions)
	}
	for _, n := range g.mentions[ids["g1-william"]] {
		if n <= 0 {
			t.Errorf("mention count %d, want > 0", n)
		}
	}
}

// TestAboutSameEntitiesIgnoresRecallDeadline: the pipeline's search for memories about the
// same entities is background work, not held to recall's interactive graph deadline: with
// that deadline already past it still finds them (a busy machine once hid a contradiction).
func TestAboutSameEntitiesIgnoresRecallDeadline(t *testing.T) {
	s, ids := graphStore(t)
	s.GraphDeadline = 0
	got, err := s.Graph.AboutSameEntities(t.Context(), memory.SearchQuery{Text: "Did William leave?", Owners: []memory.Owner{memory.ServerOwner("g1")}})
	if err != nil {
		t.Fatal(err)
	}
	var found []int64
	for _, m := range got {
		found = append(found, m.ID)
	}
	if !slices.Contains(found, ids["g1-william"]) || slices.Contains(found, ids["g2-william"]) {
		t.Errorf("about William in g1 past recall's deadline: %v, want #%d and not g2's #%d", found, ids["g1-william"], ids["g2-william"])
	}
}
