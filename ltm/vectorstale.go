package ltm

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// staleVectors are the memories of resident scopes that another process changed since the
// vector index read them, as an engine with a change feed reports them (RecallFeed): their
// vectors leave the index at once, and the next recall of the scope reads them again
// (refresh) before it searches. Each mark carries a sequence number, so a refresh that
// raced a newer change leaves the memory marked rather than put back what it read before
// that change. SQLite has no feed and never marks: its writes keep the index current.
type staleVectors struct {
	mu  sync.Mutex
	seq uint64
	ids map[string]map[int64]uint64 // scope key → memory id → mark
}

// mark takes ids out of resident scope key and marks them for a refresh. A scope that is
// not resident is left alone: its next load reads the database.
func (t *staleVectors) mark(idx *vecindex.Index, key string, ids []int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !idx.Resident(key) {
		return
	}
	if t.ids == nil {
		t.ids = map[string]map[int64]uint64{}
	}
	marks := t.ids[key]
	if marks == nil {
		marks = map[int64]uint64{}
		t.ids[key] = marks
	}
	for _, id := range ids {
		idx.Remove(key, id)
		t.seq++
		marks[id] = t.seq
	}
}

// reset empties the index with every mark: the model changed, or the feed may have missed
// changes.
func (t *staleVectors) reset(idx *vecindex.Index) {
	t.mu.Lock()
	defer t.mu.Unlock()
	idx.Reset()
	clear(t.ids)
}

// count reports how many memories of scope key wait for a refresh.
func (t *staleVectors) count(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ids[key])
}

// refresh reads again the marked memories of scope key and puts those that are live back
// into the index, with their stored vector of the model or the one waiting to be stored.
// On error the marks stay, and the memories stay out of the index until a later refresh
// succeeds.
func (t *staleVectors) refresh(ctx context.Context, s *db, key string) error {
	t.mu.Lock()
	marks := t.ids[key]
	delete(t.ids, key)
	t.mu.Unlock()
	e := s.recall.emb.Load()
	if len(marks) == 0 || e == nil {
		return nil
	}
	ids := slices.Collect(maps.Keys(marks))
	type found struct {
		id   int64
		hash string
		meta vecindex.Meta
		vec  []float32
	}
	var got []found
	err := func() error {
		rows, err := s.read.QueryContext(ctx, `SELECT m.id, m.content_hash, m.guild_id, m.channel_id, m.created_at, m.type,
			m.pinned, m.importance, m.tags, m.author_id, m.state, e.vector FROM memories m
			LEFT JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?
			WHERE `+s.dialect.IDsIn("m.id")+` AND m.scope_key = ? AND m.deleted_at IS NULL`, e.model, idArray(ids), key)
		if err != nil {
			return err
		}
		return putVectorRows(ctx, s, e.model, key, rows, func(id int64, hash string, meta vecindex.Meta, vec []float32) {
			got = append(got, found{id, hash, meta, slices.Clone(vec)})
		})
	}()
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.ids[key]
	if err != nil {
		if now == nil {
			if t.ids == nil {
				t.ids = map[string]map[int64]uint64{}
			}
			now = map[int64]uint64{}
			t.ids[key] = now
		}
		for id, mark := range marks {
			if _, newer := now[id]; !newer {
				now[id] = mark
			}
		}
		return fmt.Errorf("couldn't refresh the vectors of %s: %w", key, err)
	}
	if s.recall.emb.Load() != e {
		return nil // the model changed: the index was emptied
	}
	for _, f := range got {
		if _, newer := now[f.id]; newer {
			continue // changed again while this was read: the next refresh reads it
		}
		if !s.recall.vectors.Upsert(key, f.id, f.hash, f.meta, f.vec) {
			slog.Warn("vector index: a stored vector has another width than the index", "scope", key, "memory", f.id)
		}
	}
	return nil
}

// RecallFeed is how an engine that hears of other processes' writes (PostgreSQL's change
// feed) keeps the service's recall current with them; Store.RecallFeed returns it.
type RecallFeed struct{ d *db }

// MemoriesChanged takes the memories ids of scope key out of the vector index at once; the
// scope's next recall reads them again.
func (f RecallFeed) MemoriesChanged(key string, ids []int64) {
	f.d.recall.stale.mark(f.d.recall.vectors, key, ids)
}

// Missed drops every resident scope, cached query vector and keyword index: the feed was
// down, and what it missed is unknown.
func (f RecallFeed) Missed() {
	f.d.recall.stale.reset(f.d.recall.vectors)
	f.d.recall.clearQueryCache()
	f.d.recall.keywords.DropAll()
}

// ForgetCachedQueries empties the query vector cache, keyed by what people searched, after
// a forget-me of another process.
func (f RecallFeed) ForgetCachedQueries() { f.d.recall.clearQueryCache() }

// Stale reports how many memories of scope key wait to be read again by its next recall.
func (f RecallFeed) Stale(key string) int { return f.d.recall.stale.count(key) }
