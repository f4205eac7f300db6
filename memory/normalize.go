package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// CollapseSpace trims s, collapses every run of Unicode white space (including the
// ideographic space U+3000 and newlines) into one ASCII space and drops the other control
// characters (NUL and the like: they only garble text, and SQLite's text functions stop
// at a NUL, so "\x00" would be empty to the database and not empty here). This is the
// storage form.
func CollapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if unicode.IsControl(r) {
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Normalize returns the dedup form of content: whitespace collapsed, NFKC-folded (so
// full-width "ＧＲＥＥＮ" and "green" agree), lowercased, and without trailing punctuation
// ("Green tea." and "green tea" are the same memory; so are "緑茶が好き。" and "緑茶が好き").
func Normalize(content string) string {
	s := CollapseSpace(content)
	if isASCII(s) {
		s = strings.ToLower(s)
	} else {
		s = foldUnicode(s)
	}
	s = strings.TrimRightFunc(s, func(r rune) bool {
		return unicode.IsPunct(r) || unicode.IsSpace(r)
	})
	return s
}

// maxFoldPasses bounds the NFKC/lowercase/collapse alternation in foldUnicode. A second
// pass is rare and a third has not been seen.
const maxFoldPasses = 4

// foldUnicode NFKC-folds, lowercases and collapses s until none of them changes it, so
// that Normalize is idempotent: NFKC can bring white space of its own ("¨" is a space and
// a combining diaeresis, "ﷺ" several words) and lowercasing can leave text NFKC would
// change again.
func foldUnicode(s string) string {
	for range maxFoldPasses {
		s = CollapseSpace(strings.ToLower(norm.NFKC.String(s)))
		if norm.NFKC.IsNormalString(s) {
			return s
		}
	}
	return s
}

// Hash is the SHA-256 (hex) of the normalized content, falling back to the lowercased
// storage form when normalization leaves nothing (content made only of punctuation).
func Hash(content string) string {
	n := Normalize(content)
	if n == "" {
		n = strings.ToLower(CollapseSpace(content))
	}
	sum := sha256.Sum256([]byte(n))
	return hex.EncodeToString(sum[:])
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// IsCJK reports whether r belongs to a script written without spaces between words (Han,
// Hiragana, Katakana, Hangul, and the long-vowel mark ー): such text is searched by
// character n-grams rather than by words.
func IsCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー'
}

// SearchText is the form of content the word index holds: NFKC-folded and lowercased, so
// full-width "ＡＰＩ" is the word "api", with a space wherever CJK text meets a Latin
// letter or a digit, so "明日のdeployは" holds the word "deploy". ASCII text is returned
// as it is (the index lowercases it anyway).
func SearchText(s string) string {
	if isASCII(s) {
		return s
	}
	s = strings.ToLower(norm.NFKC.String(s))
	var b strings.Builder
	b.Grow(len(s) + 8)
	prev := ' '
	for _, r := range s {
		if prev != ' ' && IsCJK(prev) != IsCJK(r) && isWordRune(prev) && isWordRune(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
