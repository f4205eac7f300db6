package intent

import (
	"unicode"
	"unicode/utf8"
)

type tokenKind uint8

const (
	tokenWord tokenKind = iota + 1
	tokenPunct
)

// token is one word or one punctuation rune. Whitespace is not a token: after
// normalization a newline and a space are the same thing.
type token struct {
	kind tokenKind
	word word // wNone unless kind is tokenWord
	r    rune // the punctuation rune when kind is tokenPunct
}

// scanner splits text into tokens. It folds ASCII case and skips ASCII
// whitespace itself, so raw ASCII text needs no normalized copy; any other
// text must be normalized first. The zero-allocation fast path depends on
// it: a scanner is a plain value, and copying it is how the rules look ahead.
type scanner struct {
	s string
	i int
}

// next returns the next token, or false at the end of the text.
func (sc *scanner) next() (token, bool) {
	for sc.i < len(sc.s) {
		if c := sc.s[sc.i]; c < utf8.RuneSelf {
			switch {
			case asciiSpace(c):
				sc.i++
				continue
			case asciiWordByte(c):
				return token{kind: tokenWord, word: sc.scanWord()}, true
			}
			sc.i++
			return token{kind: tokenPunct, r: rune(c)}, true
		}
		r, size := decodeAt(sc.s, sc.i)
		switch {
		case isSpace(r):
			sc.i += size
		case isWordRune(r):
			return token{kind: tokenWord, word: sc.scanWord()}, true
		default:
			sc.i += size
			return token{kind: tokenPunct, r: r}, true
		}
	}
	return token{}, false
}

// nextWord returns the word of the next token, wNone for punctuation or the
// end of the text.
func (sc *scanner) nextWord() word {
	t, _ := sc.next()
	return t.word
}

// scanWord consumes the word starting at sc.i and looks it up. Apostrophes
// inside a word are dropped rather than kept, so "don't", "don’t" (U+2019,
// which NFKC leaves alone) and "dont" are one word.
func (sc *scanner) scanWord() word {
	var key [maxWordLen]byte
	n := 0
	known := true
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		if asciiWordByte(c) {
			// The common case, kept free of rune decoding.
			sc.i++
			if n == len(key) {
				known = false
				continue
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			key[n] = c
			n++
			continue
		}
		r, size := decodeAt(sc.s, sc.i)
		if isApostrophe(r) {
			// An apostrophe followed by a letter is inside the word; any
			// other is a closing quote and ends it.
			if after := sc.i + size; after < len(sc.s) {
				if r2, _ := decodeAt(sc.s, after); isWordRune(r2) {
					sc.i = after
					continue
				}
			}
			break
		}
		if !isWordRune(r) {
			break
		}
		// No vocabulary word has a non-ASCII letter. Normalized text has
		// no upper case left to fold.
		sc.i += size
		known = false
	}
	if !known {
		return wOther
	}
	return lookupWord(&key, n)
}

// decodeAt decodes the rune at s[i], with a fast path for ASCII.
func decodeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// isSpace is unicode.IsSpace with the ASCII cases first.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiSpace(byte(r))
	}
	return unicode.IsSpace(r)
}

// asciiSpace reports whether the ASCII byte c is white space to
// unicode.IsSpace.
func asciiSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// asciiWordByte reports whether c is an ASCII letter or digit.
func asciiWordByte(c byte) bool {
	lower := c | 0x20 // folds A-Z onto a-z and maps no other byte there
	return 'a' <= lower && lower <= 'z' || '0' <= c && c <= '9'
}

// isWordRune reports whether r belongs to an English-style word. Han, kana
// and Hangul do not: they stand between words like punctuation, so
// "これremember this" still starts a clause at "remember". Nor do
// apostrophes, though U+02BC is a letter to Unicode: scanWord decides
// whether one joins two parts of a word.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiWordByte(byte(r))
	}
	if isCJK(r) || isApostrophe(r) {
		return false
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// isCJK reports whether r is in a script written without spaces between
// words.
func isCJK(r rune) bool {
	switch {
	case 0x2E80 <= r && r <= 0xA4CF: // radicals, CJK symbols, kana, Bopomofo, Han, Yi
		return true
	case 0xAC00 <= r && r <= 0xD7AF: // Hangul syllables
		return true
	case 0xF900 <= r && r <= 0xFAFF: // compatibility ideographs
		return true
	case 0xFF66 <= r && r <= 0xFFDC: // half-width kana and Hangul
		return true
	case 0x1B000 <= r && r <= 0x1B16F: // kana supplements
		return true
	case 0x20000 <= r && r <= 0x3FFFF: // Han extensions
		return true
	}
	return false
}

// isApostrophe reports whether r is used as an apostrophe. NFKC maps none of
// the typographic forms to ASCII, and phones type U+2019 by default.
func isApostrophe(r rune) bool {
	switch r {
	case '\'', '\u2019', '\u2018', '\u02BC', '`':
		return true
	}
	return false
}

// historySize bounds how far back the rules look. The longest lead-in is
// three words; the rest is room for fillers ("ok so please just …").
const historySize = 16

// history is a ring of the most recent tokens before the one being judged.
type history struct {
	toks  [historySize]token
	count uint
}

func (h *history) push(t token) {
	h.toks[h.count%historySize] = t
	h.count++
}

// back returns the k-th token before the current one (k ≥ 1). start reports
// that k reaches before the beginning of the text. A token that has fallen
// out of the ring reads as an ordinary word: neither a clause boundary nor a
// blocker.
func (h *history) back(k int) (t token, start bool) {
	switch {
	case uint(k) > h.count:
		return token{}, true
	case k > historySize:
		return token{kind: tokenWord, word: wOther}, false
	}
	return h.toks[(h.count-uint(k))%historySize], false
}

// word returns the k-th word back, wNone when that token is punctuation or
// before the start.
func (h *history) word(k int) word {
	t, _ := h.back(k)
	return t.word
}

// punct returns the k-th token back when it is punctuation, else 0.
func (h *history) punct(k int) rune {
	t, _ := h.back(k)
	return t.r
}

// clauseStart reports whether position k is the start of the text or
// punctuation, i.e. whether the word after it opens a clause.
func (h *history) clauseStart(k int) bool {
	t, start := h.back(k)
	return start || t.kind == tokenPunct
}

// skipFillers returns the first position at or after k that is not a filler
// word, and whether a polite word ("please") was among those skipped.
func (h *history) skipFillers(k int) (int, bool) {
	polite := false
	for {
		w := h.word(k)
		if !w.is(clsFiller) {
			return k, polite
		}
		polite = polite || w.is(clsPolite)
		k++
	}
}

// skipAdverbs returns the first position at or after k that is not an
// adverb, looking past at most a few so a long run of them cannot chain a
// verb to a distant subject.
func (h *history) skipAdverbs(k int) int {
	for range 4 {
		if !h.word(k).is(clsAdverb) {
			break
		}
		k++
	}
	return k
}

// endsWith reports whether the words ending at position k (reading back)
// are seq, in reading order.
func (h *history) endsWith(k int, seq []word) bool {
	for i := len(seq) - 1; i >= 0; i-- {
		if h.word(k) != seq[i] {
			return false
		}
		k++
	}
	return true
}

// leadIn reports whether a request lead-in ends at position k.
func (h *history) leadIn(k int) bool {
	for i := range leadIns {
		l := &leadIns[i]
		if !h.endsWith(k, l.words) {
			continue
		}
		if !l.anchored {
			return true
		}
		if start, _ := h.skipFillers(k + len(l.words)); h.clauseStart(start) {
			return true
		}
	}
	return false
}
