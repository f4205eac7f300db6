//go:build measure

// Measurement tests run whole evals and benchmark runs: minutes under -race on a small
// machine, so they leave the default `go test ./...` path. CI runs them without -race:
// go test -tags measure ./internal/bench ./internal/eval ./cmd/kioku

package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/kioku-bot/kioku/internal/bench"
)

// A small run checks that every number SPEC §8 names is measured and sane, and that the
// vector index finds what the exact scan finds on the clustered corpus. Speed is measured
// by `kioku bench`, never asserted here.
func TestSmallRunMeasuresEverything(t *testing.T) {
	rep, err := bench.Run(context.Background(), bench.Options{Memories: 2000, Dims: 64, Queries: 100, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{
		"write_per_s": rep.WritePerS, "remember_per_s": rep.RememberPerS,
		"recall_p50_ms": rep.RecallP50Ms, "recall_p99_ms": rep.RecallP99Ms, "vector_p50_ms": rep.VectorP50Ms,
		"keyword_p50_ms": rep.KeywordP50Ms, "bruteforce_p50_ms": rep.BruteforceP50Ms, "fts_only_p50_ms": rep.FTSOnlyP50Ms,
		"keyword_p99_ms": rep.KeywordP99Ms, "fts_only_p99_ms": rep.FTSOnlyP99Ms, "vector_p99_ms": rep.VectorP99Ms,
		"bruteforce_p99_ms": rep.BruteforceP99Ms, "open_ms": rep.OpenMs, "rss_mb": rep.RSSMB,
	} {
		if v <= 0 {
			t.Errorf("%s = %v, want a measurement > 0", name, v)
		}
	}
	if rep.ExactSourceAt10 < 0.98 {
		t.Errorf("exact scan finds the source memory for %.4f of queries; the corpus's queries should be near their sources", rep.ExactSourceAt10)
	}
	if rep.SourceAt10 < 0.98 || rep.OverlapAt10 < 0.9 {
		t.Errorf("vector index: source in top 10 %.4f (want ≥ 0.98), overlap with exact top 10 %.4f (want ≥ 0.9)", rep.SourceAt10, rep.OverlapAt10)
	}
	if rep.HybridSourceAt10 < 0.9 {
		t.Errorf("full recall finds the source in its top 10 for %.4f of queries, want ≥ 0.9", rep.HybridSourceAt10)
	}

	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(buf.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"memories", "dims", "write_per_s", "recall_p50_ms", "recall_p99_ms", "vector_p50_ms",
		"keyword_p50_ms", "bruteforce_p50_ms", "fts_only_p50_ms", "fts_only_p99_ms", "keyword_p99_ms", "scopes", "rss_mb",
		"bytes_per_memory", "open_ms", "recall_vs_fts_p99", "keyword_vs_fts_p99", "by_query_kind"} {
		if _, ok := obj[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	if obj["memories"] != 2000.0 || obj["dims"] != 64.0 {
		t.Errorf("memories %v dims %v, want 2000 and 64", obj["memories"], obj["dims"])
	}
}
