package kwindex

import (
	"unicode/utf8"

	"github.com/kioku-bot/kioku/internal/vecindex"
	"github.com/kioku-bot/kioku/memory"
)

// Unsegmented text (Japanese, Chinese, Korean) has no spaces to split on, so the index also
// holds every document's CJK character bigrams (Doc.Grams), scored by their own BM25 over
// the scope: a query's bigrams plus its Latin words (which Japanese text often embeds:
// "明日のdeployは") against the bigram postings and the word postings, with each document's
// length in characters. This is the scan the SQL leg ran per query, without the scan.

// CJKQuery is what SearchCJK looks for.
type CJKQuery struct {
	// Grams are the query's CJK character bigrams (recall.Plan.CJKGrams(2)).
	Grams []string
	// Words are the query's Latin words, matched against the word postings.
	Words  []string
	Filter *vecindex.Filter
	Limit  int
}

// SearchCJK returns the documents holding at least one of the query's bigrams or words,
// best first, scored by BM25 over bigram and word counts with documents' lengths in
// characters.
func (s *Scope) SearchCJK(q CJKQuery) []Hit {
	if len(q.Grams) == 0 && len(q.Words) == 0 {
		return nil
	}
	var words []string
	for _, w := range q.Words {
		if p := toPhrase(w); len(p) == 1 {
			words = append(words, p[0])
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.live == 0 || s.gramLen == 0 {
		return nil
	}
	acc := accumulators.Get().(*accumulator)
	defer accumulators.Put(acc)
	acc.reset(len(s.docs.ids))
	defer acc.clear()
	n := float64(s.live)
	avg := float64(s.gramLen) / n
	k1, b := s.params.K1, s.params.B
	add := func(slot int32, tf, df int) {
		f := float64(tf)
		d := float64(s.docs.gramLens.at(slot))
		if acc.score[slot] == 0 {
			acc.touched = append(acc.touched, slot)
		}
		acc.score[slot] += idfOf(n, float64(df), true) * f * (k1 + 1) / (f + k1*(1-b+b*d/avg))
	}
	for _, g := range q.Grams {
		id, ok := s.grams.find(g)
		if !ok {
			continue
		}
		df := int(s.grams.entries[id].live)
		c := s.grams.cursor(id)
		for c.next() {
			if s.docs.live(c.slot) {
				add(c.slot, int(c.content), df)
			}
		}
	}
	for _, w := range words {
		id, ok := s.terms.find(w)
		if !ok {
			continue
		}
		df := int(s.terms.entries[id].live)
		c := s.terms.cursor(id)
		for c.next() {
			if s.docs.live(c.slot) {
				add(c.slot, int(c.content)+int(c.author), df)
			}
		}
	}
	return s.topLocked(acc, q.Filter, q.Limit)
}

// bigrams returns the CJK character bigrams of text.
func bigrams(text string) []string {
	var out []string
	prevStart := -1
	for i, r := range text {
		if !memory.IsCJK(r) {
			prevStart = -1
			continue
		}
		if prevStart >= 0 {
			out = append(out, text[prevStart:i+utf8.RuneLen(r)])
		}
		prevStart = i
	}
	return out
}
