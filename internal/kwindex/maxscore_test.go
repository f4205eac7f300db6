package kwindex_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/internal/vecindex"
	"github.com/kioku-bot/kioku/memory/recall"
)

// TestPrunedSearchMatchesFullScoring checks that a search with a limit, which may skip the
// postings of common words, returns exactly the first hits of the same search without a
// limit, which scores every match: same documents, same order, bit-identical scores. The
// corpus is Zipfian so that queries mix rare and common words, with deletes so that some
// bounds are stale, and some searches filtered.
func TestPrunedSearchMatchesFullScoring(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("v%dq", i)
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	text := func(n int) string {
		ws := make([]string, n)
		for j := range ws {
			ws[j] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	idx := kwindex.NewScope(kwindex.DefaultParams)
	docs := make([]kwindex.Doc, 8_000)
	for i := range docs {
		docs[i] = kwindex.Doc{ID: int64(i + 1), Content: text(2 + r.IntN(30)), Author: text(1),
			Meta: vecindex.Meta{Type: []string{"fact", "decision", "event"}[r.IntN(3)]}}
	}
	idx.Put(docs...)
	for i := int64(1); i <= 8_000; i += 7 {
		idx.Remove(i)
	}
	checked := 0
	for range 200 {
		plan := recall.Analyze(text(1 + r.IntN(6)))
		for _, limit := range []int{1, 10, 50} {
			for _, f := range []*vecindex.Filter{nil, {Types: []string{"decision"}}} {
				q := kwindex.Query{Terms: plan.Terms, Pairs: plan.Pairs, Filter: f}
				all := idx.Search(q)
				q.Limit = limit
				got := idx.Search(q)
				want := all[:min(limit, len(all))]
				if !slices.Equal(got, want) {
					t.Fatalf("%v limit %d filter %v:\n got %v\nwant %v", plan.Terms, limit, f != nil, got, want)
				}
				checked++
			}
		}
	}
	if checked < 1200 {
		t.Fatalf("only %d searches checked", checked)
	}
}
