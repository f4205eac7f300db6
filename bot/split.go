package bot

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxMessageRunes is Discord's limit for the content of one message.
const MaxMessageRunes = 2000

// fenceCloser is appended to a chunk that ends inside a code block, so each
// message renders on its own; its length is reserved in every chunk.
const fenceCloser = "\n```"

// SplitMessage cuts text into messages of at most limit characters (runes),
// preferring, in order, paragraph breaks, line breaks, sentence ends
// (including the Japanese 。！？, which need no following space) and spaces,
// and only cutting mid-word when a chunk has none of them in its second half,
// and then never inside a mention, custom emoji or timestamp. A code block
// that spans a cut is closed at the end of one message and reopened with the
// same language at the start of the next, so neither half renders as prose; a
// block that ends right at the cut is not reopened. Whitespace at the cuts is
// dropped; an empty or blank text yields no messages. A limit below 200 is
// raised to 200: every chunk must then carry well over a reopened fence line
// of new content, so the loop always makes progress.
func SplitMessage(text string, limit int) []string {
	limit = max(limit, 200)
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	var out []string
	for text != "" {
		text = strings.TrimLeft(text, "\r\n")
		if utf8.RuneCountInString(text) <= limit {
			if strings.TrimSpace(text) != "" {
				out = append(out, text)
			}
			break
		}
		cut := cutPoint(text, limit-len(fenceCloser))
		chunk := strings.TrimRightFunc(text[:cut], unicode.IsSpace)
		rest := text[cut:]
		if opener, open := openFence(chunk); open {
			chunk += fenceCloser
			rest = strings.TrimLeft(rest, "\r\n")
			if line, after, _ := strings.Cut(rest, "\n"); strings.TrimRight(line, " \t\r") == "```" {
				// The block ends right at the cut: its own closing fence is the one just
				// added, and the next message starts after it rather than with an empty
				// block.
				rest = after
			} else {
				rest = opener + "\n" + rest
			}
		}
		if strings.TrimSpace(chunk) != "" {
			out = append(out, chunk)
		}
		text = rest
	}
	return out
}

// cutPoint returns the byte offset at which to end a chunk of at most budget
// runes taken from the start of text (which is longer than budget).
func cutPoint(text string, budget int) int {
	end := byteOffset(text, budget)
	window := text[:end]
	// A cut in the first half would make needlessly many messages; fall back
	// to a weaker boundary instead.
	minCut := byteOffset(text, budget/2)
	if i := strings.LastIndex(window, "\n\n"); i >= minCut {
		return i + 2
	}
	if i := strings.LastIndex(window, "\n"); i >= minCut {
		return i + 1
	}
	if i := lastSentenceEnd(window); i >= minCut {
		return i
	}
	if i := strings.LastIndexFunc(window, unicode.IsSpace); i >= minCut {
		return i + 1
	}
	// A hard cut must not split a mention, custom emoji or timestamp: Discord would show
	// both halves as plain text.
	if i := markupAcross(text, end); i >= minCut {
		return i
	}
	return end
}

// discordMarkup matches a token Discord renders as a whole at the start of a string: a
// user, role or channel mention, a custom emoji or a timestamp.
var discordMarkup = regexp.MustCompile(`^<(?:@[!&]?\d+|#\d+|a?:\w+:\d+|t:-?\d+(?::[tTdDfFR])?)>`)

// maxMarkupBytes is longer than any token discordMarkup matches in practice (a custom
// emoji with a 32-character name and a 20-digit id is 57 bytes).
const maxMarkupBytes = 80

// markupAcross returns the offset of the token of Discord markup that a cut at end
// would split, or -1. Such a token has no '<' inside, so it starts at the last '<'
// before end.
func markupAcross(text string, end int) int {
	i := strings.LastIndexByte(text[max(0, end-maxMarkupBytes):end], '<')
	if i < 0 {
		return -1
	}
	i += max(0, end-maxMarkupBytes)
	if m := discordMarkup.FindStringIndex(text[i:min(len(text), i+maxMarkupBytes)]); m != nil && i+m[1] > end {
		return i
	}
	return -1
}

// lastSentenceEnd returns the offset just after the last sentence end in s,
// or -1. Latin punctuation counts only before whitespace ("3.14" and "e.g."
// inside a word are not ends); CJK punctuation always counts, because
// Japanese and Chinese put no space after it.
func lastSentenceEnd(s string) int {
	best := -1
	for i, r := range s {
		size := utf8.RuneLen(r)
		switch r {
		case '。', '！', '？', '．':
			best = i + size
		case '.', '!', '?':
			next, _ := utf8.DecodeRuneInString(s[i+size:])
			if i+size < len(s) && unicode.IsSpace(next) {
				best = i + size + utf8.RuneLen(next)
			}
		}
	}
	return best
}

// byteOffset returns the byte offset of rune n in s, or len(s).
func byteOffset(s string, n int) int {
	count := 0
	for i := range s {
		if count == n {
			return i
		}
		count++
	}
	return len(s)
}

// openFence reports whether chunk ends inside a ``` code block, and returns
// the line that opened it (with its language) so the block can be reopened.
func openFence(chunk string) (string, bool) {
	opener, open := "", false
	for line := range strings.SplitSeq(chunk, "\n") {
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		if open {
			open = false
			continue
		}
		open = true
		opener = trimmed
		// A fence line with content after the language ("```go fmt.Println()")
		// or a very long info string is reopened plainly.
		if strings.ContainsAny(opener[3:], " `") || len(opener) > 32 {
			opener = "```"
		}
	}
	return opener, open
}
