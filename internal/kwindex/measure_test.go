//go:build measure

package kwindex_test

import (
	"runtime"
	"testing"

	"github.com/kioku-bot/kioku/internal/kwindex"
)

// TestIndexBytesPerMemory measures what the index keeps per memory on the synthetic corpus
// of the benchmarks (100,000 memories, 15.5 words each on average) and fails when it grows
// past the budget docs/recall.md states.
func TestIndexBytesPerMemory(t *testing.T) {
	docs, _ := benchCorpus(100_000)
	tokens := 0
	for _, d := range docs {
		kwindex.Tokenize(d.Content, func(string, bool) { tokens++ })
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	idx := kwindex.NewScope(kwindex.DefaultParams)
	idx.Put(docs...)
	runtime.GC()
	runtime.ReadMemStats(&after)
	n, terms := idx.Size()
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	perDoc := held / float64(n)
	t.Logf("%d memories, %d terms, %.1f words each: %.0f bytes per memory, %.1f per word", n, terms,
		float64(tokens)/float64(n), perDoc, held/float64(tokens))
	if perDoc > 180 {
		t.Errorf("the index holds %.0f bytes per memory; the budget is 180", perDoc)
	}
	runtime.KeepAlive(idx)
}
