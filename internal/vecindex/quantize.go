package vecindex

import (
	"hash/fnv"
	"math"
	"sync"
)

// Quantization: int8 rows with a scale, sign codes around the scope's centre, content
// hash fingerprints and the interned strings of the compact metadata.

func (sv *scope) cosine(q []float32, i int) float32 {
	return sv.scale[i] * dot8(q, sv.q8[i*sv.dims:(i+1)*sv.dims])
}

// recenter recomputes the centre as the mean vector and rebuilds every code. Sentence
// embeddings share a common direction; codes of raw signs would waste the bits where that
// direction dominates.
func (sv *scope) recenter() {
	n := len(sv.ids)
	c := make([]float64, sv.dims)
	for i := range n {
		row := sv.q8[i*sv.dims : (i+1)*sv.dims]
		s := float64(sv.scale[i])
		for d, v := range row {
			c[d] += s * float64(v)
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
	code := sv.codes[i*sv.words : (i+1)*sv.words]
	clear(code)
	s := sv.scale[i]
	for d, v := range sv.q8[i*sv.dims : (i+1)*sv.dims] {
		f := s * float32(v)
		if sv.center != nil {
			f -= sv.center[d]
		}
		if f > 0 {
			code[d>>6] |= 1 << (uint(d) & 63)
		}
	}
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

// quantize writes v (unit length) as int8s scaled to its largest coordinate and returns
// the scale that turns them back: v[d] ≈ scale×dst[d].
func quantize(dst []int8, v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, x, -x)
	}
	if m == 0 {
		clear(dst)
		return 0
	}
	inv := 127 / m
	for d, x := range v {
		r := x * inv
		if r >= 0 {
			dst[d] = int8(r + 0.5)
		} else {
			dst[d] = int8(r - 0.5)
		}
	}
	return m / 127
}

// fingerprint is a 64-bit FNV-1a of a content hash: Has compares contents by it, at 8
// bytes a row instead of the 64-character hash.
func fingerprint(hash string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(hash))
	return h.Sum64()
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

// strtab interns the strings rows filter on. It only grows: its size is the number of
// distinct guilds, channels, authors, types and tags ever indexed, small next to the rows.
type strtab struct {
	mu  sync.RWMutex
	ids map[string]uint32
}

func newStrtab() strtab { return strtab{ids: map[string]uint32{"": 0}} }

func (t *strtab) intern(s string) uint32 {
	t.mu.RLock()
	id, ok := t.ids[s]
	t.mu.RUnlock()
	if ok {
		return id
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.ids[s]; ok {
		return id
	}
	id = uint32(len(t.ids))
	t.ids[s] = id
	return id
}

func (t *strtab) lookup(s string) (uint32, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	id, ok := t.ids[s]
	return id, ok
}
