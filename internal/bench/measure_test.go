//go:build measure

// Measurement tests run whole evals and benchmark runs: minutes under -race on a small
// machine, so they leave the default `go test ./...` path. CI runs them without -race:
// go test -tags measure ./internal/bench ./internal/eval ./cmd/kioku

package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/bench"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
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

// With several scopes a run measures every bucket, the hot guild alone, the cold guilds,
// start-up, memory and chat turns, and its JSON carries SPEC §8's keys for them.
func TestScopesColdStartMemoryAndTurns(t *testing.T) {
	rep, err := bench.Run(context.Background(), bench.Options{Memories: 600, Dims: 16, Queries: 30, Scopes: 6, Turns: 5, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scopes != 6 || rep.PersonalScopes != 2 || rep.HotMemories < 600/11 {
		t.Errorf("scopes %d, personal %d, hot guild %d memories", rep.Scopes, rep.PersonalScopes, rep.HotMemories)
	}
	inBuckets := 0
	var buckets []string
	for _, b := range rep.ByScopeSize {
		buckets = append(buckets, b.Bucket)
		inBuckets += b.Memories
		if b.Queries == 0 || b.RecallP99Ms <= 0 || b.FTSOnlyP99Ms <= 0 || b.KeywordP99Ms <= 0 {
			t.Errorf("bucket %s not measured: %+v", b.Bucket, b)
		}
	}
	if strings.Join(buckets, ",") != "medium,small,personal" || inBuckets+rep.HotMemories != rep.Memories {
		t.Errorf("buckets %v hold %d memories besides the hot guild's %d, want medium, small, personal and %d in all",
			buckets, inBuckets, rep.HotMemories, rep.Memories)
	}
	for name, v := range map[string]float64{"alone_recall_p99_ms": rep.AloneRecallP99Ms, "shared_vs_alone_p99": rep.SharedVsAlone,
		"cold_recall_p99_ms": rep.ColdRecallP99Ms, "cold_fts_only_p99_ms": rep.ColdFTSP99Ms, "open_ms": rep.OpenMs,
		"open_db_ms": rep.OpenDBMs, "rss_mb": rep.RSSMB, "heap_inuse_mb": rep.HeapInuseMB, "turn_p99_ms": rep.TurnP99Ms,
		"turn_recall_p99_ms": rep.TurnRecallP99Ms, "turn_plain_recall_p99_ms": rep.TurnPlainRecallP99Ms, "keyword_p99_ms": rep.KeywordP99Ms, "fts_only_p99_ms": rep.FTSOnlyP99Ms,
		"recall_vs_fts_p99": rep.RecallVsFTS, "keyword_vs_fts_p99": rep.KeywordVsFTS} {
		if v <= 0 {
			t.Errorf("%s = %v, want a measurement > 0", name, v)
		}
	}
	if rep.OpenMs < rep.OpenDBMs {
		t.Errorf("start-up to the first recall %v ms is shorter than opening the database %v ms", rep.OpenMs, rep.OpenDBMs)
	}
	if rep.ColdScopes < 1 || rep.Turns != 5 {
		t.Errorf("cold scopes %d, turns %d", rep.ColdScopes, rep.Turns)
	}
	if rep.RSSMB < rep.HeapInuseMB {
		t.Errorf("resident %v MB is less than the Go heap in use %v MB", rep.RSSMB, rep.HeapInuseMB)
	}
	var total int
	for _, k := range rep.ByQueryKind {
		total += k.Queries
	}
	if total != rep.Queries {
		t.Errorf("query kinds add up to %d queries, want %d", total, rep.Queries)
	}

	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(buf.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"scopes", "alone_recall_p99_ms", "cold_recall_p99_ms", "rss_mb", "bytes_per_memory", "open_ms",
		"keyword_p99_ms", "fts_only_p99_ms", "turn_p99_ms", "by_scope_size", "by_query_kind"} {
		if _, ok := obj[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	buf.Reset()
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hybrid / fts", "keyword / fts", "shared / alone", "cold / fts", "start-up", "bytes per memory", "chat turn", "personal"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, buf.String())
		}
	}
}

// The reference-ranking hook compares keyword-only recall's top 10 with the ranking it is
// given: itself overlaps fully, a ranking of ids no memory has not at all.
func TestReferenceOverlap(t *testing.T) {
	run := func(ref bench.ReferenceFunc) float64 {
		rep, err := bench.Run(context.Background(), bench.Options{Memories: 200, Dims: 16, Queries: 20, Dir: t.TempDir(), Reference: ref})
		if err != nil {
			t.Fatal(err)
		}
		if rep.KeywordOverlapAt10 == nil {
			t.Fatal("no keyword_overlap_at10 with a reference")
		}
		return *rep.KeywordOverlapAt10
	}
	self := func(ctx context.Context, s *ltm.Store, q memory.SearchQuery) ([]int64, error) {
		if !q.KeywordOnly || q.Limit != 10 || len(q.Owners) != 1 {
			t.Errorf("reference asked for %+v, want a keyword-only top 10 in one scope", q)
		}
		res, err := s.Recall.Search(ctx, q)
		ids := make([]int64, len(res))
		for i, r := range res {
			ids[i] = r.Memory.ID
		}
		return ids, err
	}
	if got := run(self); got != 1 {
		t.Errorf("overlap with itself %v, want 1", got)
	}
	none := func(context.Context, *ltm.Store, memory.SearchQuery) ([]int64, error) { return []int64{-1, -2}, nil }
	if got := run(none); got != 0 {
		t.Errorf("overlap with absent ids %v, want 0", got)
	}
}
