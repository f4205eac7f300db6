package ltm

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/internal/vecindex"
	"github.com/kioku-bot/kioku/memory"
)

// metaOf is what the vector index may filter m on without reading SQLite.
func metaOf(m *memory.Memory) vecindex.Meta {
	return vecindex.Meta{OriginGuild: m.GuildID, Channel: m.Provenance.ChannelID, CreatedAt: millis(m.CreatedAt), Type: string(m.Type),
		Pinned: m.Pinned, Importance: m.Importance, Tags: slices.Clone(m.Tags), AuthorID: m.Provenance.AuthorID, State: string(m.State)}
}

// vectorFilter mirrors the scope and filter rules the vector index can check without SQL
// (origin guild, type, pinned, since, until, author, importance, tags, audience), so its shortlist is spent
// only on rows that can pass: a filter applied after the top k would let failing rows crowd
// out passing ones. SQL re-checks everything when the rows are loaded. It returns nil when
// nothing needs checking. The index holds the base importance, which decay only lowers, so
// its importance check is a necessary condition; SQL applies the decayed one.
func vectorFilter(v memory.Visible, q *memory.SearchQuery) *vecindex.Filter {
	origin := ""
	if v.Owner.Scope == memory.ScopePersonal {
		origin = v.OriginGuildID
	}
	since, until := millis(q.Since), millis(q.Until)
	hidden := q.HiddenStates()
	if origin == "" && len(q.Types) == 0 && !q.PinnedOnly && since == 0 && until == 0 && q.AuthorID == "" && q.ImportanceMin <= 0 &&
		len(q.Tags) == 0 && q.Audience == nil && len(hidden) == 0 {
		return nil
	}
	f := &vecindex.Filter{OriginGuild: origin, PinnedOnly: q.PinnedOnly, Since: since, Until: until, AuthorID: q.AuthorID,
		ImportanceMin: q.ImportanceMin}
	if len(q.Include) == 0 {
		f.HiddenStates = shelvedStateNames
	} else {
		for _, st := range hidden {
			f.HiddenStates = append(f.HiddenStates, string(st))
		}
	}
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

// VectorHit is one result of NearestMemories.
type VectorHit struct {
	ID     int64
	Cosine float32
}

// NearestMemories runs the vector leg of recall alone: the k memories of owner's scope
// whose vectors are closest to vec by cosine, best first, from the in-memory index (no SQL,
// no embedding call). exact forces a full float32 scan instead of the shortlist search;
// benchmarks use it as the baseline and to measure the shortlist's recall.
func (s *Recall) NearestMemories(owner memory.Owner, vec []float32, k int, exact bool) []VectorHit {
	if len(vec) == 0 {
		return nil
	}
	q := make([]float32, len(vec))
	copy(q, vec)
	if !vecindex.Normalize(q) {
		return nil
	}
	s.db.vectors.ensureScope(context.Background(), owner.Key(), true)
	hits := s.db.recall.vectors.Search(owner.Key(), q, k, nil, exact)
	out := make([]VectorHit, len(hits))
	for i, h := range hits {
		out[i] = VectorHit{ID: h.ID, Cosine: h.Cosine}
	}
	return out
}

// DefaultVectorCacheBytes bounds the memory of the in-process vector index (SetVectorCache,
// KIOKU_VECTOR_CACHE_MB): about 500,000 vectors at 384 dimensions (540 bytes each), or a
// 100,000-memory server with the float32 copies of its vectors (2,076 bytes each); past it
// the least recently used scopes are evicted and loaded again on their next recall. With
// the keyword index it keeps a bot of 1.1M memories in 1,000 servers under 1 GB resident.
const DefaultVectorCacheBytes = 256 << 20

// vectorLoadWait is how long a recall waits for its scope's vectors to load. A scope of a
// few thousand memories loads well within it; a very large one (100,000 memories take
// seconds) goes on loading in the background while recall answers from the keyword leg.
const vectorLoadWait = 2 * time.Second

// SetVectorCache bounds the bytes the vector index holds; 0 or less means no bound.
// Scopes past it are evicted least recently used first and reloaded from the database on
// their next recall.
func (s *Recall) SetVectorCache(bytes int64) {
	s.db.recall.vectors.SetLimit(max(bytes, 0))
}

// VectorIndexStats reports what the in-process vector index holds now.
func (s *Recall) VectorIndexStats() vecindex.Stats { return s.db.recall.vectors.Stats() }

// loadScopeVectors is the vector index's loader: the stored vectors of the configured model
// for the live memories of scope key, read from the read pool in one query. It reads only
// the columns the index filters on, not the contents.
func (s vectorStore) loadScopeVectors(ctx context.Context, key string, put func(id int64, hash string, meta vecindex.Meta, vec []float32)) error {
	e := s.recall.emb.Load()
	if e == nil {
		return nil
	}
	// The vectors are read in content-hash order, the embeddings table's key order: at a
	// million vectors that is about 3× faster than probing it in row order. A memory
	// without a stored vector may have one waiting to be stored (vectorwrite.go).
	rows, err := s.read.QueryContext(ctx, `SELECT m.id, m.content_hash, m.guild_id, m.channel_id, m.created_at, m.type,
		m.pinned, m.importance, m.tags, m.author_id, m.state, e.vector
		FROM (SELECT id, content_hash, guild_id, channel_id, created_at, type, pinned, importance, tags, author_id, state
			FROM memories WHERE scope_key = ? AND deleted_at IS NULL ORDER BY content_hash) m
		LEFT JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?`, key, e.model)
	if err != nil {
		return fmt.Errorf("couldn't load the vectors of %s: %w", key, err)
	}
	return putVectorRows(ctx, s.db, e.model, key, rows, put)
}

// putVectorRows puts the memories of scope key that rows read (the columns the index
// filters on and the stored vector of model, NULL when none is stored) into the index
// with put, each with its stored vector or the one waiting to be stored.
func putVectorRows(ctx context.Context, s *db, model, key string, rows *sql.Rows,
	put func(id int64, hash string, meta vecindex.Meta, vec []float32)) error {
	defer rows.Close()
	var (
		buf      []float32
		blob     sql.RawBytes // decoded at once: no copy of each vector's bytes
		unstored []unstoredRow
	)
	for rows.Next() {
		var (
			id     int64
			hash   string
			meta   vecindex.Meta
			pinned int
			tags   string
		)
		if err := rows.Scan(&id, &hash, &meta.OriginGuild, &meta.Channel, &meta.CreatedAt, &meta.Type, &pinned,
			&meta.Importance, &tags, &meta.AuthorID, &meta.State, &blob); err != nil {
			return fmt.Errorf("couldn't load a vector of %s: %w", key, err)
		}
		meta.Pinned = pinned != 0
		if tags != "" && tags != "[]" {
			if err := json.Unmarshal([]byte(tags), &meta.Tags); err != nil {
				return fmt.Errorf("couldn't decode tags of memory %d: %w", id, err)
			}
		}
		if blob == nil {
			unstored = append(unstored, unstoredRow{id, hash, meta})
			continue
		}
		if buf = decodeVectorInto(buf, blob); buf != nil {
			put(id, hash, meta, buf)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("couldn't load the vectors of %s: %w", key, err)
	}
	if len(unstored) == 0 {
		return nil
	}
	rows.Close() // the read below is a new one
	hashes := make([]string, len(unstored))
	for i, r := range unstored {
		hashes[i] = r.hash
	}
	vecs, err := s.vectors.cachedVectors(ctx, model, hashes) // waiting, or stored since the read began
	for _, r := range unstored {
		if v := vecs[r.hash]; v != nil {
			put(r.id, r.hash, r.meta, v)
		}
	}
	return err
}

// unstoredRow is a memory a scope's load found without a stored vector.
type unstoredRow struct {
	id   int64
	hash string
	meta vecindex.Meta
}

// liveMemories returns the scope's live memory count (memory_counts), an upper bound of
// the vectors a load puts: the vector index sizes a loading scope from it.
func (s vectorStore) liveMemories(ctx context.Context, key string) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT coalesce((SELECT live FROM memory_counts WHERE scope_key = ?), 0)`, key).Scan(&n)
	return n, err
}

// vectorSyncLoad is the largest scope whose vectors a recall loads before it answers. A
// load costs about 50 µs a vector (two page reads each: a vector overflows its b-tree
// cell), so 64 take about what a full-text query does. A larger scope that is not resident
// starts loading in the background and the recall answers without its vector shortlist:
// its keyword candidates still get their exact cosines, read from the stored vectors
// (exactCosines), so a server's first recall after a start costs about a full-text query,
// not a load.
const vectorSyncLoad = 64

// ensureScope makes the vectors of scope key resident before a search. A scope already
// loaded answers at once. Otherwise, unless wait, a scope larger than vectorSyncLoad is
// loaded in the background and left out of this recall's vector shortlist; the others
// are waited for at most vectorLoadWait. A load that fails or takes longer leaves the
// scope out of the shortlist of this recall (the keyword leg still answers); a slow load
// goes on in the background for the next recall, and a failed one is tried again then.
func (s vectorStore) ensureScope(ctx context.Context, key string, wait bool) bool {
	if s.recall.vectors.Ready(key) {
		return refreshStale(ctx, s.db, key)
	}
	if !wait && s.scopeSize(ctx, key) > vectorSyncLoad {
		started, cancel := context.WithCancelCause(ctx)
		cancel(errStillLoading)
		_ = s.recall.vectors.Ensure(started, key) // starts the load and returns
		return s.recall.vectors.Ready(key)
	}
	waitCtx, cancel := context.WithTimeoutCause(ctx, vectorLoadWait, errStillLoading)
	defer cancel()
	err := s.recall.vectors.Ensure(waitCtx, key)
	switch {
	case err == nil:
		return refreshStale(waitCtx, s.db, key)
	case errors.Is(err, errStillLoading):
		slog.Info("vector index: a large scope is still loading; recalling from keywords meanwhile", "scope", key)
	case ctx.Err() == nil:
		slog.Warn("vector index: couldn't load a scope", "scope", key, "err", err)
	}
	return false
}

// refreshStale reads again the memories of resident scope key that a change feed marked
// (vectorstale.go) and reports true: the memories still marked stay out of the index, and
// the rest of it is current.
func refreshStale(ctx context.Context, s *db, key string) bool {
	if err := s.recall.stale.refresh(ctx, s, key); err != nil && ctx.Err() == nil {
		slog.Warn("vector index: couldn't refresh changed memories", "scope", key, "err", err)
	}
	return true
}

// scopeSize is the number of live memories of scope key (memory_counts), 0 when it can't
// be read.
func (s vectorStore) scopeSize(ctx context.Context, key string) int {
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT coalesce((SELECT live FROM memory_counts WHERE scope_key = ?), 0)`, key).Scan(&n); err != nil {
		return 0
	}
	return n
}

var errStillLoading = errors.New("scope vectors still loading")

// rescoreExtra is how many more rows than asked the vector leg takes from the int8 index
// before re-scoring them with the exact float32 vectors, so a row just outside the
// quantized top k can still make the exact one.
const rescoreExtra = 16

// exactVectors reads the stored float32 vectors of model for the live memories ids.
func (s vectorStore) exactVectors(ctx context.Context, model string, ids []int64) (map[int64][]float32, error) {
	out := make(map[int64][]float32, len(ids))
	unstored := map[int64]string{} // id → content hash of those without a stored vector
	const chunk = 500
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		args := make([]any, 0, len(part)+1)
		args = append(args, model)
		for _, id := range part {
			args = append(args, id)
		}
		// A memory without a stored vector may have one waiting to be stored.
		rows, err := s.read.QueryContext(ctx, `SELECT m.id, m.content_hash, e.vector FROM memories m
			LEFT JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?
			WHERE m.id IN (`+placeholders(len(part))+`) AND m.deleted_at IS NULL`, args...)
		if err != nil {
			return out, fmt.Errorf("couldn't read vectors: %w", err)
		}
		for rows.Next() {
			var (
				id   int64
				hash string
				blob []byte
			)
			if err := rows.Scan(&id, &hash, &blob); err != nil {
				rows.Close()
				return out, fmt.Errorf("couldn't read a vector: %w", err)
			}
			if blob == nil {
				unstored[id] = hash
				continue
			}
			if v := decodeVector(blob); v != nil && vecindex.Normalize(v) {
				out[id] = v
			}
		}
		if err := rows.Close(); err != nil {
			return out, fmt.Errorf("couldn't read vectors: %w", err)
		}
	}
	if len(unstored) == 0 {
		return out, nil
	}
	hashes := make([]string, 0, len(unstored))
	for _, h := range unstored {
		hashes = append(hashes, h)
	}
	vecs, err := s.cachedVectors(ctx, model, hashes) // waiting, or stored since the read began
	for id, h := range unstored {
		if v := vecs[h]; len(v) > 0 && vecindex.Normalize(v) {
			out[id] = v
		}
	}
	return out, err
}

// rescore returns the best k of hits (rows of scope key), unless QuantizedCosines after
// replacing their int8 cosines with exact float32 ones: from the index's float32 copies
// where it holds them, else from the database; a hit whose vector can't be read keeps its
// quantized cosine.
func (s vectorStore) rescore(ctx context.Context, model, key string, q []float32, hits []vecindex.Hit, k int) []vecindex.Hit {
	if len(hits) == 0 || s.QuantizedCosines {
		return hits[:min(k, len(hits))]
	}
	var (
		missing []int64
		buf     []float32
		ok      bool
	)
	for i, h := range hits {
		if buf, ok = s.recall.vectors.ExactVector(key, h.ID, "", buf); ok && len(buf) == len(q) {
			hits[i].Cosine = dotf(q, buf)
		} else {
			missing = append(missing, h.ID)
		}
	}
	if len(missing) > 0 {
		exact, err := s.exactVectors(ctx, model, missing)
		if err != nil {
			slog.Warn("vector index: exact re-scoring failed, using quantized cosines", "err", err)
		}
		for i, h := range hits {
			if v := exact[h.ID]; len(v) == len(q) {
				hits[i].Cosine = dotf(q, v)
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b vecindex.Hit) int { return cmp.Compare(b.Cosine, a.Cosine) })
	return hits[:min(k, len(hits))]
}

// exactCosines, unless QuantizedCosines, gives the loaded candidates that the vector leg
// did not return their exact cosine with the query: from the index's float32 copy of their
// content's vector where it holds one, else from the stored vectors of their content.
func (s vectorStore) exactCosines(ctx context.Context, model string, vec *vectorLegResult, mems []*memory.Memory) {
	if vec.q == nil || s.QuantizedCosines {
		return
	}
	var (
		hashes []string
		buf    []float32
		ok     bool
	)
	for _, m := range mems {
		if _, hit := vec.hits[m.ID]; hit {
			continue
		}
		if buf, ok = s.recall.vectors.ExactVector(m.Owner().Key(), m.ID, m.Hash, buf); ok && len(buf) == len(vec.q) {
			if vec.exact == nil {
				vec.exact = make(map[int64]float32, len(mems))
			}
			vec.exact[m.ID] = dotf(vec.q, buf)
			continue
		}
		hashes = append(hashes, m.Hash)
	}
	if len(hashes) == 0 {
		return
	}
	got, err := s.cachedVectors(ctx, model, hashes)
	if err != nil {
		slog.Warn("vector index: couldn't read candidate vectors, using quantized cosines", "err", err)
	}
	if vec.exact == nil {
		vec.exact = make(map[int64]float32, len(got))
	}
	for _, m := range mems {
		if _, done := vec.exact[m.ID]; done {
			continue
		}
		if v := got[m.Hash]; len(v) == len(vec.q) && vecindex.Normalize(v) {
			vec.exact[m.ID] = dotf(vec.q, v)
		}
	}
}

func dotf(a, b []float32) float32 {
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// decodeVectorInto is decodeVector into buf's storage.
func decodeVectorInto(buf []float32, b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	n := len(b) / 4
	if cap(buf) < n {
		buf = make([]float32, n)
	}
	buf = buf[:n]
	for i := range buf {
		buf[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return buf
}

// WarmVectors loads the vectors of owner's scope into the index now, as its first recall
// would (a no-op when they are resident or no embedding model is set).
func (s *Recall) WarmVectors(ctx context.Context, owner memory.Owner) error {
	if s.db.recall.emb.Load() == nil {
		return nil
	}
	return s.db.recall.vectors.Ensure(ctx, owner.Key())
}
