package recall_test

import (
	"math"
	"testing"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// relOf is a candidate's relevance before the tie-breakers: every candidate here shares a
// creation time and carries no importance or access, so the tie-breakers add 0.01×0.5.
func relOf(r recall.Ranked) float64 { return r.Score - 0.01*0.5 }

// Gravity halves a semantic-only match that shares no word with the query, and leaves a
// semantic-only match sharing a stem, a keyword match, and every match when the vector leg
// did not run.
func TestDampenGravity(t *testing.T) {
	plan := recall.Analyze("where do we go hiking")
	cands := []recall.Candidate{
		{ID: 1, Vector: 0.6, Content: "the trail to the lake is lovely in spring", CreatedAt: day}, // semantic only, no shared word
		{ID: 2, Vector: 0.6, Content: "Tom hikes every Sunday", CreatedAt: day},                    // semantic only, "hikes" ~ "hiking"
		{ID: 3, Vector: 0.6, Keyword: 2, Content: "we went hiking at the lake", CreatedAt: day},    // both legs
		{ID: 4, Vector: 0.6, Content: "山登りが好き", CreatedAt: day},                                    // semantic only, no shared word
	}
	on := rankAll(t, cands, plan, recall.Options{VectorLeg: true, Dampen: recall.Dampening{Gravity: true}})
	off := rankAll(t, cands, plan, recall.Options{VectorLeg: true})
	for _, id := range []int64{1, 4} {
		if got, want := relOf(on[id]), 0.5*relOf(off[id]); math.Abs(got-want) > eps {
			t.Errorf("candidate %d: relevance %.4f with gravity, want half of %.4f", id, got, relOf(off[id]))
		}
	}
	for _, id := range []int64{2, 3} {
		if math.Abs(on[id].Score-off[id].Score) > eps {
			t.Errorf("candidate %d: gravity changed its score %.4f → %.4f, want unchanged", id, off[id].Score, on[id].Score)
		}
	}
	// The vector leg off: nothing is semantic-only.
	kw := []recall.Candidate{{ID: 1, Keyword: 1, Content: "unrelated words", CreatedAt: day}}
	a := rankAll(t, kw, plan, recall.Options{Dampen: recall.Dampening{Gravity: true}})
	b := rankAll(t, kw, plan, recall.Options{})
	if a[1].Score != b[1].Score {
		t.Errorf("gravity changed a keyword-only ranking: %.4f → %.4f", b[1].Score, a[1].Score)
	}
	// A CJK query overlaps through its bigrams.
	ja := recall.Analyze("山登りはどこ")
	r := rankAll(t, cands[3:], ja, recall.Options{VectorLeg: true, Dampen: recall.Dampening{Gravity: true}})
	if got := relOf(r[4]); math.Abs(got-0.6) > eps {
		t.Errorf("CJK candidate sharing a bigram: relevance %.4f, want 0.6 (not dampened)", got)
	}
}

// Resolution: for a "when" or "what did we decide" question, a candidate that neither is
// a decision nor states a date is dampened; other questions are left alone.
func TestDampenResolution(t *testing.T) {
	cands := []recall.Candidate{
		{ID: 1, Keyword: 2, Content: "the raid is fun", CreatedAt: day},
		{ID: 2, Keyword: 2, Content: "the raid moved to friday", CreatedAt: day},
		{ID: 3, Keyword: 2, Content: "raid with the new group", Type: memory.TypeDecision, CreatedAt: day},
	}
	for _, q := range []string{"what did we decide about the raid", "which raid did we pick"} {
		plan := recall.Analyze(q)
		on := rankAll(t, cands, plan, recall.Options{Dampen: recall.Dampening{Resolution: true}})
		off := rankAll(t, cands, plan, recall.Options{})
		if got, want := relOf(on[1]), 0.7*relOf(off[1]); math.Abs(got-want) > eps {
			t.Errorf("%q: plain memory relevance %.4f, want 0.7 × %.4f", q, got, relOf(off[1]))
		}
		for _, id := range []int64{2, 3} {
			if math.Abs(on[id].Score-off[id].Score) > eps {
				t.Errorf("%q: candidate %d (dated or a decision) dampened: %.4f → %.4f", q, id, off[id].Score, on[id].Score)
			}
		}
	}
	// "when" questions dampen the same candidate; a decision now outranks the plain memory.
	plan := recall.Analyze("when is the raid")
	on := recall.Rank(cands, &plan, recall.Options{Dampen: recall.Dampening{Resolution: true}})
	if id := cands[on[len(on)-1].Index].ID; id != 1 {
		t.Errorf("when question: last is %d, want the memory without a date (1)", id)
	}
	// Any other question: no change.
	plain := recall.Analyze("tell me about the raid")
	a := rankAll(t, cands, plain, recall.Options{Dampen: recall.Dampening{Resolution: true}})
	b := rankAll(t, cands, plain, recall.Options{})
	for id := range b {
		if a[id].Score != b[id].Score {
			t.Errorf("plain question: candidate %d changed %.4f → %.4f", id, b[id].Score, a[id].Score)
		}
	}
}

// Hub: an entity is a hub when mentioned in at least 10 memories and at least half as
// often as the most-mentioned entity among the candidates; only candidates whose entities
// are all hubs are dampened.
func TestHubFactors(t *testing.T) {
	cases := []struct {
		name     string
		mentions [][]int
		want     []float64
	}{
		{"OnlyHubs", [][]int{{100}, {3}, {100, 60}, {100, 3}, nil}, []float64{0.7, 1, 0.7, 1, 1}},
		{"YoungGraphHasNoHubs", [][]int{{9}, {8}, {9, 9}}, []float64{1, 1, 1}},
		{"HalfTheTopIsAHub", [][]int{{40}, {20}, {19}}, []float64{0.7, 0.7, 1}},
		{"Empty", nil, []float64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := recall.HubFactors(c.mentions)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if math.Abs(got[i]-c.want[i]) > eps {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
	// Through Rank, only with the stage on.
	plan := recall.Analyze("board games")
	cands := []recall.Candidate{{ID: 1, Keyword: 2, EntityMentions: []int{50}, CreatedAt: day}, {ID: 2, Keyword: 2, EntityMentions: []int{4}, CreatedAt: day}}
	on := rankAll(t, cands, plan, recall.Options{Dampen: recall.Dampening{Hub: true}})
	off := rankAll(t, cands, plan, recall.Options{})
	if got, want := relOf(on[1]), 0.7*relOf(off[1]); math.Abs(got-want) > eps {
		t.Errorf("hub candidate: relevance %.4f, want 0.7 × %.4f", got, relOf(off[1]))
	}
	if on[2].Score != off[2].Score {
		t.Errorf("non-hub candidate changed: %.4f → %.4f", off[2].Score, on[2].Score)
	}
}

// No stage is on by default until it is shown to help on more than one dev set, and
// dampening happens before MinScore, so a dampened match can fall under the floor.
func TestDampenDefaultsAndFloor(t *testing.T) {
	if d := recall.DefaultDampening; d.Gravity || d.Resolution || d.Hub {
		t.Fatalf("DefaultDampening = %+v, want every stage off", d)
	}
	plan := recall.Analyze("sushi place")
	cands := []recall.Candidate{{ID: 1, Vector: 0.3, Content: "pizza on fridays", CreatedAt: day}}
	if r := recall.Rank(cands, &plan, recall.Options{VectorLeg: true, MinScore: 0.2}); len(r) != 1 {
		t.Fatalf("undampened 0.3 match dropped by MinScore 0.2")
	}
	if r := recall.Rank(cands, &plan, recall.Options{VectorLeg: true, MinScore: 0.2, Dampen: recall.Dampening{Gravity: true}}); len(r) != 0 {
		t.Fatalf("dampened match (0.15) kept under MinScore 0.2: %+v", r)
	}
}
