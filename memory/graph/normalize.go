package graph

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize returns the lookup form of a name: NFKC-folded (full-width "ＫＡＴＥ" is
// "KATE", half-width katakana is full-width), lowercased, Latin diacritics dropped ("Zoë"
// is "zoe", "José" is "jose"), curly apostrophes made straight, and white space collapsed.
// Entities are found by this form, so two spellings that differ only in these ways are one
// entity. Kana voicing marks are kept: ガ and カ are different sounds, not accents.
func Normalize(name string) string {
	s := name
	if !isASCII(s) {
		s = norm.NFKC.String(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case r == '’' || r == '‘':
			r = '\''
		case r >= 0xC0 && r < 0x250:
			r = foldLatin(r)
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// foldLatin drops the diacritic of a precomposed Latin letter (é → e); letters without a
// decomposition (ß, ø, æ) stay as they are.
func foldLatin(r rune) rune {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	d := norm.NFD.Bytes(buf[:n])
	base, _ := utf8.DecodeRune(d)
	if base == utf8.RuneError || base >= 0x80 && len(d) == n {
		return r
	}
	return base
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowerASCII writes the lowercase of the ASCII word w into buf and returns it, or false
// when w is not ASCII or longer than buf: the caller then folds with Normalize. Lookups in
// the vocabulary tables go through it, so scanning ASCII text allocates nothing.
func lowerASCII(buf []byte, w string) ([]byte, bool) {
	if len(w) > len(buf) {
		return nil, false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(w)], true
}
