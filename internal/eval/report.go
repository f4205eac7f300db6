package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// Metrics are the scores of a set of queries.
type Metrics struct {
	Queries int
	// Recall maps k to the mean over queries of |relevant ∩ top-k| / |relevant|.
	Recall map[int]float64
	MRR    float64
	NDCG10 float64
	P50    time.Duration
	P95    time.Duration
}

// Report is the result of Run: overall metrics and the same per query category.
type Report struct {
	Name       string
	Memories   int // memories loaded (dataset entries)
	Stored     int // rows the write path kept after dedup
	K          []int
	Overall    Metrics
	ByCategory map[string]Metrics
	// Baseline scores plain SQLite FTS5 BM25 over the same messages and questions (each
	// message indexed as "Author: content", the question's words OR-ed, ORDER BY bm25, in
	// the query's scope), so that what kioku's recall adds is measured in the same run;
	// BaselineByCategory splits it like ByCategory.
	Baseline           Metrics
	BaselineByCategory map[string]Metrics
	// Misses lists, for inspection, the queries whose top 10 held no relevant memory.
	Misses []Miss
	// Skipped counts the dataset memories the write path refused (empty, too long, a
	// credential…); SkippedReasons splits it by reason (the keys of SkipReasons). A skipped
	// memory is left out of the run; it never aborts it.
	Skipped        int
	SkippedReasons map[string]int
	// SkippedQueries counts the queries left out of scoring because every memory they list
	// as relevant was skipped. A query that lost only some is scored on the others.
	SkippedQueries int
	// Outcomes lists every scored query, in dataset order.
	Outcomes []Outcome
}

// Outcome is one scored query, for inspection and for comparing runs.
type Outcome struct {
	Scope, QueryID, Category string
	// AskedAt is the time recall was told the question is asked (Scope.AskedAt); the store's
	// clock reads it too while the query runs.
	AskedAt  time.Time
	Recall10 float64
	RR       float64
}

// Miss is a query that found nothing relevant in its top 10.
type Miss struct {
	Scope, QueryID, Text, Category string
}

// jsonMetrics renders metrics with the keys of SPEC §8, in a stable order.
func (m Metrics) jsonFields(ks []int) []field {
	fs := []field{{"queries", m.Queries}}
	for _, k := range ks {
		fs = append(fs, field{fmt.Sprintf("recall@%d", k), round4(m.Recall[k])})
	}
	return append(fs, field{"mrr", round4(m.MRR)}, field{"ndcg@10", round4(m.NDCG10)},
		field{"p50_ms", ms(m.P50)}, field{"p95_ms", ms(m.P95)})
}

type field struct {
	key   string
	value any
}

func writeObject(b *strings.Builder, fs []field) error {
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		switch v := f.value.(type) {
		case json.RawMessage:
			b.Write(v)
		default:
			enc, err := json.Marshal(v)
			if err != nil {
				return err
			}
			b.Write(enc)
		}
	}
	b.WriteByte('}')
	return nil
}

// categoriesJSON renders metrics per category as one JSON object, categories sorted.
func categoriesJSON(byCat map[string]Metrics, ks []int) (json.RawMessage, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range sortedKeys(byCat) {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		b.Write(k)
		b.WriteByte(':')
		if err := writeObject(&b, byCat[c].jsonFields(ks)); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return json.RawMessage(b.String()), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// MarshalJSON renders the report as the one JSON object of SPEC §8: queries, skipped
// (with skipped_reasons and skipped_queries), recall@k for each k, mrr, ndcg@10, p50_ms,
// p95_ms, by_category (the metric keys per category) and fts5_baseline (the same for plain
// FTS5 BM25, with its own by_category).
func (r Report) MarshalJSON() ([]byte, error) {
	byCat, err := categoriesJSON(r.ByCategory, r.K)
	if err != nil {
		return nil, err
	}
	baseByCat, err := categoriesJSON(r.BaselineByCategory, r.K)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	var baseline strings.Builder
	if err := writeObject(&baseline, append(r.Baseline.jsonFields(r.K), field{"by_category", baseByCat})); err != nil {
		return nil, err
	}
	reasons := r.SkippedReasons
	if reasons == nil {
		reasons = map[string]int{}
	}
	fs := slices.Insert(r.Overall.jsonFields(r.K), 1, field{"skipped", r.Skipped},
		field{"skipped_reasons", reasons}, field{"skipped_queries", r.SkippedQueries})
	fs = append(fs, field{"by_category", byCat},
		field{"fts5_baseline", json.RawMessage(baseline.String())})
	if err := writeObject(&b, fs); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// WriteJSON writes the report as one JSON object followed by a newline.
func (r Report) WriteJSON(w io.Writer) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// WriteText writes the report as a small table for people.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "dataset %s: %d memories (%d stored after dedup, %d skipped), %d queries (%d skipped)\n\n",
		r.Name, r.Memories, r.Stored, r.Skipped, r.Overall.Queries, r.SkippedQueries)
	fmt.Fprintf(&b, "%-18s %7s", "category", "queries")
	for _, k := range r.K {
		fmt.Fprintf(&b, " %9s", fmt.Sprintf("recall@%d", k))
	}
	fmt.Fprintf(&b, " %7s %7s %8s %8s\n", "mrr", "ndcg@10", "p50_ms", "p95_ms")
	row := func(name string, m Metrics) {
		fmt.Fprintf(&b, "%-18s %7d", name, m.Queries)
		for _, k := range r.K {
			fmt.Fprintf(&b, " %9.3f", m.Recall[k])
		}
		fmt.Fprintf(&b, " %7.3f %7.3f %8.2f %8.2f\n", m.MRR, m.NDCG10, ms(m.P50), ms(m.P95))
	}
	for _, c := range sortedKeys(r.ByCategory) {
		row(c, r.ByCategory[c])
	}
	row("overall", r.Overall)
	b.WriteByte('\n')
	for _, c := range sortedKeys(r.BaselineByCategory) {
		row("fts5 "+c, r.BaselineByCategory[c])
	}
	row("fts5 baseline", r.Baseline)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSkipped writes one line per reason the write path refused memories, with its count,
// and one for the queries left out because of them; nothing when nothing was skipped.
func (r Report) WriteSkipped(w io.Writer) error {
	var b strings.Builder
	for _, k := range sortedKeys(r.SkippedReasons) {
		fmt.Fprintf(&b, "eval: skipped %s the write path refuses: %s (%s)\n", plural(r.SkippedReasons[k], "memory", "memories"), k, SkipReasons[k])
	}
	if r.SkippedQueries > 0 {
		fmt.Fprintf(&b, "eval: left out %s whose every relevant memory was skipped\n", plural(r.SkippedQueries, "query", "queries"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
