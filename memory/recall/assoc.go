package recall

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Words that travel together: within a scope, the nouns and names that appear in the same
// memory are associated ("Catan" with "board", "game", "Friday"), and a question's words
// reach, at low weight, the words its scope keeps beside them. The store counts the pairs;
// this file decides which words of a text take part, for a memory when it is written and for
// a question when it is asked, so that both sides agree.

// MaxAssocTerms is how many words of one memory take part in its pairs: the first distinct
// ones. A memory is a sentence or two, so this holds nearly every noun of it, and a long
// import is bounded at 56 pairs. Ten words cost more to count and scored the same on the
// dev sets; six or fewer lost recall on dev-en and dev-conv-en.
const MaxAssocTerms = 8

// minAssocRunes is the shortest word that takes part: two-letter words are mostly function
// words the stop list does not hold ("ya", "ur"), and a CJK run of one character is a
// particle or a part of a longer word.
const minAssocRunes = 3

// minAssocCJKRunes is the shortest katakana or kanji run that takes part: in Japanese, nouns
// are mostly written in two or more kanji (週末, 映画) or katakana (キャンプ).
const minAssocCJKRunes = 2

// maxAssocKanjiRunes is the longest kanji run that takes part: a longer run is mostly
// several words written together (今日内示出た's 今日内示出), which no question repeats.
// Katakana runs have no bound: a loanword is one word however long.
const maxAssocKanjiRunes = 3

const (
	katakanaRun = 1
	kanjiRun    = 2
)

// AssocTerms returns the words of text that take part in its scope's associations, at most
// MaxAssocTerms of them in the order they first appear: lowercased, NFKC-folded words that
// are not stop words, hold a letter and have at least three characters, and, in CJK text,
// runs of katakana or short runs of kanji (hiragana carries grammar, not nouns). Verbs and adjectives
// are not filtered out: they associate with everything, and the store's association measure
// weighs a pair by how common both words are, so they rarely reach the top.
func AssocTerms(text string) []string {
	return appendAssocTerms(nil, text, MaxAssocTerms)
}

// QueryAssocTerms returns the words of a question that look up associations: the same
// reading as AssocTerms, without its bound.
func QueryAssocTerms(text string) []string {
	return appendAssocTerms(nil, text, 64)
}

func appendAssocTerms(out []string, text string, max int) []string {
	s := strings.ToLower(text)
	if !isASCIIString(s) {
		s = strings.ToLower(norm.NFKC.String(s))
	}
	add := func(w string) bool {
		for _, have := range out {
			if have == w {
				return true
			}
		}
		out = append(out, w)
		return len(out) < max
	}
	for _, w := range splitWords(s) {
		if isCJKWord(w) {
			for _, run := range cjkNounRuns(w) {
				if !add(run) {
					return out
				}
			}
			for _, part := range splitNonCJK(w) {
				if assocWord(part) && !add(part) {
					return out
				}
			}
			continue
		}
		if assocWord(w) && !add(w) {
			return out
		}
	}
	return out
}

// assocWord reports whether a non-CJK word takes part in associations.
func assocWord(w string) bool {
	if stopWords[w] || utf8.RuneCountInString(w) < minAssocRunes {
		return false
	}
	for _, r := range w {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// cjkNounRuns returns the runs of katakana (with the long-vowel mark) and of kanji in w that
// are at least minAssocCJKRunes long, kanji runs at most maxAssocKanjiRunes.
func cjkNounRuns(w string) []string {
	var out []string
	start, kind := -1, 0
	flush := func(end int) {
		if start >= 0 && utf8.RuneCountInString(w[start:end]) >= minAssocCJKRunes {
			run := w[start:end]
			if kind == katakanaRun || utf8.RuneCountInString(run) <= maxAssocKanjiRunes {
				out = append(out, run)
			}
		}
		start, kind = -1, 0
	}
	for i, r := range w {
		k := 0
		switch {
		case isKatakana(r) || (r == 'ー' && kind == katakanaRun):
			k = katakanaRun
		case unicode.Is(unicode.Han, r):
			k = kanjiRun
		}
		if k != kind {
			flush(i)
			if k != 0 {
				start, kind = i, k
			}
		}
	}
	flush(len(w))
	return out
}
