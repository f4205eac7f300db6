// Package vecindex is recall's in-process vector index: unit vectors grouped by scope key,
// searched by cosine, with filters applied before the top k.
//
// Vectors are held compactly: each is scaled to unit length and quantized to one signed
// byte per coordinate with a per-vector scale (int8 scalar quantization, 1/4 of float32's
// bytes), next to a 1-bit code per coordinate. Small scopes (the usual case: one guild, one
// user) are scanned over the int8 vectors. Larger scopes are searched in two stages: a scan
// of the 1-bit codes (the sign of each centred coordinate, compared by Hamming distance
// with popcount, 48 bytes per memory at 384 dimensions) picks a shortlist, and the
// shortlist is re-ranked by cosine over the int8 vectors. The exact float32 vectors stay in
// the database; recall re-scores its final candidates from them (ltm). docs/recall.md has
// the measurements behind the shortlist size and the quantization.
//
// With a Loader (SetLoader) the index is a bounded cache of scopes: a scope is loaded from
// the durable store on first use (Ensure), evicted least recently used when the vectors held
// pass the byte limit, and loaded again on its next use. Writes to a resident scope update
// it; writes to a scope that is not resident are left to the store, which the next load
// reads. Without a Loader every scope written stays resident (tests, tools).
package vecindex

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

const (
	// exactScanMax is the largest scope scanned in full; above it the two-stage search is
	// used. Below a few thousand vectors a full scan is already well under a millisecond.
	exactScanMax = 4096
	// shortlistMin and shortlistPerK size the re-ranked shortlist: max(shortlistMin,
	// shortlistPerK×k) candidates, capped at the scope size.
	shortlistMin  = 400
	shortlistPerK = 16
	// recenterMin is the scope size at which codes are first centred on the scope's mean
	// vector; the centre is recomputed (and every code rebuilt) each time the scope doubles
	// after that, so it follows the data without a rebuild per write.
	recenterMin = 1024
)

// Meta is what a search may filter on without reading the database. The store keeps it
// current through its write paths (SetMeta when a memory's type, pin or tags change).
type Meta struct {
	// OriginGuild is the guild a memory was made in (a personal memory's origin guild).
	OriginGuild string
	// Channel is the origin channel; empty for older rows.
	Channel string
	// CreatedAt is the creation time in Unix milliseconds.
	CreatedAt  int64
	Type       string
	Pinned     bool
	Importance float64
	// Tags are lowercased.
	Tags []string
	// AuthorID is the user id of the memory's author; empty when unknown.
	AuthorID string
	// State is the memory's stored lifecycle state ("" when active).
	State string
}

// Filter says which rows a search may return. It is checked before the top k is taken: a
// filter applied afterwards would let failing rows crowd out passing ones. The zero Filter
// keeps every row.
type Filter struct {
	// OriginGuild, when set, keeps rows made in that guild only.
	OriginGuild string
	// Types, when set, keeps rows of these types only.
	Types []string
	// PinnedOnly keeps pinned rows only.
	PinnedOnly bool
	// Since keeps rows created at or after this Unix millisecond.
	Since int64
	// Until, when above 0, keeps rows created at or before this Unix millisecond.
	Until int64
	// AuthorID, when set, keeps rows of this author only.
	AuthorID string
	// ImportanceMin, when above 0, keeps rows at least this important.
	ImportanceMin float64
	// Tags keeps rows holding every one of these (lowercased) tags.
	Tags []string
	// RestrictChannels turns on the channel rule (SPEC §2 "Channel-aware memory"): a row
	// with an origin channel inside a guild is kept only when Channels holds its channel;
	// rows without a channel or made in DMs always pass.
	RestrictChannels bool
	Channels         map[string]bool
	// HiddenStates drops rows in these states.
	HiddenStates []string
}

// Keep reports whether a row with meta m passes the filter.
func (f *Filter) Keep(m *Meta) bool {
	if (f.OriginGuild != "" && m.OriginGuild != f.OriginGuild) ||
		(len(f.Types) > 0 && !slices.Contains(f.Types, m.Type)) ||
		(f.PinnedOnly && !m.Pinned) || m.CreatedAt < f.Since || (f.Until > 0 && m.CreatedAt > f.Until) ||
		(f.AuthorID != "" && m.AuthorID != f.AuthorID) ||
		(f.ImportanceMin > 0 && m.Importance < f.ImportanceMin) ||
		(f.RestrictChannels && m.Channel != "" && m.OriginGuild != "" && !f.Channels[m.Channel]) ||
		(m.State != "" && slices.Contains(f.HiddenStates, m.State)) {
		return false
	}
	for _, t := range f.Tags {
		if !slices.Contains(m.Tags, t) {
			return false
		}
	}
	return true
}

// Hit is one search result.
type Hit struct {
	ID     int64
	Cosine float32
}

// Loader fills scope key from the durable store: it calls put once per live row with a
// vector. put may be called from the loader's goroutine only.
type Loader func(ctx context.Context, key string, put func(id int64, hash string, meta Meta, vec []float32)) error

// Index maps scope keys to their vectors. All vectors share one model and width: the
// first vector stored sets the width until Reset. It is safe for concurrent use.
type Index struct {
	mu     sync.RWMutex
	dims   int
	scopes map[string]*scope
	strs   strtab
	loader Loader
	sizer  Sizer
	limit  int64 // bytes of resident vectors; 0 is no bound

	rows  atomic.Int64  // rows held by resident scopes
	exact atomic.Int64  // rows whose float32 copy is held (exact.go)
	clock atomic.Uint64 // use counter for least-recently-used eviction
}

// New returns an empty index.
func New() *Index { return &Index{scopes: map[string]*scope{}, strs: newStrtab()} }

// SetLoader turns on lazy loading: scopes are loaded by l on first use (Ensure) and the
// least recently used are evicted while the resident vectors take more than limitBytes
// (0: never evicted). Call it before the index is used.
func (x *Index) SetLoader(l Loader, limitBytes int64) {
	x.mu.Lock()
	x.loader, x.limit = l, max(limitBytes, 0)
	x.mu.Unlock()
}

// SetLimit changes the byte bound of SetLoader (0: none) and evicts down to it.
func (x *Index) SetLimit(limitBytes int64) {
	x.mu.Lock()
	x.limit = max(limitBytes, 0)
	x.mu.Unlock()
	x.evict("")
}

// rowMeta is Meta held compactly: strings are interned (a guild, channel, author or type
// repeats across thousands of rows), importance is a float32, and the rare tags live in
// the scope's tags map.
type rowMeta struct {
	createdAt  int64
	importance float32
	origin     uint32
	channel    uint32
	author     uint32
	typ        uint32
	state      uint32
	pinned     bool
}

// scope holds the vectors of one scope key in flat, contiguous arrays: row i is ids[i],
// q8[i*dims:(i+1)*dims] scaled by scale[i], codes[i*words:(i+1)*words].
type scope struct {
	mu     sync.RWMutex
	dims   int
	words  int // uint64 words per code
	ids    []int64
	pos    map[int64]int32
	hashes []uint64 // fingerprints of the content hashes
	meta   []rowMeta
	tags   map[int64][]uint32
	q8     []int8
	scale  []float32
	codes  []uint64
	center []float32 // nil: codes are signs of the raw coordinates
	coded  int       // scope size when the centre was last computed
	// f32 holds row i's unit float32 vector at f32[i*dims:(i+1)*dims] while exact is
	// true; once dropped for room (exact.go) it stays off until the scope is reloaded.
	f32   []float32
	exact bool

	used atomic.Uint64 // Index.clock at the last use

	// Lazy loading. ready is closed when the load ended (at once for a scope created by a
	// write without a loader). While loading, rows removed or written by the write paths
	// are remembered so the load, which reads an older snapshot, cannot bring back a
	// forgotten row or an old vector.
	ready   chan struct{}
	loadErr error
	loading bool
	removed map[int64]bool
	written map[int64]bool
	evicted bool // no longer in the index: writes to it are dropped
}

func newScope(dims int) *scope {
	return &scope{dims: dims, words: (dims + 63) / 64, pos: map[int64]int32{}, ready: make(chan struct{}), exact: true}
}

// rowBytes is the memory one row takes at dims, for the eviction bound: the int8 vector,
// its scale, code, id, hash fingerprint and meta, and about 56 bytes of the position map
// (540 bytes at 384 dimensions, as measured by TestMeasureHeap).
func rowBytes(dims int) int64 {
	return int64(dims + 4 + 8*((dims+63)/64) + 8 + 8 + 32 + 56)
}

// Reset drops every vector (the embedding model changed).
func (x *Index) Reset() {
	x.mu.Lock()
	old := x.scopes
	x.dims = 0
	x.scopes = map[string]*scope{}
	x.rows.Store(0)
	x.exact.Store(0)
	x.mu.Unlock()
	for _, sv := range old {
		sv.mu.Lock()
		sv.evicted = true
		sv.mu.Unlock()
	}
}

func (x *Index) scope(key string) *scope {
	x.mu.RLock()
	defer x.mu.RUnlock()
	sv := x.scopes[key]
	if sv != nil {
		sv.used.Store(x.clock.Add(1))
	}
	return sv
}

// Len returns the number of vectors held across the resident scopes.
func (x *Index) Len() int { return int(x.rows.Load()) }

// Stats describes what the index holds.
type Stats struct {
	// Vectors and Scopes are the rows and scopes resident now.
	Vectors int
	Scopes  int
	// Bytes is the estimated memory of the resident rows; ExactBytes that of the float32
	// copies held for ExactVectors of them; Limit bounds the two together (0: none).
	Bytes        int64
	ExactVectors int
	ExactBytes   int64
	Limit        int64
}

// Stats reports the resident vectors, scopes and their estimated bytes.
func (x *Index) Stats() Stats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n, e := x.rows.Load(), x.exact.Load()
	return Stats{Vectors: int(n), Scopes: len(x.scopes), Bytes: n * rowBytes(x.dims), ExactVectors: int(e),
		ExactBytes: e * exactRowBytes(x.dims), Limit: x.limit}
}

// Resident reports whether scope key is held (loaded, loading or written without a loader).
func (x *Index) Resident(key string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.scopes[key] != nil
}

// Keys returns the keys of the resident scopes that finished loading.
func (x *Index) Keys() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, 0, len(x.scopes))
	for k, sv := range x.scopes {
		select {
		case <-sv.ready:
			out = append(out, k)
		default:
		}
	}
	slices.Sort(out)
	return out
}

// IDs returns the ids held in scope key.
func (x *Index) IDs(key string) []int64 {
	sv := x.scope(key)
	if sv == nil {
		return nil
	}
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	return slices.Clone(sv.ids)
}

// Has reports whether id is indexed in scope key with the vector of content hash.
func (x *Index) Has(key string, id int64, hash string) bool {
	sv := x.scope(key)
	if sv == nil {
		return false
	}
	fp := fingerprint(hash)
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	i, ok := sv.pos[id]
	return ok && sv.hashes[i] == fp
}

// Upsert adds or replaces the vector of id in scope key; vec is copied, scaled to unit
// length and quantized. A vector of another width than the index's is ignored (the provider
// changed size under the same model name; the caller re-embeds), and so is a zero vector.
// It reports whether the vector was taken: stored, or, with a loader, left to the store
// because the scope is not resident (its next load reads it).
func (x *Index) Upsert(key string, id int64, hash string, meta Meta, vec []float32) bool {
	x.mu.Lock()
	if x.dims == 0 {
		x.dims = len(vec)
	}
	if len(vec) != x.dims || len(vec) == 0 {
		x.mu.Unlock()
		return false
	}
	sv := x.scopes[key]
	if sv == nil {
		if x.loader != nil {
			x.mu.Unlock()
			return unitOK(vec)
		}
		sv = newScope(x.dims)
		close(sv.ready)
		x.scopes[key] = sv
	}
	x.mu.Unlock()
	ok := x.put(sv, id, hash, meta, vec, false)
	if ok && x.limit > 0 {
		x.evict(key)
	}
	return ok
}

func unitOK(vec []float32) bool {
	var s float64
	for _, v := range vec {
		s += float64(v) * float64(v)
	}
	return s != 0 && !math.IsNaN(s) && !math.IsInf(s, 0)
}

// put stores one row in sv. fromLoad marks rows read by a load, which yield to what the
// write paths did to the same id while the load ran.
func (x *Index) put(sv *scope, id int64, hash string, meta Meta, vec []float32, fromLoad bool) bool {
	x.mu.RLock()
	dims := x.dims
	x.mu.RUnlock()
	if dims == 0 {
		// The first vector of the index (a load after Reset) fixes the width.
		x.mu.Lock()
		if x.dims == 0 {
			x.dims = len(vec)
		}
		dims = x.dims
		x.mu.Unlock()
	}
	if len(vec) != dims || len(vec) == 0 {
		return false
	}
	// The unit vector is only copied into the scope's arrays, so its buffer is reused:
	// a load puts every row of a scope through here.
	up := unitBuffers.Get().(*[]float32)
	defer unitBuffers.Put(up)
	unit := append((*up)[:0], vec...)
	*up = unit
	if !Normalize(unit) {
		return false
	}
	rm := x.strs.compact(&meta)
	fp := fingerprint(hash)
	var tags []uint32
	for _, t := range meta.Tags {
		tags = append(tags, x.strs.intern(t))
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.evicted {
		return true
	}
	if sv.dims == 0 && len(sv.ids) == 0 {
		sv.dims, sv.words = dims, (dims+63)/64
	}
	if sv.dims != dims {
		return false
	}
	if sv.loading {
		if fromLoad && (sv.removed[id] || sv.written[id]) {
			return true
		}
		if !fromLoad {
			sv.written[id] = true
		}
	}
	i, ok := sv.pos[id]
	if !ok {
		i = int32(len(sv.ids))
		sv.pos[id] = i
		sv.ids = append(sv.ids, id)
		sv.hashes = append(sv.hashes, fp)
		sv.meta = append(sv.meta, rm)
		sv.q8 = append(sv.q8, make([]int8, sv.dims)...)
		sv.scale = append(sv.scale, 0)
		sv.codes = append(sv.codes, make([]uint64, sv.words)...)
		x.rows.Add(1)
		if sv.exact {
			sv.f32 = append(sv.f32, make([]float32, sv.dims)...)
			x.exact.Add(1)
		}
	} else {
		sv.hashes[i] = fp
		sv.meta[i] = rm
	}
	sv.setTags(id, tags)
	if sv.exact {
		copy(sv.f32[int(i)*sv.dims:(int(i)+1)*sv.dims], unit)
	}
	sv.scale[i] = quantize(sv.q8[int(i)*sv.dims:(int(i)+1)*sv.dims], unit)
	if len(sv.ids) >= recenterMin && len(sv.ids) >= 2*sv.coded && !sv.loading {
		sv.recenter()
	} else {
		sv.encode(int(i))
	}
	return true
}

var unitBuffers = sync.Pool{New: func() any { return new([]float32) }}

func (sv *scope) setTags(id int64, tags []uint32) {
	if len(tags) == 0 {
		if sv.tags != nil {
			delete(sv.tags, id)
		}
		return
	}
	if sv.tags == nil {
		sv.tags = map[int64][]uint32{}
	}
	sv.tags[id] = tags
}

// shrink gives back the spare capacity appends left after a load, and centres the codes
// once for the loaded size.
func (sv *scope) shrink() {
	if cap(sv.q8) > len(sv.q8)+len(sv.q8)/8 {
		sv.ids = slices.Clone(sv.ids)
		sv.hashes = slices.Clone(sv.hashes)
		sv.meta = slices.Clone(sv.meta)
		sv.q8 = slices.Clone(sv.q8)
		sv.scale = slices.Clone(sv.scale)
		sv.codes = slices.Clone(sv.codes)
		sv.f32 = slices.Clone(sv.f32)
	}
	if len(sv.ids) >= recenterMin {
		sv.recenter()
	}
}

// compact is m with its strings interned.
func (t *strtab) compact(m *Meta) rowMeta {
	return rowMeta{createdAt: m.CreatedAt, importance: float32(m.Importance), origin: t.intern(m.OriginGuild),
		channel: t.intern(m.Channel), author: t.intern(m.AuthorID), typ: t.intern(m.Type), state: t.intern(m.State),
		pinned: m.Pinned}
}

// SetMeta updates the filterable fields of an indexed id (its type or pin changed).
func (x *Index) SetMeta(key string, id int64, meta Meta) {
	sv := x.scope(key)
	if sv == nil {
		return
	}
	rm := x.strs.compact(&meta)
	var tags []uint32
	for _, t := range meta.Tags {
		tags = append(tags, x.strs.intern(t))
	}
	sv.mu.Lock()
	if i, ok := sv.pos[id]; ok {
		sv.meta[i] = rm
		sv.setTags(id, tags)
	}
	sv.mu.Unlock()
}

// Remove drops id from scope key, moving the scope's last row into its place. While the
// scope loads, the id is also kept from the load.
func (x *Index) Remove(key string, id int64) {
	sv := x.scope(key)
	if sv == nil {
		return
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.loading {
		sv.removed[id] = true
		delete(sv.written, id)
	}
	i, ok := sv.pos[id]
	if !ok {
		return
	}
	last := int32(len(sv.ids) - 1)
	d, w := sv.dims, sv.words
	if i != last {
		sv.ids[i] = sv.ids[last]
		sv.hashes[i] = sv.hashes[last]
		sv.meta[i] = sv.meta[last]
		sv.scale[i] = sv.scale[last]
		copy(sv.q8[int(i)*d:(int(i)+1)*d], sv.q8[int(last)*d:])
		copy(sv.codes[int(i)*w:(int(i)+1)*w], sv.codes[int(last)*w:])
		if sv.exact {
			copy(sv.f32[int(i)*d:(int(i)+1)*d], sv.f32[int(last)*d:])
		}
		sv.pos[sv.ids[i]] = i
	}
	delete(sv.pos, id)
	if sv.tags != nil {
		delete(sv.tags, id)
	}
	sv.ids = sv.ids[:last]
	sv.hashes = sv.hashes[:last]
	sv.meta = sv.meta[:last]
	sv.scale = sv.scale[:last]
	sv.q8 = sv.q8[:int(last)*d]
	sv.codes = sv.codes[:int(last)*w]
	if sv.exact {
		sv.f32 = sv.f32[:int(last)*d]
	}
	if !sv.evicted {
		x.rows.Add(-1)
		if sv.exact {
			x.exact.Add(-1)
		}
	}
}

// Search returns the k rows of scope key nearest to the unit vector q by cosine, best
// first, among the rows filter keeps (nil keeps all). exact forces a full scan instead of
// the shortlist search; benchmarks compare against it. A scope not resident returns
// nothing: with a loader, call Ensure first.
func (x *Index) Search(key string, q []float32, k int, filter *Filter, exact bool) []Hit {
	sv := x.scope(key)
	if sv == nil {
		return nil
	}
	return sv.search(q, k, x.strs.compile(filter), exact)
}

// Cosine returns the cosine between the unit vector q and id's vector in scope key, and
// false when id has no vector there.
func (x *Index) Cosine(key string, q []float32, id int64) (float32, bool) {
	sv := x.scope(key)
	if sv == nil {
		return 0, false
	}
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	i, ok := sv.pos[id]
	if !ok || len(q) != sv.dims {
		return 0, false
	}
	return sv.cosine(q, int(i)), true
}
