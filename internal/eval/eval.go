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
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

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
	// AskedAt is when the question is asked (RFC 3339); relative dates in Text resolve
	// against it. Empty means the creation time of the scope's newest memory (Scope.AskedAt).
	AskedAt string `json:"asked_at,omitempty"`
}

// AskedAt returns the time q is asked in s: its asked_at, or else the created_at of the
// newest memory of s (the zero time when no memory of s has one).
func (s Scope) AskedAt(q Query) (time.Time, error) {
	if q.AskedAt != "" {
		t, err := time.Parse(time.RFC3339, q.AskedAt)
		if err != nil {
			return time.Time{}, fmt.Errorf("query %q: asked_at %q is not an RFC 3339 time such as 2023-06-01T10:00:00Z", q.ID, q.AskedAt)
		}
		return t, nil
	}
	return s.newest(), nil
}

// newest is the latest created_at of the scope's memories, zero when none has one.
func (s Scope) newest() time.Time {
	var t time.Time
	for _, m := range s.Memories {
		if m.CreatedAt.After(t) {
			t = m.CreatedAt
		}
	}
	return t
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
	// Tune, when set, adjusts the store before the dataset is loaded (recall parameters
	// under study: BM25's, a stage switched off).
	Tune func(*ltm.Store)
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

// SkipReasons describes, for each key of Report.SkippedReasons, why the write path refused
// the memories counted under it.
var SkipReasons = map[string]string{
	"empty":    "empty content",
	"too_long": fmt.Sprintf("over %d characters", memory.MaxContentRunes),
	"secret":   "looks like a credential",
	"invalid":  "refused by the write path",
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
		}
		for _, q := range s.Queries {
			if _, err := s.AskedAt(q); err != nil {
				return fmt.Errorf("scope %s: %w", s.GuildID, err)
			}
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
//
// The run does not depend on the day it happens: the store's clock, which importance decay
// counts from, reads each scope's newest memory time while the scope loads and the query's
// asked time (Scope.AskedAt) while a query runs, never the wall clock.
func RunDataset(ctx context.Context, d Dataset, opt Options) (Report, error) {
	if err := d.validate(); err != nil {
		return Report{}, fmt.Errorf("invalid dataset: %w", err)
	}
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
	if opt.Tune != nil {
		opt.Tune(store)
	}
	var clock atomic.Int64 // Unix nanoseconds
	clock.Store(time.Now().UnixNano())
	store.Now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	if opt.Embed != nil {
		store.Recall.SetEmbedder(opt.Embed, opt.EmbedModel)
	}
	base, err := openBaseline(ctx, filepath.Join(dir, "baseline.db"))
	if err != nil {
		return Report{}, err
	}
	defer base.Close()

	rep := Report{Name: d.Name, K: ks, SkippedReasons: map[string]int{}}
	var all, baseRes []queryResult
	for _, sc := range d.Scopes {
		// A scope without any created_at keeps the clock where it is: its memories are
		// stamped with it, so decay still counts from the same instant.
		newest := sc.newest()
		if !newest.IsZero() {
			clock.Store(newest.UnixNano())
		}
		owner := memory.ServerOwner(sc.GuildID)
		entries, reasons := admit(owner, sc.Memories)
		for r, n := range reasons {
			rep.SkippedReasons[r] += n
			rep.Skipped += n
		}
		absorbed, stored, err := load(ctx, store, owner, entries)
		if err != nil {
			return Report{}, fmt.Errorf("couldn't load scope %s: %w", sc.GuildID, err)
		}
		// The eval measures a running bot's recall, whose keyword index is built: build it
		// now rather than let the first questions of a large scope go to the full-text index.
		if err := store.Recall.WarmKeywordIndex(ctx, owner); err != nil {
			return Report{}, err
		}
		if err := base.add(ctx, sc.GuildID, entries); err != nil {
			return Report{}, err
		}
		rep.Memories += len(sc.Memories)
		rep.Stored += stored
		loaded := make(map[string]bool, len(entries))
		for _, e := range entries {
			loaded[e.ID] = true
		}
		for _, q := range sc.Queries {
			q.Relevant = slices.DeleteFunc(slices.Clone(q.Relevant), func(id string) bool { return !loaded[id] })
			if len(q.Relevant) == 0 {
				rep.SkippedQueries++
				continue
			}
			askedAt, _ := sc.AskedAt(q) // validated above
			if askedAt.IsZero() {
				askedAt = store.Now()
			}
			clock.Store(askedAt.UnixNano())
			start := time.Now()
			res, err := store.Recall.Search(ctx, memory.SearchQuery{Text: q.Text, Owners: []memory.Owner{owner}, Limit: limit, AskedAt: askedAt})
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
			rep.Outcomes = append(rep.Outcomes, Outcome{Scope: sc.GuildID, QueryID: q.ID, Category: q.Category,
				AskedAt: askedAt, Recall10: qr.recall[10], RR: qr.rr})
			start = time.Now()
			branked, err := base.search(ctx, sc.GuildID, q.Text, limit)
			took = time.Since(start)
			if err != nil {
				return Report{}, fmt.Errorf("baseline for query %s of scope %s: %w", q.ID, sc.GuildID, err)
			}
			baseRes = append(baseRes, score(q, branked, ks, took))
			if qr.rr == 0 || qr.recall[10] == 0 {
				rep.Misses = append(rep.Misses, Miss{Scope: sc.GuildID, QueryID: q.ID, Text: q.Text, Category: q.Category})
			}
		}
	}
	rep.Overall = aggregate(all, ks)
	rep.Baseline = aggregate(baseRes, ks)
	rep.ByCategory = byCategory(all, ks)
	rep.BaselineByCategory = byCategory(baseRes, ks)
	return rep, nil
}

func byCategory(results []queryResult, ks []int) map[string]Metrics {
	byCat := map[string][]queryResult{}
	for _, qr := range results {
		byCat[qr.category] = append(byCat[qr.category], qr)
	}
	out := make(map[string]Metrics, len(byCat))
	for c, qs := range byCat {
		out[c] = aggregate(qs, ks)
	}
	return out
}

// admit returns the entries the write path accepts, and how many it refuses per reason
// (the keys of SkipReasons). The check is the write path's own (memory.Memory.Prepare); the
// reason is worked out only for a refused entry.
func admit(owner memory.Owner, entries []MemoryEntry) ([]MemoryEntry, map[string]int) {
	kept := make([]MemoryEntry, 0, len(entries))
	reasons := map[string]int{}
	for _, e := range entries {
		m := entryMemory(owner, e)
		if err := m.Prepare(); err != nil {
			reasons[skipReason(e.Content)]++
			continue
		}
		kept = append(kept, e)
	}
	return kept, reasons
}

// skipReason names the rule of memory.CleanContent that content breaks.
func skipReason(content string) string {
	c := memory.CollapseSpace(content)
	switch {
	case c == "":
		return "empty"
	case utf8.RuneCountInString(c) > memory.MaxContentRunes:
		return "too_long"
	}
	if _, ok := memory.DetectSecret(c); ok {
		return "secret"
	}
	return "invalid"
}

// evalChannel is the channel every dataset message was said in: a dataset scope is one
// server's conversation, read as one channel.
const evalChannel = "eval"

// entryMemory is the memory an import makes of a dataset entry: its author, channel and
// creation time kept.
func entryMemory(owner memory.Owner, e MemoryEntry) memory.Memory {
	return memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID, Content: e.Content,
		Source: memory.SourceImport, Provenance: memory.Provenance{Author: e.Author, ChannelID: evalChannel},
		CreatedAt: e.CreatedAt, UpdatedAt: e.CreatedAt}
}

// load writes a scope's memories through RememberMany, the bulk write path, keeping author
// and creation time as an import does, and returns which dataset ids each stored memory
// absorbed (more than one when the write path deduplicated them).
func load(ctx context.Context, s *ltm.Store, owner memory.Owner, entries []MemoryEntry) (map[int64][]string, int, error) {
	if len(entries) == 0 {
		return map[int64][]string{}, 0, nil
	}
	mems := make([]memory.Memory, len(entries))
	for i, e := range entries {
		mems[i] = entryMemory(owner, e)
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

// baseline is the reference ranking: plain SQLite FTS5 BM25 over the same messages, each
// indexed as "Author: content" in its own database with the porter tokenizer kioku's word
// index uses, and queried with the question's words quoted and OR-ed. It owes nothing to
// kioku: no search-text folding, no phrases, author weight, dates, CJK n-grams or dedup.
type baseline struct {
	db  *sql.DB
	ids []string // the dataset id of each row, at rowid-1
}

func openBaseline(ctx context.Context, path string) (*baseline, error) {
	db, err := sql.Open("sqlite", ltm.DSN(path))
	if err != nil {
		return nil, fmt.Errorf("couldn't open the baseline database: %w", err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE messages USING fts5 (
		text, scope UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')`); err != nil {
		db.Close()
		return nil, fmt.Errorf("couldn't create the baseline index: %w", err)
	}
	return &baseline{db: db}, nil
}

func (b *baseline) Close() error { return b.db.Close() }

// add indexes a scope's messages.
func (b *baseline) add(ctx context.Context, scope string, entries []MemoryEntry) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("couldn't index the baseline: %w", err)
	}
	defer tx.Rollback()
	for _, e := range entries {
		text := e.Content
		if e.Author != "" {
			text = e.Author + ": " + e.Content
		}
		b.ids = append(b.ids, e.ID)
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (rowid, text, scope) VALUES (?, ?, ?)`,
			len(b.ids), text, scope); err != nil {
			return fmt.Errorf("couldn't index the baseline: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("couldn't index the baseline: %w", err)
	}
	return nil
}

// search ranks a scope's messages for text, best first, each as its one dataset id.
func (b *baseline) search(ctx context.Context, scope, text string, limit int) ([][]string, error) {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) == 0 {
		return nil, nil
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	rows, err := b.db.QueryContext(ctx, `SELECT rowid FROM messages WHERE messages MATCH ? AND scope = ?
		ORDER BY bm25(messages) LIMIT ?`, strings.Join(words, " OR "), scope, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ranked [][]string
	for rows.Next() {
		var row int
		if err := rows.Scan(&row); err != nil {
			return nil, err
		}
		ranked = append(ranked, []string{b.ids[row-1]})
	}
	return ranked, rows.Err()
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
