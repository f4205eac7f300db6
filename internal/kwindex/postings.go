package kwindex

// Posting lists are byte streams of varints, in slot order: a chat memory's 15 words would
// otherwise cost 12–16 bytes each as structs, where a gap from the previous slot and the
// occurrence counts fit in one to three bytes. Each posting is
//
//	varint(gap<<2 | kind) [varint(content) varint(author) when kind is kindCounts]
//
// where gap is the slot minus the previous posting's slot (the first posting's gap counts
// from −1), and kind names the common counts: one occurrence in the content, one in the
// author name, two in the content, or counts that follow explicitly.

const (
	kindOneContent = iota
	kindOneAuthor
	kindTwoContent
	kindCounts
)

// postingList is one term's postings, dead documents' included until the next compaction.
// Every skipEvery-th posting starts a block, whose skip (in the dictionary's side map, as
// only long lists have any) lets a cursor jump over the blocks before the slot it looks
// for.
type postingList struct {
	data []byte
	last int32 // slot of the last posting; −1 when empty
	n    int32 // postings
}

// skip is where a block of postings starts in a list: its byte offset, and the slot of the
// posting before it (the base its first gap counts from).
type skip struct {
	off  uint32
	base int32
}

const skipEvery = 128

// appendPosting appends the posting of a document gap slots after the previous posting.
func appendPosting(data []byte, gap int32, content, author uint32) []byte {
	g := uint64(gap)
	switch {
	case content == 1 && author == 0:
		return appendUvarint(data, g<<2|kindOneContent)
	case content == 0 && author == 1:
		return appendUvarint(data, g<<2|kindOneAuthor)
	case content == 2 && author == 0:
		return appendUvarint(data, g<<2|kindTwoContent)
	}
	data = appendUvarint(data, g<<2|kindCounts)
	data = appendUvarint(data, uint64(content))
	return appendUvarint(data, uint64(author))
}

// postingCursor walks a posting list from the start.
type postingCursor struct {
	data    []byte
	skips   []skip
	off     int
	slot    int32
	content uint32
	author  uint32
}

// next moves to the next posting and reports whether there was one.
func (c *postingCursor) next() bool {
	if c.off >= len(c.data) {
		return false
	}
	v, off := uvarint(c.data, c.off)
	c.slot += int32(v >> 2)
	switch v & 3 {
	case kindOneContent:
		c.content, c.author = 1, 0
	case kindOneAuthor:
		c.content, c.author = 0, 1
	case kindTwoContent:
		c.content, c.author = 2, 0
	default:
		var x uint64
		x, off = uvarint(c.data, off)
		c.content = uint32(x)
		x, off = uvarint(c.data, off)
		c.author = uint32(x)
	}
	c.off = off
	return true
}

// seek moves to the first posting at or after slot, decoding every posting on the way, and
// reports whether there is one; a cursor already there stays.
func (c *postingCursor) seek(slot int32) bool {
	for c.slot < slot {
		if !c.next() {
			return false
		}
	}
	return true
}

func appendUvarint(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

// uvarint decodes the varint at b[i] and returns it and the offset after it. The one-byte
// case, most postings, stays small enough to inline.
func uvarint(b []byte, i int) (uint64, int) {
	if x := b[i]; x < 0x80 {
		return uint64(x), i + 1
	}
	return uvarintSlow(b, i)
}

func uvarintSlow(b []byte, i int) (uint64, int) {
	var x uint64
	var shift uint
	for {
		c := b[i]
		i++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x, i
		}
		shift += 7
	}
}

// jump moves to the first posting at or after slot like seek, jumping over whole blocks:
// for a sparse probe of a long list.
func (c *postingCursor) jump(slot int32) bool {
	if c.slot >= slot {
		return true
	}
	// A block whose base (the posting before it) is below slot holds nothing the cursor
	// needs before its start.
	for len(c.skips) > 0 && c.skips[0].base < slot {
		if k := c.skips[0]; int(k.off) > c.off {
			c.off, c.slot = int(k.off), k.base
		}
		c.skips = c.skips[1:]
	}
	return c.seek(slot)
}
