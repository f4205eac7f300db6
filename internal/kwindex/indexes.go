package kwindex

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

// Indexes are the keyword indexes of one store, a Scope per scope key, built from the
// database on first use and kept current from a change log: both stores (SQLite and
// PostgreSQL) hold them the same way and differ only in their Source, how rows are read
// and how changes arrive.
//
// A change log is a sequence of positions, each naming the memories one change touched.
// Indexes remember the last position they applied; before a query, Sync applies what
// arrived since to every ready scope by reading the changed memories again. A build reads
// the log's position before the scope's rows, and applies everything after that position
// before it answers, so nothing committed during a build is lost.
type Indexes struct {
	src      Source
	settings func() Settings

	// catchUp serialises applying the change log; applied is the last position applied to
	// every ready scope.
	catchUp sync.Mutex
	applied atomic.Int64

	mu     sync.Mutex
	scopes map[string]*indexedScope
	clock  atomic.Int64 // use counter for least-recently-used eviction
	wg     sync.WaitGroup
	closed bool
}

// Source is what Indexes read: a store's memories and its change log.
type Source interface {
	// Size returns the number of live memories in the scope.
	Size(ctx context.Context, key string) (int, error)
	// Load returns the scope's live memories as documents.
	Load(ctx context.Context, key string) ([]Doc, error)
	// Read returns the memories with the given ids as they are now (a purged one is left
	// out), each with its scope and whether it is live.
	Read(ctx context.Context, ids []int64) ([]Row, error)
	// Ends returns the newest position of the change log and the oldest one it still holds
	// (last+1 when it holds none, 0 when it never held any). Positions before first are
	// lost: a reader behind them rebuilds.
	Ends(ctx context.Context) (last, first int64, err error)
	// Changed returns the memories named at positions in (from, to].
	Changed(ctx context.Context, from, to int64) ([]int64, error)
}

// Row is one memory as Source.Read returns it.
type Row struct {
	Doc      Doc
	ScopeKey string
	Live     bool
}

// Settings are the tunables Indexes read at each use, so a store's settings can change
// while it runs.
type Settings struct {
	// Params are the BM25 parameters of a new index.
	Params Params
	// SyncBuild is the largest scope built inside the query that needs it; larger ones
	// build in the background while the caller answers another way.
	SyncBuild int
	// Max bounds the documents all scopes hold together; past it the least recently
	// searched scopes are dropped. 0 or less: no bound.
	Max int
}

type indexedScope struct {
	// idx is set before ready turns true; a query that finds the scope ready reads it
	// while a Warm may be storing a fresh build.
	idx      atomic.Pointer[Scope]
	ready    atomic.Bool
	building atomic.Bool
	lastUsed atomic.Int64
}

// ErrLogTrimmed says the change log no longer holds the changes asked for: a Source's
// Changed may return it (wrapped), and the indexes then start over.
var ErrLogTrimmed = errors.New("the change log no longer holds the changes asked for")

// NewIndexes returns empty indexes over src, reading their settings from settings.
func NewIndexes(src Source, settings func() Settings) *Indexes {
	return &Indexes{src: src, settings: settings, scopes: map[string]*indexedScope{}}
}

// Close waits for background builds to stop; none start afterwards.
func (k *Indexes) Close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	k.wg.Wait()
}

// Settle waits until the background builds have finished, or ctx ends.
func (k *Indexes) Settle(ctx context.Context) error {
	built := make(chan struct{})
	go func() {
		k.wg.Wait()
		close(built)
	}()
	select {
	case <-built:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Ready returns the scope's index when it can answer now. Otherwise it starts building it
// (in the query for a small scope, in the background for a large one) and returns nil.
func (k *Indexes) Ready(ctx context.Context, key string) (*Scope, error) {
	sc := k.scope(key)
	if sc.ready.Load() {
		return sc.idx.Load(), nil
	}
	size, err := k.src.Size(ctx, key)
	if err != nil {
		return nil, err
	}
	if size <= k.settings().SyncBuild {
		if !sc.building.CompareAndSwap(false, true) {
			return nil, nil // another query is building it
		}
		defer sc.building.Store(false)
		if sc.ready.Load() {
			// Another query built it after this one looked: one build is enough.
			return sc.idx.Load(), nil
		}
		if err := k.build(ctx, key, sc); errors.Is(err, ErrLogTrimmed) {
			return nil, nil // the next query builds it again
		} else if err != nil {
			return nil, err
		}
		return sc.idx.Load(), nil
	}
	if sc.building.CompareAndSwap(false, true) {
		if sc.ready.Load() {
			sc.building.Store(false)
			return sc.idx.Load(), nil
		}
		k.mu.Lock()
		if k.closed {
			k.mu.Unlock()
			sc.building.Store(false)
			return nil, nil
		}
		k.wg.Add(1)
		k.mu.Unlock()
		go func() {
			defer k.wg.Done()
			defer sc.building.Store(false)
			// A background build outlives the query that asked for it, not the store; a
			// failed one is tried again by the next query.
			_ = k.build(context.WithoutCancel(ctx), key, sc)
		}()
	}
	return nil, nil
}

// Warm builds the scopes' indexes now and waits for them, so a benchmark or an operator's
// warm-up times a ready index rather than its build.
func (k *Indexes) Warm(ctx context.Context, keys ...string) error {
	// Catch up first, so the log's position is set before the builds (Sync).
	if err := k.Sync(ctx); err != nil {
		return err
	}
	for _, key := range keys {
		sc := k.scope(key)
		if sc.ready.Load() {
			continue
		}
		if err := k.build(ctx, key, sc); err != nil {
			return err
		}
	}
	return nil
}

// scope returns the entry of key, creating it, and marks it as just used for eviction.
func (k *Indexes) scope(key string) *indexedScope {
	k.mu.Lock()
	defer k.mu.Unlock()
	sc := k.scopes[key]
	if sc == nil {
		sc = &indexedScope{}
		k.scopes[key] = sc
	}
	sc.lastUsed.Store(k.clock.Add(1))
	return sc
}

// build loads the scope's live rows into its index and marks it ready. The log's position
// is read before the rows, and the changes after it are applied before the index answers,
// so nothing written during the build is missed (a change the rows already show is applied
// again, which changes nothing).
func (k *Indexes) build(ctx context.Context, key string, sc *indexedScope) error {
	at, _, err := k.src.Ends(ctx)
	if err != nil {
		return err
	}
	docs, err := k.src.Load(ctx, key)
	if err != nil {
		return err
	}
	set := k.settings()
	idx := NewScope(set.Params)
	idx.Put(docs...)

	// Apply what changed since the rows were read, under the catch-up lock so the global
	// position and this scope agree when it turns ready.
	k.catchUp.Lock()
	defer k.catchUp.Unlock()
	// The build needs the changes in (at, applied] (Sync applies the later ones), and none
	// may have been lost since at; an empty log (at 0) had nothing to lose.
	applied := k.applied.Load()
	if applied > at || at > 0 {
		if _, first, err := k.src.Ends(ctx); err != nil {
			return err
		} else if first > at+1 {
			return fmt.Errorf("couldn't build the keyword index of %s: %w", key, ErrLogTrimmed)
		}
	}
	if err := k.applyRange(ctx, at, applied, map[string]*Scope{key: idx}); err != nil {
		return err
	}
	k.mu.Lock()
	sc.idx.Store(idx)
	sc.ready.Store(true)
	k.scopes[key] = sc // an eviction or a drop may have removed it meanwhile
	k.mu.Unlock()
	k.evict(set.Max)
	return nil
}

// Sync applies every change logged since the last one applied to the ready scopes. It runs
// before each keyword query.
func (k *Indexes) Sync(ctx context.Context) error {
	last, first, err := k.src.Ends(ctx)
	if err != nil {
		return err
	}
	if last <= k.applied.Load() {
		return nil
	}
	k.catchUp.Lock()
	defer k.catchUp.Unlock()
	from := k.applied.Load()
	if last <= from {
		return nil
	}
	if from == 0 && !k.anyReady() {
		// Nothing is built yet, so nothing needs the log's past: start reading from here
		// (a build reads the rows themselves) instead of replaying the whole log.
		k.applied.Store(last)
		return nil
	}
	if first > from+1 {
		// The log lost changes this process never read: start over.
		k.DropAll()
		k.applied.Store(last)
		return nil
	}
	if err := k.applyRange(ctx, from, last, k.readyScopes()); errors.Is(err, ErrLogTrimmed) {
		k.DropAll()
	} else if err != nil {
		return err
	}
	k.applied.Store(last)
	return nil
}

// applyRange applies the changes at positions in (from, to] to the given indexes.
func (k *Indexes) applyRange(ctx context.Context, from, to int64, scopes map[string]*Scope) error {
	if to <= from || len(scopes) == 0 {
		return nil
	}
	ids, err := k.src.Changed(ctx, from, to)
	if err != nil {
		return err
	}
	for start := 0; start < len(ids); start += 500 {
		batch := ids[start:min(start+500, len(ids))]
		// Every changed id leaves every index first: a memory may have moved scope, been
		// forgotten or purged (then it has no row at all).
		for _, idx := range scopes {
			idx.Remove(batch...)
		}
		rows, err := k.src.Read(ctx, batch)
		if err != nil {
			return err
		}
		add := map[string][]Doc{}
		for _, r := range rows {
			if _, ok := scopes[r.ScopeKey]; ok && r.Live {
				add[r.ScopeKey] = append(add[r.ScopeKey], r.Doc)
			}
		}
		for key, docs := range add {
			scopes[key].Put(docs...)
		}
	}
	return nil
}

func (k *Indexes) readyScopes() map[string]*Scope {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[string]*Scope, len(k.scopes))
	for key, sc := range k.scopes {
		if sc.ready.Load() {
			out[key] = sc.idx.Load()
		}
	}
	return out
}

func (k *Indexes) anyReady() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, sc := range k.scopes {
		if sc.ready.Load() {
			return true
		}
	}
	return false
}

// DropAll forgets every ready index; each is rebuilt on its next use. A build under way
// notices a lost stretch of the log itself and does not turn ready.
func (k *Indexes) DropAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, sc := range k.scopes {
		if !sc.building.Load() {
			delete(k.scopes, key)
		}
	}
}

// evict drops the least recently searched ready scopes while the indexes hold more than
// max memories.
func (k *Indexes) evict(max int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	type entry struct {
		key  string
		used int64
		n    int
	}
	var all []entry
	total := 0
	for key, sc := range k.scopes {
		if !sc.ready.Load() {
			continue
		}
		n := sc.idx.Load().Len()
		total += n
		all = append(all, entry{key, sc.lastUsed.Load(), n})
	}
	if max <= 0 || total <= max {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used < all[j].used })
	for _, e := range all[:len(all)-1] { // the scope just used stays
		if total <= max {
			break
		}
		delete(k.scopes, e.key)
		total -= e.n
	}
}

// Holds reports whether any ready index holds word; forget-me tests use it to prove a
// member's words left memory too.
func (k *Indexes) Holds(word string) bool {
	for _, idx := range k.readyScopes() {
		if idx.Holds(word) {
			return true
		}
	}
	return false
}

// Has reports whether any ready index holds the memory id.
func (k *Indexes) Has(id int64) bool {
	for _, idx := range k.readyScopes() {
		if idx.Has(id) {
			return true
		}
	}
	return false
}
