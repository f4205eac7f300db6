// Package bench is kioku's recall benchmark (SPEC §8): a deterministic synthetic corpus is
// written through the real write path into a fresh temporary store, then the real recall,
// its vector and keyword legs, and two baselines measured in the same run — an exact
// float32 scan of the same vectors and a plain FTS5 BM25 query — so the ratios mean
// something on a noisy machine.
package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	_ "modernc.org/sqlite" // the baseline opens the benchmark database directly
)

// Defaults of Options.
const (
	DefaultMemories = 100_000
	DefaultDims     = 384
	DefaultQueries  = 1000
	DefaultSeed     = 1
)

// Options configures Run. Zero fields take the defaults above.
type Options struct {
	Memories int
	Dims     int
	Queries  int
	Seed     uint64
	// Dir is where the temporary database is created; empty means the system temp dir.
	Dir string
	// Progress, when set, receives one line per phase (the run takes a while at 100k).
	Progress io.Writer
}

// Report holds the measurements; its JSON keys are those of SPEC §8 plus a few extra.
type Report struct {
	Memories int `json:"memories"`
	Dims     int `json:"dims"`
	Queries  int `json:"queries"`
	// WritePerS is the bulk write path (RememberMany: validation, dedup, FTS triggers,
	// history, embedding cache, vector index) in memories per second.
	WritePerS float64 `json:"write_per_s"`
	// RememberPerS is one Remember call per memory, each its own transaction.
	RememberPerS float64 `json:"remember_per_s"`
	// RecallP50Ms and RecallP99Ms time the full hybrid Search (limit 10).
	RecallP50Ms float64 `json:"recall_p50_ms"`
	RecallP99Ms float64 `json:"recall_p99_ms"`
	// VectorP50Ms times the vector leg alone (NearestMemories, k 10).
	VectorP50Ms float64 `json:"vector_p50_ms"`
	// KeywordP50Ms times keyword-only Search (limit 10).
	KeywordP50Ms float64 `json:"keyword_p50_ms"`
	// BruteforceP50Ms is an exact float32 scan of the same vectors (k 10).
	BruteforceP50Ms float64 `json:"bruteforce_p50_ms"`
	// FTSOnlyP50Ms is a plain FTS5 BM25 query (words OR-ed, ORDER BY bm25 LIMIT 10).
	FTSOnlyP50Ms float64 `json:"fts_only_p50_ms"`
	// VectorSpeedup is BruteforceP50Ms / VectorP50Ms.
	VectorSpeedup float64 `json:"vector_speedup"`
	// SourceAt10 is the share of queries whose source memory is in the vector leg's top
	// 10; ExactSourceAt10 the same for the exact scan; OverlapAt10 the mean share of the
	// exact top 10 that the vector leg also returns.
	SourceAt10      float64 `json:"ann_source_at10"`
	ExactSourceAt10 float64 `json:"exact_source_at10"`
	OverlapAt10     float64 `json:"ann_overlap_at10"`
	// HybridSourceAt10 is the share of queries whose source memory full recall ranks in
	// its top 10.
	HybridSourceAt10 float64 `json:"hybrid_source_at10"`
	// VectorIndex names the index used for the vector leg.
	VectorIndex string  `json:"vector_index"`
	LoadSeconds float64 `json:"load_s"`
}

// Run builds the corpus, loads it and measures. It needs no network.
func Run(ctx context.Context, opt Options) (Report, error) {
	if opt.Memories <= 0 {
		opt.Memories = DefaultMemories
	}
	if opt.Dims <= 0 {
		opt.Dims = DefaultDims
	}
	if opt.Queries <= 0 {
		opt.Queries = DefaultQueries
	}
	if opt.Seed == 0 {
		opt.Seed = DefaultSeed
	}
	progress := func(format string, args ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, format+"\n", args...)
		}
	}
	progress("generating %d memories, %d dims, %d queries", opt.Memories, opt.Dims, opt.Queries)
	c := newCorpus(opt.Seed, opt.Memories, opt.Dims, opt.Queries)

	dir, err := os.MkdirTemp(opt.Dir, "kioku-bench-")
	if err != nil {
		return Report{}, fmt.Errorf("couldn't create bench directory: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bench.db")
	store, err := ltm.Open(ctx, path)
	if err != nil {
		return Report{}, err
	}
	defer store.Close()
	// A synthetic corpus of any size in one scope: the per-scope caps guard live servers.
	store.MaxServerMemories = -1
	store.Recall.SetEmbedder(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = c.vector(t)
		}
		return out, nil
	}, "bench-synthetic")

	rep := Report{Memories: opt.Memories, Dims: opt.Dims, Queries: opt.Queries, VectorIndex: "sign-code shortlist + exact re-rank"}
	owner := memory.ServerOwner("bench")
	mem := func(i int) memory.Memory {
		return memory.Memory{Scope: memory.ScopeServer, GuildID: owner.GuildID, Content: c.texts[i],
			Source: memory.SourceImport, Provenance: memory.Provenance{Author: c.authors[i]},
			CreatedAt: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)}
	}
	// The last memories go through Remember one by one; the rest through the bulk path.
	single := min(max(opt.Memories/50, 200), 2000, opt.Memories/2)
	bulk := opt.Memories - single
	ids := make([]int64, opt.Memories)
	start := time.Now()
	const chunk = 5000
	for lo := 0; lo < bulk; lo += chunk {
		hi := min(lo+chunk, bulk)
		batch := make([]memory.Memory, 0, hi-lo)
		for i := lo; i < hi; i++ {
			batch = append(batch, mem(i))
		}
		res, err := store.Transfer.RememberMany(ctx, batch, "bench")
		if err != nil {
			return Report{}, err
		}
		copy(ids[lo:], res.IDs)
		if lo%(chunk*4) == 0 {
			progress("  loaded %d", hi)
		}
	}
	if bulk > 0 {
		rep.WritePerS = round1(float64(bulk) / time.Since(start).Seconds())
	}
	progress("bulk write: %.0f memories/s", rep.WritePerS)
	start1 := time.Now()
	for i := bulk; i < opt.Memories; i++ {
		res, err := store.Memories.Remember(ctx, mem(i), "bench")
		if err != nil {
			return Report{}, err
		}
		ids[i] = res.Memory.ID
	}
	rep.RememberPerS = round1(float64(single) / time.Since(start1).Seconds())
	rep.LoadSeconds = round1(time.Since(start).Seconds())
	progress("one-by-one remember: %.0f memories/s", rep.RememberPerS)
	// Vectors load per scope on first use; load the bench scope now, outside the timings.
	if err := store.Recall.WarmVectors(ctx, owner); err != nil {
		return Report{}, err
	}
	if st := store.Recall.EmbedStatus(); st.Vectors != opt.Memories {
		return Report{}, fmt.Errorf("vector index holds %d memories, want %d", st.Vectors, opt.Memories)
	}
	index := make(map[int64]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}

	raw, err := sql.Open("sqlite", ltm.ReadOnlyDSN(path))
	if err != nil {
		return Report{}, fmt.Errorf("couldn't open baseline connection: %w", err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)

	var recall, keyword, vector, brute, fts []time.Duration
	var srcANN, srcExact, srcHybrid, overlap float64
	// One untimed round warms caches and the query-vector cache equally for every leg.
	for _, q := range c.queries[:min(20, len(c.queries))] {
		if _, err := store.Recall.Search(ctx, memory.SearchQuery{Text: q.text, Owners: []memory.Owner{owner}}); err != nil {
			return Report{}, err
		}
	}
	progress("running %d queries", len(c.queries))
	for _, q := range c.queries {
		t := time.Now()
		res, err := store.Recall.Search(ctx, memory.SearchQuery{Text: q.text, Owners: []memory.Owner{owner}, Limit: 10})
		recall = append(recall, time.Since(t))
		if err != nil {
			return Report{}, err
		}
		for _, r := range res {
			if index[r.Memory.ID] == q.source {
				srcHybrid++
				break
			}
		}

		t = time.Now()
		if _, err := store.Recall.Search(ctx, memory.SearchQuery{Text: q.text, Owners: []memory.Owner{owner}, Limit: 10, KeywordOnly: true}); err != nil {
			return Report{}, err
		}
		keyword = append(keyword, time.Since(t))

		t = time.Now()
		ann := store.Recall.NearestMemories(owner, q.vec, 10, false)
		vector = append(vector, time.Since(t))

		t = time.Now()
		exact := store.Recall.NearestMemories(owner, q.vec, 10, true)
		brute = append(brute, time.Since(t))

		t = time.Now()
		if err := ftsOnly(ctx, raw, q.text); err != nil {
			return Report{}, err
		}
		fts = append(fts, time.Since(t))

		inExact := map[int64]bool{}
		for _, h := range exact {
			inExact[h.ID] = true
			if index[h.ID] == q.source {
				srcExact++
			}
		}
		shared := 0
		for _, h := range ann {
			if inExact[h.ID] {
				shared++
			}
			if index[h.ID] == q.source {
				srcANN++
			}
		}
		overlap += float64(shared) / float64(max(1, len(exact)))
	}
	nq := float64(len(c.queries))
	rep.RecallP50Ms, rep.RecallP99Ms = pct(recall, 0.50), pct(recall, 0.99)
	rep.KeywordP50Ms = pct(keyword, 0.50)
	rep.VectorP50Ms = pct(vector, 0.50)
	rep.BruteforceP50Ms = pct(brute, 0.50)
	rep.FTSOnlyP50Ms = pct(fts, 0.50)
	if rep.VectorP50Ms > 0 {
		rep.VectorSpeedup = round1(rep.BruteforceP50Ms / rep.VectorP50Ms)
	}
	rep.SourceAt10 = round4(srcANN / nq)
	rep.ExactSourceAt10 = round4(srcExact / nq)
	rep.OverlapAt10 = round4(overlap / nq)
	rep.HybridSourceAt10 = round4(srcHybrid / nq)
	return rep, nil
}

// ftsOnly is the keyword baseline: the query's words OR-ed in a plain FTS5 BM25 query.
func ftsOnly(ctx context.Context, db *sql.DB, text string) error {
	words := strings.Fields(text)
	for i, w := range words {
		words[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	rows, err := db.QueryContext(ctx, `SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?
		ORDER BY bm25(memories_fts) LIMIT 10`, strings.Join(words, " OR "))
	if err != nil {
		return fmt.Errorf("couldn't run FTS baseline: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
	}
	return rows.Err()
}

func pct(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := min(max(int(math.Ceil(p*float64(len(s))))-1, 0), len(s)-1)
	return math.Round(float64(s[i].Microseconds())) / 1000
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }
func round4(x float64) float64 { return math.Round(x*10000) / 10000 }

// WriteJSON writes the report as one JSON object followed by a newline.
func (r Report) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// WriteText writes the report for people.
func (r Report) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, `memories %d, dims %d, queries %d (load %.1fs)
write (bulk)          %10.1f memories/s
remember (one by one) %10.1f memories/s
recall p50 / p99      %7.3f / %.3f ms   (full hybrid; source in top 10: %.4f)
vector leg p50        %10.3f ms   (%s)
keyword p50           %10.3f ms
bruteforce p50        %10.3f ms   (exact float32 scan; vector leg %.1fx faster)
fts only p50          %10.3f ms   (plain FTS5 BM25)
vector leg vs exact   source in top 10 %.4f (exact %.4f), overlap with exact top 10 %.4f
`, r.Memories, r.Dims, r.Queries, r.LoadSeconds, r.WritePerS, r.RememberPerS, r.RecallP50Ms, r.RecallP99Ms,
		r.HybridSourceAt10, r.VectorP50Ms, r.VectorIndex, r.KeywordP50Ms, r.BruteforceP50Ms, r.VectorSpeedup,
		r.FTSOnlyP50Ms, r.SourceAt10, r.ExactSourceAt10, r.OverlapAt10)
	return err
}
