package kwindex

import (
	"bytes"
	"container/heap"
	"math"
	"sync"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// Query is what Search looks for.
type Query struct {
	// Terms are the query's words (recall.Plan.Terms); each is tokenized like a document,
	// so "rate-limit" becomes the phrase "rate limit".
	Terms []string
	// Pairs are adjacent query words matched as phrases (recall.Plan.Pairs).
	Pairs [][2]string
	// Filter, when not nil, keeps only the documents whose Meta it keeps.
	Filter *vecindex.Filter
	// Limit is how many hits to return; 0 returns every match.
	Limit int
}

// phrase is one OR-ed query phrase: one token, or several that must be adjacent in order.
type phrase []string

// Phrases returns the query's phrases as Search scores them; empty when nothing in the
// query can match (only stop words, only CJK text).
func (q *Query) phrases() []phrase {
	out := make([]phrase, 0, len(q.Terms)+len(q.Pairs))
	for _, t := range q.Terms {
		if p := toPhrase(t); len(p) > 0 {
			out = append(out, p)
		}
	}
	for _, pr := range q.Pairs {
		if p := toPhrase(pr[0] + " " + pr[1]); len(p) > 0 {
			out = append(out, p)
		}
	}
	return out
}

func toPhrase(text string) phrase {
	var p phrase
	Tokenize(text, func(tok string, cjk bool) {
		if !cjk {
			p = append(p, tok)
		}
	})
	return p
}

// accumulator is a query's per-document scores, dense over the scope's slots and reused
// through a pool so a search allocates little.
type accumulator struct {
	score   []float64
	touched []int32
	freq    []float64 // one phrase's weighted frequency per slot
	fTouch  []int32
	// A pruned search's buffers: the documents it scores in full, the best scores so far
	// (a min-heap), its phrases as rescoring reads them, its words and their bounds' sums.
	cand  []int32
	heap  []float64
	exact []exactPhrase
	words []termBound
	rest  []float64
}

var accumulators = sync.Pool{New: func() any { return &accumulator{} }}

func (a *accumulator) reset(n int) {
	if cap(a.score) < n {
		a.score = make([]float64, n)
		a.freq = make([]float64, n)
	}
	a.score, a.freq = a.score[:n], a.freq[:n]
	a.touched, a.fTouch = a.touched[:0], a.fTouch[:0]
}

func (a *accumulator) clear() {
	for _, s := range a.touched {
		a.score[s] = 0
	}
	a.touched = a.touched[:0]
}

// Search returns the documents matching at least one of the query's phrases, best first
// (ties by id), scored by BM25 over this scope's statistics.
func (s *Scope) Search(q Query) []Hit {
	phrases := q.phrases()
	if len(phrases) == 0 {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.live == 0 {
		return nil
	}
	bm := s.bm25()
	if q.Limit > 0 && len(phrases) == 1 && len(phrases[0]) == 1 {
		return s.searchWord(phrases[0][0], q.Filter, q.Limit, bm)
	}
	acc := accumulators.Get().(*accumulator)
	defer accumulators.Put(acc)
	acc.reset(len(s.docs.ids))
	defer acc.clear()
	if q.Limit > 0 && prunable(phrases) {
		return s.searchPruned(phrases, q.Filter, q.Limit, bm, acc)
	}
	for _, p := range phrases {
		df := s.phraseFreqs(p, bm.w, acc)
		if df == 0 {
			continue
		}
		s.accumulate(acc, bm, idfOf(bm.n, float64(df), s.params.SmoothIDF))
	}
	return s.topLocked(acc, q.Filter, q.Limit)
}

// bm25 is what scoring a phrase in a document needs besides the phrase.
type bm25 struct{ n, avgdl, k1, b, w float64 }

func (s *Scope) bm25() bm25 {
	n := float64(s.live)
	return bm25{n: n, avgdl: float64(s.totalLen) / n, k1: s.params.K1, b: s.params.B, w: s.params.AuthorWeight}
}

// score is one phrase's part of a document's score: f its weighted frequency in the
// document, d the document's length.
func (bm *bm25) score(idf, f, d float64) float64 {
	return idf * f * (bm.k1 + 1) / (f + bm.k1*(1-bm.b+bm.b*d/bm.avgdl))
}

// accumulate adds the phrase whose frequencies acc.freq holds to the touched documents'
// scores.
func (s *Scope) accumulate(acc *accumulator, bm bm25, idf float64) {
	for _, slot := range acc.fTouch {
		f := acc.freq[slot]
		acc.freq[slot] = 0
		if acc.score[slot] == 0 {
			acc.touched = append(acc.touched, slot)
		}
		acc.score[slot] += bm.score(idf, f, float64(s.docs.lens.at(slot)))
	}
	acc.fTouch = acc.fTouch[:0]
}

func idfOf(n, df float64, smooth bool) float64 {
	x := (n - df + 0.5) / (df + 0.5)
	if smooth {
		return math.Log1p(x)
	}
	if idf := math.Log(x); idf > 0 {
		return idf
	}
	return 1e-6
}

// phraseFreqs fills acc.freq and acc.fTouch with the weighted frequency of p in every live
// document holding it, and returns their number (p's document frequency).
func (s *Scope) phraseFreqs(p phrase, w float64, acc *accumulator) int {
	if len(p) == 1 {
		id, ok := s.terms.find(p[0])
		if !ok {
			return 0
		}
		c := s.terms.cursor(id)
		for c.next() {
			if !s.docs.live(c.slot) {
				continue
			}
			acc.freq[c.slot] = float64(c.content) + w*float64(c.author)
			acc.fTouch = append(acc.fTouch, c.slot)
		}
		return len(acc.fTouch)
	}
	// Walk the shortest posting list, find the same slot in the others' (postings are in
	// slot order), then count where the whole phrase stands in the document's record.
	var pat []byte
	cursors := make([]postingCursor, len(p))
	lead := 0
	for i, tok := range p {
		id, ok := s.terms.find(tok)
		if !ok {
			return 0
		}
		pat = appendUvarint(pat, uint64(id)+1)
		cursors[i] = s.terms.cursor(id)
		if len(cursors[i].data) < len(cursors[lead].data) {
			lead = i
		}
	}
	driver := &cursors[lead]
	for driver.next() {
		slot := driver.slot
		if !s.docs.live(slot) {
			continue
		}
		found := true
		want := [2]bool{true, true}
		for i := range cursors {
			c := &cursors[i]
			if i != lead && !c.jump(slot) {
				return len(acc.fTouch)
			}
			if c.slot != slot {
				found = false
				break
			}
			want[0] = want[0] && c.content > 0
			want[1] = want[1] && c.author > 0
		}
		if !found {
			continue
		}
		counts := countPhrase(s.docs.record(slot), pat, want)
		if counts[0]+counts[1] == 0 {
			continue
		}
		acc.freq[slot] = float64(counts[0]) + w*float64(counts[1])
		acc.fTouch = append(acc.fTouch, slot)
	}
	return len(acc.fTouch)
}

// countPhrase counts where the phrase whose encoded term numbers are pat stands in the
// content and in the author name of the document whose record is rec; a column the postings
// say lacks one of the terms (want false) is not searched.
func countPhrase(rec, pat []byte, want [2]bool) (counts [2]int) {
	off := 0
	for col := range 2 {
		n, start := uvarint(rec, off)
		off = start + int(n)
		if want[col] {
			counts[col] = countEncoded(rec[start:off], pat)
		}
	}
	return counts
}

// countEncoded counts the occurrences of pat, a run of whole varints, in enc, a run of
// varints: a byte match counts where it starts a varint, right after a byte without the
// continuation bit.
func countEncoded(enc, pat []byte) int {
	n := 0
	for from := 0; ; {
		i := bytes.Index(enc[from:], pat)
		if i < 0 {
			return n
		}
		i += from
		if i == 0 || enc[i-1] < 0x80 {
			n++
		}
		from = i + 1
	}
}

// topLocked returns the best limit (all when 0) touched documents that pass f.
func (s *Scope) topLocked(acc *accumulator, f *vecindex.Filter, limit int) []Hit {
	h := &hitHeap{}
	for _, slot := range acc.touched {
		if !s.keeps(f, slot) {
			continue
		}
		h.offer(Hit{ID: s.docs.ids[slot], Score: acc.score[slot]}, limit)
	}
	return h.sorted()
}

// offer keeps hit when the heap holds fewer than limit hits (limit 0 for no limit) or hit
// is better than the worst.
func (h *hitHeap) offer(hit Hit, limit int) {
	if limit <= 0 || h.Len() < limit {
		heap.Push(h, hit)
		return
	}
	if better(hit, (*h)[0]) {
		(*h)[0] = hit
		heap.Fix(h, 0)
	}
}

// sorted empties the heap into a slice, best first.
func (h *hitHeap) sorted() []Hit {
	out := make([]Hit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Hit)
	}
	return out
}

// keeps reports whether the document in slot passes f (nil for none).
func (s *Scope) keeps(f *vecindex.Filter, slot int32) bool {
	if f == nil {
		return true
	}
	m := s.profiles.meta(s.docs.profile[slot], s.docs.created[slot])
	return f.Keep(&m)
}

// better orders hits best first: higher score, then lower id.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// hitHeap is a min-heap of hits: the worst kept hit on top.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
