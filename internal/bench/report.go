package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Report holds the measurements; its JSON keys are those of SPEC §8 plus a few extra.
// Ratios are p99 against p99 of the same run.
type Report struct {
	Memories int `json:"memories"`
	Dims     int `json:"dims"`
	Queries  int `json:"queries"`
	// Scopes is the number of guilds; PersonalScopes the members with personal memory;
	// HotMemories the hot guild's memories (where Queries are asked).
	Scopes         int `json:"scopes"`
	PersonalScopes int `json:"personal_scopes"`
	HotMemories    int `json:"hot_memories"`
	// WritePerS is the bulk write path (RememberMany: validation, dedup, FTS triggers,
	// entity linking, decision detection, history, embedding cache, vector index) in
	// memories per second.
	WritePerS float64 `json:"write_per_s"`
	// RememberPerS is one Remember call per memory, each its own transaction.
	RememberPerS float64 `json:"remember_per_s"`
	// RecallP50Ms and RecallP99Ms time the full hybrid Search (limit 10) in the hot guild.
	RecallP50Ms float64 `json:"recall_p50_ms"`
	RecallP99Ms float64 `json:"recall_p99_ms"`
	// VectorP50Ms times the vector leg alone (NearestMemories, k 10).
	VectorP50Ms float64 `json:"vector_p50_ms"`
	VectorP99Ms float64 `json:"vector_p99_ms"`
	// KeywordP50Ms times keyword-only Search (limit 10): the keyword leg with hydration,
	// ranking stages and no vector leg.
	KeywordP50Ms float64 `json:"keyword_p50_ms"`
	KeywordP99Ms float64 `json:"keyword_p99_ms"`
	// BruteforceP50Ms is an exact float32 scan of the same vectors (k 10).
	BruteforceP50Ms float64 `json:"bruteforce_p50_ms"`
	BruteforceP99Ms float64 `json:"bruteforce_p99_ms"`
	// FTSOnlyP50Ms is a plain FTS5 BM25 query (words OR-ed, ORDER BY bm25 LIMIT 10),
	// limited to the guild's rows when there are several scopes.
	FTSOnlyP50Ms float64 `json:"fts_only_p50_ms"`
	FTSOnlyP99Ms float64 `json:"fts_only_p99_ms"`
	// VectorSpeedup is BruteforceP50Ms / VectorP50Ms.
	VectorSpeedup float64 `json:"vector_speedup"`
	// RecallVsFTS is RecallP99Ms / FTSOnlyP99Ms and KeywordVsFTS KeywordP99Ms /
	// FTSOnlyP99Ms: the Scale issue's targets are ≤ 0.25 and ≤ 0.05.
	RecallVsFTS  float64 `json:"recall_vs_fts_p99"`
	KeywordVsFTS float64 `json:"keyword_vs_fts_p99"`
	// SourceAt10 is the share of queries with a source memory (perturbed, long, short)
	// whose source is in the vector leg's top 10; ExactSourceAt10 the same for the exact
	// scan; OverlapAt10 the mean share of the exact top 10 that the vector leg also returns.
	SourceAt10      float64 `json:"ann_source_at10"`
	ExactSourceAt10 float64 `json:"exact_source_at10"`
	OverlapAt10     float64 `json:"ann_overlap_at10"`
	// HybridSourceAt10 is the share of perturbed and long queries whose source memory full
	// recall ranks in its top 10.
	HybridSourceAt10 float64 `json:"hybrid_source_at10"`
	// KeywordOverlapAt10 is the mean share of the reference ranking's top 10 that
	// keyword-only recall also returns; only with Options.Reference.
	KeywordOverlapAt10 *float64 `json:"keyword_overlap_at10,omitempty"`
	// ByQueryKind splits the hot guild's timings by query shape (queryKinds).
	ByQueryKind map[string]KindReport `json:"by_query_kind"`
	// ByScopeSize times perturbed queries in the other guilds by size bucket (medium,
	// small, personal); only with several scopes.
	ByScopeSize []BucketReport `json:"by_scope_size,omitempty"`
	// AloneRecallP99Ms is the hot guild's recall p99 when it is alone in its database
	// (the same queries, each asked there right after the shared database) and
	// SharedVsAlone RecallP99Ms / AloneRecallP99Ms; only with several scopes.
	AloneRecallP50Ms float64 `json:"alone_recall_p50_ms,omitempty"`
	AloneRecallP99Ms float64 `json:"alone_recall_p99_ms,omitempty"`
	AloneFTSP99Ms    float64 `json:"alone_fts_only_p99_ms,omitempty"`
	SharedVsAlone    float64 `json:"shared_vs_alone_p99,omitempty"`
	// ColdRecallP99Ms times the first recall of each of up to 50 small guilds after the
	// store is reopened, ColdFTSP99Ms a plain FTS5 query for the same guild and text, and
	// ColdVsFTS their ratio; only with several scopes.
	ColdScopes      int     `json:"cold_scopes,omitempty"`
	ColdRecallP50Ms float64 `json:"cold_recall_p50_ms,omitempty"`
	ColdRecallP99Ms float64 `json:"cold_recall_p99_ms,omitempty"`
	ColdFTSP99Ms    float64 `json:"cold_fts_only_p99_ms,omitempty"`
	ColdVsFTS       float64 `json:"cold_vs_fts_p99,omitempty"`
	// OpenMs is start-up: from opening the existing database (migrations checked) to the
	// first recall answered in the hot guild; OpenDBMs the sqlite.Open part of it.
	OpenMs   float64 `json:"open_ms"`
	OpenDBMs float64 `json:"open_db_ms"`
	// RSSMB is the peak resident memory (VmHWM) from reopening until every scope was
	// asked once, after the load's memory was handed back and the peak reset (RSSPeak
	// false: the peak could not be reset and RSSMB is the resident memory at the end).
	// BaseRSSMB is what the process held just before reopening; BytesPerMemory is
	// (RSSMB − BaseRSSMB) / Memories; HeapInuseMB the Go heap in use at the end.
	RSSMB          float64 `json:"rss_mb"`
	RSSPeak        bool    `json:"rss_peak"`
	BaseRSSMB      float64 `json:"base_rss_mb"`
	HeapInuseMB    float64 `json:"heap_inuse_mb"`
	BytesPerMemory float64 `json:"bytes_per_memory"`
	// AllScopesMs is how long asking every scope once took after reopening.
	AllScopesMs float64 `json:"all_scopes_ms"`
	// Turns, TurnP50Ms and TurnP99Ms time whole chat turns in the hot guild (intent gate,
	// context build with recall, tool loop with an in-process model that answers at once,
	// transcript writes, short-term capture); TurnRecallP99Ms is the recall inside them,
	// TurnPlainRecallP99Ms the same queries asked as plain recalls between the turns, and
	// TurnVsRecall TurnP99Ms / TurnPlainRecallP99Ms. Only with Options.Turns.
	Turns                int     `json:"turns,omitempty"`
	TurnP50Ms            float64 `json:"turn_p50_ms,omitempty"`
	TurnP99Ms            float64 `json:"turn_p99_ms,omitempty"`
	TurnRecallP99Ms      float64 `json:"turn_recall_p99_ms,omitempty"`
	TurnPlainRecallP99Ms float64 `json:"turn_plain_recall_p99_ms,omitempty"`
	TurnVsRecall         float64 `json:"turn_vs_recall_p99,omitempty"`
	// VectorIndex names the index used for the vector leg.
	VectorIndex string  `json:"vector_index"`
	LoadSeconds float64 `json:"load_s"`
	// Reused is set when the databases of Options.Keep were reused: nothing was loaded and
	// WritePerS, RememberPerS and LoadSeconds are zero.
	Reused bool `json:"reused,omitempty"`
}

// KindReport is the hot guild's timings for one query shape.
type KindReport struct {
	Queries     int     `json:"queries"`
	RecallP50Ms float64 `json:"recall_p50_ms"`
	RecallP99Ms float64 `json:"recall_p99_ms"`
	KeywordP99  float64 `json:"keyword_p99_ms"`
	FTSOnlyP99  float64 `json:"fts_only_p99_ms"`
}

// BucketReport is recall in the guilds of one size bucket.
type BucketReport struct {
	Bucket       string  `json:"bucket"`
	Scopes       int     `json:"scopes"`
	Memories     int     `json:"memories"`
	Queries      int     `json:"queries"`
	RecallP50Ms  float64 `json:"recall_p50_ms"`
	RecallP99Ms  float64 `json:"recall_p99_ms"`
	KeywordP99Ms float64 `json:"keyword_p99_ms"`
	FTSOnlyP99Ms float64 `json:"fts_only_p99_ms"`
}

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
	var b strings.Builder
	fmt.Fprintf(&b, `memories %d, dims %d, queries %d (load %.1fs)
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

	fmt.Fprintf(&b, "\nscopes %d guild(s) + %d personal; hot guild %d memories (the queries above are asked there)\n",
		r.Scopes, r.PersonalScopes, r.HotMemories)
	fmt.Fprintf(&b, "p50 / p99 ms          %-17s %s\n", "", "ratio of p99s (same run)")
	fmt.Fprintf(&b, "  fts only (baseline) %7.3f / %-8.3f\n", r.FTSOnlyP50Ms, r.FTSOnlyP99Ms)
	fmt.Fprintf(&b, "  keyword-only recall %7.3f / %-8.3f  keyword / fts   %.2f\n", r.KeywordP50Ms, r.KeywordP99Ms, r.KeywordVsFTS)
	fmt.Fprintf(&b, "  hybrid recall       %7.3f / %-8.3f  hybrid / fts    %.2f\n", r.RecallP50Ms, r.RecallP99Ms, r.RecallVsFTS)
	fmt.Fprintf(&b, "  vector leg          %7.3f / %-8.3f  brute / vector  %.1f (p50)\n", r.VectorP50Ms, r.VectorP99Ms, r.VectorSpeedup)
	fmt.Fprintf(&b, "  brute-force scan    %7.3f / %-8.3f\n", r.BruteforceP50Ms, r.BruteforceP99Ms)
	if r.KeywordOverlapAt10 != nil {
		fmt.Fprintf(&b, "  keyword-only top 10 vs reference ranking: overlap %.4f\n", *r.KeywordOverlapAt10)
	}
	if len(r.ByQueryKind) > 0 {
		fmt.Fprintf(&b, "by query kind         n   recall p50 / p99   keyword p99  fts p99\n")
		for _, qk := range queryKinds {
			k, ok := r.ByQueryKind[qk.kind]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "  %-10s %10d   %7.3f / %-8.3f %8.3f  %8.3f\n", qk.kind, k.Queries, k.RecallP50Ms, k.RecallP99Ms, k.KeywordP99, k.FTSOnlyP99)
		}
	}
	if len(r.ByScopeSize) > 0 {
		fmt.Fprintf(&b, "by scope size         scopes  memories    n   recall p50 / p99   keyword p99  fts p99\n")
		for _, s := range r.ByScopeSize {
			fmt.Fprintf(&b, "  %-18s %6d %9d %4d   %7.3f / %-8.3f %8.3f  %8.3f\n", s.Bucket, s.Scopes, s.Memories, s.Queries,
				s.RecallP50Ms, s.RecallP99Ms, s.KeywordP99Ms, s.FTSOnlyP99Ms)
		}
	}
	if r.AloneRecallP99Ms > 0 {
		fmt.Fprintf(&b, "hot guild alone       recall %.3f / %.3f ms (fts p99 %.3f); shared / alone p99 %.2f\n",
			r.AloneRecallP50Ms, r.AloneRecallP99Ms, r.AloneFTSP99Ms, r.SharedVsAlone)
	}
	fmt.Fprintf(&b, "start-up              %.1f ms to the first recall (database open %.1f ms)\n", r.OpenMs, r.OpenDBMs)
	if r.ColdScopes > 0 {
		fmt.Fprintf(&b, "cold guilds (%d)      first recall %.3f / %.3f ms, fts p99 %.3f; cold / fts p99 %.2f\n",
			r.ColdScopes, r.ColdRecallP50Ms, r.ColdRecallP99Ms, r.ColdFTSP99Ms, r.ColdVsFTS)
	}
	peak := "peak"
	if !r.RSSPeak {
		peak = "current (peak not resettable)"
	}
	fmt.Fprintf(&b, "memory                rss %.1f MB %s after every scope was asked once (%.0f ms), %.0f bytes per memory over the %.1f MB before reopening; Go heap in use %.1f MB\n",
		r.RSSMB, peak, r.AllScopesMs, r.BytesPerMemory, r.BaseRSSMB, r.HeapInuseMB)
	if r.Turns > 0 {
		fmt.Fprintf(&b, "chat turn (%d)        %.3f / %.3f ms (instant model; recall in turn p99 %.3f, plain recall between turns p99 %.3f); turn / recall p99 %.2f\n",
			r.Turns, r.TurnP50Ms, r.TurnP99Ms, r.TurnRecallP99Ms, r.TurnPlainRecallP99Ms, r.TurnVsRecall)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
