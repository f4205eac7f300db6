package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/eval"
)

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", rel)
}

// A tiny dataset whose right answers are known checks the metric arithmetic: recall@k,
// MRR, nDCG, the per-category split, and that a memory the write path deduplicated counts
// for every dataset id it absorbed.
func TestMetricsOnAKnownRanking(t *testing.T) {
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	d := eval.Dataset{Name: "tiny", Scopes: []eval.Scope{{
		GuildID: "g1",
		Memories: []eval.MemoryEntry{
			{ID: "tea", Content: "Mika drinks green tea every morning", Author: "Mika", CreatedAt: at},
			{ID: "tea-again", Content: "mika drinks green tea every morning!", Author: "Mika", CreatedAt: at.Add(time.Hour)},
			{ID: "bike", Content: "Ren rides a red bicycle to work", Author: "Ren", CreatedAt: at},
			{ID: "noise", Content: "The weather was cloudy on Sunday", Author: "Ren", CreatedAt: at},
		},
		Queries: []eval.Query{
			{ID: "q1", Text: "what does mika drink in the morning", Relevant: []string{"tea", "tea-again"}, Category: "single-hop"},
			{ID: "q2", Text: "how does ren get to work", Relevant: []string{"bike"}, Category: "single-hop"},
			{ID: "q3", Text: "zebra xylophone", Relevant: []string{"noise"}, Category: "adversarial"},
		},
	}}}
	rep, err := eval.RunDataset(context.Background(), d, eval.Options{K: []int{1, 5, 10}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories != 4 || rep.Stored != 3 {
		t.Fatalf("memories %d stored %d, want 4 loaded and 3 stored (one duplicate)", rep.Memories, rep.Stored)
	}
	// q1 and q2 are found first (the duplicate counts for both of q1's ids); q3 finds nothing.
	o := rep.Overall
	want := 2.0 / 3
	if !near(o.Recall[1], want) || !near(o.Recall[5], want) || !near(o.MRR, want) || !near(o.NDCG10, want) {
		t.Errorf("overall recall@1 %.4f recall@5 %.4f mrr %.4f ndcg %.4f, want all %.4f", o.Recall[1], o.Recall[5], o.MRR, o.NDCG10, want)
	}
	if c := rep.ByCategory["single-hop"]; c.Queries != 2 || !near(c.Recall[1], 1) {
		t.Errorf("single-hop: %+v, want 2 queries at recall@1 1", c)
	}
	if c := rep.ByCategory["adversarial"]; c.Queries != 1 || c.Recall[5] != 0 {
		t.Errorf("adversarial: %+v, want 1 query at recall@5 0", c)
	}
	if len(rep.Misses) != 1 || rep.Misses[0].QueryID != "q3" {
		t.Errorf("misses %+v, want q3 only", rep.Misses)
	}

	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(buf.Bytes(), &obj); err != nil {
		t.Fatalf("JSON report %q: %v", buf.String(), err)
	}
	for _, key := range []string{"queries", "recall@1", "recall@5", "recall@10", "mrr", "ndcg@10", "p50_ms", "p95_ms", "by_category", "fts5_baseline"} {
		if _, ok := obj[key]; !ok {
			t.Errorf("JSON report lacks %q: %s", key, buf.String())
		}
	}
	if cat, _ := obj["by_category"].(map[string]any)["single-hop"].(map[string]any); cat["queries"] != 2.0 {
		t.Errorf("by_category.single-hop = %v, want 2 queries", cat)
	}
	base, _ := obj["fts5_baseline"].(map[string]any)
	if cat, _ := base["by_category"].(map[string]any)["adversarial"].(map[string]any); cat["queries"] != 1.0 {
		t.Errorf("fts5_baseline.by_category = %v, want the adversarial query there too", base["by_category"])
	}
}

func TestDatasetErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"UnknownRelevantID": `{"name":"x","scopes":[{"guild_id":"g","memories":[{"id":"m1","content":"some memory text"}],"queries":[{"id":"q","text":"t","relevant":["m9"]}]}]}`,
		"NotJSON":           `{"name":`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".json")
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := eval.Run(context.Background(), eval.Options{Dataset: path, Dir: dir}); err == nil {
				t.Fatal("want an error for a bad dataset")
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
