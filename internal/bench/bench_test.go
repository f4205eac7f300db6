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
	if a.SourceAt10 != b.SourceAt10 || a.ExactSourceAt10 != b.ExactSourceAt10 || a.OverlapAt10 != b.OverlapAt10 || a.HybridSourceAt10 != b.HybridSourceAt10 {
		t.Errorf("same seed, different quality: %+v vs %+v", a, b)
	}
}

// With several scopes a run measures every bucket, the hot guild alone, the cold guilds,
// start-up, memory and chat turns, and its JSON carries SPEC §8's keys for them.
func TestScopesColdStartMemoryAndTurns(t *testing.T) {
	rep, err := bench.Run(context.Background(), bench.Options{Memories: 1200, Dims: 16, Queries: 30, Scopes: 10, Turns: 5, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scopes != 10 || rep.PersonalScopes != 2 || rep.HotMemories < 1200/11 {
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
		"turn_recall_p99_ms": rep.TurnRecallP99Ms, "keyword_p99_ms": rep.KeywordP99Ms, "fts_only_p99_ms": rep.FTSOnlyP99Ms,
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
		rep, err := bench.Run(context.Background(), bench.Options{Memories: 400, Dims: 16, Queries: 20, Dir: t.TempDir(), Reference: ref})
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
	rep, err := bench.Run(context.Background(), bench.Options{Memories: 400, Dims: 16, Queries: 20, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.KeywordOverlapAt10 != nil {
		t.Errorf("keyword_overlap_at10 %v without a reference", *rep.KeywordOverlapAt10)
	}
}
