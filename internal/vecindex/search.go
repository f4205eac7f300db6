package vecindex

import (
	"math/bits"
	"slices"
	"sync"
)

// cfilter is a Filter resolved against the interned strings of the index once per search.
type cfilter struct {
	f        *Filter
	none     bool // a required string was never indexed: no row can pass
	origin   uint32
	author   uint32
	types    []uint32
	tags     []uint32
	channels map[uint32]bool
	hidden   []uint32
}

// compile is f over interned strings; a string never interned matches no row.
func (t *strtab) compile(f *Filter) *cfilter {
	if f == nil {
		return nil
	}
	c := &cfilter{f: f}
	var ok bool
	if f.OriginGuild != "" {
		if c.origin, ok = t.lookup(f.OriginGuild); !ok {
			c.none = true
		}
	}
	if f.AuthorID != "" {
		if c.author, ok = t.lookup(f.AuthorID); !ok {
			c.none = true
		}
	}
	for _, typ := range f.Types {
		if id, ok := t.lookup(typ); ok {
			c.types = append(c.types, id)
		}
	}
	if len(f.Types) > 0 && len(c.types) == 0 {
		c.none = true
	}
	for _, tag := range f.Tags {
		id, ok := t.lookup(tag)
		if !ok {
			c.none = true
		}
		c.tags = append(c.tags, id)
	}
	for _, st := range f.HiddenStates {
		if id, ok := t.lookup(st); ok {
			c.hidden = append(c.hidden, id)
		}
	}
	if f.RestrictChannels {
		c.channels = make(map[uint32]bool, len(f.Channels))
		for ch, on := range f.Channels {
			if id, ok := t.lookup(ch); ok && on {
				c.channels[id] = true
			}
		}
	}
	return c
}

// keep is Filter.Keep over a compact row.
func (c *cfilter) keep(sv *scope, i int) bool {
	m := &sv.meta[i]
	f := c.f
	if (f.OriginGuild != "" && m.origin != c.origin) ||
		(len(c.types) > 0 && !slices.Contains(c.types, m.typ)) ||
		(f.PinnedOnly && !m.pinned) || m.createdAt < f.Since || (f.Until > 0 && m.createdAt > f.Until) ||
		(f.AuthorID != "" && m.author != c.author) ||
		(f.ImportanceMin > 0 && float64(m.importance) < f.ImportanceMin-1e-6) ||
		(f.RestrictChannels && m.channel != 0 && m.origin != 0 && !c.channels[m.channel]) ||
		(len(c.hidden) > 0 && slices.Contains(c.hidden, m.state)) {
		return false
	}
	if len(c.tags) > 0 {
		have := sv.tags[sv.ids[i]]
		for _, t := range c.tags {
			if !slices.Contains(have, t) {
				return false
			}
		}
	}
	return true
}

// search is Index.Search within one scope.
func (sv *scope) search(q []float32, k int, filter *cfilter, exact bool) []Hit {
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	n := len(sv.ids)
	if n == 0 || k <= 0 || len(q) != sv.dims || (filter != nil && filter.none) {
		return nil
	}
	top := newTopK(k)
	if exact || n <= exactScanMax {
		for i := range n {
			if filter != nil && !filter.keep(sv, i) {
				continue
			}
			top.push(int32(i), sv.cosine(q, i))
		}
		return sv.hits(top)
	}
	qcode := make([]uint64, sv.words)
	encodeSigns(qcode, q, sv.center)
	short := max(shortlistMin, shortlistPerK*k)
	for _, i := range sv.shortlist(qcode, short) {
		if filter != nil && !filter.keep(sv, int(i)) {
			continue
		}
		top.push(i, sv.cosine(q, int(i)))
	}
	return sv.hits(top)
}

func (sv *scope) hits(top *topK) []Hit {
	rows := top.sorted()
	out := make([]Hit, len(rows))
	for j, r := range rows {
		out[j] = Hit{ID: sv.ids[r.row], Cosine: r.score}
	}
	return out
}

var distPool = sync.Pool{New: func() any { return new([]uint16) }}

// shortlist returns the rows of the m codes closest to qcode by Hamming distance, in two
// passes over a reused distance buffer: distances and their histogram, then every row under
// the cut-off distance plus enough rows at it. No heap, no sort, O(n).
func (sv *scope) shortlist(qcode []uint64, m int) []int32 {
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

// dot8 is the inner product of a float32 vector with an int8 one, unrolled like dot.
func dot8(a []float32, b []int8) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * float32(bb[0])
		s1 += aa[1] * float32(bb[1])
		s2 += aa[2] * float32(bb[2])
		s3 += aa[3] * float32(bb[3])
		s4 += aa[4] * float32(bb[4])
		s5 += aa[5] * float32(bb[5])
		s6 += aa[6] * float32(bb[6])
		s7 += aa[7] * float32(bb[7])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(b[i])
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
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
