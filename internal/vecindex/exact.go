package vecindex

// Exact float32 copies. Recall re-scores the int8 index's candidates with the exact float32
// vectors; reading them from the database costs a page read each, most of a hybrid recall's
// time. So a scope keeps a float32 copy of its unit vectors (4 bytes a coordinate, 1,536
// at 384 dimensions) within the index's byte bound. When the bound is passed, the least
// recently used scope gives up its copies first and then its rows (evict, lazy.go), so the
// scopes asked most keep their copies.
// A scope whose copies were dropped gets them back only when it is loaded again.

// exactRowBytes is the memory of one row's float32 copy at dims.
func exactRowBytes(dims int) int64 { return int64(4 * dims) }

// heldBytes is the estimated memory of the resident rows and their float32 copies.
func (x *Index) heldBytes(dims int) int64 {
	return x.rows.Load()*rowBytes(dims) + x.exact.Load()*exactRowBytes(dims)
}

// ExactVector appends to dst[:0] the unit float32 vector of id in scope key and reports
// whether the scope holds it; a non-empty hash must be the content hash the vector was
// stored for. The copy is the vector the index quantized, scaled to unit length exactly as
// Normalize does, so a cosine computed from it equals one from the stored vector.
func (x *Index) ExactVector(key string, id int64, hash string, dst []float32) ([]float32, bool) {
	sv := x.scope(key)
	if sv == nil {
		return dst[:0], false
	}
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	i, ok := sv.pos[id]
	if !ok || !sv.exact || (hash != "" && sv.hashes[i] != fingerprint(hash)) {
		return dst[:0], false
	}
	return append(dst[:0], sv.f32[int(i)*sv.dims:(int(i)+1)*sv.dims]...), true
}

// Ready reports whether scope key is resident and finished loading, without waiting and
// without starting a load.
func (x *Index) Ready(key string) bool {
	x.mu.RLock()
	sv := x.scopes[key]
	x.mu.RUnlock()
	if sv == nil {
		return false
	}
	select {
	case <-sv.ready:
		return sv.loadErr == nil
	default:
		return false
	}
}

// retire marks sv evicted and stops counting its rows and copies in x; sv.mu is held.
func (sv *scope) retire(x *Index) {
	if sv.evicted {
		return
	}
	sv.dropExact(x) // counts the copies off while sv still counts as resident
	sv.evicted = true
	x.rows.Add(-int64(len(sv.ids)))
}

// dropExact gives back sv's float32 copies; sv.mu is held.
func (sv *scope) dropExact(x *Index) {
	if !sv.exact {
		return
	}
	sv.exact = false
	sv.f32 = nil
	if !sv.evicted {
		x.exact.Add(-int64(len(sv.ids)))
	}
}
