package graph

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
	"golang.org/x/text/unicode/norm"
)

// DecisionImportance is the least importance a memory holding a decision is stored with: a
// decision the group took outranks the ordinary facts around it in recall.
const DecisionImportance = 0.8

// ProtectDecision marks m as a decision when its content holds decision language
// (IsDecision): its importance is raised to at least DecisionImportance and, when its type
// is the default (fact, or not set yet), it becomes a decision, which never decays. An
// explicit other type (a preference, an event) is kept. It reports whether m was marked.
func ProtectDecision(m *memory.Memory) bool {
	if !IsDecision(m.Content) {
		return false
	}
	if m.Type == "" || m.Type == memory.TypeFact {
		m.Type = memory.TypeDecision
	}
	m.Importance = max(m.Importance, DecisionImportance)
	return true
}

// IsDecision reports whether text states a decision: English "we decided", "switched from
// … to", "we'll use", "prefers X over Y", "let's go with" and the like (decisionPhrasesEN),
// Japanese 決めた, にしよう, ことにした and the like (decisionPhrasesJA). A clause that is a
// question, or negates or conditions the phrase ("we haven't decided", "if we switch to",
// 決めたい, まだ決まってない), is not a decision.
func IsDecision(text string) bool {
	text = truncate(text)
	if !isASCII(text) {
		text = norm.NFKC.String(text)
		if decisionJA(text) {
			return true
		}
	}
	return decisionEN(text, vocab())
}

// decisionPattern is one parsed English phrase.
type decisionPattern []patternWord

type patternWord struct {
	word   string // lowercase, without apostrophes
	prefix bool   // "prefer*"
	gap    bool   // "…": one to maxGap words
}

const maxGap = 6

func parseDecisionPatterns(list []string) []decisionPattern {
	out := make([]decisionPattern, 0, len(list))
	for _, p := range list {
		var pat decisionPattern
		for _, w := range strings.Fields(p) {
			switch {
			case w == "…":
				pat = append(pat, patternWord{gap: true})
			case strings.HasSuffix(w, "*"):
				pat = append(pat, patternWord{word: strings.TrimSuffix(w, "*"), prefix: true})
			default:
				pat = append(pat, patternWord{word: w})
			}
		}
		out = append(out, pat)
	}
	return out
}

// wordSpan is one word of a clause.
type wordSpan struct{ s, e int }

// decisionEN checks each English clause of text.
func decisionEN(text string, t *tables) bool {
	var arr [128]wordSpan
	for start := 0; start < len(text); {
		end := start
		for end < len(text) && !clauseEnd(text[end]) {
			end++
		}
		clause := text[start:end]
		question := end < len(text) && text[end] == '?'
		start = end + 1
		if question || len(clause) < 5 {
			continue
		}
		words := clauseWords(arr[:0], clause)
		if decidedIn(clause, words, t) {
			return true
		}
	}
	return false
}

func clauseEnd(c byte) bool {
	return c == '.' || c == '!' || c == '?' || c == ';' || c == '\n'
}

// clauseWords splits a clause into words: runs of letters, digits and apostrophes.
func clauseWords(dst []wordSpan, s string) []wordSpan {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			i += n
			continue
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’') {
				break
			}
			j += n
		}
		dst = append(dst, wordSpan{i, j})
		i = j
	}
	return dst
}

// decidedIn reports whether a pattern matches the words of clause without a negator in
// the three words before it.
func decidedIn(clause string, words []wordSpan, t *tables) bool {
	for _, pat := range t.decisionEN {
		for k := range words {
			if !matchPattern(clause, words, k, pat) {
				continue
			}
			negated := false
			for b := max(0, k-3); b < k; b++ {
				if negatorWord(clause[words[b].s:words[b].e], t) {
					negated = true
					break
				}
			}
			if !negated {
				return true
			}
		}
	}
	return false
}

func matchPattern(clause string, words []wordSpan, k int, pat decisionPattern) bool {
	if len(pat) == 0 {
		return true
	}
	p := pat[0]
	if p.gap {
		for g := 1; g <= maxGap && k+g <= len(words); g++ {
			if matchPattern(clause, words, k+g, pat[1:]) {
				return true
			}
		}
		return false
	}
	if k >= len(words) || !wordIs(clause[words[k].s:words[k].e], p) {
		return false
	}
	return matchPattern(clause, words, k+1, pat[1:])
}

// wordIs compares a word of the text with a pattern word, folding ASCII case and skipping
// apostrophes, without allocating.
func wordIs(w string, p patternWord) bool {
	j := 0
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c == '\'' {
			continue
		}
		if c == 0xE2 && i+2 < len(w) && w[i+1] == 0x80 && w[i+2] == 0x99 { // ’
			i += 2
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if j >= len(p.word) {
			return p.prefix
		}
		if c != p.word[j] {
			return false
		}
		j++
	}
	return j == len(p.word)
}

func negatorWord(w string, t *tables) bool {
	var buf [32]byte
	n := 0
	for i := 0; i < len(w) && n < len(buf); i++ {
		c := w[i]
		if c == '\'' || c >= utf8.RuneSelf {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return t.negatorsEN[string(buf[:n])]
}

// decisionJA checks each Japanese clause of text.
func decisionJA(text string) bool {
	for _, clause := range strings.FieldsFunc(text, func(r rune) bool {
		return r == '。' || r == '！' || r == '!' || r == '\n'
	}) {
		c := strings.TrimSpace(clause)
		if strings.HasSuffix(c, "?") || strings.HasSuffix(c, "？") || strings.HasSuffix(c, "か") {
			continue // a question: 〜にしようか, 決めた？
		}
		if decidedJA(clause) {
			return true
		}
	}
	return false
}

// decidedJA reports whether a decision phrase occurs in clause with no blocker over it.
func decidedJA(clause string) bool {
	for _, p := range decisionPhrasesJA {
		from, to, ok := findJA(clause, p)
		if !ok {
			continue
		}
		blocked := false
		for _, b := range decisionBlockersJA {
			lo := max(0, from-9)
			hi := min(len(clause), to+12)
			if strings.Contains(clause[lo:hi], b) {
				blocked = true
				break
			}
		}
		if !blocked {
			return true
		}
	}
	return false
}

// findJA finds phrase p in s; "…" in p stands for up to 30 bytes of anything.
func findJA(s, p string) (int, int, bool) {
	head, tail, gap := strings.Cut(p, "…")
	i := strings.Index(s, head)
	if i < 0 {
		return 0, 0, false
	}
	if !gap {
		return i, i + len(head), true
	}
	rest := s[i+len(head):]
	j := strings.Index(rest, tail)
	if j < 0 || j > 30 {
		return 0, 0, false
	}
	return i, i + len(head) + j + len(tail), true
}
