// Package intent recognizes what a chat message asks of the bot's memory
// without calling a model: whether the author explicitly wants something kept
// long-term (the intent gate of a chat turn), and whether the message carries
// decisions or preferences worth extracting right away (the high-signal
// trigger of conversation extraction).
//
// Both run on every message, so they are hand-written scanners over the
// normalized text: no regular expressions, and no allocation for ASCII
// messages. They read English and Japanese.
//
// English phrases match on word boundaries and only in the forms that make a
// request: "remember that I'm vegan" and "please remember my cat" match, "do
// you remember my cat?" and "I remember when" do not. Japanese has no word
// boundaries, so Japanese phrases are substrings, read together with what
// follows them: 覚えておいて matches, 覚えてる? and 覚えててくれたんだ do not.
// Both err towards a match when a form is genuinely ambiguous, because a
// false match only changes which memory tool the model is offered for one
// turn, while a miss loses what the user asked to keep.
package intent

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize returns the form the intent rules read: NFKC (so full-width
// "ＲＥＭＥＭＢＥＲ" and half-width "ﾒﾓ" read as "remember" and "メモ"),
// lowercased, with every run of white space (newlines, the ideographic space
// U+3000, …) collapsed into one ASCII space and the ends trimmed. Invalid
// UTF-8 becomes U+FFFD. Normalize is idempotent.
//
// ASCII text skips NFKC, which cannot change it, and text already in normal
// form is returned as is, without allocating.
func Normalize(s string) string {
	if isASCII(s) {
		if asciiNormalized(s) {
			return s
		}
		return normalizeASCII(s)
	}
	return normalizeUnicode(s)
}

// Explicit reports whether text explicitly asks the bot to keep something in
// long-term memory (SPEC §3 step 3). When it does, the turn must not offer
// the short-term memory tool, so what the user asked to keep goes to
// long-term memory.
//
// It recognizes, in their request forms only:
//   - English: "remember", "don't forget" (also "dont", "do not", "never"
//     and the typographic apostrophe "don’t"), "note" as a word ("note:",
//     "note that", "take note", "make a note"), "commit to memory", "for
//     future conversations", "for future reference";
//   - Japanese: 覚えておいて, 覚えといて, 覚えてて, これ(を)覚えて, それ(を)覚えて,
//     今後のために覚えて, 後で使えるように覚えて, 覚えておけ, 忘れないで, 忘れるな,
//     メモっといて, メモしといて, メモしておいて, 記憶しておいて, in kanji or
//     kana, with endings such as ね, ください, 下さい, くれ.
//
// "remember" counts when it opens a clause ("Remember, I'm vegan", "ok so
// remember this"), follows a politeness word or a request ("please
// remember", "can you remember", "I want you to remember"), or is followed by
// what to remember ("remember that …", "remember my …", "remember: …"). It
// does not count after a subject or an auxiliary ("I remember", "do you
// remember", "I can't remember"), before "when" ("remember when we …"), or
// in a short sentence ending in "?" ("remember me?"), which recalls rather
// than stores. "remembered" and "remembering" are other words.
func Explicit(text string) bool {
	_, ok := ExplicitPhrase(text)
	return ok
}

// ExplicitPhrase is Explicit that also says which phrase matched, in its
// canonical form ("don't forget" for "Don’t forget", "覚えておいて" for
// "覚えておいてね"), for logs and metrics. The phrase is one of a fixed set, so
// it never contains message content.
func ExplicitPhrase(text string) (phrase string, ok bool) {
	if isASCII(text) {
		return explicitEnglish(text)
	}
	n := Normalize(text)
	if p, ok := explicitEnglish(n); ok {
		return p, true
	}
	return explicitJapanese(n)
}

// HighSignal reports whether text is worth extracting facts from right away
// instead of waiting for the conversation buffer to fill (SPEC §4,
// conversation extraction): Explicit fires, or the text carries decision or
// preference language.
//
// English: "we decided", "decided to/on/that", "let's go with", "going
// forward", "from now on", "I prefer", "I'd rather", "I like", "I love", "I
// hate", "I don't like", "I can't stand", "my favorite", and standing rules
// with "always" or "never" after "I"/"we" or opening a clause ("never call me
// Bob"). A bare "always" or "never" mid-sentence ("you always say that",
// "never mind") does not count, nor do "I'd like" and "I would like", which
// ask for something now rather than state a preference.
//
// Japanese: 決めた, 決定, 決まり, ことにした, にしよう, 好き, 嫌い, 苦手, これから,
// 今後, 次から, 今度から, 方がいい, as substrings.
func HighSignal(text string) bool {
	if isASCII(text) {
		return signalEnglish(text)
	}
	n := Normalize(text)
	if signalEnglish(n) || signalJapanese(n) {
		return true
	}
	_, ok := explicitJapanese(n)
	return ok
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiNormalized reports whether the ASCII text s is already what
// Normalize would return.
func asciiNormalized(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			return false
		case c == ' ':
			if s[i-1] == ' ' {
				return false
			}
		case isSpace(rune(c)):
			return false
		}
	}
	return true
}

func normalizeASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isSpace(rune(c)) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// maxFoldPasses bounds the NFKC/lowercase alternation in normalizeUnicode.
// Lowercasing NFKC text almost never leaves it un-normalized, so a second
// pass is already rare and a third has not been seen.
const maxFoldPasses = 4

func normalizeUnicode(s string) string {
	t := norm.NFKC.String(s)
	for range maxFoldPasses {
		if foldedAndCollapsed(t) {
			return t
		}
		t = foldAndCollapse(t)
		if norm.NFKC.IsNormalString(t) {
			return t
		}
		t = norm.NFKC.String(t)
	}
	return t
}

// foldedAndCollapsed reports whether t is valid UTF-8 with no upper case,
// and no white space other than single inner ASCII spaces.
func foldedAndCollapsed(t string) bool {
	space := true // the start counts as a space, so a leading one fails
	for i, r := range t {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(t[i:]); size == 1 {
				return false
			}
			space = false
		case isSpace(r):
			if r != ' ' || space {
				return false
			}
			space = true
		default:
			if !caseless(r) && unicode.ToLower(r) != r {
				return false
			}
			space = false
		}
	}
	return !space || t == ""
}

// foldAndCollapse lowercases t and collapses its white space.
func foldAndCollapse(t string) string {
	var b strings.Builder
	b.Grow(len(t))
	pending := false
	for _, r := range t { // invalid UTF-8 decodes as U+FFFD
		if isSpace(r) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		if !caseless(r) {
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// caseless reports whether r is in a script without case. Han and kana have
// none, and skipping the case tables for them halves the cost of checking
// a Japanese message.
func caseless(r rune) bool {
	return r >= 0x2E80 && isCJK(r)
}
