package kwindex

import (
	"hash/maphash"
	"math"
)

// A scope's dictionary is most of what a small scope holds: in a scope of 1,000 chat
// memories most terms are held by one or two of them, so what each term costs besides its
// postings decides the index's size. A term is one 48-byte entry; its key lives in the
// dictionary's key arena (a length and the bytes, no string header or allocation of its
// own), an open-addressing table of 4-byte entry numbers finds it, the few long lists keep
// their skips in a side map, and a trim packs every posting list into one block.

// termEntry is one term's (or bigram's) postings and document frequency.
type termEntry struct {
	postingList
	live int32 // live documents holding it
	// The shortest length and the largest counts of any document put with the term bound
	// its score in any document (MaxScore); a delete leaves them, still bounds. A count
	// past what two bytes hold saturates, and a saturated bound bounds nothing.
	minLen                int32
	maxContent, maxAuthor uint16
	// key is where the key starts in the dictionary's arena, + 1: 0 marks a free entry.
	key uint32
}

// inUse reports whether the entry holds a key (a free one waits for reuse).
func (e *termEntry) inUse() bool { return e.key != 0 }

// countSaturated is the largest count a bound keeps; it stands for any count from it up.
const countSaturated = math.MaxUint16

// note widens the entry's bounds for a document with these counts and length.
func (e *termEntry) note(content, author uint32, length int32) {
	e.maxContent = max(e.maxContent, uint16(min(content, countSaturated)))
	e.maxAuthor = max(e.maxAuthor, uint16(min(author, countSaturated)))
	e.minLen = min(e.minLen, length)
}

// bound is the most the term can add to a document's score with weight idf, widened
// against rounding; +Inf when a count saturated.
func (e *termEntry) bound(bm *bm25, idf float64) float64 {
	if e.maxContent == countSaturated || e.maxAuthor == countSaturated {
		return math.Inf(1)
	}
	fmax := float64(e.maxContent) + bm.w*float64(e.maxAuthor)
	return bm.score(idf, fmax, float64(e.minLen)) * (1 + slack)
}

// dict numbers a scope's terms (or bigrams): documents' records hold the numbers, and a
// number freed when its last document goes is reused.
type dict struct {
	entries []termEntry
	free    []uint32
	// table finds a key's entry by open addressing with linear probing: each slot holds an
	// entry number + 1, 0 when empty. It is kept at most three quarters full.
	table []uint32
	// arena holds the live keys, each as a varint length and its bytes. A released key's
	// bytes are zeroed at once (a forgotten word must leave memory), and the arena is
	// repacked once the zeroed bytes are half of it.
	arena      []byte
	arenaDead  int
	skips      map[uint32][]skip // the skips of the lists longer than skipEvery
	liveTerms  int
	tableShift uint // 64 − log2(len(table))
}

// hashSeed seeds the dictionaries' hashes: random for each process, so no chat text can be
// written to make keys collide.
var hashSeed = maphash.MakeSeed()

// key returns entry id's key, as a view of the arena.
func (d *dict) key(id uint32) []byte {
	off := int(d.entries[id].key - 1)
	n, start := uvarint(d.arena, off)
	return d.arena[start : start+int(n)]
}

// home is the table slot where a key with hash h starts probing.
func (d *dict) home(h uint64) int { return int(h >> d.tableShift) }

// find returns key's entry number.
func (d *dict) find(key string) (uint32, bool) {
	if d.liveTerms == 0 {
		return 0, false
	}
	mask := len(d.table) - 1
	for i := d.home(maphash.String(hashSeed, key)); ; i = (i + 1) & mask {
		v := d.table[i]
		if v == 0 {
			return 0, false
		}
		if string(d.key(v-1)) == key {
			return v - 1, true
		}
	}
}

// id returns key's number, adding an empty entry for a new key.
func (d *dict) id(key string) uint32 {
	if id, ok := d.find(key); ok {
		return id
	}
	if (d.liveTerms+1)*4 > len(d.table)*3 {
		d.resize(max(16, 2*len(d.table)))
	}
	e := termEntry{postingList: postingList{last: -1}, minLen: math.MaxInt32, key: d.storeKey(key)}
	var id uint32
	if n := len(d.free); n > 0 {
		id = d.free[n-1]
		d.free = d.free[:n-1]
		d.entries[id] = e
	} else {
		id = uint32(len(d.entries))
		d.entries = append(d.entries, e)
	}
	d.place(id, maphash.String(hashSeed, key))
	d.liveTerms++
	return id
}

// place puts entry id, whose key hashes to h, in the first free slot from its home.
func (d *dict) place(id uint32, h uint64) {
	mask := len(d.table) - 1
	i := d.home(h)
	for d.table[i] != 0 {
		i = (i + 1) & mask
	}
	d.table[i] = id + 1
}

// resize rebuilds the table with n slots, n a power of two.
func (d *dict) resize(n int) {
	d.table = make([]uint32, n)
	d.tableShift = 64
	for ; n > 1; n >>= 1 {
		d.tableShift--
	}
	for i := range d.entries {
		if d.entries[i].inUse() {
			d.place(uint32(i), maphash.Bytes(hashSeed, d.key(uint32(i))))
		}
	}
}

// unlink empties table slot i, moving back the entries after it that probing would no
// longer reach (deletion without tombstones).
func (d *dict) unlink(i int) {
	mask := len(d.table) - 1
	for j := (i + 1) & mask; d.table[j] != 0; j = (j + 1) & mask {
		h := d.home(maphash.Bytes(hashSeed, d.key(d.table[j]-1)))
		// The entry at j stays when its home lies cyclically in (i, j].
		if i <= j && i < h && h <= j || i > j && (i < h || h <= j) {
			continue
		}
		d.table[i] = d.table[j]
		i = j
	}
	d.table[i] = 0
}

// storeKey appends key to the arena and returns where it starts. The arena grows into a
// new array and zeroes the old one, so no copy of a key outlives its release.
func (d *dict) storeKey(key string) uint32 {
	need := len(d.arena) + 10 + len(key)
	if need > cap(d.arena) {
		grown := make([]byte, len(d.arena), max(2*cap(d.arena), need, 256))
		copy(grown, d.arena)
		clear(d.arena)
		d.arena = grown
	}
	off := len(d.arena)
	if off >= math.MaxUint32 {
		panic("kwindex: a scope's keys passed 4 GB")
	}
	d.arena = appendUvarint(d.arena, uint64(len(key)))
	d.arena = append(d.arena, key...)
	return uint32(off + 1)
}

// cursor returns a cursor at the start of entry id's postings.
func (d *dict) cursor(id uint32) postingCursor {
	e := &d.entries[id]
	c := postingCursor{data: e.data, slot: -1}
	if e.n > skipEvery {
		c.skips = d.skips[id]
	}
	return c
}

// add appends a posting to entry id's list, with a skip where a block starts.
func (d *dict) add(id uint32, slot int32, content, author uint32) {
	e := &d.entries[id]
	if e.n > 0 && e.n%skipEvery == 0 {
		if d.skips == nil {
			d.skips = map[uint32][]skip{}
		}
		d.skips[id] = append(d.skips[id], skip{off: uint32(len(e.data)), base: e.last})
	}
	e.data = appendPosting(e.data, slot-e.last, content, author)
	e.last = slot
	e.n++
}

// release counts one document fewer holding id; the last one takes the entry, postings and
// all, out of the index, and zeroes its key's bytes.
func (d *dict) release(id uint32) {
	e := &d.entries[id]
	if e.live--; e.live > 0 {
		return
	}
	key := d.key(id)
	h := maphash.Bytes(hashSeed, key)
	mask := len(d.table) - 1
	i := d.home(h)
	for d.table[i] != id+1 {
		i = (i + 1) & mask
	}
	d.unlink(i)
	start := int(e.key - 1)
	end := start + uvarintLen(uint64(len(key))) + len(key)
	clear(d.arena[start:end])
	d.arenaDead += end - start
	*e = termEntry{}
	delete(d.skips, id)
	d.free = append(d.free, id)
	d.liveTerms--
	if d.arenaDead >= 1024 && 2*d.arenaDead >= len(d.arena) {
		d.repackArena(len(d.arena) - d.arenaDead)
	}
}

// uvarintLen is the length of x's varint.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// repackArena moves the live keys into a new arena of capacity size and zeroes the old one.
func (d *dict) repackArena(size int) {
	arena := make([]byte, 0, size)
	for i := range d.entries {
		e := &d.entries[i]
		if !e.inUse() {
			continue
		}
		key := d.key(uint32(i))
		e.key = uint32(len(arena) + 1)
		arena = appendUvarint(arena, uint64(len(key)))
		arena = append(arena, key...)
	}
	clear(d.arena[:cap(d.arena)])
	d.arena, d.arenaDead = arena, 0
}

// remap rewrites every live list without dead slots (remap < 0) and with live ones
// renumbered, packed into one block.
func (d *dict) remap(remap []int32) {
	d.pack(func(id uint32, block []byte) ([]byte, []skip) {
		e := &d.entries[id]
		start := len(block)
		var skips []skip
		last, n := int32(-1), int32(0)
		c := d.cursor(id)
		for c.next() {
			r := remap[c.slot]
			if r < 0 {
				continue
			}
			if n > 0 && n%skipEvery == 0 {
				skips = append(skips, skip{off: uint32(len(block) - start), base: last})
			}
			block = appendPosting(block, r-last, c.content, c.author)
			last = r
			n++
		}
		e.last, e.n = last, n
		return block, skips
	})
}

// pack rewrites the live lists one after the other into one block with write, which
// appends entry id's new postings to block and returns it with the list's skips; each list
// then holds its part of the block at its exact capacity, so a posting added later moves
// that list alone to an array of its own. A short list costs its bytes, not an allocation.
func (d *dict) pack(write func(id uint32, block []byte) ([]byte, []skip)) {
	size := 0
	for i := range d.entries {
		size += len(d.entries[i].data)
	}
	block := make([]byte, 0, size)
	ends := make([]int, len(d.entries))
	skips := map[uint32][]skip{}
	for i := range d.entries {
		if !d.entries[i].inUse() {
			continue
		}
		var sk []skip
		block, sk = write(uint32(i), block)
		ends[i] = len(block)
		if sk != nil {
			skips[uint32(i)] = sk
		}
	}
	block = shrink(block)
	start := 0
	for i := range d.entries {
		if !d.entries[i].inUse() {
			continue
		}
		d.entries[i].data = block[start:ends[i]:ends[i]]
		start = ends[i]
	}
	if len(skips) == 0 {
		skips = nil
	}
	d.skips = skips
}

// trim returns the capacity that growth by appending left unused: the lists are packed,
// the entries, skips and arena cut to their length, and the table to the size it would
// have grown to.
func (d *dict) trim() {
	d.pack(func(id uint32, block []byte) ([]byte, []skip) {
		return append(block, d.entries[id].data...), shrink(d.skips[id])
	})
	d.entries = shrink(d.entries)
	if d.arenaDead > 0 || cap(d.arena) > len(d.arena) {
		d.repackArena(len(d.arena) - d.arenaDead)
	}
	n := 16
	for d.liveTerms*4 > n*3 {
		n *= 2
	}
	if n < len(d.table) {
		d.resize(n)
	}
}

// terms returns the number of live keys.
func (d *dict) terms() int { return d.liveTerms }
