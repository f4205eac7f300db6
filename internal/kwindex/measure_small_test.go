//go:build measure

package kwindex_test

import (
	"runtime"
	"testing"

	"github.com/kioku-bot/kioku/internal/kwindex"
)

// TestSmallScopesBytesPerMemory measures what the index keeps per memory when the synthetic
// corpus of the benchmarks is spread over many small scopes (100 scopes of 1,000 memories,
// as most guilds are), where each scope's own dictionary of terms is most of the cost, and
// fails when it grows past the budget docs/recall.md states.
func TestSmallScopesBytesPerMemory(t *testing.T) {
	const scopes, perScope = 100, 1000
	docs, _ := benchCorpus(scopes * perScope)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	idxs := make([]*kwindex.Scope, scopes)
	for i := range idxs {
		idxs[i] = kwindex.NewScope(kwindex.DefaultParams)
		idxs[i].Put(docs[i*perScope : (i+1)*perScope]...)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	n, terms := 0, 0
	for _, idx := range idxs {
		d, t := idx.Size()
		n += d
		terms += t
	}
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	perDoc := held / float64(n)
	t.Logf("%d scopes of %d memories, %.0f terms each: %.0f bytes per memory, %.0f per term", scopes, perScope,
		float64(terms)/scopes, perDoc, held/float64(terms))
	if perDoc > 360 {
		t.Errorf("the index holds %.0f bytes per memory in scopes of %d; the budget is 360", perDoc, perScope)
	}
	runtime.KeepAlive(idxs)
}
