package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/kioku-bot/kioku/internal/vecindex"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// Vectors on PostgreSQL are kept as on SQLite: the embeddings table holds one vector per
// content hash and model, as little-endian float32 bytes (rows copy between the stores
// unchanged), and each process serves the vector leg of recall from an in-process index
// (internal/vecindex) of the scopes it queries, loaded lazily per scope and bounded by an LRU
// byte limit. What other processes write reaches that index through change notifications
// (changes.go).

// EmbedFunc embeds texts, one vector per text in order: ltm's, so one embedding client
// serves both stores.
type EmbedFunc = ltm.EmbedFunc

// EmbedStatus describes the embedding side of recall for diagnostics (ltm's type).
type EmbedStatus = ltm.EmbedStatus

// embedChunk is how many texts one call of the EmbedFunc gets from bulk writes, and from
// TrackEmbeddings unless told otherwise (ltm's).
const embedChunk = 256

// queryCacheSize is how many query vectors are kept, as in ltm.
const queryCacheSize = 512

type embedder struct {
	fn    EmbedFunc
	model string
}

// recallState is the in-process side of recall: the embedder, the vector index, the query
// vector cache and the ids other processes changed in resident scopes. The write paths keep
// it current through indexMemories and unindexMemory, the change feed through
// noteChanged.
type recallState struct {
	emb       atomic.Pointer[embedder]
	vectors   *vecindex.Index
	downUntil atomic.Int64 // unix ms until which embedding is skipped

	trackMu sync.Mutex // serialises TrackEmbeddings runs

	mu        sync.Mutex
	qcache    *simplelru.LRU[string, []float32]
	lastErr   string
	lastErrAt time.Time

	stale staleIDs

	d *db // the store: its pool, clock and embedding timeouts
}

func (r *recallState) init(d *db) {
	r.vectors = vecindex.New()
	r.d = d
	r.vectors.SetLoader(r.loadScopeVectors, ltm.DefaultVectorCacheBytes)
	r.vectors.SetSizer(r.liveMemories)
	r.qcache, _ = simplelru.NewLRU[string, []float32](queryCacheSize, nil)
	r.stale.init()
}

// SetEmbedder configures the embedding model used for the vector leg of recall. A nil fn
// or an empty model turns embeddings off (keyword recall only). Changing the model empties
// the in-process index; scopes load again on their next recall.
func (s *Recall) SetEmbedder(fn EmbedFunc, model string) {
	r := &s.db.recall
	var e *embedder
	if fn != nil && model != "" {
		e = &embedder{fn: fn, model: model}
	}
	old := r.emb.Swap(e)
	if old == nil || e == nil || old.model != e.model {
		r.reset()
	}
	r.downUntil.Store(0)
}

// reset drops every resident scope and cached query vector: the model changed, or the
// change feed may have missed notices.
func (r *recallState) reset() {
	r.stale.mu.Lock()
	r.vectors.Reset()
	clear(r.stale.ids)
	r.stale.mu.Unlock()
	r.clearQueryCache()
}

// EmbedStatus reports the embedding model, the index size and the last provider failure.
func (s *Recall) EmbedStatus() EmbedStatus {
	r := &s.db.recall
	st := EmbedStatus{Vectors: r.vectors.Len()}
	if e := r.emb.Load(); e != nil {
		st.Model = e.model
	}
	st.Down = r.down(s.db.Now())
	r.mu.Lock()
	st.LastError, st.LastErrorAt = r.lastErr, r.lastErrAt
	r.mu.Unlock()
	return st
}

func (r *recallState) down(now time.Time) bool { return now.UnixMilli() < r.downUntil.Load() }

func (r *recallState) noteEmbedError(now time.Time, retryAfter time.Duration, err error) {
	if errors.Is(err, memory.ErrSpendLimited) {
		// One payer's spent budget or rate says nothing about the provider: the others'
		// calls go on.
		return
	}
	r.downUntil.Store(now.Add(retryAfter).UnixMilli())
	r.mu.Lock()
	r.lastErr, r.lastErrAt = err.Error(), now
	r.mu.Unlock()
}

// ForgetCachedQueries empties the cache of query vectors, which is keyed by the text people
// searched for. Forget-me empties it in every process on the database (the change feed).
func (s *Recall) ForgetCachedQueries() { s.db.recall.clearQueryCache() }

func (r *recallState) clearQueryCache() {
	r.mu.Lock()
	r.qcache.Purge()
	r.mu.Unlock()
}

// indexMemories is the write-path hook: after a commit it gives the new or changed memories
// their vectors (from the embeddings table, or from the provider, outside any transaction)
// and puts them in the index. It is best effort: a provider failure leaves the memory
// stored without a vector, to be filled by TrackEmbeddings, and never fails the write.
func (r *recallState) indexMemories(ctx context.Context, mems ...*memory.Memory) {
	e := r.emb.Load()
	if e == nil || len(mems) == 0 {
		return
	}
	var need []*memory.Memory
	for _, m := range mems {
		if m == nil || m.Deleted() {
			continue
		}
		key := m.Owner().Key()
		if r.vectors.Has(key, m.ID, m.Hash) {
			r.vectors.SetMeta(key, m.ID, metaOf(m))
			continue
		}
		// A changed content must not keep answering with the old content's vector while
		// the new one is fetched (or if fetching fails).
		r.vectors.Remove(key, m.ID)
		need = append(need, m)
	}
	if len(need) == 0 || r.down(r.d.Now()) {
		return
	}
	// A write whose caller named no payer (the CLI) charges the memory's own.
	ctx, cancel := context.WithTimeout(memory.EnsurePayer(ctx, memory.PayerOf(need[0])), r.d.EmbedTimeout)
	defer cancel()
	items := make([]embedItem, len(need))
	for i, m := range need {
		items[i] = embedItem{hash: m.Hash, text: m.Content}
	}
	vecs, err := r.vectorsFor(ctx, e, items)
	if err != nil {
		r.noteEmbedError(r.d.Now(), r.d.EmbedRetryAfter, err)
	}
	for _, m := range need {
		if v := vecs[m.Hash]; v != nil {
			r.vectors.Upsert(m.Owner().Key(), m.ID, m.Hash, metaOf(m), v)
		}
	}
}

// unindexMemories is the delete hook: the memories leave the index at once.
func (r *recallState) unindexMemories(mems ...*memory.Memory) {
	for _, m := range mems {
		if m != nil {
			r.vectors.Remove(m.Owner().Key(), m.ID)
		}
	}
}

type embedItem struct{ hash, text string }

// vectorsFor returns a vector per distinct hash of items: stored rows of the embeddings
// table first, then one provider call per embedChunk missing texts, each chunk stored in
// one statement after the call returned. On error the vectors obtained so far are returned
// with it.
func (r *recallState) vectorsFor(ctx context.Context, e *embedder, items []embedItem) (map[string][]float32, error) {
	hashes := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if !seen[it.hash] {
			seen[it.hash] = true
			hashes = append(hashes, it.hash)
		}
	}
	out, err := r.cachedVectors(ctx, e.model, hashes)
	if err != nil {
		return out, err
	}
	var missing []embedItem
	for _, it := range items {
		if out[it.hash] == nil && seen[it.hash] {
			seen[it.hash] = false
			missing = append(missing, it)
		}
	}
	for start := 0; start < len(missing); start += embedChunk {
		chunk := missing[start:min(start+embedChunk, len(missing))]
		texts := make([]string, len(chunk))
		for i, it := range chunk {
			texts[i] = it.text
		}
		vecs, err := e.fn(ctx, texts)
		if err == nil && len(vecs) != len(texts) {
			err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		if err != nil {
			return out, fmt.Errorf("couldn't embed memories: %w", err)
		}
		got := make(map[string][]float32, len(chunk))
		for i, it := range chunk {
			if len(vecs[i]) > 0 {
				got[it.hash] = vecs[i]
			}
		}
		if _, err := r.storeVectors(ctx, e.model, got, false); err != nil {
			return out, err
		}
		for h, v := range got {
			out[h] = v
		}
	}
	return out, nil
}

// cachedVectors reads the stored vectors of model for hashes.
func (r *recallState) cachedVectors(ctx context.Context, model string, hashes []string) (map[string][]float32, error) {
	out := make(map[string][]float32, len(hashes))
	if len(hashes) == 0 {
		return out, nil
	}
	rows, err := r.d.read.QueryContext(ctx, `SELECT content_hash, vector FROM embeddings WHERE model = ? AND content_hash = ANY(?)`,
		model, hashes)
	if err != nil {
		return out, fmt.Errorf("couldn't read embeddings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			h    string
			blob []byte
		)
		if err := rows.Scan(&h, &blob); err != nil {
			return out, fmt.Errorf("couldn't read embedding: %w", err)
		}
		if v := decodeVector(blob); v != nil {
			out[h] = v
		}
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("couldn't read embeddings: %w", err)
	}
	return out, nil
}

// storeVectors keeps vectors by content hash in one statement and returns the hashes
// stored. With liveOnly a vector is stored only while a live memory still has its content,
// so a memory forgotten (or edited) during the provider call leaves no vector of its old
// words; otherwise it is stored ahead of the write that will use it (PrefetchEmbeddings,
// the write hooks), as ltm does.
func (r *recallState) storeVectors(ctx context.Context, model string, vecs map[string][]float32, liveOnly bool) (map[string]bool, error) {
	stored := make(map[string]bool, len(vecs))
	if len(vecs) == 0 {
		return stored, nil
	}
	hashes := make([]string, 0, len(vecs))
	dims := make([]int32, 0, len(vecs))
	blobs := make([][]byte, 0, len(vecs))
	for h, v := range vecs {
		hashes = append(hashes, h)
		dims = append(dims, int32(len(v)))
		blobs = append(blobs, encodeVector(v))
	}
	cond := ""
	if liveOnly {
		cond = ` WHERE EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = u.h AND m.deleted_at IS NULL)`
	}
	rows, err := r.d.read.QueryContext(ctx, `INSERT INTO embeddings (content_hash, model, dims, vector, created_at)
		SELECT u.h, ?, u.d, u.v, ? FROM unnest(?::text[], ?::int[], ?::bytea[]) AS u(h, d, v)`+cond+`
		ON CONFLICT (content_hash, model) DO UPDATE SET dims = excluded.dims, vector = excluded.vector,
		created_at = excluded.created_at RETURNING content_hash`, model, r.d.nowMillis(), hashes, dims, blobs)
	if err != nil {
		return stored, fmt.Errorf("couldn't store embeddings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return stored, fmt.Errorf("couldn't store embeddings: %w", err)
		}
		stored[h] = true
	}
	if err := rows.Err(); err != nil {
		clear(stored)
		return stored, fmt.Errorf("couldn't store embeddings: %w", err)
	}
	return stored, nil
}

// encodeVector stores a vector as little-endian float32s, ltm's encoding.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 { return decodeVectorInto(nil, b) }

// decodeVectorInto decodes b into buf's storage, growing it when needed; nil for bytes
// that are no vector.
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

var errEmbedDown = errors.New("embedding provider marked down")

// queryVector embeds a recall query (unit length), from the cache when it can.
func (s *Recall) queryVector(ctx context.Context, e *embedder, q *memory.SearchQuery) ([]float32, error) {
	r := &s.db.recall
	text := q.Text
	key := memory.QueryCacheKey(ctx, e.model, q)
	r.mu.Lock()
	v, ok := r.qcache.Get(key)
	r.mu.Unlock()
	if ok {
		return v, nil
	}
	if r.down(s.db.Now()) {
		return nil, errEmbedDown
	}
	ctx, cancel := context.WithTimeout(ctx, s.db.QueryEmbedTimeout)
	defer cancel()
	vecs, err := e.fn(ctx, []string{text})
	if err == nil && (len(vecs) != 1 || len(vecs[0]) == 0) {
		err = fmt.Errorf("embedder returned %d vectors for 1 text", len(vecs))
	}
	if err != nil {
		err = fmt.Errorf("couldn't embed query: %w", err)
		r.noteEmbedError(s.db.Now(), s.db.EmbedRetryAfter, err)
		return nil, err
	}
	v = append([]float32(nil), vecs[0]...)
	if !vecindex.Normalize(v) {
		return nil, errors.New("couldn't embed query: zero vector")
	}
	r.mu.Lock()
	r.qcache.Add(key, v)
	r.mu.Unlock()
	return v, nil
}

// PrefetchEmbeddings computes and stores the vectors of texts (by content hash) before a
// write, so the indexing that follows the write's commit finds them stored and the write
// path makes no provider call. With no embedder, or while the provider is marked down, it
// does nothing. Never call it inside a write transaction: it may call the provider.
func (s *Recall) PrefetchEmbeddings(ctx context.Context, texts []string) error {
	d := s.db
	e := d.recall.emb.Load()
	if e == nil || len(texts) == 0 || d.recall.down(d.Now()) {
		return nil
	}
	items := make([]embedItem, 0, len(texts))
	for _, t := range texts {
		c, err := memory.CleanContent(t)
		if err != nil {
			continue
		}
		items = append(items, embedItem{hash: memory.Hash(c), text: c})
	}
	ctx, cancel := context.WithTimeout(ctx, d.EmbedTimeout)
	defer cancel()
	if _, err := d.recall.vectorsFor(ctx, e, items); err != nil {
		d.recall.noteEmbedError(d.Now(), d.EmbedRetryAfter, err)
		return err
	}
	return nil
}
