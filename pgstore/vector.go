package pgstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/internal/vecindex"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// metaOf is what the vector index may filter m on without reading the database.
func metaOf(m *memory.Memory) vecindex.Meta {
	return vecindex.Meta{OriginGuild: m.GuildID, Channel: m.Provenance.ChannelID, CreatedAt: millis(m.CreatedAt), Type: string(m.Type),
		Pinned: m.Pinned, Importance: m.Importance, Tags: slices.Clone(m.Tags), AuthorID: m.Provenance.AuthorID}
}

// vectorFilter mirrors, as ltm's does, the scope and filter rules the vector index can
// check without SQL, so its shortlist is spent only on rows that can pass; SQL re-checks
// everything when the rows are loaded. It returns nil when nothing needs checking.
func vectorFilter(v memory.Visible, q *memory.SearchQuery) *vecindex.Filter {
	origin := ""
	if v.Owner.Scope == memory.ScopePersonal {
		origin = v.OriginGuildID
	}
	since, until := millis(q.Since), millis(q.Until)
	if origin == "" && len(q.Types) == 0 && !q.PinnedOnly && since == 0 && until == 0 && q.AuthorID == "" && q.ImportanceMin <= 0 &&
		len(q.Tags) == 0 && q.Audience == nil {
		return nil
	}
	f := &vecindex.Filter{OriginGuild: origin, PinnedOnly: q.PinnedOnly, Since: since, Until: until, AuthorID: q.AuthorID,
		ImportanceMin: q.ImportanceMin}
	for _, t := range q.Types {
		f.Types = append(f.Types, string(t))
	}
	for _, t := range q.Tags {
		f.Tags = append(f.Tags, strings.ToLower(t))
	}
	if q.Audience != nil {
		f.RestrictChannels, f.Channels = true, q.Audience.Channels
	}
	return f
}

// VectorHit is one result of NearestMemories (ltm's type).
type VectorHit = ltm.VectorHit

// NearestMemories runs the vector leg of recall alone: the k memories of owner's scope
// whose vectors are closest to vec by cosine, best first, from the in-process index (no
// embedding call, no check against the rows). exact forces a full float32 scan of the index
// instead of the shortlist search.
func (s *Recall) NearestMemories(ctx context.Context, owner memory.Owner, vec []float32, k int, exact bool) []VectorHit {
	if len(vec) == 0 {
		return nil
	}
	q := slices.Clone(vec)
	if !vecindex.Normalize(q) {
		return nil
	}
	if !s.db.recall.ensureScope(ctx, owner.Key()) {
		return nil
	}
	hits := s.db.recall.vectors.Search(owner.Key(), q, k, nil, exact)
	out := make([]VectorHit, len(hits))
	for i, h := range hits {
		out[i] = VectorHit{ID: h.ID, Cosine: h.Cosine}
	}
	return out
}

// SetVectorCache bounds the bytes the vector index holds; 0 or less means no bound. Scopes
// past it are evicted least recently used first and loaded again on their next recall.
func (s *Recall) SetVectorCache(bytes int64) { s.db.recall.vectors.SetLimit(max(bytes, 0)) }

// VectorIndexStats reports what the in-process vector index holds now.
func (s *Recall) VectorIndexStats() vecindex.Stats { return s.db.recall.vectors.Stats() }

// WarmVectors loads the vectors of owner's scope into the index now, as its first recall
// would (a no-op when they are resident or no embedding model is set).
func (s *Recall) WarmVectors(ctx context.Context, owner memory.Owner) error {
	if s.db.recall.emb.Load() == nil {
		return nil
	}
	if err := s.db.recall.vectors.Ensure(ctx, owner.Key()); err != nil {
		return err
	}
	return s.db.recall.refreshStale(ctx, owner.Key())
}

// vectorColumns are the columns of a memory the index keeps, over the alias m, as
// scanVectorRow reads them.
const vectorColumns = `m.id, m.content_hash, m.guild_id, m.channel_id, m.created_at, m.type, m.pinned, m.importance,
	m.tags, m.author_id`

// vectorRow is one memory as the index holds it.
type vectorRow struct {
	id   int64
	hash string
	meta vecindex.Meta
	blob []byte
}

func scanVectorRow(row scanner, r *vectorRow) error {
	var (
		pinned int
		tags   string
	)
	r.meta = vecindex.Meta{}
	if err := row.Scan(&r.id, &r.hash, &r.meta.OriginGuild, &r.meta.Channel, &r.meta.CreatedAt, &r.meta.Type, &pinned,
		&r.meta.Importance, &tags, &r.meta.AuthorID, &r.blob); err != nil {
		return err
	}
	r.meta.Pinned = pinned != 0
	if tags != "" && tags != "[]" {
		if err := json.Unmarshal([]byte(tags), &r.meta.Tags); err != nil {
			return fmt.Errorf("couldn't decode tags of memory %d: %w", r.id, err)
		}
	}
	return nil
}

// liveMemories returns the scope's live memory count, an upper bound of the vectors a load
// puts: the vector index sizes a loading scope from it.
func (r *recallState) liveMemories(ctx context.Context, key string) (int, error) {
	var n int
	err := r.d.read.QueryRowContext(ctx, `SELECT coalesce((SELECT live FROM memory_counts WHERE scope_key = ?), 0)`, key).Scan(&n)
	return n, err
}

// loadScopeVectors is the vector index's loader: the stored vectors of the configured model
// for the live memories of scope key, in one query. It reads the columns the index filters
// on, not the contents.
func (r *recallState) loadScopeVectors(ctx context.Context, key string, put func(id int64, hash string, meta vecindex.Meta, vec []float32)) error {
	e := r.emb.Load()
	if e == nil {
		return nil
	}
	rows, err := r.d.read.QueryContext(ctx, `SELECT `+vectorColumns+`, e.vector FROM memories m
		JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?
		WHERE m.scope_key = ? AND m.deleted_at IS NULL`, e.model, key)
	if err != nil {
		return fmt.Errorf("couldn't load the vectors of %s: %w", key, err)
	}
	defer rows.Close()
	var (
		buf []float32
		row vectorRow
	)
	for rows.Next() {
		if err := scanVectorRow(rows, &row); err != nil {
			return fmt.Errorf("couldn't load a vector of %s: %w", key, err)
		}
		if buf = decodeVectorInto(buf, row.blob); buf != nil {
			put(row.id, row.hash, row.meta, buf)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("couldn't load the vectors of %s: %w", key, err)
	}
	return nil
}

// vectorLoadWait is how long a recall waits for its scope's vectors to load (ltm's): a
// larger scope goes on loading in the background while recall answers from keywords.
const vectorLoadWait = 2 * time.Second

var errStillLoading = errors.New("scope vectors still loading")

// ensureScope makes the vectors of scope key resident and current before a search: it
// loads the scope (waiting at most vectorLoadWait) and reads again the memories other
// processes changed since (refreshStale). A scope that can't be loaded is left out of this
// recall's vector leg; the keyword leg still answers.
func (r *recallState) ensureScope(ctx context.Context, key string) bool {
	wait, cancel := context.WithTimeoutCause(ctx, vectorLoadWait, errStillLoading)
	defer cancel()
	err := r.vectors.Ensure(wait, key)
	if err == nil {
		// The memories still marked stay out of the index: the rest of it is current.
		if err := r.refreshStale(wait, key); err != nil && ctx.Err() == nil {
			slog.Warn("vector index: couldn't refresh changed memories", "scope", key, "err", err)
		}
	}
	switch {
	case err == nil:
		return true
	case errors.Is(err, errStillLoading):
		slog.Info("vector index: a large scope is still loading; recalling from keywords meanwhile", "scope", key)
	case ctx.Err() == nil:
		slog.Warn("vector index: couldn't load a scope", "scope", key, "err", err)
	}
	return false
}

// rescoreExtra is how many more rows than asked the vector leg takes from the int8 index
// before re-scoring them with the exact float32 vectors (ltm's).
const rescoreExtra = 16

// exactVectors reads the stored float32 vectors of model for the live memories ids.
func (r *recallState) exactVectors(ctx context.Context, model string, ids []int64) (map[int64][]float32, error) {
	out := make(map[int64][]float32, len(ids))
	rows, err := r.d.read.QueryContext(ctx, `SELECT m.id, e.vector FROM memories m
		JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?
		WHERE m.id = ANY(?) AND m.deleted_at IS NULL`, model, ids)
	if err != nil {
		return out, fmt.Errorf("couldn't read vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   int64
			blob []byte
		)
		if err := rows.Scan(&id, &blob); err != nil {
			return out, fmt.Errorf("couldn't read a vector: %w", err)
		}
		if v := decodeVector(blob); v != nil && vecindex.Normalize(v) {
			out[id] = v
		}
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("couldn't read vectors: %w", err)
	}
	return out, nil
}

// rescore returns the best k of hits, unless QuantizedCosines after replacing their int8
// cosines with exact float32 ones from the database; a hit whose vector can't be read keeps
// its quantized cosine.
func (r *recallState) rescore(ctx context.Context, model string, q []float32, hits []vecindex.Hit, k int) []vecindex.Hit {
	if len(hits) == 0 || r.d.QuantizedCosines {
		return hits[:min(k, len(hits))]
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	exact, err := r.exactVectors(ctx, model, ids)
	if err != nil {
		slog.Warn("vector index: exact re-scoring failed, using quantized cosines", "err", err)
	}
	for i, h := range hits {
		if v := exact[h.ID]; len(v) == len(q) {
			hits[i].Cosine = dotf(q, v)
		}
	}
	slices.SortStableFunc(hits, func(a, b vecindex.Hit) int { return cmp.Compare(b.Cosine, a.Cosine) })
	return hits[:min(k, len(hits))]
}

func dotf(a, b []float32) float32 {
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

type vectorLegResult struct {
	q     []float32 // the unit query vector; nil when the leg did not run or failed
	model string
	hits  map[int64]float32
	// exact are the float32 cosines of loaded candidates the leg did not return
	// (exactCosines); a candidate missing from both falls back to the index's int8 cosine.
	exact map[int64]float32
}

// vectorLeg embeds the query and searches the index of every visible scope, as ltm's does.
// Any failure leaves the result empty: recall then runs on keywords alone.
func (s *Recall) vectorLeg(ctx context.Context, e *embedder, q *memory.SearchQuery, vis []memory.Visible, k int) vectorLegResult {
	qv, err := s.queryVector(ctx, e, q)
	if err != nil {
		return vectorLegResult{}
	}
	res := vectorLegResult{q: qv, model: e.model, hits: map[int64]float32{}}
	for _, v := range vis {
		if !s.db.recall.ensureScope(ctx, v.Owner.Key()) {
			continue
		}
		hits := s.db.recall.vectors.Search(v.Owner.Key(), qv, k+rescoreExtra, vectorFilter(v, q), false)
		for _, h := range s.db.recall.rescore(ctx, e.model, qv, hits, k) {
			if c, ok := res.hits[h.ID]; !ok || h.Cosine > c {
				res.hits[h.ID] = h.Cosine
			}
		}
	}
	return res
}

// exactCosines, unless QuantizedCosines, gives the loaded candidates that the vector leg
// did not return their exact cosine with the query, from the stored vectors of their content.
func (r *recallState) exactCosines(ctx context.Context, vec *vectorLegResult, mems []*memory.Memory) {
	if vec.q == nil || r.d.QuantizedCosines {
		return
	}
	var hashes []string
	for _, m := range mems {
		if _, ok := vec.hits[m.ID]; !ok {
			hashes = append(hashes, m.Hash)
		}
	}
	if len(hashes) == 0 {
		return
	}
	got, err := r.cachedVectors(ctx, vec.model, hashes)
	if err != nil {
		slog.Warn("vector index: couldn't read candidate vectors, using quantized cosines", "err", err)
	}
	vec.exact = make(map[int64]float32, len(got))
	for _, m := range mems {
		if v := got[m.Hash]; len(v) == len(vec.q) && vecindex.Normalize(v) {
			vec.exact[m.ID] = dotf(vec.q, v)
		}
	}
}
