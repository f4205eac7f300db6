// Package kwindex is kioku's keyword index: exact BM25 over one scope's memories (a guild's
// server memory, or one member's personal memory), held in memory and kept current from its
// store's change log (Indexes, the same for SQLite and PostgreSQL). It is the reference ranking of the keyword leg: term
// statistics (document frequencies, average length) are the scope's own, never mixed with
// another scope's, and the BM25 parameters are kioku's (Params), not SQLite's fixed b.
//
// Documents are tokenized exactly as the full-text index tokenizes them (Tokenize), so the
// durable FTS5 index and this one agree on what a term is; with DefaultParams' b set to 0.75
// and one scope per database, Search gives FTS5's bm25() ranking (a test checks this).
//
// Queries are phrases OR-ed together, as the keyword leg's FTS5 expression was: single
// terms, and adjacent pairs ("game night") matched by position within one column. A
// document's score is FTS5's multi-column BM25: for each phrase, idf × f(k1+1) / (f +
// k1(1 − b + b·|D|/avgdl)), where f counts the phrase's occurrences with the author column
// weighted by AuthorWeight and |D| counts the tokens of both columns.
//
// The index is compact, about 105 bytes for a memory of 15 words in a scope of 100,000 and
// 345 in a scope of 1,000, where each memory brings nearly four terms of its own to the
// scope's dictionary: posting lists are byte streams of slot gaps and occurrence counts
// (postings.go), a term costs a 48-byte entry, its key's bytes in one arena and a 4-byte
// table slot (dict.go), a document's id finds its slot through another such table
// (slots.go), and each document keeps one record of its tokens as term numbers, which serves
// both the phrase check (a pair matches where the two numbers stand next to each other in
// one column) and a delete (which terms to count down). Lengths are kept exactly, so scores
// do not move. A delete marks the slot dead and counts its terms down at once (a term no
// live document holds leaves the dictionary with its postings, its key's bytes zeroed); the
// dead slots' postings go at the next compaction.
//
// A search with a limit skips what cannot reach its top k (MaxScore, maxscore.go) and
// returns exactly what scoring every match would.
package kwindex

import (
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// Params are the BM25 parameters.
type Params struct {
	// K1 saturates term frequency.
	K1 float64
	// B weighs length normalization: 0 ignores a document's length, 1 divides by it fully.
	B float64
	// AuthorWeight counts an occurrence in the author column this many times one in the
	// content.
	AuthorWeight float64
	// SmoothIDF uses log(1 + (N−df+0.5)/(df+0.5)), positive for every term (Lucene's
	// form). Without it idf is FTS5's log((N−df+0.5)/(df+0.5)), floored at 1e-6: in a small
	// scope, where most words are in half the memories, that floor flattens every score.
	SmoothIDF bool
}

// DefaultParams are kioku's BM25 parameters; docs/recall.md gives the measurements behind B.
var DefaultParams = Params{K1: 1.2, B: 0.3, AuthorWeight: 2, SmoothIDF: true}

// Doc is one memory as the index sees it.
type Doc struct {
	ID int64
	// Content and Author are the memory's search texts (memory.SearchText of its content
	// and author name).
	Content, Author string
	// Grams is the text whose CJK character bigrams SearchCJK matches (the memory's
	// normalized content and lowercased author name); empty for none.
	Grams string
	// Meta is what a search may filter on without SQL.
	Meta vecindex.Meta
}

// Hit is one search result.
type Hit struct {
	ID    int64
	Score float64
}

// Scope is the index of one scope's documents. It is safe for concurrent use.
type Scope struct {
	params Params

	mu       sync.RWMutex
	docs     docTable
	slots    slotIndex
	terms    dict
	grams    dict
	profiles profiles
	live     int
	totalLen int64
	gramLen  int64
	dead     int
	// scratch and enc are buffers Put and Remove reuse.
	scratch []uint64
	enc     []byte
}

// NewScope returns an empty index.
func NewScope(p Params) *Scope {
	return &Scope{params: p}
}

// Len returns the number of live documents.
func (s *Scope) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live
}

// Has reports whether the document id is in the index.
func (s *Scope) Has(id int64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.slots.find(s.docs.ids, id)
	return ok
}

// Put adds or replaces documents.
func (s *Scope) Put(docs ...Doc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cache := stemCache{}
	s.docs.grow(len(docs))
	for i := range docs {
		s.removeLocked(docs[i].ID)
		s.addLocked(&docs[i], cache)
	}
	if len(docs) >= bulkPut || 2*len(docs) >= s.live {
		s.trimLocked()
	}
	s.maybeCompactLocked()
}

// Remove deletes documents; unknown ids are ignored. A removed document's terms stop
// counting at once, and a term no live document holds any more leaves the index.
func (s *Scope) Remove(ids ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.removeLocked(id)
	}
	s.maybeCompactLocked()
}

// occurrence packs a term id (or gram id) and a column into one sortable number.
func occurrence(id uint32, col uint64) uint64 { return uint64(id)<<1 | col }

func (s *Scope) addLocked(d *Doc, cache stemCache) {
	slot := int32(len(s.docs.ids))
	rec := s.docs.fwd
	start := len(rec)
	occs := s.scratch[:0]
	// The record holds each column's tokens as varints of their term ids + 1, 0 for a CJK
	// token (counted in the length and the positions, never matched), each column preceded
	// by its length in bytes.
	var length int32
	for col, text := range [2]string{d.Content, d.Author} {
		enc := s.enc[:0]
		tokenize(text, cache, func(tok string, cjk bool) {
			length++
			if cjk {
				enc = append(enc, 0)
				return
			}
			id := s.terms.id(tok)
			enc = appendUvarint(enc, uint64(id)+1)
			occs = append(occs, occurrence(id, uint64(col)))
		})
		rec = appendUvarint(rec, uint64(len(enc)))
		rec = append(rec, enc...)
		s.enc = enc[:0]
	}
	slices.Sort(occs)
	for i := 0; i < len(occs); {
		id := uint32(occs[i] >> 1)
		var counts [2]uint32
		for ; i < len(occs) && uint32(occs[i]>>1) == id; i++ {
			counts[occs[i]&1]++
		}
		s.terms.add(id, slot, counts[0], counts[1])
		e := &s.terms.entries[id]
		e.note(counts[0], counts[1], length)
		e.live++
	}
	// Then the distinct bigrams, as ascending gram ids in gaps.
	occs = occs[:0]
	for _, g := range bigrams(d.Grams) {
		occs = append(occs, uint64(s.grams.id(g)))
	}
	slices.Sort(occs)
	distinct := 0
	for i := range occs {
		if i == 0 || occs[i] != occs[i-1] {
			distinct++
		}
	}
	rec = appendUvarint(rec, uint64(distinct))
	prev := uint64(0)
	for i := 0; i < len(occs); {
		id := occs[i]
		var tf uint32
		for ; i < len(occs) && occs[i] == id; i++ {
			tf++
		}
		s.grams.add(uint32(id), slot, tf, 0)
		s.grams.entries[id].live++
		rec = appendUvarint(rec, id-prev)
		prev = id
	}
	s.scratch = occs[:0]
	gramLen := int32(utf8.RuneCountInString(d.Grams))
	s.docs.fwd = rec
	s.docs.add(d.ID, uint32(start), length, gramLen, d.Meta.CreatedAt, s.profiles.intern(&d.Meta))
	s.slots.insert(s.docs.ids, slot)
	s.live++
	s.totalLen += int64(length)
	s.gramLen += int64(gramLen)
}

func (s *Scope) removeLocked(id int64) {
	slot, ok := s.slots.find(s.docs.ids, id)
	if !ok {
		return
	}
	s.slots.remove(s.docs.ids, id)
	rec := s.docs.record(slot)
	ids := s.scratch[:0]
	off := 0
	for range 2 {
		var n uint64
		n, off = uvarint(rec, off)
		for end := off + int(n); off < end; {
			var t uint64
			t, off = uvarint(rec, off)
			if t > 0 {
				ids = append(ids, t-1)
			}
		}
	}
	// A term no live document holds leaves the dictionary now: a forgotten word must not
	// stay reachable until the next compaction.
	slices.Sort(ids)
	for i, t := range ids {
		if i == 0 || t != ids[i-1] {
			s.terms.release(uint32(t))
		}
	}
	s.scratch = ids[:0]
	n, off := uvarint(rec, off)
	g := uint64(0)
	for range n {
		var gap uint64
		gap, off = uvarint(rec, off)
		g += gap
		s.grams.release(uint32(g))
	}
	// The record is never read again; clearing it leaves no trace of which terms the
	// memory held.
	clear(rec)
	s.profiles.release(s.docs.profile[slot])
	s.docs.kill(slot)
	s.live--
	s.dead++
	s.totalLen -= int64(s.docs.lens.at(slot))
	s.gramLen -= int64(s.docs.gramLens.at(slot))
}

// maybeCompactLocked drops dead documents' postings once they are a third of the slots, so
// deletes cost amortized constant time and memory stays proportional to live documents.
func (s *Scope) maybeCompactLocked() {
	if s.dead < 64 || s.dead*3 < len(s.docs.ids) {
		return
	}
	remap := make([]int32, len(s.docs.ids))
	docs := s.docs.compact(remap, s.live)
	s.slots.rebuild(docs.ids)
	s.terms.remap(remap)
	s.grams.remap(remap)
	s.docs, s.dead = docs, 0
}

// Holds reports whether any live document holds word (tokenized like a document: a word of
// several tokens holds when each of them does). The forget-me tests use it to prove a
// forgotten word has left memory.
func (s *Scope) Holds(word string) bool {
	p := toPhrase(word)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if grams := bigrams(word); len(grams) > 0 {
		for _, g := range grams {
			if _, ok := s.grams.find(g); !ok {
				return false
			}
		}
		return true
	}
	if len(p) == 0 {
		return false
	}
	for _, tok := range p {
		if _, ok := s.terms.find(tok); !ok {
			return false
		}
	}
	return true
}

// Size reports the index's live documents and distinct terms.
func (s *Scope) Size() (docs, terms int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live, s.terms.terms()
}

// bulkPut is the batch size from which Put trims the slack appends left in the postings:
// a scope's build puts every memory at once. A batch of at least half the scope trims too,
// so a small scope's build is trimmed as well (at a cost of at most twice the batch's).
const bulkPut = 1024

// trimLocked copies every per-document table to its exact length and packs each
// dictionary's posting lists into one block and its keys into an arena of their size,
// returning the capacity that growth by appending left unused (a quarter of their memory on
// average).
func (s *Scope) trimLocked() {
	s.terms.trim()
	s.grams.trim()
	s.docs.trim()
}
