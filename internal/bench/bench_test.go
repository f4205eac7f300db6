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
