package ltm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/kioku-bot/kioku/internal/flushloop"
	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/internal/vecindex"
	"github.com/kioku-bot/kioku/memory"
)

// EmbedFunc embeds texts, returning one vector per text in the same order. It is the seam
// to the embedding model (llm.Client.Embed satisfies it); tests pass a plain function.
type EmbedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// Defaults for the embedding fields of Store.
const (
	// DefaultEmbedTimeout bounds the embedding done right after a write. The memory is
	// already stored; a slow provider only delays its vector, which the embedding tracker
	// (TrackEmbeddings) fills in later, so a person adding a memory never waits long for it.
	DefaultEmbedTimeout = 5 * time.Second
	// DefaultQueryEmbedTimeout bounds embedding a query. Past it recall answers from the
	// keyword leg alone rather than keep a chat turn waiting.
	DefaultQueryEmbedTimeout = 2 * time.Second
	// DefaultEmbedRetryAfter is how long embedding is skipped after the provider failed, so
	// a provider that is down costs one timeout, not one per query.
	DefaultEmbedRetryAfter = 30 * time.Second
)

// embedChunk is how many texts one call of the EmbedFunc gets from bulk writes, and from
// TrackEmbeddings unless told otherwise; the llm client splits further into provider-sized
// requests.
const embedChunk = 256

// queryCacheSize is how many query vectors are kept; chat turns and the pipeline's decision
// stage often recall with the same text again.
const queryCacheSize = 512

type embedder struct {
	fn    EmbedFunc
	model string
}

// SetEmbedder configures the embedding model used for the vector leg of recall. A nil fn
// or an empty model turns embeddings off (keyword recall only). Changing the model empties
// the in-memory index; the next TrackEmbeddings loads cached vectors and embeds what is
// missing.
func (s *Recall) SetEmbedder(fn EmbedFunc, model string) {
	r := &s.db.recall
	var e *embedder
	if fn != nil && model != "" {
		e = &embedder{fn: fn, model: model}
	}
	old := r.emb.Swap(e)
	if old == nil || e == nil || old.model != e.model {
		r.stale.reset(r.vectors)
		r.clearQueryCache()
	}
	r.downUntil.Store(0)
}

// EmbedStatus reports the embedding model, the index size and the last provider failure.
func (s *Recall) EmbedStatus() memory.EmbedStatus {
	r := &s.db.recall
	st := memory.EmbedStatus{Vectors: r.vectors.Len()}
	if e := r.emb.Load(); e != nil {
		st.Model = e.model
	}
	st.Down = r.down(s.db.Now())
	r.mu.Lock()
	st.LastError, st.LastErrorAt = r.lastErr, r.lastErrAt
	st.LastImportError, st.LastImportErrorAt = r.lastBulkErr, r.lastBulkErrAt
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

// noteBulkEmbedError records a failed embedding call of a bulk write without marking the
// provider down.
func (r *recallState) noteBulkEmbedError(now time.Time, err error) {
	r.mu.Lock()
	r.lastBulkErr, r.lastBulkErrAt = err.Error(), now
	r.mu.Unlock()
}

// ForgetCachedQueries empties the cache of query vectors, which is keyed by the text people
// searched for. Forget-me empties it in the process that runs it; another process on the same
// database calls this when it learns of a forget-me (its forget fences).
func (s *Recall) ForgetCachedQueries() { s.db.recall.clearQueryCache() }

func (r *recallState) clearQueryCache() {
	r.mu.Lock()
	r.qcache.Purge()
	r.mu.Unlock()
}

// indexMemories is the write-path hook: after a commit it gives the new or changed memories
// their vectors (from the embeddings cache, or from the provider, outside any transaction)
// and puts them in the index. It is best effort: a provider failure leaves the memory
// stored but without a vector, to be filled by TrackEmbeddings, and never fails the write.
func (s vectorStore) indexMemories(ctx context.Context, mems ...*memory.Memory) {
	e, need := s.needVectors(mems)
	if len(need) == 0 || s.recall.down(s.Now()) {
		return
	}
	// A write whose caller named no payer (the CLI) charges the memory's own.
	ctx, cancel := context.WithTimeout(memory.EnsurePayer(ctx, memory.PayerOf(need[0])), s.EmbedTimeout)
	defer cancel()
	// What the provider returned is stored in the background (vectorwrite.go), also when a
	// later call failed: the vectors are paid for.
	// The embedding tracker leaves these contents alone while their vectors are fetched
	// and wait to be stored: it would pay for them twice.
	hashes := make([]string, len(need))
	for i, m := range need {
		hashes[i] = m.Hash
	}
	s.recall.fetching.add(hashes)
	vecs, got, err := s.fetchVectors(ctx, e, embedItems(need), 0)
	s.recall.vectorWrites.add(e.model, got)
	s.recall.fetching.done(hashes)
	if err != nil {
		s.recall.noteEmbedError(s.Now(), s.EmbedRetryAfter, err)
	}
	s.upsertVectors(need, vecs)
	if s.dialect.SharedByProcesses {
		if err := s.recall.vectorWrites.flush(ctx); err != nil {
			slog.Warn("couldn't store embeddings", "err", err)
		}
	}
}

// needVectors returns the embedder and those of mems the vector index lacks with their
// current content, refreshing the index's metadata of the others; nil without an embedder.
func (s vectorStore) needVectors(mems []*memory.Memory) (*embedder, []*memory.Memory) {
	r := &s.recall
	e := r.emb.Load()
	if e == nil || len(mems) == 0 {
		return nil, nil
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
	return e, need
}

func embedItems(mems []*memory.Memory) []embedItem {
	items := make([]embedItem, len(mems))
	for i, m := range mems {
		items[i] = embedItem{hash: m.Hash, text: m.Content}
	}
	return items
}

// upsertVectors puts the memories of mems that vecs has a vector for in the index.
func (s vectorStore) upsertVectors(mems []*memory.Memory, vecs map[string][]float32) {
	for _, m := range mems {
		if v := vecs[m.Hash]; v != nil {
			s.recall.vectors.Upsert(m.Owner().Key(), m.ID, m.Hash, metaOf(m), v)
		}
	}
}

// unindexMemory is the delete hook: the memory leaves the index at once.
func (s vectorStore) unindexMemory(m *memory.Memory) {
	s.recall.vectors.Remove(m.Owner().Key(), m.ID)
}

type embedItem struct{ hash, text string }

// vectorsFor returns a vector per distinct hash of items (fetchVectors) and stores what the
// provider returned in one short write transaction after the last call, also when a later
// call failed; on error the vectors obtained so far are returned with it.
func (s vectorStore) vectorsFor(ctx context.Context, e *embedder, items []embedItem, callTimeout time.Duration) (map[string][]float32, error) {
	out, got, callErr := s.fetchVectors(ctx, e, items, callTimeout)
	// Stored even when the caller's deadline ran out during a later call: the vectors are
	// paid for, and the write is a short local one.
	if err := s.storeVectors(context.WithoutCancel(ctx), e.model, got); err != nil {
		return out, errors.Join(callErr, err)
	}
	return out, callErr
}

// fetchVectors returns a vector per distinct hash of items in out: cached rows of the
// embeddings table first, then one provider call per embedChunk missing texts, each bounded
// by callTimeout when it is positive. got holds those the provider returned, which the
// caller stores. It writes nothing; on error out and got hold what was obtained so far.
func (s vectorStore) fetchVectors(ctx context.Context, e *embedder, items []embedItem, callTimeout time.Duration) (out, got map[string][]float32, err error) {
	hashes := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if !seen[it.hash] {
			seen[it.hash] = true
			hashes = append(hashes, it.hash)
		}
	}
	out, err = s.cachedVectors(ctx, e.model, hashes)
	if err != nil {
		return out, nil, err
	}
	var missing []embedItem
	for _, it := range items {
		if out[it.hash] == nil && seen[it.hash] {
			seen[it.hash] = false
			missing = append(missing, it)
		}
	}
	got = make(map[string][]float32, len(missing))
	for start := 0; start < len(missing) && err == nil; start += embedChunk {
		chunk := missing[start:min(start+embedChunk, len(missing))]
		err = s.embedChunk(ctx, e, chunk, callTimeout, got)
	}
	for h, v := range got {
		out[h] = v
	}
	return out, got, err
}

// embedChunk makes one provider call for the texts of chunk and adds their vectors to got.
func (s vectorStore) embedChunk(ctx context.Context, e *embedder, chunk []embedItem, timeout time.Duration, got map[string][]float32) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	texts := make([]string, len(chunk))
	for i, it := range chunk {
		texts[i] = it.text
	}
	vecs, err := e.fn(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		return fmt.Errorf("couldn't embed memories: %w", err)
	}
	for i, it := range chunk {
		if len(vecs[i]) != 0 {
			got[it.hash] = vecs[i]
		}
	}
	return nil
}

// cachedVectorsSQL reads the stored vectors of a model (the first argument) for a JSON
// array of content hashes (the second). Its text is fixed, so recall's statement cache
// keeps it prepared: a single write asks it for one hash, and compiling the statement cost
// more than running it.
func cachedVectorsSQL(d *Dialect) string {
	return `SELECT content_hash, vector FROM embeddings
	WHERE model = ? AND content_hash IN (SELECT value FROM ` + d.JSONArrayTexts + `)`
}

// cachedVectors returns the vectors of model for hashes that are waiting to be stored or
// stored (read from the read pool). It looks at the waiting ones before it reads the
// table, and a batch stops waiting only once committed, so a reader that found no stored
// vector for a hash and asks here finds one stored since its own read began.
func (s vectorStore) cachedVectors(ctx context.Context, model string, hashes []string) (map[string][]float32, error) {
	out := make(map[string][]float32, len(hashes))
	stored := hashes[:0:0]
	for _, h := range hashes {
		if v := s.recall.vectorWrites.lookup(model, h); v != nil {
			out[h] = v
		} else {
			stored = append(stored, h)
		}
	}
	hashes = stored
	const chunk = 500
	for start := 0; start < len(hashes); start += chunk {
		part := hashes[start:min(start+chunk, len(hashes))]
		rows, err := s.recall.stmts.query(ctx, s.read, cachedVectorsSQL(s.dialect), model, string(mustJSON(part)))
		if err != nil {
			return out, fmt.Errorf("couldn't read embeddings: %w", err)
		}
		for rows.Next() {
			var (
				h    string
				blob []byte
			)
			if err := rows.Scan(&h, &blob); err != nil {
				rows.Close()
				return out, fmt.Errorf("couldn't read embedding: %w", err)
			}
			if v := decodeVector(blob); v != nil {
				out[h] = v
			}
		}
		if err := rows.Close(); err != nil {
			return out, fmt.Errorf("couldn't read embeddings: %w", err)
		}
	}
	return out, nil
}

const storeVectorSQL = `INSERT INTO embeddings (content_hash, model, dims, vector, created_at)
	VALUES (?, ?, ?, ?, ?) ON CONFLICT (content_hash, model) DO UPDATE SET dims = excluded.dims,
	vector = excluded.vector, created_at = excluded.created_at`

// storeVectors caches vectors by content hash in one write transaction.
func (s vectorStore) storeVectors(ctx context.Context, model string, vecs map[string][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	return s.withWriteTx(ctx, func(tx *txn) error { return s.storeVectorsTx(ctx, tx, model, vecs) })
}

// storeVectorsTx caches vectors by content hash inside tx.
func (s vectorStore) storeVectorsTx(ctx context.Context, tx *txn, model string, vecs map[string][]float32) error {
	now := s.nowMillis()
	q := s.stmts.on(tx)
	for h, v := range vecs {
		if _, err := q.ExecContext(ctx, storeVectorSQL, h, model, len(v), encodeVector(v), now); err != nil {
			return fmt.Errorf("couldn't store embedding: %w", err)
		}
	}
	return nil
}

// encodeVector stores a vector as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

var errEmbedDown = errors.New("embedding provider marked down")

// queryVector embeds a recall query (unit length), from the cache when it can.
func (s searcher) queryVector(ctx context.Context, e *embedder, q *memory.SearchQuery) ([]float32, error) {
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

// scanMemoryWith scans a memory row followed by extra columns.
func scanMemoryWith(row scanner, extra ...any) (*memory.Memory, error) {
	return scanMemory(extraScanner{row, extra})
}

type extraScanner struct {
	row   scanner
	extra []any
}

func (e extraScanner) Scan(dest ...any) error { return e.row.Scan(append(dest, e.extra...)...) }

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// vectorStore is the store's handle doing the vector side of recall: embedding memories,
// storing and loading their vectors, and keeping the in-process vector index (recallState)
// in step with the writes. It is the same db (db.vectors), split out so each part of the
// handle stays small.
type vectorStore struct{ *db }

// recallState is the in-process side of recall: the embedder, the vector index, the query
// vector cache and pending access counts. The write paths keep it current through
// indexMemories and unindexMemory.
type recallState struct {
	emb       atomic.Pointer[embedder]
	vectors   *vecindex.Index
	downUntil atomic.Int64 // unix ms until which embedding is skipped

	trackMu sync.Mutex // serialises TrackEmbeddings runs

	mu        sync.Mutex
	qcache    *simplelru.LRU[string, []float32]
	lastErr   string
	lastErrAt time.Time

	lastBulkErr   string // a bulk write's embedding failure, which marks nothing down
	lastBulkErrAt time.Time

	access       accessTracker
	vectorWrites vectorWriter
	// fetching are the contents whose vectors a write is fetching right now.
	fetching hashSet
	// wordCompany counts the memories marked to count their words again (comentions.go).
	wordCompany flushloop.Loop

	keywords *kwindex.Indexes
	stmts    stmtCache
	// stale are the memories a change feed reported changed by another process, out of the
	// index until their scope's next recall reads them again (vectorstale.go).
	stale staleVectors
}

func (r *recallState) init(d *db, flushAccess func(ctx context.Context) error) {
	r.vectors = vecindex.New()
	r.vectors.SetLoader(d.vectors.loadScopeVectors, DefaultVectorCacheBytes)
	r.vectors.SetSizer(d.vectors.liveMemories)
	r.keywords = newKeywordIndexes(d)
	r.qcache, _ = simplelru.NewLRU[string, []float32](queryCacheSize, nil)
	r.access.start(d.AccessFlushInterval, flushAccess)
	r.vectorWrites.start(d.vectors.storePendingVectors, func() time.Duration { return d.VectorWriteDelay })
	r.wordCompany.Start(d.flushWordCompany, func() time.Duration { return wordCompanyDelay }, nil,
		"couldn't count which words travel together")
}

func (r *recallState) close() {
	r.vectorWrites.stop()
	r.wordCompany.Stop()
	r.access.stop()
	r.keywords.Close()
	r.stmts.close()
}
