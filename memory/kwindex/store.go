package kwindex

import (
	"math"
	"slices"
)

// termEntry is one term's (or bigram's) postings and document frequency.
type termEntry struct {
	key string
	postingList
	live int32 // live documents holding it
	// The largest counts and the shortest length of any document put with the term bound
	// its score in any document (MaxScore); a delete leaves them, still bounds.
	maxContent, maxAuthor uint32
	minLen                int32
}

// note widens the entry's bounds for a document with these counts and length.
func (e *termEntry) note(content, author uint32, length int32) {
	e.maxContent = max(e.maxContent, content)
	e.maxAuthor = max(e.maxAuthor, author)
	e.minLen = min(e.minLen, length)
}

// dict numbers a scope's terms (or bigrams): documents' records hold the numbers, and a
// number freed when its last document goes is reused.
type dict struct {
	ids     map[string]uint32
	entries []termEntry
	free    []uint32
}

// id returns key's number, adding an empty entry for a new key.
func (d *dict) id(key string) uint32 {
	if id, ok := d.ids[key]; ok {
		return id
	}
	if d.ids == nil {
		d.ids = map[string]uint32{}
	}
	e := termEntry{key: key, postingList: postingList{last: -1}, minLen: math.MaxInt32}
	var id uint32
	if n := len(d.free); n > 0 {
		id = d.free[n-1]
		d.free = d.free[:n-1]
		d.entries[id] = e
	} else {
		id = uint32(len(d.entries))
		d.entries = append(d.entries, e)
	}
	d.ids[key] = id
	return id
}

// lookup returns key's entry when a live document holds it.
func (d *dict) lookup(key string) *termEntry {
	id, ok := d.ids[key]
	if !ok {
		return nil
	}
	return &d.entries[id]
}

// release counts one document fewer holding id; the last one takes the entry, postings and
// all, out of the index.
func (d *dict) release(id uint32) {
	e := &d.entries[id]
	if e.live--; e.live > 0 {
		return
	}
	delete(d.ids, e.key)
	*e = termEntry{}
	d.free = append(d.free, id)
}

func (d *dict) remap(remap []int32) {
	for i := range d.entries {
		if e := &d.entries[i]; e.live > 0 {
			remapPostings(&e.postingList, remap)
		}
	}
}

func (d *dict) trim() {
	for i := range d.entries {
		e := &d.entries[i]
		e.data = shrink(e.data)
		e.skips = shrink(e.skips)
	}
	d.entries = shrink(d.entries)
}

// shrink returns s in an array of its length, so the capacity growth by appending left
// unused is returned.
func shrink[T any](s []T) []T {
	if cap(s) > len(s) {
		return slices.Clone(s)
	}
	return s
}

// docTable holds the per-document columns, indexed by slot (the order documents were put
// in). A document's record lists its tokens as term numbers, column by column, then its
// distinct bigrams: phrases are checked against it, and a delete reads from it which terms
// to count down.
type docTable struct {
	ids      []int64
	lens     smallInts // tokens in content and author together
	gramLens smallInts // characters of the Grams text
	dead     []uint64  // a bit per slot
	created  []int64
	profile  []uint32
	recStart []uint32
	fwd      []byte
}

func (t *docTable) grow(n int) {
	t.ids = slices.Grow(t.ids, n)
	t.lens.v = slices.Grow(t.lens.v, n)
	t.gramLens.v = slices.Grow(t.gramLens.v, n)
	t.created = slices.Grow(t.created, n)
	t.profile = slices.Grow(t.profile, n)
	t.recStart = slices.Grow(t.recStart, n)
}

func (t *docTable) add(id int64, recStart uint32, length, gramLen int32, created int64, profile uint32) {
	slot := int32(len(t.ids))
	t.ids = append(t.ids, id)
	t.lens.add(slot, length)
	t.gramLens.add(slot, gramLen)
	if int(slot)/64 >= len(t.dead) {
		t.dead = append(t.dead, 0)
	}
	t.created = append(t.created, created)
	t.profile = append(t.profile, profile)
	t.recStart = append(t.recStart, recStart)
}

func (t *docTable) live(slot int32) bool { return t.dead[slot>>6]&(1<<(slot&63)) == 0 }

// kill marks slot dead and forgets its memory's id: until the next compaction the dead
// slot's postings name it by slot only, tied to no memory.
func (t *docTable) kill(slot int32) {
	t.dead[slot>>6] |= 1 << (slot & 63)
	t.ids[slot] = 0
}

// record returns the record of the document in slot.
func (t *docTable) record(slot int32) []byte {
	end := len(t.fwd)
	if int(slot)+1 < len(t.recStart) {
		end = int(t.recStart[slot+1])
	}
	return t.fwd[t.recStart[slot]:end]
}

// compact returns the table of the live documents, filling remap with each slot's new slot
// (−1 for a dead one).
func (t *docTable) compact(remap []int32, live int) docTable {
	var out docTable
	out.grow(live)
	out.fwd = make([]byte, 0, len(t.fwd)*live/max(len(t.ids), 1))
	for i := range t.ids {
		slot := int32(i)
		if !t.live(slot) {
			remap[i] = -1
			continue
		}
		remap[i] = int32(len(out.ids))
		start := uint32(len(out.fwd))
		out.fwd = append(out.fwd, t.record(slot)...)
		out.add(t.ids[i], start, t.lens.at(slot), t.gramLens.at(slot), t.created[i], t.profile[i])
	}
	return out
}

func (t *docTable) trim() {
	t.ids = shrink(t.ids)
	t.lens.v = shrink(t.lens.v)
	t.gramLens.v = shrink(t.gramLens.v)
	t.dead = shrink(t.dead)
	t.created = shrink(t.created)
	t.profile = shrink(t.profile)
	t.recStart = shrink(t.recStart)
	t.fwd = shrink(t.fwd)
}

// smallInts holds non-negative numbers that are nearly always below 65,535 in two bytes
// each, the rare larger ones in a map: lengths stay exact, so scores do.
type smallInts struct {
	v   []uint16
	big map[int32]int32
}

const smallIntsSpill = 1<<16 - 1

func (s *smallInts) add(slot int32, x int32) {
	if x < smallIntsSpill {
		s.v = append(s.v, uint16(x))
		return
	}
	s.v = append(s.v, smallIntsSpill)
	if s.big == nil {
		s.big = map[int32]int32{}
	}
	s.big[slot] = x
}

func (s *smallInts) at(slot int32) int32 {
	if x := s.v[slot]; x != smallIntsSpill {
		return int32(x)
	}
	return s.big[slot]
}
