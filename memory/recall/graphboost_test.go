package recall

import (
	"math"
	"testing"
	"time"
)

func TestGraphBoostMath(t *testing.T) {
	st := Stages{GraphBoost: 0.4, GraphHop: 0.5}
	for _, tc := range []struct {
		name string
		rel  float64
		link GraphLink
		want float64
	}{
		{"unlinked", 0.5, GraphNone, 0.5},
		{"direct", 0.5, GraphDirect, 0.5 * 1.4},
		{"hop", 0.5, GraphHop, 0.5 * 1.2},
		{"graph only direct", 0, GraphDirect, 0.05 * 0.4},
		{"graph only hop", 0, GraphHop, 0.05 * 0.4 * 0.5},
		{"graph only unlinked", 0, GraphNone, 0},
	} {
		if got := graphBoost(tc.rel, tc.link, st); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: graphBoost(%g) = %g, want %g", tc.name, tc.rel, got, tc.want)
		}
	}
	if got := graphBoost(0.5, GraphDirect, Stages{}); got != 0.5 {
		t.Errorf("boost off: got %g, want 0.5", got)
	}
}

func TestRankGraphBoostOrders(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cands := []Candidate{
		{ID: 1, Keyword: 2, CreatedAt: now},
		{ID: 2, Keyword: 2, CreatedAt: now, Graph: GraphHop},
		{ID: 3, Keyword: 2, CreatedAt: now, Graph: GraphDirect},
		{ID: 4, CreatedAt: now, Graph: GraphDirect},
		{ID: 5, CreatedAt: now},
	}
	plan := Analyze("where does alice live")
	got := Rank(cands, &plan, Options{Stages: Stages{GraphBoost: 0.3, GraphHop: 0.5}})
	order := make([]int64, len(got))
	for i, r := range got {
		order[i] = cands[r.Index].ID
	}
	want := []int64{3, 2, 1, 4, 5}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order = %v, want %v", order, want)
		}
	}
	if got[3].Score <= got[4].Score {
		t.Errorf("graph-only candidate should outrank an unmatched one: %v", got)
	}
	off := Rank(cands, &plan, Options{})
	if cands[off[0].Index].ID != 1 && cands[off[0].Index].ID != 2 && cands[off[0].Index].ID != 3 {
		t.Errorf("boost off changed the leader: %v", off)
	}
	if off[0].Score != off[1].Score && off[1].Score != off[2].Score {
		t.Errorf("boost off should leave equal matches tied before tie-breakers: %v", off)
	}
}
