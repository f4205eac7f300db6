package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
)

// staleIDs are the memories of resident scopes that another process (or this one, through
// a path without a hook) changed since the index read them: the change feed takes their
// vectors out of the index at once and marks them, and the next recall of the scope reads
// them again (refreshStale) before it searches. Each mark carries a sequence number, so a
// refresh that raced a newer change leaves the memory marked rather than put back what it
// read before that change.
type staleIDs struct {
	mu  sync.Mutex
	seq uint64
	ids map[string]map[int64]uint64 // scope key → memory id → mark
}

func (t *staleIDs) init() { t.ids = map[string]map[int64]uint64{} }

// noteChanged takes ids out of resident scope key and marks them for a refresh. A scope
// that is not resident is left alone: its next load reads the database.
func (r *recallState) noteChanged(key string, ids []int64) {
	r.stale.mu.Lock()
	defer r.stale.mu.Unlock()
	if !r.vectors.Resident(key) {
		return
	}
	marks := r.stale.ids[key]
	if marks == nil {
		marks = map[int64]uint64{}
		r.stale.ids[key] = marks
	}
	for _, id := range ids {
		r.vectors.Remove(key, id)
		r.stale.seq++
		marks[id] = r.stale.seq
	}
}

// staleCount reports how many memories of scope key wait for a refresh.
func (r *recallState) staleCount(key string) int {
	r.stale.mu.Lock()
	defer r.stale.mu.Unlock()
	return len(r.stale.ids[key])
}

// refreshStale reads again the marked memories of scope key and puts those that are live
// with a vector of the model back into the index. On error the marks stay, and the
// memories stay out of the index until a later refresh succeeds.
func (r *recallState) refreshStale(ctx context.Context, key string) error {
	e := r.emb.Load()
	r.stale.mu.Lock()
	marks := r.stale.ids[key]
	delete(r.stale.ids, key)
	r.stale.mu.Unlock()
	if len(marks) == 0 || e == nil {
		return nil
	}
	ids := slices.Collect(maps.Keys(marks))
	var found []vectorRow
	err := func() error {
		rows, err := r.d.read.QueryContext(ctx, `SELECT `+vectorColumns+`, e.vector FROM memories m
			JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?
			WHERE m.id = ANY(?) AND m.scope_key = ? AND m.deleted_at IS NULL`, e.model, ids, key)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v vectorRow
			if err := scanVectorRow(rows, &v); err != nil {
				return err
			}
			found = append(found, v)
		}
		return rows.Err()
	}()
	r.stale.mu.Lock()
	defer r.stale.mu.Unlock()
	now := r.stale.ids[key]
	if err != nil {
		if now == nil {
			now = map[int64]uint64{}
			r.stale.ids[key] = now
		}
		for id, mark := range marks {
			if _, newer := now[id]; !newer {
				now[id] = mark
			}
		}
		return fmt.Errorf("couldn't refresh the vectors of %s: %w", key, err)
	}
	if r.emb.Load() != e {
		return nil // the model changed: the index was emptied
	}
	for _, v := range found {
		if _, newer := now[v.id]; newer {
			continue // changed again while this was read: the next refresh reads it
		}
		if vec := decodeVector(v.blob); vec != nil && !r.vectors.Upsert(key, v.id, v.hash, v.meta, vec) {
			slog.Warn("vector index: a stored vector has another width than the index", "scope", key, "memory", v.id)
		}
	}
	return nil
}
