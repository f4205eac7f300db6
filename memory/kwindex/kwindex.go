// Package kwindex is kioku's keyword index: exact BM25 over one scope's memories (a guild's
// server memory, or one member's personal memory), held in memory and kept current by its
// owner (ltm) on every write. It is the reference ranking of the keyword leg: term
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
package kwindex

import (
	"math"
	"slices"
	"sync"

	"github.com/kioku-bot/kioku/memory/vecindex"
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

// column is where a token occurs.
type column uint8

const (
	colContent column = iota
	colAuthor
)

// posting is one document's occurrences of one term.
type posting struct {
	slot    int32
	content uint16 // occurrences in the content
	author  uint16 // occurrences in the author name
	pos     uint32 // first position in the term's positions
}

type termEntry struct {
	key      string
	postings []posting
	// positions hold, for each posting in order, its content positions then its author
	// positions (author positions have authorBit set).
	positions []uint32
	live      int // live documents holding the term (its document frequency)
}

const authorBit = 1 << 31

type docEntry struct {
	id     int64
	length int32 // tokens in content and author together
	live   bool
	meta   compactMeta
	terms  []*termEntry // distinct terms, so a delete can keep document frequencies exact
	// gramLen is the length in characters of the document's Grams text, and grams its
	// distinct bigrams.
	gramLen int32
	grams   []*gramEntry
}

// Scope is the index of one scope's documents. It is safe for concurrent use.
type Scope struct {
	params Params

	mu    sync.RWMutex
	docs  []docEntry
	slots map[int64]int32
	terms map[string]*termEntry
	grams map[string]*gramEntry
	// strs interns the metadata strings (origin guild, channel, type, author), which
	// repeat across a scope's memories; strIDs finds a string's index.
	strs     []string
	strIDs   map[string]uint32
	live     int
	totalLen int64
	gramLen  int64
	dead     int
}

// NewScope returns an empty index.
func NewScope(p Params) *Scope {
	return &Scope{params: p, slots: map[int64]int32{}, terms: map[string]*termEntry{}}
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
	_, ok := s.slots[id]
	return ok
}

// Put adds or replaces documents.
func (s *Scope) Put(docs ...Doc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cache := stemCache{}
	s.docs = slices.Grow(s.docs, len(docs))
	for i := range docs {
		s.removeLocked(docs[i].ID)
		s.addLocked(&docs[i], cache)
	}
	if len(docs) >= bulkPut {
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

func (s *Scope) addLocked(d *Doc, cache stemCache) {
	slot := int32(len(s.docs))
	type occ struct {
		term string
		col  column
		pos  uint32
	}
	var occs []occ
	var length int32
	var n uint32
	tokenize(d.Content, cache, func(tok string, cjk bool) {
		if !cjk {
			occs = append(occs, occ{tok, colContent, n})
		}
		n++
		length++
	})
	n = 0
	tokenize(d.Author, cache, func(tok string, cjk bool) {
		if !cjk {
			occs = append(occs, occ{tok, colAuthor, n | authorBit})
		}
		n++
		length++
	})
	// Group by term, keeping content positions before author positions, each ascending.
	slices.SortStableFunc(occs, func(a, b occ) int {
		if a.term < b.term {
			return -1
		}
		if a.term > b.term {
			return 1
		}
		return 0
	})
	distinct := 0
	for i := range occs {
		if i == 0 || occs[i].term != occs[i-1].term {
			distinct++
		}
	}
	e := docEntry{id: d.ID, length: length, live: true, meta: s.compact(&d.Meta), terms: make([]*termEntry, 0, distinct)}
	for i := 0; i < len(occs); {
		j := i
		for j < len(occs) && occs[j].term == occs[i].term {
			j++
		}
		t := s.terms[occs[i].term]
		if t == nil {
			t = &termEntry{key: occs[i].term}
			s.terms[occs[i].term] = t
		}
		p := posting{slot: slot, pos: uint32(len(t.positions))}
		for _, o := range occs[i:j] {
			if o.col == colContent {
				p.content = satAdd(p.content)
			} else {
				p.author = satAdd(p.author)
			}
			t.positions = append(t.positions, o.pos)
		}
		t.postings = append(t.postings, p)
		t.live++
		e.terms = append(e.terms, t)
		i = j
	}
	e.grams, e.gramLen = s.addGramsLocked(slot, d.Grams)
	s.docs = append(s.docs, e)
	s.slots[d.ID] = slot
	s.live++
	s.totalLen += int64(length)
	s.gramLen += int64(e.gramLen)
}

func satAdd(x uint16) uint16 {
	if x == math.MaxUint16 {
		return x
	}
	return x + 1
}

func (s *Scope) removeLocked(id int64) {
	slot, ok := s.slots[id]
	if !ok {
		return
	}
	delete(s.slots, id)
	e := &s.docs[slot]
	e.live = false
	// A term no live document holds leaves the dictionary now: a forgotten word must not
	// stay reachable until the next compaction.
	for _, t := range e.terms {
		t.live--
		if t.live == 0 && s.terms[t.key] == t {
			delete(s.terms, t.key)
		}
	}
	for _, g := range e.grams {
		g.live--
		if g.live == 0 && s.grams[g.key] == g {
			delete(s.grams, g.key)
		}
	}
	e.terms, e.grams = nil, nil
	s.live--
	s.dead++
	s.totalLen -= int64(e.length)
	s.gramLen -= int64(e.gramLen)
}

// maybeCompactLocked drops dead documents' postings once they are a third of the slots, so
// deletes cost amortized constant time and memory stays proportional to live documents.
func (s *Scope) maybeCompactLocked() {
	if s.dead < 64 || s.dead*3 < len(s.docs) {
		return
	}
	remap := make([]int32, len(s.docs))
	docs := make([]docEntry, 0, s.live)
	for i := range s.docs {
		if !s.docs[i].live {
			remap[i] = -1
			continue
		}
		remap[i] = int32(len(docs))
		docs = append(docs, s.docs[i])
		s.slots[s.docs[i].id] = remap[i]
	}
	for _, t := range s.terms {
		var ps []posting
		var pos []uint32
		for j, p := range t.postings {
			if remap[p.slot] < 0 {
				continue
			}
			end := len(t.positions)
			if j+1 < len(t.postings) {
				end = int(t.postings[j+1].pos)
			}
			start := len(pos)
			pos = append(pos, t.positions[p.pos:end]...)
			ps = append(ps, posting{slot: remap[p.slot], content: p.content, author: p.author, pos: uint32(start)})
		}
		t.postings, t.positions = ps, pos
	}
	for _, g := range s.grams {
		ps := g.postings[:0]
		for _, p := range g.postings {
			if remap[p.slot] >= 0 {
				ps = append(ps, gramPosting{slot: remap[p.slot], tf: p.tf})
			}
		}
		g.postings = ps
	}
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
			if e := s.grams[g]; e == nil || e.live == 0 {
				return false
			}
		}
		return true
	}
	if len(p) == 0 {
		return false
	}
	for _, tok := range p {
		if t := s.terms[tok]; t == nil || t.live == 0 {
			return false
		}
	}
	return true
}

// Size reports the index's live documents and distinct terms.
func (s *Scope) Size() (docs, terms int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live, len(s.terms)
}

// compactMeta is vecindex.Meta with its strings interned in the scope's table: a scope's
// memories share a handful of guilds, channels, types and authors, so the index keeps four
// small numbers per memory instead of four strings.
type compactMeta struct {
	createdAt                     int64
	importance                    float64
	guild, channel, typ, authorID uint32
	pinned                        bool
	tags                          []string
}

func (s *Scope) intern(v string) uint32 {
	if id, ok := s.strIDs[v]; ok {
		return id
	}
	if s.strIDs == nil {
		s.strIDs = map[string]uint32{}
	}
	id := uint32(len(s.strs))
	s.strs = append(s.strs, v)
	s.strIDs[v] = id
	return id
}

func (s *Scope) compact(m *vecindex.Meta) compactMeta {
	return compactMeta{createdAt: m.CreatedAt, importance: m.Importance, guild: s.intern(m.OriginGuild),
		channel: s.intern(m.Channel), typ: s.intern(m.Type), authorID: s.intern(m.AuthorID), pinned: m.Pinned, tags: m.Tags}
}

// expand rebuilds the metadata a filter checks; it allocates nothing (the strings are the
// table's).
func (s *Scope) expand(c *compactMeta) vecindex.Meta {
	return vecindex.Meta{OriginGuild: s.strs[c.guild], Channel: s.strs[c.channel], CreatedAt: c.createdAt, Type: s.strs[c.typ],
		Pinned: c.pinned, Importance: c.importance, Tags: c.tags, AuthorID: s.strs[c.authorID]}
}

// bulkPut is the batch size from which Put trims the slack appends left in the postings:
// a scope's build puts every memory at once.
const bulkPut = 1024

// trimLocked copies every posting list to its exact length, returning the capacity that
// growth by appending left unused (a quarter of the lists' memory on average).
func (s *Scope) trimLocked() {
	for _, t := range s.terms {
		if cap(t.postings) > len(t.postings) {
			t.postings = slices.Clone(t.postings)
		}
		if cap(t.positions) > len(t.positions) {
			t.positions = slices.Clone(t.positions)
		}
	}
	for _, g := range s.grams {
		if cap(g.postings) > len(g.postings) {
			g.postings = slices.Clone(g.postings)
		}
	}
}
