package kwindex

// slotIndex finds a live document's slot by its id: open addressing with linear probing
// over 4-byte slot numbers + 1 (0 for an empty slot), comparing against the ids the
// document table already holds. A map[int64]int32 cost 30-odd bytes a document; this
// costs 5 to 11, as the table is kept between three eighths and three quarters full.
type slotIndex struct {
	table []uint32
	shift uint // 64 − log2(len(table))
	n     int
}

// home is where id's probe starts: Fibonacci hashing, which spreads the consecutive ids
// of a scope's memories over the table's high bits.
func (x *slotIndex) home(id int64) int {
	return int(uint64(id) * 0x9E3779B97F4A7C15 >> x.shift)
}

// find returns the slot of the live document id; ids is the document table's ids.
func (x *slotIndex) find(ids []int64, id int64) (int32, bool) {
	if x.n == 0 {
		return 0, false
	}
	mask := len(x.table) - 1
	for i := x.home(id); ; i = (i + 1) & mask {
		v := x.table[i]
		if v == 0 {
			return 0, false
		}
		if ids[v-1] == id {
			return int32(v - 1), true
		}
	}
}

// insert adds slot, whose id ids already holds and the index does not.
func (x *slotIndex) insert(ids []int64, slot int32) {
	if (x.n+1)*4 > len(x.table)*3 {
		old := x.table
		x.alloc(max(16, 2*len(old)))
		for _, v := range old {
			if v != 0 {
				x.place(ids, int32(v-1))
			}
		}
	}
	x.place(ids, slot)
	x.n++
}

func (x *slotIndex) alloc(size int) {
	x.table = make([]uint32, size)
	x.shift = 64
	for ; size > 1; size >>= 1 {
		x.shift--
	}
}

func (x *slotIndex) place(ids []int64, slot int32) {
	mask := len(x.table) - 1
	i := x.home(ids[slot])
	for x.table[i] != 0 {
		i = (i + 1) & mask
	}
	x.table[i] = uint32(slot) + 1
}

// remove takes the live document id out, moving back the entries after it that probing
// would no longer reach (deletion without tombstones).
func (x *slotIndex) remove(ids []int64, id int64) {
	mask := len(x.table) - 1
	i := x.home(id)
	for ids[x.table[i]-1] != id {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; x.table[j] != 0; j = (j + 1) & mask {
		h := x.home(ids[x.table[j]-1])
		// The entry at j stays when its home lies cyclically in (i, j].
		if i <= j && i < h && h <= j || i > j && (i < h || h <= j) {
			continue
		}
		x.table[i] = x.table[j]
		i = j
	}
	x.table[i] = 0
	x.n--
}

// rebuild indexes every slot of ids, all live (a compacted table), in a table sized for
// them.
func (x *slotIndex) rebuild(ids []int64) {
	size := 16
	for len(ids)*4 > size*3 {
		size *= 2
	}
	x.alloc(size)
	for slot := range ids {
		x.place(ids, int32(slot))
	}
	x.n = len(ids)
}
