package ltm

import (
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/kioku-bot/kioku/memory"
)

// The in-memory vector index.
//
// Every live memory with an embedding has its unit vector in the index of its scope, so a
// query never reads vector BLOBs from SQLite. Small scopes (the usual case: one guild, one
// user) are scanned exactly. Larger scopes are searched in two stages: a scan of 1-bit
// codes (the sign of each centred coordinate, compared by Hamming distance with popcount,
// 48 bytes per memory at 384 dimensions) picks a shortlist, and the shortlist is re-ranked
// by exact float32 cosine. The code scan reads 1/32 of the bytes of a float scan and needs
// no multiplications, and the exact re-rank makes the final order exact within the
// shortlist. docs/recall.md has the measurements behind the shortlist size.
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

// vecMeta is what a vector search may filter on without reading SQLite. It mirrors columns
// that only change through the hooked write paths.
type vecMeta struct {
	originGuild string // a personal memory's origin guild (Visible.OriginGuildID)
	channel     string // the origin channel (SearchQuery.Audience)
	createdAt   int64  // ms
	typ         memory.Type
	pinned      bool
	importance  float64
	tags        []string
}

// scopeVectors holds the vectors of one scope (scope_key) in flat, contiguous arrays:
// row i is ids[i], vecs[i*dims:(i+1)*dims], codes[i*words:(i+1)*words].
type scopeVectors struct {
	mu     sync.RWMutex
	dims   int
	words  int // uint64 words per code
	ids    []int64
	pos    map[int64]int
	hashes []string
	meta   []vecMeta
	vecs   []float32 // unit length
	codes  []uint64
	center []float32 // nil: codes are signs of the raw coordinates
	coded  int       // scope size when the centre was last computed
}

// vectorIndex maps scope keys to their vectors. All vectors share one model and width.
type vectorIndex struct {
	mu     sync.RWMutex
	dims   int
	scopes map[string]*scopeVectors
}

func newVectorIndex() *vectorIndex { return &vectorIndex{scopes: map[string]*scopeVectors{}} }

// reset drops every vector (the embedding model changed).
func (x *vectorIndex) reset() {
	x.mu.Lock()
	x.dims = 0
	x.scopes = map[string]*scopeVectors{}
	x.mu.Unlock()
}

func (x *vectorIndex) scope(key string) *scopeVectors {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.scopes[key]
}

// len returns the number of indexed vectors across scopes.
func (x *vectorIndex) len() int {
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

// has reports whether id is indexed in scope key with the vector of content hash.
func (x *vectorIndex) has(key string, id int64, hash string) bool {
	sv := x.scope(key)
	if sv == nil {
		return false
	}
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	i, ok := sv.pos[id]
	return ok && sv.hashes[i] == hash
}

// upsert adds or replaces the vector of memory id in scope key. A vector of another width
// than the index's is ignored (the provider changed size under the same model name; the
// embedding tracker re-embeds). It reports whether the vector was stored.
func (x *vectorIndex) upsert(key string, id int64, hash string, meta vecMeta, vec []float32) bool {
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
		sv = &scopeVectors{dims: x.dims, words: (x.dims + 63) / 64, pos: map[int64]int{}}
		x.scopes[key] = sv
	}
	x.mu.Unlock()

	unit := make([]float32, len(vec))
	copy(unit, vec)
	if !normalize(unit) {
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

// setMeta updates the filterable fields of an indexed memory (type or pin changed).
func (x *vectorIndex) setMeta(key string, id int64, meta vecMeta) {
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

// remove drops memory id from scope key, moving the last row into its place.
func (x *vectorIndex) remove(key string, id int64) {
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

// rowOf returns the row of id, or -1. The caller holds sv.mu.
func (sv *scopeVectors) rowOf(id int64) int {
	if i, ok := sv.pos[id]; ok {
		return i
	}
	return -1
}

// recenter recomputes the centre as the mean vector and rebuilds every code. Sentence
// embeddings share a common direction; codes of raw signs would waste the bits where that
// direction dominates.
func (sv *scopeVectors) recenter() {
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
func (sv *scopeVectors) encode(i int) {
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

// vecHit is one vector search result.
type vecHit struct {
	id  int64
	cos float32
}

// search returns the k nearest vectors to the unit vector q by cosine, best first, among
// rows that keep allows (nil keeps all). exact forces a full float scan (benchmarks compare
// against it).
func (sv *scopeVectors) search(q []float32, k int, keep func(*vecMeta) bool, exact bool) []vecHit {
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	n := len(sv.ids)
	if n == 0 || k <= 0 || len(q) != sv.dims {
		return nil
	}
	top := newTopK(k)
	if exact || n <= exactScanMax {
		for i := range n {
			if keep != nil && !keep(&sv.meta[i]) {
				continue
			}
			top.push(int32(i), dot(q, sv.vecs[i*sv.dims:(i+1)*sv.dims]))
		}
		return sv.hits(top)
	}
	qcode := make([]uint64, sv.words)
	encodeSigns(qcode, q, sv.center)
	short := max(shortlistMin, shortlistPerK*k)
	for _, i := range sv.shortlist(qcode, short) {
		if keep != nil && !keep(&sv.meta[i]) {
			continue
		}
		top.push(i, dot(q, sv.vecs[int(i)*sv.dims:(int(i)+1)*sv.dims]))
	}
	return sv.hits(top)
}

func (sv *scopeVectors) hits(top *topK) []vecHit {
	rows := top.sorted()
	out := make([]vecHit, len(rows))
	for j, r := range rows {
		out[j] = vecHit{id: sv.ids[r.row], cos: r.score}
	}
	return out
}

var distPool = sync.Pool{New: func() any { return new([]uint16) }}

// shortlist returns the rows of the m codes closest to qcode by Hamming distance, in two
// passes over a reused distance buffer: distances and their histogram, then every row under
// the cut-off distance plus enough rows at it. No heap, no sort, O(n).
func (sv *scopeVectors) shortlist(qcode []uint64, m int) []int32 {
	n := len(sv.ids)
	if m >= n {
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(i)
		}
		return out
	}
	bp := distPool.Get().(*[]uint16)
	defer distPool.Put(bp)
	if cap(*bp) < n {
		*bp = make([]uint16, n)
	}
	dist := (*bp)[:n]
	var hist [4097]int32 // distances are at most 64×words ≤ 4096 for dims ≤ 4096
	words := sv.words
	codes := sv.codes
	switch words {
	case 6: // 384 dimensions, the common small-model width: unrolled
		q0, q1, q2, q3, q4, q5 := qcode[0], qcode[1], qcode[2], qcode[3], qcode[4], qcode[5]
		for i := range n {
			c := codes[i*6 : i*6+6 : i*6+6]
			d := bits.OnesCount64(c[0]^q0) + bits.OnesCount64(c[1]^q1) + bits.OnesCount64(c[2]^q2) +
				bits.OnesCount64(c[3]^q3) + bits.OnesCount64(c[4]^q4) + bits.OnesCount64(c[5]^q5)
			dist[i] = uint16(d)
			hist[d]++
		}
	default:
		for i := range n {
			c := codes[i*words : (i+1)*words]
			d := 0
			for w, q := range qcode {
				d += bits.OnesCount64(c[w] ^ q)
			}
			dist[i] = uint16(d)
			hist[d]++
		}
	}
	cut, below := 0, int32(0)
	for ; cut < len(hist); cut++ {
		if below+hist[cut] >= int32(m) {
			break
		}
		below += hist[cut]
	}
	atCut := int32(m) - below
	out := make([]int32, 0, m)
	for i, d := range dist {
		switch {
		case int(d) < cut:
			out = append(out, int32(i))
		case int(d) == cut && atCut > 0:
			out = append(out, int32(i))
			atCut--
		}
	}
	return out
}

// cosine returns the cosine between the unit vector q and memory id's vector, and false
// when id has no vector in the scope.
func (sv *scopeVectors) cosine(q []float32, id int64) (float32, bool) {
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	i := sv.rowOf(id)
	if i < 0 || len(q) != sv.dims {
		return 0, false
	}
	return dot(q, sv.vecs[i*sv.dims:(i+1)*sv.dims]), true
}

// dot is the inner product of two equal-length vectors, unrolled by eight with the bounds
// checks hoisted so the loop body is plain loads and multiply-adds.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// normalize scales v to unit length in place and reports false for a zero vector.
func normalize(v []float32) bool {
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

// topK keeps the k best (row, score) pairs in a min-heap on score.
type topK struct {
	k    int
	rows []scored
}

type scored struct {
	row   int32
	score float32
}

func newTopK(k int) *topK { return &topK{k: k, rows: make([]scored, 0, k)} }

func (t *topK) push(row int32, s float32) {
	if len(t.rows) < t.k {
		t.rows = append(t.rows, scored{row, s})
		t.up(len(t.rows) - 1)
		return
	}
	if s <= t.rows[0].score {
		return
	}
	t.rows[0] = scored{row, s}
	t.down(0)
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if t.rows[p].score <= t.rows[i].score {
			return
		}
		t.rows[p], t.rows[i] = t.rows[i], t.rows[p]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.rows)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.rows[r].score < t.rows[l].score {
			m = r
		}
		if t.rows[i].score <= t.rows[m].score {
			return
		}
		t.rows[i], t.rows[m] = t.rows[m], t.rows[i]
		i = m
	}
}

// sorted returns the kept pairs best first (ties: lower row first, for stable results).
func (t *topK) sorted() []scored {
	out := slices.Clone(t.rows)
	slices.SortFunc(out, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return int(a.row - b.row)
	})
	return out
}

// VectorHit is one result of NearestMemories.
type VectorHit struct {
	ID     int64
	Cosine float32
}

// NearestMemories runs the vector leg of recall alone: the k memories of owner's scope
// whose vectors are closest to vec by cosine, best first, from the in-memory index (no SQL,
// no embedding call). exact forces a full float32 scan instead of the shortlist search;
// benchmarks use it as the baseline and to measure the shortlist's recall.
func (s *Store) NearestMemories(owner memory.Owner, vec []float32, k int, exact bool) []VectorHit {
	sv := s.recall.vectors.scope(owner.Key())
	if sv == nil || len(vec) == 0 {
		return nil
	}
	q := make([]float32, len(vec))
	copy(q, vec)
	if !normalize(q) {
		return nil
	}
	hits := sv.search(q, k, nil, exact)
	out := make([]VectorHit, len(hits))
	for i, h := range hits {
		out[i] = VectorHit{ID: h.id, Cosine: h.cos}
	}
	return out
}
