package vecindex_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kioku-bot/kioku/internal/vecindex"
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
	x, _, queries := benchCorpus(b, n)
	return x, queries
}

// benchCorpus is benchIndex that also returns the float32 rows, for the brute-force
// baseline a plain scan of the stored vectors would be.
func benchCorpus(b *testing.B, n int) (*vecindex.Index, []float32, [][]float32) {
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
	flat := make([]float32, 0, n*benchDims)
	for i := range n {
		v := near(rng, centres[i%benchTopics], 0.06)
		flat = append(flat, v...)
		x.Upsert("g:1", int64(i), "", vecindex.Meta{CreatedAt: int64(i), Type: "fact"}, v)
	}
	queries := make([][]float32, 256)
	for i := range queries {
		queries[i] = near(rng, centres[rng.IntN(benchTopics)], 0.06)
	}
	return x, flat, queries
}

// bruteTop10 is the brute-force baseline: every float32 row's cosine, the best 10 kept.
func bruteTop10(flat, q []float32) [10]int {
	var (
		best  [10]int
		score [10]float32
	)
	for i := range score {
		score[i] = -2
	}
	dims := len(q)
	for r := 0; r*dims < len(flat); r++ {
		s := dot(q, flat[r*dims:(r+1)*dims])
		if s <= score[9] {
			continue
		}
		j := 9
		for ; j > 0 && score[j-1] < s; j-- {
			score[j], best[j] = score[j-1], best[j-1]
		}
		score[j], best[j] = s, r
	}
	return best
}

// BenchmarkSearch times one k=10 search: the shortlist search (a full int8 scan below 4096
// rows), the full int8 scan (exact), and the shortlist search with a filter.
// "bruteforce" is the float32 scan of every stored vector a store without an index would
// run, the baseline the ≥ 20× target is measured against.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x, flat, queries := benchCorpus(b, n)
			b.Run("bruteforce", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					bruteTop10(flat, queries[i%len(queries)])
					i++
				}
			})
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

// dot is an inner product unrolled by eight, as a tuned float32 scan would compute it.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
