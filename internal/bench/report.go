package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

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
