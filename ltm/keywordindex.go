package ltm

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/internal/vecindex"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// The keyword leg is served from an in-memory BM25 index per scope key (internal/kwindex),
// with the scope's own term statistics and kioku's BM25 parameters. The database stays the
// durable source: a scope's index is built from its rows on first use and kept current
// from the engine's change log (Engine.Changes: SQLite's memory_changes table, which
// triggers fill on every write by any process, so the CLI or an import writing to the same
// file is seen by the next query; PostgreSQL's change feed). Until a scope's index is ready
// (a large scope builds in the background), the keyword leg answers from the database's
// full-text search (KeywordFallback).

const (
	// DefaultKeywordSyncBuild is the largest scope whose keyword index is built inside the
	// first query that needs it, which then costs about what a full-text query does (a
	// build takes 10–30 µs a memory); larger scopes build in the background while the
	// database's full-text search answers, so a cold server's first answer is never slower
	// than before.
	DefaultKeywordSyncBuild = 256
	// DefaultKeywordIndexMax bounds the memories held by all keyword indexes of a process;
	// past it the least recently searched scopes are dropped and rebuilt on their next use.
	// At about 140 bytes a memory (15 words; docs/recall.md), 1.5 million take about
	// 210 MB: a deployment of 1.1M memories stays resident.
	DefaultKeywordIndexMax = 1_500_000
	// changeLogKeep is how many change rows retention leaves (the newest); a process that
	// falls further behind rebuilds its indexes.
	changeLogKeep = 200_000
)

// keywordColumns are the memory columns an index document is made of.
const keywordColumns = `id, scope_key, deleted_at IS NULL, content, author_name, guild_id, channel_id, created_at, type, pinned,
	importance, tags, author_id, normalized, state`

// scanKeywordDoc reads one row of keywordColumns.
func scanKeywordDoc(row scanner) (doc kwindex.Doc, scopeKey string, live bool, err error) {
	var m memory.Memory
	var pinned int
	var tags string
	var created int64
	if err := row.Scan(&m.ID, &scopeKey, &live, &m.Content, &m.Provenance.Author, &m.GuildID, &m.Provenance.ChannelID,
		&created, &m.Type, &pinned, &m.Importance, &tags, &m.Provenance.AuthorID, &m.Normalized, &m.State); err != nil {
		return doc, "", false, err
	}
	m.Pinned = pinned != 0
	m.CreatedAt = fromMillis(created)
	if tags != "" && tags != "[]" {
		if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
			return doc, "", false, fmt.Errorf("couldn't decode tags of memory %d: %w", m.ID, err)
		}
	}
	// The bigram text is what the engines' CJK scans read (their keyword fallbacks):
	// normalized content and the lowercased author name.
	return kwindex.Doc{ID: m.ID, Content: memory.SearchText(m.Content), Author: memory.SearchText(m.Provenance.Author),
		Grams: m.Normalized + " " + strings.ToLower(m.Provenance.Author), Meta: metaOf(&m)}, scopeKey, live, nil
}

// ChangeLog is where the in-memory keyword indexes learn which memories changed
// (kwindex.Source's Ends and Changed): SQLite's is the memory_changes table, PostgreSQL's
// its change feed (Engine.Changes).
type ChangeLog interface {
	Ends(ctx context.Context) (last, first int64, err error)
	Changed(ctx context.Context, from, to int64) ([]int64, error)
}

// keywordSource is what the keyword indexes read: the memories, in SQL both engines run,
// and the engine's change log.
type keywordSource struct {
	d *db
	ChangeLog
}

func newKeywordIndexes(d *db) *kwindex.Indexes {
	return kwindex.NewIndexes(keywordSource{d, d.eng.Changes()}, func() kwindex.Settings {
		return kwindex.Settings{Params: d.KeywordParams, SyncBuild: d.KeywordSyncBuild, Max: d.KeywordIndexMax}
	})
}

func (s keywordSource) Size(ctx context.Context, key string) (int, error) {
	var size int
	if err := s.d.read.QueryRowContext(ctx, `SELECT coalesce((SELECT live FROM memory_counts WHERE scope_key = ?), 0)`, key).Scan(&size); err != nil {
		return 0, fmt.Errorf("couldn't count memories: %w", err)
	}
	return size, nil
}

func (s keywordSource) Load(ctx context.Context, key string) ([]kwindex.Doc, error) {
	rows, err := s.d.read.QueryContext(ctx, `SELECT `+keywordColumns+` FROM memories WHERE scope_key = ? AND deleted_at IS NULL`, key)
	if err != nil {
		return nil, fmt.Errorf("couldn't read memories: %w", err)
	}
	defer rows.Close()
	var docs []kwindex.Doc
	for rows.Next() {
		doc, _, _, err := scanKeywordDoc(rows)
		if err != nil {
			return nil, fmt.Errorf("couldn't read memory row: %w", err)
		}
		docs = append(docs, doc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read memories: %w", err)
	}
	return docs, nil
}

func (s keywordSource) Read(ctx context.Context, ids []int64) ([]kwindex.Row, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.d.read.QueryContext(ctx, `SELECT `+keywordColumns+` FROM memories WHERE id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("couldn't read changed memories: %w", err)
	}
	defer rows.Close()
	out := make([]kwindex.Row, 0, len(ids))
	for rows.Next() {
		doc, key, live, err := scanKeywordDoc(rows)
		if err != nil {
			return nil, fmt.Errorf("couldn't read memory row: %w", err)
		}
		out = append(out, kwindex.Row{Doc: doc, ScopeKey: key, Live: live})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read changed memories: %w", err)
	}
	return out, nil
}

// indexedKeywordLeg is the keyword leg answered from the in-memory indexes alone: the raw
// keyword scores of the best limit memories for the words, the CJK text and, weighed by
// Stages.Lexicon, the lexicon's expansion of plan (the members of the everyday categories
// the question names: "hobbies" → bouldering, knitting…, run as a second query so that they
// count less than the question's own words). where and args are the scope and filters in
// the engine's SQL over the memories alias m. It returns false when some visible scope's
// index is not ready yet (it is building then), or the indexes are off (KeywordIndexOff):
// the engine's database answers then (KeywordFallback).
func indexedKeywordLeg(ctx context.Context, s *Recall, plan *recall.Plan, q *memory.SearchQuery, where string, args []any,
	limit int) (map[int64]float64, bool, error) {
	k := s.db.recall.keywords
	if s.db.KeywordIndexOff {
		return nil, false, nil
	}
	if err := k.Sync(ctx); err != nil {
		return nil, false, err
	}
	vis := visibleScopes(q)
	for _, v := range vis {
		if idx, err := k.Ready(ctx, v.Owner.Key()); err != nil || idx == nil {
			return nil, false, err
		}
	}
	out := map[int64]float64{}
	leg := func(plan *recall.Plan, withPairs bool, into map[int64]float64) (bool, error) {
		if len(plan.Terms) > 0 {
			if done, err := s.searcher.indexLeg(ctx, wordSearch(plan, withPairs), q, vis, where, args, limit, 1, into); err != nil || !done {
				return false, err
			}
		}
		if len(plan.CJK) > 0 {
			if done, err := s.searcher.indexLeg(ctx, cjkSearch(plan), q, vis, where, args, limit, CJKWeight, into); err != nil || !done {
				return false, err
			}
		}
		return true, nil
	}
	if done, err := leg(plan, true, out); err != nil || !done {
		return nil, false, err
	}
	if s.db.Stages.Lexicon <= 0 || len(plan.Expansion) == 0 {
		return out, true, nil
	}
	exp := plan.ExpansionPlan()
	more := map[int64]float64{}
	if done, err := leg(&exp, false, more); err != nil || !done {
		return nil, false, err
	}
	for id, x := range more {
		out[id] += s.db.Stages.Lexicon * x
	}
	return out, true, nil
}

// wordSearch searches an index for the plan's words and, withPairs, its adjacent pairs.
func wordSearch(plan *recall.Plan, withPairs bool) func(idx *kwindex.Scope, f *vecindex.Filter, k int) []kwindex.Hit {
	var pairs [][2]string
	if withPairs {
		pairs = plan.Pairs
	}
	return func(idx *kwindex.Scope, f *vecindex.Filter, k int) []kwindex.Hit {
		return idx.Search(kwindex.Query{Terms: plan.Terms, Pairs: pairs, Filter: f, Limit: k})
	}
}

// cjkSearch searches an index for the plan's unsegmented text: its character bigrams, and
// the Latin words written inside it ("ＡＰＩのrate limit"), which are one token to the
// tokenizer.
func cjkSearch(plan *recall.Plan) func(idx *kwindex.Scope, f *vecindex.Filter, k int) []kwindex.Hit {
	grams := plan.CJKGrams(2)
	var words []string
	for _, t := range plan.Terms {
		if len(t) >= 2 {
			words = append(words, t)
		}
	}
	return func(idx *kwindex.Scope, f *vecindex.Filter, k int) []kwindex.Hit {
		return idx.SearchCJK(kwindex.CJKQuery{Grams: grams, Words: words, Filter: f, Limit: k})
	}
}

// indexLeg answers the word leg from the in-memory indexes of the visible scopes: the best
// limit memories over all of them, each scored with its own scope's statistics. It returns
// false when some scope's index is not ready yet; the caller then uses the engine's
// full-text search (KeywordFallback).
func (s searcher) indexLeg(ctx context.Context, search func(idx *kwindex.Scope, f *vecindex.Filter, limit int) []kwindex.Hit,
	q *memory.SearchQuery, vis []memory.Visible, where string, args []any, limit int, weight float64, out map[int64]float64) (bool, error) {
	k := s.db.recall.keywords
	if s.db.KeywordIndexOff {
		return false, nil
	}
	// indexedKeywordLeg brought the indexes up to date with the change log before its first
	// leg.
	idxs := make([]*kwindex.Scope, len(vis))
	for i, v := range vis {
		idx, err := k.Ready(ctx, v.Owner.Key())
		if err != nil || idx == nil {
			return false, err
		}
		idxs[i] = idx
	}
	// Decay only lowers importance, so the index's filter on the base importance keeps a
	// superset; SQL then applies the decayed one, which can cut into the top, so that case
	// takes every match.
	perScope := limit
	if q.ImportanceMin > 0 {
		perScope = 0
	}
	var hits []kwindex.Hit
	for i, v := range vis {
		hits = append(hits, search(idxs[i], vectorFilter(v, q), perScope)...)
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	if q.ImportanceMin <= 0 {
		for _, h := range hits[:min(limit, len(hits))] {
			out[h.ID] += weight * h.Score
		}
		return true, nil
	}
	kept := 0
	for start := 0; start < len(hits) && kept < limit; start += 4 * limit {
		batch := hits[start:min(start+4*limit, len(hits))]
		ids := make([]int64, len(batch))
		for i, h := range batch {
			ids[i] = h.ID
		}
		visible, err := VisibleIDs(ctx, s.db.read, ids, where, args)
		if err != nil {
			return false, err
		}
		for _, h := range batch {
			if _, ok := visible[h.ID]; ok && kept < limit {
				out[h.ID] += weight * h.Score
				kept++
			}
		}
	}
	return true, nil
}

// KeywordIndexHolds reports whether any in-memory keyword index holds word; forget-me
// tests use it to prove a member's words left memory too.
func (s *Recall) KeywordIndexHolds(word string) bool { return s.db.recall.keywords.Holds(word) }

// KeywordIndexHas reports whether any in-memory keyword index holds memory id; forget-me
// tests use it to prove a member's memories left memory too.
func (s *Recall) KeywordIndexHas(id int64) bool { return s.db.recall.keywords.Has(id) }

// WarmKeywordIndex builds the keyword indexes of the given scopes now and waits for them,
// so a benchmark or an operator's warm-up times a ready index rather than its build.
func (s *Recall) WarmKeywordIndex(ctx context.Context, owners ...memory.Owner) error {
	keys := make([]string, len(owners))
	for i, o := range owners {
		keys[i] = o.Key()
	}
	return s.db.recall.keywords.Warm(ctx, keys...)
}

// Settle counts the memories whose words wait to be counted (flushWordCompany) and waits
// until the background loads that recalls started have finished: keyword index builds and
// vector loads. It is for measuring a process at rest (kioku bench reads
// resident memory after it); callers stop recalling first, since loads started while it
// waits may or may not be waited for.
func (s *Recall) Settle(ctx context.Context) error {
	if err := s.db.flushWordCompany(ctx); err != nil {
		return err
	}
	if err := s.db.recall.keywords.Settle(ctx); err != nil {
		return err
	}
	return s.db.recall.vectors.Settle(ctx)
}
