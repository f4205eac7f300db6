package kwindex

import (
	"slices"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// A search with a limit need not score every document holding a common word (MaxScore): a
// word's score in any document is bounded by its largest counts and shortest length, and
// once the k-th best score so far beats the bounds of all the words left together, a
// document holding only those words cannot enter the top k. The words left are then looked
// up only in the documents already found, jumping over the blocks of their postings in
// between. Pairs are always walked in full: their document frequency, and so their weight,
// is known only after the walk.
//
// Pruning adds phrases in another order than Search's, and floating-point addition is not
// associative, so the documents that can still make the top k are scored again, phrase by
// phrase in the query's order, from their records: the result is exactly Search's without
// pruning (TestPrunedSearchMatchesFullScoring).

// slack widens bounds and narrows thresholds against rounding: pruning must never drop a
// document that exact scoring would keep.
const slack = 1e-9

// termBound is a single-word phrase of the query with its weight and score bound.
type termBound struct {
	id       uint32
	t        *termEntry
	idf, max float64
}

// prunable reports whether a query has a word whose postings pruning could skip.
func prunable(phrases []phrase) bool {
	if len(phrases) < 2 {
		return false
	}
	for _, p := range phrases {
		if len(p) == 1 {
			return true
		}
	}
	return false
}

func (s *Scope) searchPruned(phrases []phrase, f *vecindex.Filter, limit int, bm bm25, acc *accumulator) []Hit {
	exact := slices.Grow(acc.exact[:0], len(phrases))[:len(phrases)]
	clear(exact)
	words := acc.words[:0]
	for i, p := range phrases {
		var df int
		if len(p) == 1 {
			id, ok := s.terms.find(p[0])
			if !ok {
				continue
			}
			t := &s.terms.entries[id]
			df = int(t.live)
			idf := idfOf(bm.n, float64(df), s.params.SmoothIDF)
			words = append(words, termBound{id: id, t: t, idf: idf, max: t.bound(&bm, idf)})
		} else {
			if df = s.phraseFreqs(p, bm.w, acc); df > 0 {
				s.accumulate(acc, bm, idfOf(bm.n, float64(df), s.params.SmoothIDF))
			}
		}
		if df > 0 {
			exact[i] = s.exactPhrase(p, idfOf(bm.n, float64(df), s.params.SmoothIDF))
		}
	}
	// The rarest words (highest bounds) first: they find the candidates.
	slices.SortFunc(words, func(a, b termBound) int {
		if a.max > b.max {
			return -1
		}
		if a.max < b.max {
			return 1
		}
		return 0
	})
	rest := slices.Grow(acc.rest[:0], len(words)+1)[:len(words)+1]
	rest[len(words)] = 0
	for i := len(words) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + words[i].max
	}
	theta, j := 0.0, 0
	for ; j < len(words); j++ {
		t := words[j].t
		// The threshold costs a pass over the documents found; it is worth it before a
		// list long enough to matter.
		if len(acc.touched) >= limit && int(t.n)*4 >= len(acc.touched) {
			theta = s.kthScore(acc, f, limit)
			if rest[j] < theta*(1-slack) {
				break
			}
		}
		c := s.terms.cursor(words[j].id)
		for c.next() {
			if s.docs.live(c.slot) {
				acc.freq[c.slot] = float64(c.content) + bm.w*float64(c.author)
				acc.fTouch = append(acc.fTouch, c.slot)
			}
		}
		s.accumulate(acc, bm, words[j].idf)
	}
	// The candidates: documents found that pass the filter and could still reach the
	// threshold with every word left.
	cand := acc.cand[:0]
	for _, slot := range acc.touched {
		if acc.score[slot]+rest[j] < theta*(1-slack) {
			continue
		}
		if !s.keeps(f, slot) {
			continue
		}
		cand = append(cand, slot)
	}
	if j < len(words) {
		slices.Sort(cand)
		for _, wb := range words[j:] {
			c := s.terms.cursor(wb.id)
			for _, slot := range cand {
				if !c.jump(slot) {
					break
				}
				if c.slot == slot {
					fr := float64(c.content) + bm.w*float64(c.author)
					acc.score[slot] += bm.score(wb.idf, fr, float64(s.docs.lens.at(slot)))
				}
			}
		}
	}
	acc.cand, acc.exact, acc.words, acc.rest = cand, exact, words, rest
	return s.rescore(acc, cand, exact, bm, limit)
}

// searchWord is a search for one word with a limit: a document's score is the word's
// alone, so each posting goes straight to the top k, and only one that would enter it is
// checked against the filter.
func (s *Scope) searchWord(word string, f *vecindex.Filter, limit int, bm bm25) []Hit {
	id, ok := s.terms.find(word)
	if !ok {
		return nil
	}
	idf := idfOf(bm.n, float64(s.terms.entries[id].live), s.params.SmoothIDF)
	top := &hitHeap{}
	c := s.terms.cursor(id)
	for c.next() {
		if !s.docs.live(c.slot) {
			continue
		}
		x := bm.score(idf, float64(c.content)+bm.w*float64(c.author), float64(s.docs.lens.at(c.slot)))
		hit := Hit{ID: s.docs.ids[c.slot], Score: x}
		if top.Len() == limit && !better(hit, (*top)[0]) {
			continue
		}
		if !s.keeps(f, c.slot) {
			continue
		}
		top.offer(hit, limit)
	}
	return top.sorted()
}

// kthScore returns the limit-th best score among the documents found that pass f, 0 when
// fewer pass.
func (s *Scope) kthScore(acc *accumulator, f *vecindex.Filter, limit int) float64 {
	h := acc.heap[:0]
	for _, slot := range acc.touched {
		x := acc.score[slot]
		if len(h) == limit && x <= h[0] {
			continue
		}
		if !s.keeps(f, slot) {
			continue
		}
		if len(h) < limit {
			h = append(h, x)
			siftUp(h, len(h)-1)
			continue
		}
		h[0] = x
		siftDown(h, 0)
	}
	acc.heap = h
	if len(h) < limit {
		return 0
	}
	return h[0]
}

// siftUp and siftDown keep h a min-heap.
func siftUp(h []float64, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []float64, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// exactPhrase is a phrase as rescoring reads it from records: its encoded term numbers and
// weight; pat is nil for a phrase no document holds.
type exactPhrase struct {
	pat []byte
	idf float64
}

func (s *Scope) exactPhrase(p phrase, idf float64) exactPhrase {
	pat := make([]byte, 0, 3*len(p))
	for _, tok := range p {
		id, _ := s.terms.find(tok) // every word of a phrase some document holds is there
		pat = appendUvarint(pat, uint64(id)+1)
	}
	return exactPhrase{pat: pat, idf: idf}
}

// rescore scores again, in the query's phrase order, the candidates whose pruned score
// comes near the limit-th best, and returns the best limit of them.
func (s *Scope) rescore(acc *accumulator, cand []int32, phrases []exactPhrase, bm bm25, limit int) []Hit {
	h := acc.heap[:0]
	for _, slot := range cand {
		x := acc.score[slot]
		if len(h) < limit {
			h = append(h, x)
			siftUp(h, len(h)-1)
		} else if x > h[0] {
			h[0] = x
			siftDown(h, 0)
		}
	}
	acc.heap = h
	floor := 0.0
	if len(h) == limit {
		floor = h[0] * (1 - slack)
	}
	top := &hitHeap{}
	for _, slot := range cand {
		if acc.score[slot] < floor {
			continue
		}
		rec, d := s.docs.record(slot), float64(s.docs.lens.at(slot))
		score := 0.0
		for _, p := range phrases {
			if p.pat == nil {
				continue
			}
			if n := countPhrase(rec, p.pat, [2]bool{true, true}); n[0]+n[1] > 0 {
				score += bm.score(p.idf, float64(n[0])+bm.w*float64(n[1]), d)
			}
		}
		top.offer(Hit{ID: s.docs.ids[slot], Score: score}, limit)
	}
	return top.sorted()
}
