package recall

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// cue marks a kind of word a date form needs. Every question goes through the date reader
// and most name no date, so one pass over the text notes which kinds it holds, and only the
// forms that can match are tried: a text with none costs no allocation and no regexp.
type cue uint32

const (
	cueDigit     cue = 1 << iota
	cueSlash         // '/'
	cueDot           // '.'
	cueDash          // '-'
	cueMonth         // a month's name or its abbreviation
	cueWeekday       // a weekday's name
	cuePart          // early, mid, late, start, beginning, end, middle, first, second, last
	cueLastNext      // last, next
	cueRelative      // yesterday, tomorrow, today, tonight, week, weekend, month…
	cueMonthWord     // month
	cueAgo           // ago
	cueIn            // in
	cueUnit          // day(s), week(s), month(s)
	cueJapanese      // a character a Japanese date needs (日, 週, 月, 曜, 前, 後, 昨, 今, 来, 明)
	cueFold          // a character NFKC may turn into a cue (full-width digits, ㋀, ①)
)

var cueWords = func() map[string]cue {
	m := map[string]cue{
		"weekend": cueRelative, "yesterday": cueRelative, "tomorrow": cueRelative, "tmrw": cueRelative,
		"today": cueRelative, "tonight": cueRelative, "night": cueRelative, "morning": cueRelative,
		"evening": cueRelative, "afternoon": cueRelative,
		"week": cueRelative | cueUnit, "month": cueRelative | cueUnit | cueMonthWord,
		"day": cueUnit, "days": cueUnit, "weeks": cueUnit, "months": cueUnit,
		"ago": cueAgo, "in": cueIn, "next": cueLastNext, "last": cueLastNext | cuePart,
		"early": cuePart, "mid": cuePart, "late": cuePart, "start": cuePart, "beginning": cuePart,
		"end": cuePart, "middle": cuePart, "first": cuePart, "second": cuePart,
	}
	for name := range weekdays {
		m[name] = cueWeekday
	}
	for name := range monthNames {
		m[name] = cueMonth
	}
	return m
}()

// prepareDateText folds text for the date forms (NFKC, so that full-width digits read as
// digits, then lower case) and notes the cues it holds. A text with no cue, nor a character
// that folds into one, is not folded: most Japanese questions end in a full-width "？",
// which NFKC would copy the text to fold.
func prepareDateText(text string) (string, cue) {
	k := scanCues(text)
	if !canHoldDate(k) {
		return "", 0
	}
	if !isASCIIString(text) {
		text = norm.NFKC.String(text)
		if k = scanCues(text) &^ cueFold; !canHoldDate(k) {
			return "", 0
		}
	}
	return strings.ToLower(text), k
}

// canHoldDate reports whether cues k are enough for some date form to match: "in", "last"
// or "first" alone are not.
func canHoldDate(k cue) bool {
	return k&(cueDigit|cueMonth|cueWeekday|cueRelative|cueAgo|cueJapanese|cueFold) != 0 ||
		k&cueIn != 0 && k&cueUnit != 0
}

// scanCues notes the cues of s in one pass. ASCII words are looked up lower-cased in a
// buffer on the stack; the longest cue word is nine letters.
func scanCues(s string) cue {
	var k cue
	var word [9]byte
	n := 0 // letters of the current word; more than len(word) means too long to be a cue
	endWord := func() {
		if n > 0 && n <= len(word) {
			k |= cueWords[string(word[:n])]
		}
		n = 0
	}
	for i := 0; i < len(s); {
		b := s[i]
		if b >= utf8.RuneSelf {
			endWord()
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case isJapaneseDateRune(r):
				k |= cueJapanese
			case foldsIntoCue(r):
				k |= cueFold
			}
			i += size
			continue
		}
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z':
			if n < len(word) {
				word[n] = b | 0x20
			}
			n++
		default:
			endWord()
			switch {
			case '0' <= b && b <= '9':
				k |= cueDigit
			case b == '/':
				k |= cueSlash
			case b == '.':
				k |= cueDot
			case b == '-':
				k |= cueDash
			}
		}
		i++
	}
	endWord()
	if k&cueJapanese == 0 && !isASCIIString(s) {
		for _, w := range jaKanaDays {
			if strings.Contains(s, w.name) {
				k |= cueJapanese
				break
			}
		}
	}
	return k
}

// isJapaneseDateRune reports whether r is a character every Japanese date form but the
// kana words (jaKanaDays) holds one of.
func isJapaneseDateRune(r rune) bool {
	switch r {
	case '日', '週', '月', '曜', '前', '後', '昨', '今', '来', '明':
		return true
	}
	return false
}

// foldsIntoCue reports whether NFKC may turn r into a digit, a letter or a date's
// punctuation: the full-width forms of ASCII's, enclosed numbers (①, ㋀ "1月", ㏠ "1日")
// and compatibility ideographs.
func foldsIntoCue(r rune) bool {
	switch {
	case r >= '０' && r <= '９', r >= 'Ａ' && r <= 'Ｚ', r >= 'ａ' && r <= 'ｚ', r == '／', r == '．', r == '－':
		return true
	case r >= 0x2460 && r <= 0x24FF, r >= 0x3200 && r <= 0x33FF, r >= 0xF900 && r <= 0xFAFF:
		return true
	}
	return false
}
