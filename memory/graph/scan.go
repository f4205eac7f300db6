package graph

import (
	"unicode"
	"unicode/utf8"
)

// tokenKind is the class of one token of a text.
type tokenKind uint8

const (
	tokWord       tokenKind = iota + 1 // a Latin-script word: letters, digits, inner ' - . _
	tokKanji                           // a run of Han characters (々 and ヶ included)
	tokHiragana                        // a run of hiragana
	tokKatakana                        // a run of katakana (ー and ・ inside included)
	tokPunct                           // one punctuation or symbol rune
	tokUserRef                         // a Discord user mention <@id> or <@!id>
	tokChannelRef                      // a Discord channel mention <#id>
	tokHashtag                         // a channel name written #name
)

// token is one token of the text: its byte span, its class and what the rules ask of it.
type token struct {
	s, e  int
	kind  tokenKind
	start bool // the first token of a sentence
	space bool // white space separates it from the token before
	cap   bool // a word with a capital letter (Kate, iOS, NASA)
}

// tokenize splits s into tokens, appending to dst. Sentences end at . ! ? and their
// full-width forms, 。 and line breaks, except the period after an honorific or an initial
// ("Dr. Tanaka", "J. Smith").
func tokenize(dst []token, s string) []token {
	start, space := true, false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n':
			start, space = true, true
			i += n
			continue
		case unicode.IsSpace(r):
			space = true
			i += n
			continue
		}
		t := token{s: i, start: start, space: space}
		switch {
		case r == '<' && i+2 < len(s) && (s[i+1] == '@' || s[i+1] == '#'):
			if end, kind, ok := discordRef(s, i); ok {
				t.e, t.kind = end, kind
				break
			}
			t.e, t.kind = i+n, tokPunct
		case r == '#' && i+1 < len(s) && !(i > 0 && isWordByteBefore(s, i)):
			if end, ok := hashtag(s, i); ok {
				t.e, t.kind = end, tokHashtag
				break
			}
			t.e, t.kind = i+n, tokPunct
		case isKanji(r):
			t.e, t.kind = scanRun(s, i, isKanji), tokKanji
		case isHiragana(r):
			t.e, t.kind = scanRun(s, i, isHiragana), tokHiragana
		case isKatakana(r):
			t.e, t.kind = scanKatakana(s, i), tokKatakana
		case isWordRune(r):
			t.e, t.kind = scanWord(s, i), tokWord
			t.cap = hasUpper(s[t.s:t.e])
		default:
			t.e, t.kind = i+n, tokPunct
		}
		dst = append(dst, t)
		i = t.e
		start, space = false, false
		if t.kind == tokPunct && endsSentence(r) && !(r == '.' && len(dst) > 1 && abbreviation(s, dst[len(dst)-2])) {
			start = true
		}
	}
	return dst
}

func endsSentence(r rune) bool {
	switch r {
	case '.', '!', '?', '。', '！', '？', '…', ';':
		return true
	}
	return false
}

// abbreviation reports whether a period after t does not end a sentence: t is an English
// honorific (Dr, Ms) or a single capital letter (an initial).
func abbreviation(s string, t token) bool {
	if t.kind != tokWord {
		return false
	}
	w := s[t.s:t.e]
	if len(w) == 1 && w[0] >= 'A' && w[0] <= 'Z' {
		return true
	}
	return has(vocab().honorificsEN, w)
}

// discordRef reads <@id>, <@!id> or <#id> at i.
func discordRef(s string, i int) (end int, kind tokenKind, ok bool) {
	j := i + 2
	kind = tokUserRef
	if s[i+1] == '#' {
		kind = tokChannelRef
	} else if j < len(s) && s[j] == '!' {
		j++
	}
	d := j
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == d || j >= len(s) || s[j] != '>' {
		return 0, 0, false
	}
	return j + 1, kind, true
}

// hashtag reads a channel name #name at i: letters, digits, - and _, with at least one
// letter (#42 is a memory number, not a channel). Latin and Japanese do not mix in one
// name, and a particle after a Japanese name ends it (#雑談で is #雑談; #お知らせ stays
// whole).
func hashtag(s string, i int) (int, bool) {
	j, letter, latin := i+1, false, false
	prev := rune(0)
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == 'ー') {
			break
		}
		if unicode.IsLetter(r) {
			if !letter {
				latin = !isCJK(r)
			} else if latin == isCJK(r) {
				break
			}
			if isHiragana(r) && prev != 0 && !isHiragana(prev) && isParticle(r) {
				break
			}
			letter = true
		}
		prev = r
		j += n
	}
	return j, letter && j > i+1
}

// isParticle reports whether r is a one-kana particle that follows a noun (で, に, を…).
func isParticle(r rune) bool {
	switch r {
	case 'で', 'に', 'を', 'は', 'が', 'の', 'と', 'へ', 'も', 'や':
		return true
	}
	return false
}

func isWordByteBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isWordRune(r)
}

func scanRun(s string, i int, in func(rune) bool) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !in(r) {
			break
		}
		i += n
	}
	return i
}

// scanKatakana reads a katakana run; the long-vowel mark and the middle dot (ジョン・スミス)
// belong to it when katakana follows them.
func scanKatakana(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isKatakana(r) {
			i += n
			continue
		}
		if r == '・' || r == '･' {
			if next, _ := utf8.DecodeRuneInString(s[i+n:]); isKatakana(next) {
				i += n
				continue
			}
		}
		break
	}
	return i
}

// scanWord reads a Latin-script word; an apostrophe, hyphen, underscore or period joins
// two parts of one word (Baldur's, Counter-Strike, kuro_neko, Node.js).
func scanWord(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isWordRune(r) || unicode.Is(unicode.Mn, r) {
			i += n
			continue
		}
		if r == '\'' || r == '’' || r == '-' || r == '_' || r == '.' || r == '+' {
			next, _ := utf8.DecodeRuneInString(s[i+n:])
			if isWordRune(next) && (r != '.' || unicode.IsLetter(next)) {
				i += n
				continue
			}
			if r == '+' { // C++
				i += n
				continue
			}
		}
		break
	}
	return i
}

func isWordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !isKanji(r) && !isHiragana(r) && !isKatakana(r) && r < 0x2E80
}

func isKanji(r rune) bool {
	return unicode.Is(unicode.Han, r) || r == '々' || r == 'ヶ' || r == '〆'
}

func isHiragana(r rune) bool { return r >= 0x3041 && r <= 0x309F }

func isKatakana(r rune) bool {
	return (r >= 0x30A1 && r <= 0x30FA) || r == 'ー' || (r >= 0x31F0 && r <= 0x31FF)
}

func isCJK(r rune) bool { return isKanji(r) || isHiragana(r) || isKatakana(r) }

func hasUpper(w string) bool {
	for _, r := range w {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
}
