package ltm

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kioku-bot/kioku/internal/flushloop"
	"github.com/kioku-bot/kioku/memory"
)

// The vectors fetched for memories just written are stored (the embeddings table, keyed by
// content hash) a batch at a time in the background, not in a transaction of their own
// after each write: that transaction was a sixth of a single write's time. The memory is
// committed before any embedding work, and its vector is in the in-memory index as soon as
// the provider answers, so recall does not wait for the store. The table is a cache: a
// vector lost to a crash before it was stored is fetched again by the embedding tracker.
const (
	// DefaultVectorWriteDelay is how long a fetched vector waits for others to be stored
	// with: at a hundred writes a second, five of them share a transaction.
	DefaultVectorWriteDelay = 50 * time.Millisecond
	// vectorWriteBatch is how many vectors one transaction stores; as many pending are
	// stored at once, without waiting.
	vectorWriteBatch = 256
)

// storeLiveVectorSQL caches a vector (?1 hash, ?2 model, ?3 dims, ?4 vector, ?5 time) only
// while a live memory has that content: a memory forgotten or edited between its write and
// the store leaves no vector of its old words. The WHERE clause also keeps SQLite from
// reading ON CONFLICT as a join constraint.
const storeLiveVectorSQL = `INSERT INTO embeddings (content_hash, model, dims, vector, created_at)
	SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM memories WHERE content_hash = ?1 AND deleted_at IS NULL)
	ON CONFLICT (content_hash, model) DO UPDATE SET dims = excluded.dims,
	vector = excluded.vector, created_at = excluded.created_at`

type vectorKey struct{ hash, model string }

// hashSet counts content hashes in use, safe for concurrent use.
type hashSet struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hashSet) add(hashes []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	for _, x := range hashes {
		h.n[x]++
	}
}

func (h *hashSet) done(hashes []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, x := range hashes {
		if h.n[x]--; h.n[x] <= 0 {
			delete(h.n, x)
		}
	}
}

func (h *hashSet) has(hash string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[hash] > 0
}

// waiting reports whether a vector of hash for model waits to be stored, or is being stored.
func (w *vectorWriter) waiting(model, hash string) bool {
	k := vectorKey{hash, model}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, pending := w.pending[k]
	_, writing := w.writing[k]
	return pending || writing
}

// vectorWriter holds fetched vectors until they are stored.
type vectorWriter struct {
	loop    flushloop.Loop
	flushMu sync.Mutex // one flush at a time

	mu      sync.Mutex
	pending map[vectorKey][]float32
	writing map[vectorKey][]float32 // taken by the flush under way, not committed yet
	store   func(ctx context.Context, keys []vectorKey, vecs map[vectorKey][]float32) error
}

func (w *vectorWriter) start(store func(ctx context.Context, keys []vectorKey, vecs map[vectorKey][]float32) error, delay func() time.Duration) {
	w.store = store
	w.pending = map[vectorKey][]float32{}
	w.loop.Start(w.flush, delay, w.full, "couldn't store embeddings")
}

func (w *vectorWriter) full() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) >= vectorWriteBatch
}

// stop ends the background loop and stores what is pending.
func (w *vectorWriter) stop() { w.loop.Stop() }

// add queues the vectors of model, by content hash, to be stored.
func (w *vectorWriter) add(model string, vecs map[string][]float32) {
	if len(vecs) == 0 {
		return
	}
	w.mu.Lock()
	for h, v := range vecs {
		w.pending[vectorKey{h, model}] = v
	}
	w.mu.Unlock()
	w.loop.Wake()
}

// lookup returns a copy of the pending vector of hash for model (callers normalize what
// they read in place), or nil.
func (w *vectorWriter) lookup(model, hash string) []float32 {
	k := vectorKey{hash, model}
	w.mu.Lock()
	defer w.mu.Unlock()
	if v, ok := w.pending[k]; ok {
		return slices.Clone(v)
	}
	return slices.Clone(w.writing[k])
}

// drop forgets the pending vectors of hashes, of every model (forget-me: nothing derived
// from the words waits in memory to be stored). A batch being stored is left alone: its
// statement stores a vector only while a live memory has the content.
func (w *vectorWriter) drop(hashes []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.pending {
		if slices.Contains(hashes, k.hash) {
			delete(w.pending, k)
		}
	}
}

// flush stores every pending vector, vectorWriteBatch per transaction. A batch that fails
// is put back (unless a newer vector of its content came meanwhile) for the next flush.
func (w *vectorWriter) flush(ctx context.Context) error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	if len(w.pending) == 0 {
		w.mu.Unlock()
		return nil
	}
	// Until the batch commits, lookups find its vectors in writing: they are in neither
	// pending nor (for another connection) the table.
	pending := w.pending
	w.pending, w.writing = make(map[vectorKey][]float32, len(pending)), pending
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.writing = nil
		w.mu.Unlock()
	}()
	keys := make([]vectorKey, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	// In hash order a batch meets the embeddings index in its own order.
	slices.SortFunc(keys, func(a, b vectorKey) int {
		return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.model, b.model))
	})
	for start := 0; start < len(keys); start += vectorWriteBatch {
		batch := keys[start:min(start+vectorWriteBatch, len(keys))]
		if err := w.store(ctx, batch, pending); err != nil {
			w.mu.Lock()
			for _, k := range keys[start:] {
				if _, newer := w.pending[k]; !newer {
					w.pending[k] = pending[k]
				}
			}
			w.mu.Unlock()
			return err
		}
	}
	return nil
}

// storePendingVectors stores the vectors of keys in one write transaction, each only while
// a live memory has its content.
func (s vectorStore) storePendingVectors(ctx context.Context, keys []vectorKey, vecs map[vectorKey][]float32) error {
	now := s.nowMillis()
	return s.withBookkeepingTx(ctx, func(tx *txn) error {
		q := s.stmts.on(tx)
		for _, k := range keys {
			v := vecs[k]
			if _, err := q.ExecContext(ctx, storeLiveVectorSQL, k.hash, k.model, len(v), encodeVector(v), now); err != nil {
				return fmt.Errorf("couldn't store embedding: %w", err)
			}
		}
		return nil
	})
}

// FlushVectors stores the vectors fetched for new memories that are still waiting to be
// stored. The store does it in the background shortly after each write and on Close; tests
// call it to observe the table deterministically.
func (s *Recall) FlushVectors(ctx context.Context) error {
	return s.db.recall.vectorWrites.flush(ctx)
}

// VectorWaiting reports whether a vector of content (of any model) waits in memory to be
// stored; forget-me tests use it to prove a member's words left memory too.
func (s *Recall) VectorWaiting(content string) bool {
	c, err := memory.CleanContent(content)
	if err != nil {
		return false
	}
	hash := memory.Hash(c)
	w := &s.db.recall.vectorWrites
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.pending {
		if k.hash == hash {
			return true
		}
	}
	for k := range w.writing {
		if k.hash == hash {
			return true
		}
	}
	return false
}
