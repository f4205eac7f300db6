package vecindex

import (
	"context"
	"math"
)

// Lazy loading: scopes are loaded by the Loader on first use and evicted least recently
// used past the byte bound (SetLoader).

// Ensure makes scope key resident: without a loader it does nothing; otherwise a scope not
// held is loaded (concurrent callers wait for one load) and others are evicted if the bound
// is passed. It returns the load's error; the scope is then not held and the next call
// tries again. Waiting ends early with ctx, but the load itself goes on for the next caller.
func (x *Index) Ensure(ctx context.Context, key string) error {
	x.mu.Lock()
	if x.loader == nil {
		x.mu.Unlock()
		return nil
	}
	sv := x.scopes[key]
	if sv != nil {
		sv.used.Store(x.clock.Add(1))
		x.mu.Unlock()
		select {
		case <-sv.ready:
			return sv.loadErr
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	sv = newScope(x.dims)
	sv.loading, sv.removed, sv.written = true, map[int64]bool{}, map[int64]bool{}
	sv.used.Store(x.clock.Add(1))
	x.scopes[key] = sv
	load, size := x.loader, x.sizer
	x.mu.Unlock()

	done := make(chan struct{})
	go func() {
		defer close(done)
		ld := &scopeLoad{x: x, key: key, sv: sv}
		ld.run(context.WithoutCancel(ctx), load, size)
	}()
	select {
	case <-done:
		return sv.loadErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// scopeLoad is one load of a scope from the durable store, run by Ensure: it sizes the
// scope's arrays from the Sizer, puts the Loader's rows, keeps the index within its bound
// while the rows arrive, and drops the scope if the load fails.
type scopeLoad struct {
	x    *Index
	key  string
	sv   *scope
	hint int // rows the Sizer announced; 0 once the arrays are sized
}

// run loads the scope with load, sized by size when set, and marks it ready.
func (ld *scopeLoad) run(ctx context.Context, load Loader, size Sizer) {
	x, sv, key := ld.x, ld.sv, ld.key
	if size != nil {
		if n, err := size(ctx, key); err == nil {
			ld.hint = n
		}
	}
	err := load(ctx, key, ld.put)
	sv.mu.Lock()
	sv.loading, sv.removed, sv.written = false, nil, nil
	sv.shrink()
	sv.mu.Unlock()
	if err != nil {
		ld.drop()
		sv.loadErr = err
	}
	close(sv.ready)
	x.evict(key)
}

// put stores one row the Loader read.
func (ld *scopeLoad) put(id int64, hash string, meta Meta, vec []float32) {
	if ld.hint > 0 {
		ld.reserve(ld.hint, len(vec)) // the first row gives the width
		ld.hint = 0
	}
	ld.x.put(ld.sv, id, hash, meta, vec, true)
	ld.fitLoading()
}

// reserve gives the loading scope room for n rows (and a little more for the writes
// that arrive while it loads). The float32 copies get room only when they fit in the
// index's bound next to what it holds, since otherwise they would be dropped for room.
func (ld *scopeLoad) reserve(n, dims int) {
	x, sv := ld.x, ld.sv
	x.mu.RLock()
	limit, width := x.limit, x.dims
	x.mu.RUnlock()
	if dims == 0 || (width != 0 && width != dims) {
		return
	}
	n += n/32 + 16
	// Other scopes give way to the one loading (evict), so its copies get room when they
	// fit the bound by themselves; they give way now, before the arrays are allocated.
	need := int64(n) * rowBytes(dims)
	exact := limit == 0 || need+int64(n)*exactRowBytes(dims) <= limit
	if exact {
		need += int64(n) * exactRowBytes(dims)
	}
	x.makeRoom(ld.key, min(need, limit))
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.dims == 0 && len(sv.ids) == 0 {
		sv.dims, sv.words = dims, (dims+63)/64
	}
	if sv.dims != dims || len(sv.ids) > 0 {
		return
	}
	sv.ids = make([]int64, 0, n)
	sv.hashes = make([]uint64, 0, n)
	sv.meta = make([]rowMeta, 0, n)
	sv.q8 = make([]int8, 0, n*dims)
	sv.scale = make([]float32, 0, n)
	sv.codes = make([]uint64, 0, n*sv.words)
	sv.pos = make(map[int64]int32, n)
	if sv.exact && exact {
		sv.f32 = make([]float32, 0, n*dims)
	}
}

// drop removes the scope after a failed load (if it is still the scope of its key) and
// stops counting its rows.
func (ld *scopeLoad) drop() {
	x, sv, key := ld.x, ld.sv, ld.key
	x.mu.Lock()
	if x.scopes[key] == sv {
		delete(x.scopes, key)
	}
	x.mu.Unlock()
	sv.mu.Lock()
	sv.retire(x)
	sv.mu.Unlock()
}

// fitLoading makes room, once the index passes its bound while copies are held, for the
// rows of the scope being loaded: a load must not grow the process past the bound
// by its copies, so scopes and copies go as they would after the load (evict), the
// loading scope's copies last.
func (ld *scopeLoad) fitLoading() {
	x := ld.x
	if x.exact.Load() == 0 {
		return
	}
	x.mu.RLock()
	limit, dims := x.limit, x.dims
	x.mu.RUnlock()
	if limit > 0 && x.heldBytes(dims) > limit {
		x.evict(ld.key)
	}
}

// Sizer returns how many rows the Loader will put for scope key (an estimate will do).
// A load sizes the scope's arrays from it once, instead of growing them by appends: each
// growth copies the scope and holds the old and the new arrays at once, so a 100k-row scope
// used to reach more than twice its final size while it loaded.
type Sizer func(ctx context.Context, key string) (int, error)

// SetSizer sets the Sizer loads consult; nil (the default) lets arrays grow as rows come.
func (x *Index) SetSizer(s Sizer) {
	x.mu.Lock()
	x.sizer = s
	x.mu.Unlock()
}

// evict makes the index fit its bound, in order of recency: the least recently used scope
// other than keep gives up its float32 copies first, then its rows, before a more recent
// scope loses anything; keep's copies go only when no other scope is left. So the servers
// asked most keep their exact re-rank (without copies a recall reads each candidate's
// vector from SQLite, which made a busy server's recall 2.4× slower than alone), and the
// rarely asked ones reload on their next recall. A scope still loading is never evicted;
// a single scope larger than the bound stays (it cannot be served otherwise).
func (x *Index) evict(keep string) { x.makeRoom(keep, 0) }

// makeRoom is evict for extra bytes more than the index holds: a load makes room for the
// scope it is about to allocate before allocating it, so the scopes that give way are
// released first rather than held next to the new arrays.
func (x *Index) makeRoom(keep string, extra int64) {
	x.mu.RLock()
	limit, dims := x.limit, x.dims
	x.mu.RUnlock()
	if limit <= 0 || dims == 0 {
		return
	}
	for x.heldBytes(dims)+extra > limit {
		x.mu.Lock()
		var (
			victim *scope
			vkey   string
			oldest uint64 = math.MaxUint64
		)
		for k, sv := range x.scopes {
			if k == keep {
				continue
			}
			select {
			case <-sv.ready:
			default:
				continue
			}
			if u := sv.used.Load(); u < oldest {
				victim, vkey, oldest = sv, k, u
			}
		}
		if victim == nil {
			kept := x.scopes[keep]
			x.mu.Unlock()
			if kept != nil {
				kept.mu.Lock()
				kept.dropExact(x)
				kept.mu.Unlock()
			}
			return
		}
		victim.mu.Lock()
		if victim.exact && len(victim.ids) > 0 {
			victim.dropExact(x)
			victim.mu.Unlock()
			x.mu.Unlock()
			continue
		}
		delete(x.scopes, vkey)
		x.mu.Unlock()
		victim.retire(x)
		victim.mu.Unlock()
	}
}

// Settle waits until every scope that is loading has finished, or ctx ends. Loads started
// while it waits are not waited for.
func (x *Index) Settle(ctx context.Context) error {
	x.mu.RLock()
	var pending []chan struct{}
	for _, sv := range x.scopes {
		select {
		case <-sv.ready:
		default:
			pending = append(pending, sv.ready)
		}
	}
	x.mu.RUnlock()
	for _, ready := range pending {
		select {
		case <-ready:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}
