package vecindex_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// unit returns a random unit vector of dims.
func unit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	vecindex.Normalize(v)
	return v
}

// near returns a unit vector close to v.
func near(rng *rand.Rand, v []float32, noise float64) []float32 {
	out := make([]float32, len(v))
	for i := range v {
		out[i] = v[i] + float32(noise*rng.NormFloat64())
	}
	vecindex.Normalize(out)
	return out
}

func axis(dims, d int) []float32 {
	v := make([]float32, dims)
	v[d] = 1
	return v
}

func ids(hits []vecindex.Hit) []int64 {
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestUpsertSearchRemove(t *testing.T) {
	x := vecindex.New()
	// Vectors need not be unit length: the index scales them.
	x.Upsert("g:1", 1, "h1", vecindex.Meta{}, []float32{3, 0, 0, 0})
	x.Upsert("g:1", 2, "h2", vecindex.Meta{}, []float32{1, 1, 0, 0})
	x.Upsert("g:1", 3, "h3", vecindex.Meta{}, []float32{0, 0, 2, 0})
	x.Upsert("g:2", 4, "h4", vecindex.Meta{}, []float32{1, 0, 0, 0})

	t.Run("BestFirstWithinTheScope", func(t *testing.T) {
		hits := x.Search("g:1", axis(4, 0), 10, nil, false)
		if got := ids(hits); !slices.Equal(got, []int64{1, 2, 3}) {
			t.Fatalf("ids %v, want [1 2 3]", got)
		}
		if math.Abs(float64(hits[1].Cosine)-math.Sqrt2/2) > 1e-6 {
			t.Errorf("cosine %v, want 1/√2", hits[1].Cosine)
		}
	})
	t.Run("KCutsTheList", func(t *testing.T) {
		if got := ids(x.Search("g:1", axis(4, 0), 1, nil, false)); !slices.Equal(got, []int64{1}) {
			t.Fatalf("ids %v, want [1]", got)
		}
	})
	t.Run("UnknownScopeIsEmpty", func(t *testing.T) {
		if hits := x.Search("g:9", axis(4, 0), 10, nil, false); len(hits) != 0 {
			t.Fatalf("hits %v, want none", hits)
		}
	})
	t.Run("HasChecksTheHash", func(t *testing.T) {
		if !x.Has("g:1", 2, "h2") || x.Has("g:1", 2, "other") || x.Has("g:2", 2, "h2") {
			t.Fatal("Has must match scope, id and hash")
		}
	})
	t.Run("CosineOfOneID", func(t *testing.T) {
		if c, ok := x.Cosine("g:1", axis(4, 2), 3); !ok || math.Abs(float64(c)-1) > 1e-6 {
			t.Fatalf("cosine %v %v, want 1 true", c, ok)
		}
		if _, ok := x.Cosine("g:1", axis(4, 2), 4); ok {
			t.Fatal("id 4 is in another scope")
		}
	})
	t.Run("UpsertReplaces", func(t *testing.T) {
		x.Upsert("g:1", 3, "h3b", vecindex.Meta{}, []float32{1, 0, 0, 0.001})
		if got := ids(x.Search("g:1", axis(4, 0), 1, nil, false)); got[0] != 1 && got[0] != 3 {
			t.Fatalf("ids %v, want the replaced vector near the top", got)
		}
		if x.Len() != 4 {
			t.Fatalf("len %d, want 4", x.Len())
		}
	})
	t.Run("RemoveMovesTheLastRow", func(t *testing.T) {
		x.Remove("g:1", 1)
		x.Remove("g:1", 1) // twice is a no-op
		if x.Len() != 3 || x.Has("g:1", 1, "h1") {
			t.Fatalf("len %d after remove, want 3 and id 1 gone", x.Len())
		}
		if c, ok := x.Cosine("g:1", axis(4, 0), 3); !ok || c < 0.99 {
			t.Fatalf("id 3 (moved into the freed row) cosine %v %v", c, ok)
		}
		if got := ids(x.Search("g:1", axis(4, 1), 10, nil, false)); !slices.Equal(got, []int64{2, 3}) {
			t.Fatalf("ids %v, want [2 3]", got)
		}
	})
	t.Run("ResetEmpties", func(t *testing.T) {
		x.Reset()
		if x.Len() != 0 {
			t.Fatalf("len %d after reset", x.Len())
		}
		// The width is free again after a reset (a new model).
		if !x.Upsert("g:1", 1, "h", vecindex.Meta{}, []float32{1, 0}) {
			t.Fatal("a new width after reset was refused")
		}
	})
}

func TestUpsertRefuses(t *testing.T) {
	x := vecindex.New()
	if !x.Upsert("g:1", 1, "h", vecindex.Meta{}, []float32{1, 0, 0}) {
		t.Fatal("first vector refused")
	}
	cases := []struct {
		name string
		vec  []float32
	}{
		{"OtherWidth", []float32{1, 0}},
		{"ZeroVector", []float32{0, 0, 0}},
		{"NaN", []float32{float32(math.NaN()), 0, 0}},
		{"Empty", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if x.Upsert("g:1", 2, "h", vecindex.Meta{}, c.vec) {
				t.Fatal("stored")
			}
			if x.Len() != 1 {
				t.Fatalf("len %d, want 1", x.Len())
			}
		})
	}
}

// Filters run before the top k: with k 1, rows that fail the filter (all closer to the
// query) must not crowd out the one that passes. Both search paths are checked: the exact
// scan of a small scope and the re-rank of a large one's shortlist. (In a large scope the
// filter is applied to the shortlist, the max(400, 16k) nearest codes, so the passing row
// here is near enough to be in it; farther passing rows are out of the vector leg's reach
// and left to the keyword leg.)
func TestFilterBeforeTopK(t *testing.T) {
	const dims = 64
	target := vecindex.Meta{OriginGuild: "gA", Channel: "c1", CreatedAt: 2000, Type: "decision", Pinned: true, Importance: 0.9, Tags: []string{"garden"}}
	crowd := vecindex.Meta{OriginGuild: "gB", Channel: "c2", CreatedAt: 1000, Type: "fact", Importance: 0.5, State: "archived"}
	cases := []struct {
		name   string
		filter vecindex.Filter
	}{
		{"OriginGuild", vecindex.Filter{OriginGuild: "gA"}},
		{"Types", vecindex.Filter{Types: []string{"decision", "event"}}},
		{"PinnedOnly", vecindex.Filter{PinnedOnly: true}},
		{"Since", vecindex.Filter{Since: 1500}},
		{"ImportanceMin", vecindex.Filter{ImportanceMin: 0.8}},
		{"Tags", vecindex.Filter{Tags: []string{"garden"}}},
		{"Channels", vecindex.Filter{RestrictChannels: true, Channels: map[string]bool{"c1": true}}},
		{"HiddenStates", vecindex.Filter{HiddenStates: []string{"superseded", "archived"}}},
	}
	for _, size := range []int{100, 6000} {
		rng := rand.New(rand.NewPCG(1, 2))
		q := unit(rng, dims)
		x := vecindex.New()
		for i := range size {
			v := unit(rng, dims) // far from q
			if i < 60 {
				v = near(rng, q, 0.02)
			}
			x.Upsert("g:1", int64(i+1), "", crowd, v)
		}
		const targetID = 1_000_000
		x.Upsert("g:1", targetID, "", target, near(rng, q, 0.1))
		t.Run(fmt.Sprintf("WithoutFilterTheCrowdWins/n=%d", size), func(t *testing.T) {
			if got := ids(x.Search("g:1", q, 1, nil, false)); len(got) != 1 || got[0] == targetID {
				t.Fatalf("ids %v, want one crowd row", got)
			}
		})
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/n=%d", c.name, size), func(t *testing.T) {
				hits := x.Search("g:1", q, 1, &c.filter, false)
				if got := ids(hits); !slices.Equal(got, []int64{targetID}) {
					t.Fatalf("ids %v, want [%d]", got, targetID)
				}
			})
		}
	}
}

func TestFilterKeep(t *testing.T) {
	open := vecindex.Meta{Channel: "", OriginGuild: "gA"}
	dm := vecindex.Meta{Channel: "c9", OriginGuild: ""}
	other := vecindex.Meta{Channel: "c9", OriginGuild: "gA", Tags: []string{"a", "b"}}
	audience := vecindex.Filter{RestrictChannels: true, Channels: map[string]bool{"c1": true}}
	noChannels := vecindex.Filter{RestrictChannels: true}
	cases := []struct {
		name   string
		filter vecindex.Filter
		meta   vecindex.Meta
		want   bool
	}{
		{"ZeroFilterKeepsAll", vecindex.Filter{}, other, true},
		{"AudienceKeepsRowsWithoutChannel", audience, open, true},
		{"AudienceKeepsDMRows", audience, dm, true},
		{"AudienceDropsOtherChannels", audience, other, false},
		{"EmptyAudienceKeepsOnlyOpenRows", noChannels, other, false},
		{"EmptyAudienceOpenRow", noChannels, open, true},
		{"EveryTagNeeded", vecindex.Filter{Tags: []string{"a", "c"}}, other, false},
		{"AllTagsPresent", vecindex.Filter{Tags: []string{"b", "a"}}, other, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.filter.Keep(&c.meta); got != c.want {
				t.Fatalf("Keep = %v, want %v", got, c.want)
			}
		})
	}
}

// A large scope is searched through the sign-code shortlist; on clustered data it finds what
// the exact scan finds, and the exact re-rank keeps the cosines exact.
func TestShortlistAgreesWithExactScan(t *testing.T) {
	const dims, n, k, topics = 384, 10_000, 10, 200
	rng := rand.New(rand.NewPCG(7, 7))
	centres := make([][]float32, topics)
	for i := range centres {
		centres[i] = unit(rng, dims)
	}
	x := vecindex.New()
	for i := range n {
		x.Upsert("g:1", int64(i), "", vecindex.Meta{}, near(rng, centres[i%topics], 0.05))
	}
	var overlap, total int
	for range 50 {
		q := near(rng, centres[rng.IntN(topics)], 0.05)
		ann := x.Search("g:1", q, k, nil, false)
		exact := x.Search("g:1", q, k, nil, true)
		if len(ann) != k || len(exact) != k {
			t.Fatalf("got %d and %d hits, want %d", len(ann), len(exact), k)
		}
		for _, h := range ann {
			if c, _ := x.Cosine("g:1", q, h.ID); c != h.Cosine {
				t.Fatalf("shortlist cosine %v, exact %v", h.Cosine, c)
			}
			if slices.ContainsFunc(exact, func(e vecindex.Hit) bool { return e.ID == h.ID }) {
				overlap++
			}
		}
		total += k
	}
	if share := float64(overlap) / float64(total); share < 0.95 {
		t.Fatalf("shortlist overlaps the exact top %d by %.3f, want ≥ 0.95", k, share)
	}
}

// A scope crossing the re-centring sizes keeps answering: codes are rebuilt as it grows.
func TestGrowingScopeStaysSearchable(t *testing.T) {
	const dims = 128
	rng := rand.New(rand.NewPCG(3, 4))
	x := vecindex.New()
	vecs := make([][]float32, 9000)
	for i := range vecs {
		vecs[i] = unit(rng, dims)
		x.Upsert("g:1", int64(i), "", vecindex.Meta{}, vecs[i])
	}
	for _, i := range []int{0, 1023, 2048, 4500, 8999} {
		hits := x.Search("g:1", vecs[i], 1, nil, false)
		if len(hits) != 1 || hits[0].ID != int64(i) {
			t.Fatalf("searching for row %d's own vector found %v", i, hits)
		}
	}
}
