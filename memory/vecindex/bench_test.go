package vecindex_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kioku-bot/kioku/memory/vecindex"
)

// benchSizes sweep one scope from a busy guild to a very large one, so growth is visible.
// The 100k case takes a few seconds to build and is skipped under -short.
var benchSizes = []int{1_000, 10_000, 100_000}

const (
	benchDims   = 384 // the common small-model width (the unrolled code path)
	benchTopics = 500
)

// benchIndex builds one scope of n clustered vectors (sentence embeddings form
// neighbourhoods, not a uniform sphere) and returns it with queries near stored vectors.
func benchIndex(b *testing.B, n int) (*vecindex.Index, [][]float32) {
	b.Helper()
	if n > 10_000 && testing.Short() {
		b.Skip("large index skipped under -short")
	}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	centres := make([][]float32, benchTopics)
	for i := range centres {
		centres[i] = unit(rng, benchDims)
	}
	x := vecindex.New()
	for i := range n {
		x.Upsert("g:1", int64(i), "", vecindex.Meta{CreatedAt: int64(i), Type: "fact"}, near(rng, centres[i%benchTopics], 0.06))
	}
	queries := make([][]float32, 256)
	for i := range queries {
		queries[i] = near(rng, centres[rng.IntN(benchTopics)], 0.06)
	}
	return x, queries
}

// BenchmarkSearch times one k=10 search: the shortlist search (exact below 4096 rows), the
// full float scan it is measured against, and the shortlist search with a filter.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x, queries := benchIndex(b, n)
			since := &vecindex.Filter{Since: int64(n / 2)}
			for _, mode := range []struct {
				name   string
				filter *vecindex.Filter
				exact  bool
			}{{"index", nil, false}, {"exact", nil, true}, {"filtered", since, false}} {
				b.Run(mode.name, func(b *testing.B) {
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						x.Search("g:1", queries[i%len(queries)], 10, mode.filter, mode.exact)
						i++
					}
				})
			}
		})
	}
}

// BenchmarkUpsert times adding a vector to a scope of n (a write path's index update).
func BenchmarkUpsert(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x, queries := benchIndex(b, n)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				// Replace existing rows: the scope stays at n, so no re-centring is timed.
				x.Upsert("g:1", int64(i%n), "", vecindex.Meta{}, queries[i%len(queries)])
				i++
			}
		})
	}
}
