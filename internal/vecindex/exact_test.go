package vecindex_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// TestExactVectorIsNormalizedCopy: the float32 copy is the stored vector scaled by
// Normalize, bit for bit; a moved, replaced or removed row answers with its own vector or
// not at all, and a content hash that differs from the indexed one is refused.
func TestExactVectorIsNormalizedCopy(t *testing.T) {
	x := vecindex.New()
	raw := map[int64][]float32{1: {3, 4, 0, 0}, 2: {0, 1, 1, 0}, 3: {0.1, 0.2, 0.3, 0.4}}
	for id, v := range raw {
		x.Upsert("g:a", id, "h", vecindex.Meta{}, v)
	}
	check := func(id int64, v []float32) {
		t.Helper()
		want := slices.Clone(v)
		vecindex.Normalize(want)
		got, ok := x.ExactVector("g:a", id, "h", nil)
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("row %d: copy %v (%v), want %v", id, got, ok, want)
		}
	}
	for id, v := range raw {
		check(id, v)
	}
	x.Remove("g:a", 1) // row 3 or 2 moves into its place
	if _, ok := x.ExactVector("g:a", 1, "", nil); ok {
		t.Fatal("a removed row still has a float32 copy")
	}
	check(2, raw[2])
	check(3, raw[3])
	x.Upsert("g:a", 2, "h", vecindex.Meta{}, []float32{0, 0, 0, 2})
	check(2, []float32{0, 0, 0, 2})
	if _, ok := x.ExactVector("g:a", 2, "other", nil); ok {
		t.Fatal("a copy answered for another content hash")
	}
	if st := x.Stats(); st.ExactVectors != 2 || st.Vectors != 2 {
		t.Fatalf("stats %+v, want 2 rows with 2 copies", st)
	}
}

// TestLeastRecentlyUsedGivesWayCopiesFirst: past the bound the least recently used scope
// gives up its float32 copies, then its rows, before a more recent scope loses anything;
// the scope used last keeps its copies, and a scope without copies still answers.
func TestLeastRecentlyUsedGivesWayCopiesFirst(t *testing.T) {
	const dims = 8
	st := newStore()
	for s, key := range []string{"g:a", "g:b", "g:c"} {
		for i := range 10 {
			st.set(key, int64(100*s+i), axis(dims, (s+i)%dims))
		}
	}
	probe := vecindex.New()
	probe.Upsert("g:probe", 1, "", vecindex.Meta{}, axis(dims, 0))
	row, exact := probe.Stats().Bytes, probe.Stats().ExactBytes
	if exact != 4*dims {
		t.Fatalf("a copy costs %d bytes, want %d", exact, 4*dims)
	}
	x := vecindex.New()
	// Room for 30 rows and 20 copies: after g:c loads, g:a (used least recently) gives up
	// its copies and everything fits.
	x.SetLoader(st.load, 30*row+20*exact)
	ctx := t.Context()
	for _, key := range []string{"g:a", "g:b", "g:c"} {
		if err := x.Ensure(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	s := x.Stats()
	if s.Scopes != 3 || s.Vectors != 30 || s.ExactVectors != 20 {
		t.Fatalf("stats %+v, want 3 scopes, 30 rows, 20 copies", s)
	}
	if _, ok := x.ExactVector("g:a", 0, "", nil); ok {
		t.Fatal("the least recently used scope kept its copies")
	}
	for _, id := range []int64{100, 200} {
		if _, ok := x.ExactVector(fmt.Sprintf("g:%c", 'a'+id/100), id, "", nil); !ok {
			t.Fatalf("a more recently used scope lost the copy of %d", id)
		}
	}
	// Rows 0 and 8 of g:a lie on axis 0.
	if hits := x.Search("g:a", axis(dims, 0), 2, nil, false); len(hits) != 2 || hits[0].ID+hits[1].ID != 8 {
		t.Fatalf("g:a without copies answers %v", hits)
	}
	if s.Bytes+s.ExactBytes > 30*row+20*exact {
		t.Fatalf("index holds %d bytes over its bound", s.Bytes+s.ExactBytes)
	}

	// A bound for 20 rows and 10 copies: g:b is now the least recently used (g:a was just
	// searched): its copies go, then its rows, and the rest fits; g:c keeps its copies.
	x.SetLimit(20*row + 10*exact)
	s = x.Stats()
	if s.Scopes != 2 || s.Vectors != 20 || s.Bytes+s.ExactBytes > 20*row+10*exact {
		t.Fatalf("stats %+v under a 20-row bound, want two scopes within it", s)
	}
	if x.Resident("g:b") || !x.Resident("g:a") || !x.Resident("g:c") {
		t.Fatalf("resident a %v, b %v, c %v; want the least recently used (g:b) evicted",
			x.Resident("g:a"), x.Resident("g:b"), x.Resident("g:c"))
	}
	if _, ok := x.ExactVector("g:c", 200, "", nil); !ok {
		t.Fatal("g:c lost its copies although evicting g:b made room")
	}
}

// TestEvictedScopeTakesItsCopies: a scope evicted while it holds its float32 copies stops
// counting them, and its reload holds copies again.
func TestEvictedScopeTakesItsCopies(t *testing.T) {
	const dims = 8
	st := newStore()
	for s, key := range []string{"g:a", "g:b"} {
		for i := range 10 {
			st.set(key, int64(100*s+i), axis(dims, (s+i)%dims))
		}
	}
	probe := vecindex.New()
	probe.Upsert("g:probe", 1, "", vecindex.Meta{}, axis(dims, 0))
	row, exact := probe.Stats().Bytes, probe.Stats().ExactBytes
	x := vecindex.New()
	x.SetLoader(st.load, 10*(row+exact)) // one scope with its copies
	ctx := t.Context()
	for _, key := range []string{"g:a", "g:b", "g:a"} {
		if err := x.Ensure(ctx, key); err != nil {
			t.Fatal(err)
		}
		if s := x.Stats(); s.Scopes != 1 || s.Vectors != 10 || s.ExactVectors != 10 {
			t.Fatalf("after loading %s: %+v, want it alone with its 10 copies", key, s)
		}
	}
}

// BenchmarkRescore is recall's exact re-scoring of a vector leg's k + 16 candidates from
// the float32 copies: ExactVector into one reused buffer, then the dot product. The
// candidates are searched before the timing.
func BenchmarkRescore(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x, queries := benchIndex(b, n)
			hits := make([][]vecindex.Hit, len(queries))
			for i, q := range queries {
				hits[i] = x.Search("g:1", q, 66, nil, false)
			}
			var (
				buf []float32
				sum float32
			)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				for _, h := range hits[i%len(queries)] {
					var ok bool
					if buf, ok = x.ExactVector("g:1", h.ID, "", buf); ok {
						for d, v := range q {
							sum += v * buf[d]
						}
					}
				}
				i++
			}
			_ = sum
		})
	}
}
