package kwindex

import (
	"sort"
	"unicode"
	"unicode/utf8"

	porter "github.com/blevesearch/go-porterstemmer"
	"golang.org/x/text/unicode/norm"

	"github.com/kioku-bot/kioku/memory"
)

// maxStemBytes is the longest token the stemmer touches; longer ones are kept whole, as
// SQLite's porter tokenizer does (FTS5_PORTER_MAX_TOKEN).
const maxStemBytes = 64

// Tokenize calls fn for each token of s, in order, as SQLite's FTS5 tokenizer "porter
// unicode61 remove_diacritics 2" over the same text gives them: runs of letters, numbers and
// private-use characters, case-folded, Latin diacritics removed, then Porter-stemmed. cjk
// reports a token of unsegmented (Han, kana, Hangul) text, which the word index counts in
// a document's length but never matches (CJK text has its own n-gram path). s is a
// memory's search text (memory.SearchText) or a query term.
func Tokenize(s string, fn func(tok string, cjk bool)) {
	tokenize(s, nil, fn)
}

// stemCache remembers the stems of the tokens of one batch of documents: chat text repeats
// a small vocabulary, and stemming is most of the tokenizer's work.
type stemCache map[string]string

func tokenize(s string, cache stemCache, fn func(tok string, cjk bool)) {
	var buf []byte
	start := -1
	for i := 0; i <= len(s); {
		var r rune
		size := 1
		if i < len(s) {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if i < len(s) && isTokenRune(r) {
			if start < 0 {
				start = i
			}
			i += size
			continue
		}
		if start >= 0 {
			buf = emit(s[start:i], buf, cache, fn)
			start = -1
		}
		i += size
	}
}

// isTokenRune reports whether unicode61 keeps r inside a token: ASCII letters and digits,
// and from U+0080 the generated table (unicode61.go).
func isTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	i := sort.Search(len(tokenRanges), func(i int) bool { return tokenRanges[i][1] >= r })
	return i < len(tokenRanges) && tokenRanges[i][0] <= r
}

// emit folds and stems one raw token and hands it to fn.
func emit(raw string, buf []byte, cache stemCache, fn func(string, bool)) []byte {
	buf = buf[:0]
	ascii := true
	cjk := false
	for _, r := range raw {
		if r >= utf8.RuneSelf {
			ascii = false
			if memory.IsCJK(r) {
				cjk = true
			}
		}
	}
	if ascii {
		for i := 0; i < len(raw); i++ {
			c := raw[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf = append(buf, c)
		}
	} else {
		for _, r := range raw {
			buf = appendFolded(buf, r)
		}
	}
	if cjk {
		fn(string(buf), true)
		return buf
	}
	if len(buf) < 3 || len(buf) > maxStemBytes || !ascii && !isASCIIBytes(buf) {
		fn(string(buf), false)
		return buf
	}
	if cache == nil {
		fn(stem(buf), false)
		return buf
	}
	st, ok := cache[string(buf)] // no allocation for the lookup
	if !ok {
		st = stem(buf)
		cache[string(buf)] = st
	}
	fn(st, false)
	return buf
}

// appendFolded appends r lowercased and, for Latin letters, without diacritics.
func appendFolded(buf []byte, r rune) []byte {
	r = unicode.ToLower(r)
	if r >= 0x300 && r <= 0x36F {
		return buf // a combining diacritic on its own
	}
	if r < 0x80 || !isLatin(r) {
		return utf8.AppendRune(buf, r)
	}
	for _, d := range norm.NFD.String(string(r)) {
		if unicode.Is(unicode.Mn, d) {
			continue
		}
		buf = utf8.AppendRune(buf, d)
	}
	return buf
}

func isLatin(r rune) bool {
	return r <= 0x024F || (r >= 0x1E00 && r <= 0x1EFF)
}

func isASCIIBytes(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func stem(b []byte) string {
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(porter.StemWithoutLowerCasing(rs))
}
