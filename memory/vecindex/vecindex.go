// Package vecindex is recall's in-process vector index: unit vectors grouped by scope key,
// searched by cosine, with filters applied before the top k.
//
// Every live memory with an embedding has its unit vector in the index of its scope, so a
// query never reads vector BLOBs from the database. Small scopes (the usual case: one guild,
// one user) are scanned exactly. Larger scopes are searched in two stages: a scan of 1-bit
// codes (the sign of each centred coordinate, compared by Hamming distance with popcount,
// 48 bytes per memory at 384 dimensions) picks a shortlist, and the shortlist is re-ranked
// by exact float32 cosine. The code scan reads 1/32 of the bytes of a float scan and needs
// no multiplications, and the exact re-rank makes the final order exact within the
// shortlist. docs/recall.md has the measurements behind the shortlist size.
package vecindex

import (
	"math"
	"slices"
	"sync"
)

const (
	// exactScanMax is the largest scope scanned exactly; above it the two-stage search is
	// used. Below a few thousand vectors an exact scan is already well under a millisecond.
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
}

// Keep reports whether a row with meta m passes the filter.
func (f *Filter) Keep(m *Meta) bool {
	if (f.OriginGuild != "" && m.OriginGuild != f.OriginGuild) ||
		(len(f.Types) > 0 && !slices.Contains(f.Types, m.Type)) ||
		(f.PinnedOnly && !m.Pinned) || m.CreatedAt < f.Since || (f.Until > 0 && m.CreatedAt > f.Until) ||
		(f.AuthorID != "" && m.AuthorID != f.AuthorID) ||
		(f.ImportanceMin > 0 && m.Importance < f.ImportanceMin) ||
		(f.RestrictChannels && m.Channel != "" && m.OriginGuild != "" && !f.Channels[m.Channel]) {
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

// Index maps scope keys to their vectors. All vectors share one model and width: the
// first vector stored sets the width until Reset. It is safe for concurrent use.
type Index struct {
	mu     sync.RWMutex
	dims   int
	scopes map[string]*scope
}

// New returns an empty index.
func New() *Index { return &Index{scopes: map[string]*scope{}} }

// scope holds the vectors of one scope key in flat, contiguous arrays:
// row i is ids[i], vecs[i*dims:(i+1)*dims], codes[i*words:(i+1)*words].
type scope struct {
	mu     sync.RWMutex
	dims   int
	words  int // uint64 words per code
	ids    []int64
	pos    map[int64]int
	hashes []string
	meta   []Meta
	vecs   []float32 // unit length
	codes  []uint64
	center []float32 // nil: codes are signs of the raw coordinates
	coded  int       // scope size when the centre was last computed
}

// Reset drops every vector (the embedding model changed).
func (x *Index) Reset() {
	x.mu.Lock()
	x.dims = 0
	x.scopes = map[string]*scope{}
	x.mu.Unlock()
}

func (x *Index) scope(key string) *scope {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.scopes[key]
}

// Len returns the number of indexed vectors across scopes.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := 0
	for _, sv := range x.scopes {
		sv.mu.RLock()
		n += len(sv.ids)
		sv.mu.RUnlock()
	}
	return n
}

// Has reports whether id is indexed in scope key with the vector of content hash.
func (x *Index) Has(key string, id int64, hash string) bool {
	sv := x.scope(key)
	if sv == nil {
		return false
	}
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	i, ok := sv.pos[id]
	return ok && sv.hashes[i] == hash
}

// Upsert adds or replaces the vector of id in scope key; vec is copied and scaled to unit
// length. A vector of another width than the index's is ignored (the provider changed size
// under the same model name; the caller re-embeds), and so is a zero vector. It reports
// whether the vector was stored.
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
		sv = &scope{dims: x.dims, words: (x.dims + 63) / 64, pos: map[int64]int{}}
		x.scopes[key] = sv
	}
	x.mu.Unlock()

	unit := make([]float32, len(vec))
	copy(unit, vec)
	if !Normalize(unit) {
		return false
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	i, ok := sv.pos[id]
	if !ok {
		i = len(sv.ids)
		sv.pos[id] = i
		sv.ids = append(sv.ids, id)
		sv.hashes = append(sv.hashes, hash)
		sv.meta = append(sv.meta, meta)
		sv.vecs = append(sv.vecs, unit...)
		sv.codes = append(sv.codes, make([]uint64, sv.words)...)
	} else {
		sv.hashes[i] = hash
		sv.meta[i] = meta
		copy(sv.vecs[i*sv.dims:], unit)
	}
	if len(sv.ids) >= recenterMin && len(sv.ids) >= 2*sv.coded {
		sv.recenter()
	} else {
		sv.encode(i)
	}
	return true
}

// SetMeta updates the filterable fields of an indexed id (its type or pin changed).
func (x *Index) SetMeta(key string, id int64, meta Meta) {
	sv := x.scope(key)
	if sv == nil {
		return
	}
	sv.mu.Lock()
	if i, ok := sv.pos[id]; ok {
		sv.meta[i] = meta
	}
	sv.mu.Unlock()
}

// Remove drops id from scope key, moving the scope's last row into its place.
func (x *Index) Remove(key string, id int64) {
	sv := x.scope(key)
	if sv == nil {
		return
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	i, ok := sv.pos[id]
	if !ok {
		return
	}
	last := len(sv.ids) - 1
	if i != last {
		sv.ids[i] = sv.ids[last]
		sv.hashes[i] = sv.hashes[last]
		sv.meta[i] = sv.meta[last]
		copy(sv.vecs[i*sv.dims:(i+1)*sv.dims], sv.vecs[last*sv.dims:])
		copy(sv.codes[i*sv.words:(i+1)*sv.words], sv.codes[last*sv.words:])
		sv.pos[sv.ids[i]] = i
	}
	delete(sv.pos, id)
	sv.ids = sv.ids[:last]
	sv.hashes = sv.hashes[:last]
	sv.meta = sv.meta[:last]
	sv.vecs = sv.vecs[:last*sv.dims]
	sv.codes = sv.codes[:last*sv.words]
}

// Search returns the k rows of scope key nearest to the unit vector q by cosine, best
// first, among the rows filter keeps (nil keeps all). exact forces a full float scan
// instead of the shortlist search; benchmarks compare against it.
func (x *Index) Search(key string, q []float32, k int, filter *Filter, exact bool) []Hit {
	sv := x.scope(key)
	if sv == nil {
		return nil
	}
	return sv.search(q, k, filter, exact)
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
	return dot(q, sv.vecs[i*sv.dims:(i+1)*sv.dims]), true
}

// recenter recomputes the centre as the mean vector and rebuilds every code. Sentence
// embeddings share a common direction; codes of raw signs would waste the bits where that
// direction dominates.
func (sv *scope) recenter() {
	n := len(sv.ids)
	c := make([]float64, sv.dims)
	for i := range n {
		row := sv.vecs[i*sv.dims : (i+1)*sv.dims]
		for d, v := range row {
			c[d] += float64(v)
		}
	}
	sv.center = make([]float32, sv.dims)
	for d := range c {
		sv.center[d] = float32(c[d] / float64(n))
	}
	sv.coded = n
	for i := range n {
		sv.encode(i)
	}
}

// encode writes the code of row i.
func (sv *scope) encode(i int) {
	encodeSigns(sv.codes[i*sv.words:(i+1)*sv.words], sv.vecs[i*sv.dims:(i+1)*sv.dims], sv.center)
}

func encodeSigns(code []uint64, vec, center []float32) {
	clear(code)
	for d, v := range vec {
		if center != nil {
			v -= center[d]
		}
		if v > 0 {
			code[d>>6] |= 1 << (uint(d) & 63)
		}
	}
}

// Normalize scales v to unit length in place and reports false for a zero (or non-finite)
// vector, which the index never stores.
func Normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return false
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true
}
