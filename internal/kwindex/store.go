package kwindex

import "slices"

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
