package bench_test

import (
	"context"
	"testing"

	"github.com/kioku-bot/kioku/internal/bench"
)

// The corpus is seeded: two runs with the same seed measure the same corpus, so their
// quality numbers agree exactly.
func TestSameSeedSameCorpus(t *testing.T) {
	run := func() bench.Report {
		rep, err := bench.Run(context.Background(), bench.Options{Memories: 500, Dims: 32, Queries: 50, Seed: 7, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	a, b := run(), run()
	if a.KeywordOverlapAt10 != nil {
		t.Errorf("keyword_overlap_at10 %v without a reference", *a.KeywordOverlapAt10)
	}
	if a.SourceAt10 != b.SourceAt10 || a.ExactSourceAt10 != b.ExactSourceAt10 || a.OverlapAt10 != b.OverlapAt10 || a.HybridSourceAt10 != b.HybridSourceAt10 {
		t.Errorf("same seed, different quality: %+v vs %+v", a, b)
	}
}

// A kept corpus is reused by the next run of the same corpus: nothing is loaded, and the
// quality numbers are those of the run that loaded it. Another corpus in the same
// directory is loaded afresh.
func TestKeptCorpusIsReused(t *testing.T) {
	dir := t.TempDir()
	run := func(seed uint64) bench.Report {
		rep, err := bench.Run(context.Background(), bench.Options{Memories: 600, Dims: 32, Queries: 40, Seed: seed, Scopes: 2, Keep: dir})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	first := run(7)
	if first.Reused || first.WritePerS == 0 {
		t.Fatalf("first run reused %v, wrote %v/s: want a load", first.Reused, first.WritePerS)
	}
	second := run(7)
	if !second.Reused || second.WritePerS != 0 || second.RememberPerS != 0 {
		t.Fatalf("second run reused %v, wrote %v/s and %v/s: want no load", second.Reused, second.WritePerS, second.RememberPerS)
	}
	if second.SourceAt10 != first.SourceAt10 || second.HybridSourceAt10 != first.HybridSourceAt10 || second.OverlapAt10 != first.OverlapAt10 {
		t.Errorf("reused corpus scores differently: %+v vs %+v", second, first)
	}
	if other := run(8); other.Reused {
		t.Error("a corpus of another seed reused the kept one")
	}
}
