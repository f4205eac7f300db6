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
	load := x.loader
	x.mu.Unlock()

	done := make(chan struct{})
	go func() {
		defer close(done)
		err := load(context.WithoutCancel(ctx), key, func(id int64, hash string, meta Meta, vec []float32) {
			x.put(sv, id, hash, meta, vec, true)
			x.fitLoading(key)
		})
		sv.mu.Lock()
		sv.loading, sv.removed, sv.written = false, nil, nil
		sv.shrink()
		sv.mu.Unlock()
		if err != nil {
			x.drop(key, sv)
			sv.loadErr = err
		}
		close(sv.ready)
		x.evict(key)
	}()
	select {
	case <-done:
		return sv.loadErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// drop removes sv (if it is still the scope of key) and stops counting its rows.
func (x *Index) drop(key string, sv *scope) {
	x.mu.Lock()
	if x.scopes[key] == sv {
		delete(x.scopes, key)
	}
	x.mu.Unlock()
	sv.mu.Lock()
	x.retire(sv)
	sv.mu.Unlock()
}

// evict drops least recently used scopes other than keep while the rows held pass the
// bound, then float32 copies while the copies and rows together pass it. A scope still loading is never evicted; a single scope larger than the bound
// stays (it cannot be served otherwise).
func (x *Index) evict(keep string) {
	x.mu.RLock()
	limit, dims := x.limit, x.dims
	x.mu.RUnlock()
	if limit <= 0 || dims == 0 {
		return
	}
	// Scopes leave only while their int8 rows alone pass the bound; the float32 copies
	// then give way to whatever room is left (dropExact).
	defer x.dropExact(keep, limit, dims)
	per := rowBytes(dims)
	for x.rows.Load()*per > limit {
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
			x.mu.Unlock()
			return
		}
		delete(x.scopes, vkey)
		x.mu.Unlock()
		victim.mu.Lock()
		x.retire(victim)
		victim.mu.Unlock()
	}
}
