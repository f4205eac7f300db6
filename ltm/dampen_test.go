package ltm_test

import (
	"math"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// With the default dampening, a memory only the vector leg found and that shares no word
// with the query ("espresso" for "coffee") counts half, so a match that also shares the
// word outranks it; with gravity off it is the plain blend again.
func TestRecallGravity(t *testing.T) {
	s, _ := recallStore(t, true)
	owner := memory.ServerOwner("gGrav")
	// Term statistics are the scope's own: chatter around the three memories makes
	// "coffee" the rare word it is in a real server.
	fill(t, s, "gGrav", 30)
	semantic := testkit.MustRemember(t, s, server("gGrav", "espresso tasting notes"))                     // cos 1, no shared word
	shared := testkit.MustRemember(t, s, server("gGrav", "coffee dog puppy hound car automobile pizza"))  // cos 1/√15, shares "coffee"
	stemmed := testkit.MustRemember(t, s, server("gGrav", "the espresso machine needs coffees descaled")) // vector and keyword
	q := memory.SearchQuery{Text: "coffee", Owners: []memory.Owner{owner}}

	if s.Dampen != recall.DefaultDampening {
		t.Fatalf("store dampening %+v, want the default %+v", s.Dampen, recall.DefaultDampening)
	}
	s.Dampen = recall.Dampening{Gravity: true}
	on := mustSearch(t, s, q)
	rs, _ := find(on, semantic.ID)
	rk, _ := find(on, shared.ID)
	if want := 0.5 * ltm.DefaultAlpha * 1; rs.Score < want || rs.Score > want+0.01 {
		t.Fatalf("semantic-only match scores %.4f, want half its blend %.4f (+ tie-breakers):%s", rs.Score, want, describe(on))
	}
	if rk.Score <= rs.Score {
		t.Fatalf("shared-word match %.4f not above the semantic-only one %.4f:%s", rk.Score, rs.Score, describe(on))
	}
	if r, ok := find(on, stemmed.ID); !ok || r.Keyword <= 0 {
		t.Fatalf("memory sharing a word not found by both legs:%s", describe(on))
	}

	s.Dampen = recall.Dampening{}
	off := mustSearch(t, s, q)
	rs, _ = find(off, semantic.ID)
	if want := ltm.DefaultAlpha; math.Abs(rs.Score-want) > 0.01 {
		t.Fatalf("gravity off: semantic-only match scores %.4f, want its blend %.4f:%s", rs.Score, want, describe(off))
	}
}
