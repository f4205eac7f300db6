// Package eval runs kioku's retrieval evaluation (SPEC §8): it loads a dataset of chat
// memories and questions into a fresh temporary store through the real write path, asks the
// real recall every question in its server's scope, and scores the rankings.
package eval

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// DefaultK is the cut-offs reported when Options.K is empty.
var DefaultK = []int{1, 5, 10}

// Dataset is the JSON document of SPEC §8.
type Dataset struct {
	Name   string  `json:"name"`
	Scopes []Scope `json:"scopes"`
}

// Scope is one server of a dataset: its memories and the questions asked in it.
type Scope struct {
	GuildID  string        `json:"guild_id"`
	Memories []MemoryEntry `json:"memories"`
	Queries  []Query       `json:"queries"`
}

// MemoryEntry is one dataset memory.
type MemoryEntry struct {
	ID        string    `json:"id"`
	Content   string    `json:"content"`
	Author    string    `json:"author"`
	CreatedAt time.Time `json:"created_at"`
}

// Query is one dataset question with the ids of the memories that answer it.
type Query struct {
	ID       string   `json:"id"`
	Text     string   `json:"text"`
	Relevant []string `json:"relevant"`
	Category string   `json:"category"`
}

// Options configures Run.
type Options struct {
	// Dataset is the path of the dataset file.
	Dataset string
	// K lists the recall@k cut-offs to report; empty means DefaultK.
	K []int
	// Embed and EmbedModel, when set, give the store an embedding model so recall is hybrid;
	// without them the eval measures keyword recall alone (the bot without an embedding model).
	Embed      ltm.EmbedFunc
	EmbedModel string
	// Dir is where the temporary database is created; empty means the system temp dir. The
	// database is removed when Run returns.
	Dir string
}

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
	// Baseline scores plain SQLite FTS5 BM25 on the same database and questions (the
	// question's words OR-ed, ORDER BY bm25, in the query's scope), so that what kioku's
	// recall adds is measured in the same run.
	Baseline Metrics
	// Misses lists, for inspection, the queries whose top 10 held no relevant memory.
	Misses []Miss
}

// Miss is a query that found nothing relevant in its top 10.
type Miss struct {
	Scope, QueryID, Text, Category string
}

// Load reads and checks a dataset file.
func Load(path string) (Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Dataset{}, fmt.Errorf("couldn't read dataset: %w", err)
	}
	var d Dataset
	if err := json.Unmarshal(data, &d); err != nil {
		return Dataset{}, fmt.Errorf("couldn't parse dataset %s: %w", path, err)
	}
	if err := d.validate(); err != nil {
		return Dataset{}, fmt.Errorf("invalid dataset %s: %w", path, err)
	}
	return d, nil
}

func (d *Dataset) validate() error {
	if len(d.Scopes) == 0 {
		return errors.New("no scopes")
	}
	guilds := map[string]bool{}
	for i, s := range d.Scopes {
		if s.GuildID == "" {
			return fmt.Errorf("scope %d has no guild_id", i+1)
		}
		if guilds[s.GuildID] {
			return fmt.Errorf("guild_id %q appears twice", s.GuildID)
		}
		guilds[s.GuildID] = true
		ids := map[string]bool{}
		for _, m := range s.Memories {
			if m.ID == "" || ids[m.ID] {
				return fmt.Errorf("scope %s: memory id %q is empty or repeated", s.GuildID, m.ID)
			}
			ids[m.ID] = true
			// Checked here so a bad entry is named before any database is made, instead of
			// failing the load of its whole scope by its position.
			if _, err := memory.CleanContent(m.Content); err != nil {
				return fmt.Errorf("scope %s: memory %q: %s", s.GuildID, m.ID, memory.ErrorMessage(err))
			}
		}
		for _, q := range s.Queries {
			if len(q.Relevant) == 0 {
				return fmt.Errorf("scope %s: query %q lists no relevant memory", s.GuildID, q.ID)
			}
			for _, r := range q.Relevant {
				if !ids[r] {
					return fmt.Errorf("scope %s: query %q names unknown memory %q", s.GuildID, q.ID, r)
				}
			}
		}
	}
	return nil
}

// Run evaluates recall on the dataset at opt.Dataset.
func Run(ctx context.Context, opt Options) (Report, error) {
	d, err := Load(opt.Dataset)
	if err != nil {
		return Report{}, err
	}
	return RunDataset(ctx, d, opt)
}

// RunDataset evaluates recall on an already loaded dataset (opt.Dataset is ignored).
func RunDataset(ctx context.Context, d Dataset, opt Options) (Report, error) {
	ks := slices.Clone(opt.K)
	if len(ks) == 0 {
		ks = slices.Clone(DefaultK)
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	if ks[0] < 1 || ks[len(ks)-1] > 100 {
		return Report{}, fmt.Errorf("recall cut-offs must be between 1 and 100, got %v", ks)
	}
	limit := max(10, ks[len(ks)-1])

	dir, err := os.MkdirTemp(opt.Dir, "kioku-eval-")
	if err != nil {
		return Report{}, fmt.Errorf("couldn't create eval directory: %w", err)
	}
	defer os.RemoveAll(dir)
	store, err := ltm.Open(ctx, filepath.Join(dir, "eval.db"))
	if err != nil {
		return Report{}, err
	}
	defer store.Close()
	if opt.Embed != nil {
		store.Recall.SetEmbedder(opt.Embed, opt.EmbedModel)
	}

	rep := Report{Name: d.Name, K: ks}
	// The baseline reads the same file through its own connection, as any SQLite client would.
	plain, err := sql.Open("sqlite", ltm.ReadOnlyDSN(filepath.Join(dir, "eval.db")))
	if err != nil {
		return Report{}, fmt.Errorf("couldn't open eval database for the baseline: %w", err)
	}
	defer plain.Close()
	var all, base []queryResult
	for _, sc := range d.Scopes {
		owner := memory.ServerOwner(sc.GuildID)
		absorbed, stored, err := load(ctx, store, owner, sc.Memories)
		if err != nil {
			return Report{}, fmt.Errorf("couldn't load scope %s: %w", sc.GuildID, err)
		}
		rep.Memories += len(sc.Memories)
		rep.Stored += stored
		for _, q := range sc.Queries {
			start := time.Now()
			res, err := store.Recall.Search(ctx, memory.SearchQuery{Text: q.Text, Owners: []memory.Owner{owner}, Limit: limit})
			took := time.Since(start)
			if err != nil {
				return Report{}, fmt.Errorf("query %s of scope %s: %w", q.ID, sc.GuildID, err)
			}
			ranked := make([][]string, len(res))
			for i, r := range res {
				ranked[i] = absorbed[r.Memory.ID]
			}
			qr := score(q, ranked, ks, took)
			all = append(all, qr)
			start = time.Now()
			bids, err := plainFTS(ctx, plain, sc.GuildID, q.Text, limit)
			took = time.Since(start)
			if err != nil {
				return Report{}, fmt.Errorf("baseline for query %s of scope %s: %w", q.ID, sc.GuildID, err)
			}
			branked := make([][]string, len(bids))
			for i, id := range bids {
				branked[i] = absorbed[id]
			}
			base = append(base, score(q, branked, ks, took))
			if qr.rr == 0 || qr.recall[10] == 0 {
				rep.Misses = append(rep.Misses, Miss{Scope: sc.GuildID, QueryID: q.ID, Text: q.Text, Category: q.Category})
			}
		}
	}
	rep.Overall = aggregate(all, ks)
	rep.Baseline = aggregate(base, ks)
	rep.ByCategory = map[string]Metrics{}
	byCat := map[string][]queryResult{}
	for _, qr := range all {
		byCat[qr.category] = append(byCat[qr.category], qr)
	}
	for c, qs := range byCat {
		rep.ByCategory[c] = aggregate(qs, ks)
	}
	return rep, nil
}

// load writes a scope's memories through RememberMany, the bulk write path, keeping author
// and creation time as an import does, and returns which dataset ids each stored memory
// absorbed (more than one when the write path deduplicated them).
func load(ctx context.Context, s *ltm.Store, owner memory.Owner, entries []MemoryEntry) (map[int64][]string, int, error) {
	mems := make([]memory.Memory, len(entries))
	for i, e := range entries {
		mems[i] = memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID, Content: e.Content,
			Source: memory.SourceImport, Provenance: memory.Provenance{Author: e.Author},
			CreatedAt: e.CreatedAt, UpdatedAt: e.CreatedAt}
	}
	res, err := s.Transfer.RememberMany(ctx, mems, "eval")
	if err != nil {
		return nil, 0, err
	}
	if len(res.IDs) != len(entries) {
		return nil, 0, fmt.Errorf("write path returned %d ids for %d memories", len(res.IDs), len(entries))
	}
	absorbed := make(map[int64][]string, len(entries))
	for i, id := range res.IDs {
		absorbed[id] = append(absorbed[id], entries[i].ID)
	}
	return absorbed, res.Created, nil
}

// plainFTS is the baseline ranking: the question's words, quoted and OR-ed, matched
// against the memories' FTS5 index (the same porter tokenizer kioku uses) in one server's
// scope, ordered by bm25. No phrase, author, date or CJK handling.
func plainFTS(ctx context.Context, db *sql.DB, guildID, text string, limit int) ([]int64, error) {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) == 0 {
		return nil, nil
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	rows, err := db.QueryContext(ctx, `SELECT m.id FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.scope_key = ? AND m.deleted_at IS NULL
		ORDER BY bm25(memories_fts) LIMIT ?`, strings.Join(words, " OR "), memory.ServerOwner(guildID).Key(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

type queryResult struct {
	category string
	recall   map[int]float64
	rr       float64
	ndcg     float64
	took     time.Duration
}

// score computes one query's metrics from its ranking, where each ranked entry lists the
// dataset ids the retrieved memory stands for.
func score(q Query, ranked [][]string, ks []int, took time.Duration) queryResult {
	rel := make(map[string]bool, len(q.Relevant))
	for _, r := range q.Relevant {
		rel[r] = true
	}
	qr := queryResult{category: q.Category, recall: map[int]float64{}, took: took}
	ks = append(slices.Clone(ks), 10)
	for _, k := range ks {
		found := map[string]bool{}
		for _, ids := range ranked[:min(k, len(ranked))] {
			for _, id := range ids {
				if rel[id] {
					found[id] = true
				}
			}
		}
		qr.recall[k] = float64(len(found)) / float64(len(rel))
	}
	// MRR and nDCG count retrieved memories: a memory that absorbed two relevant ids is
	// one relevant result, and the ideal ranking has as many relevant results as there are
	// distinct memories holding the relevant ids.
	var dcg float64
	hits := 0
	for i, ids := range ranked {
		if !slices.ContainsFunc(ids, func(id string) bool { return rel[id] }) {
			continue
		}
		if qr.rr == 0 {
			qr.rr = 1 / float64(i+1)
		}
		if i < 10 {
			dcg += 1 / math.Log2(float64(i+2))
		}
		hits++
	}
	ideal := idealCount(q.Relevant, ranked)
	var idcg float64
	for i := range min(ideal, 10) {
		idcg += 1 / math.Log2(float64(i+2))
	}
	if idcg > 0 {
		qr.ndcg = dcg / idcg
	}
	return qr
}

// idealCount is the number of distinct memories the relevant ids live in: the relevant ids
// minus those absorbed into a memory that also absorbed another relevant id.
func idealCount(relevant []string, ranked [][]string) int {
	n := len(relevant)
	rel := map[string]bool{}
	for _, r := range relevant {
		rel[r] = true
	}
	for _, ids := range ranked {
		c := 0
		for _, id := range ids {
			if rel[id] {
				c++
			}
		}
		if c > 1 {
			n -= c - 1
		}
	}
	return n
}

func aggregate(qs []queryResult, ks []int) Metrics {
	m := Metrics{Queries: len(qs), Recall: map[int]float64{}}
	if len(qs) == 0 {
		return m
	}
	lat := make([]time.Duration, len(qs))
	for i, q := range qs {
		for _, k := range ks {
			m.Recall[k] += q.recall[k]
		}
		m.MRR += q.rr
		m.NDCG10 += q.ndcg
		lat[i] = q.took
	}
	n := float64(len(qs))
	for _, k := range ks {
		m.Recall[k] /= n
	}
	m.MRR /= n
	m.NDCG10 /= n
	slices.Sort(lat)
	m.P50, m.P95 = percentile(lat, 0.50), percentile(lat, 0.95)
	return m
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 {
	return math.Round(float64(d.Microseconds())) / 1000
}

func round4(x float64) float64 { return math.Round(x*10000) / 10000 }

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

// MarshalJSON renders the report as the one JSON object of SPEC §8: queries, recall@k for
// each k, mrr, ndcg@10, p50_ms, p95_ms and by_category (the same keys per category).
func (r Report) MarshalJSON() ([]byte, error) {
	cats := make([]string, 0, len(r.ByCategory))
	for c := range r.ByCategory {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	var byCat strings.Builder
	byCat.WriteByte('{')
	for i, c := range cats {
		if i > 0 {
			byCat.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		byCat.Write(k)
		byCat.WriteByte(':')
		if err := writeObject(&byCat, r.ByCategory[c].jsonFields(r.K)); err != nil {
			return nil, err
		}
	}
	byCat.WriteByte('}')
	var b strings.Builder
	var baseline strings.Builder
	if err := writeObject(&baseline, r.Baseline.jsonFields(r.K)); err != nil {
		return nil, err
	}
	fs := append(r.Overall.jsonFields(r.K), field{"by_category", json.RawMessage(byCat.String())},
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
	fmt.Fprintf(&b, "dataset %s: %d memories (%d stored after dedup), %d queries\n\n", r.Name, r.Memories, r.Stored, r.Overall.Queries)
	fmt.Fprintf(&b, "%-14s %7s", "category", "queries")
	for _, k := range r.K {
		fmt.Fprintf(&b, " %9s", fmt.Sprintf("recall@%d", k))
	}
	fmt.Fprintf(&b, " %7s %7s %8s %8s\n", "mrr", "ndcg@10", "p50_ms", "p95_ms")
	row := func(name string, m Metrics) {
		fmt.Fprintf(&b, "%-14s %7d", name, m.Queries)
		for _, k := range r.K {
			fmt.Fprintf(&b, " %9.3f", m.Recall[k])
		}
		fmt.Fprintf(&b, " %7.3f %7.3f %8.2f %8.2f\n", m.MRR, m.NDCG10, ms(m.P50), ms(m.P95))
	}
	cats := make([]string, 0, len(r.ByCategory))
	for c := range r.ByCategory {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		row(c, r.ByCategory[c])
	}
	row("overall", r.Overall)
	row("fts5 baseline", r.Baseline)
	_, err := io.WriteString(w, b.String())
	return err
}
