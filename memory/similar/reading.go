package similar

import (
	"strings"
	"unicode"
	"unicode/utf8"

	porter "github.com/blevesearch/go-porterstemmer"
	"golang.org/x/text/unicode/norm"
)

// reading is what the comparison reads out of one statement.
type reading struct {
	// words are its content words, distinct: English words stemmed and with synonyms
	// folded to one form, numbers and days, and the character bigrams of Japanese kanji
	// and katakana runs (a run of one character as it is). Stop and filler words,
	// negations and hiragana (Japanese grammar) are left out.
	words []string
	// keys are the words the other statement must hold too, or it is about someone or
	// something else: names (capitalised words past a sentence's start) and relation words.
	keys []string
	// cjkKeys are the Japanese relation words in it.
	cjkKeys map[string]bool
	// capitals are its words written with a capital letter, at a sentence's start too.
	capitals map[string]bool
	// numbers and days are the numbers and the named days, months and relative days in it.
	numbers, days map[string]bool
	// flips are its negations and antonym words, as the contradiction screen reads them.
	flips tokenSet
}

// Classes of characters a statement is cut into.
const (
	classOther = iota
	classWord  // Latin letters, digits and other non-CJK letters
	classKanji
	classKatakana
	classHiragana
)

func classOf(r rune) int {
	switch {
	case unicode.Is(unicode.Han, r):
		return classKanji
	case unicode.Is(unicode.Katakana, r) || r == 'ー':
		return classKatakana
	case unicode.Is(unicode.Hiragana, r):
		return classHiragana
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '\'':
		return classWord
	}
	return classOther
}

// read reads text: NFKC-folded (full-width letters and digits become ASCII), then cut into
// runs of one class of characters.
func read(text string) reading {
	s := strings.ReplaceAll(norm.NFKC.String(text), "’", "'")
	r := reading{cjkKeys: map[string]bool{}, capitals: map[string]bool{}, numbers: map[string]bool{}, days: map[string]bool{},
		flips: contradictionTokens(s)}
	s = cjkSynonyms.Replace(s)
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			r.words = append(r.words, w)
		}
	}
	sentenceStart := true
	start, class := 0, classOther
	flush := func(end int) {
		run := s[start:end]
		switch class {
		case classWord:
			r.readWord(run, sentenceStart, add)
			sentenceStart = false
		case classKanji, classKatakana:
			r.readCJKRun(run, add)
			sentenceStart = false
		}
	}
	for i, c := range s {
		k := classOf(c)
		if k != class {
			flush(i)
			start, class = i, k
		}
		if strings.ContainsRune(".!?。！？\n", c) {
			sentenceStart = true
		}
	}
	flush(len(s))
	r.readCJKText(s, add)
	return r
}

// readWord reads one run of Latin letters and digits ("Friday's", "9pm", "doesn't").
func (r *reading) readWord(run string, sentenceStart bool, add func(string)) {
	lower := strings.ToLower(run)
	if strings.HasSuffix(lower, "n't") {
		return // a negation: read by the contradiction screen
	}
	lower = strings.TrimSuffix(strings.Trim(lower, "'"), "'s")
	if i := strings.IndexByte(lower, '\''); i >= 0 {
		lower = lower[:i] // "o'clock" keeps "o", "it'll" keeps "it": the rest is grammar
	}
	for _, part := range splitDigits(lower) {
		r.readPart(part, add)
	}
	first, _ := utf8.DecodeRuneInString(run)
	w := r.wordOf(lower)
	switch {
	case w == "" || r.days[w]:
	case relationWords[lower]:
		r.keys = append(r.keys, w)
	case unicode.IsUpper(first):
		r.capitals[w] = true
		if !sentenceStart {
			r.keys = append(r.keys, w)
		}
	}
}

// readPart reads one part of a word that is all digits or all letters.
func (r *reading) readPart(part string, add func(string)) {
	if part == "" {
		return
	}
	if d, _ := utf8.DecodeRuneInString(part); unicode.IsDigit(d) {
		r.numbers[part] = true
		add(part)
		return
	}
	if n, ok := numberWords[part]; ok {
		r.numbers[n] = true
		add(n)
		return
	}
	if w := r.wordOf(part); w != "" {
		add(w)
	}
}

// wordOf returns the content word part stands for, "" for a word that carries none; a day
// is recorded in r.days.
func (r *reading) wordOf(part string) string {
	if d, ok := dayWords[part]; ok {
		r.days[d] = true
		return d
	}
	if utf8.RuneCountInString(part) < 2 || stopTokens[part] || fillerWords[part] || negations[part] {
		return ""
	}
	if base, ok := irregularForms[part]; ok {
		part = base
	}
	st := stem(part)
	if syn, ok := synonyms[st]; ok {
		return syn
	}
	return st
}

// splitDigits cuts a word where digits meet letters ("9pm" → 9, pm) and drops an ordinal's
// ending ("3rd" → 3).
func splitDigits(w string) []string {
	var out []string
	start := 0
	for i, c := range w {
		if i > 0 && unicode.IsDigit(c) != unicode.IsDigit(rune(w[i-1])) && w[i-1] < utf8.RuneSelf {
			out = append(out, w[start:i])
			start = i
		}
	}
	out = append(out, w[start:])
	for i := 1; i < len(out); i++ {
		if d, _ := utf8.DecodeRuneInString(out[i-1]); unicode.IsDigit(d) {
			switch out[i] {
			case "st", "nd", "rd", "th":
				out[i] = ""
			}
		}
	}
	return out
}

// readCJKRun reads a run of kanji or of katakana: its character bigrams, or the run itself
// when it is one character, and the numbers its kanji numerals give before a counter.
func (r *reading) readCJKRun(run string, add func(string)) {
	rs := []rune(run)
	if len(rs) == 1 {
		add(run)
	}
	for i := 0; i+1 < len(rs); i++ {
		add(string(rs[i : i+2]))
		if n, ok := cjkNumerals[rs[i]]; ok && strings.ContainsRune(cjkCounters, rs[i+1]) {
			r.numbers[n] = true
		}
	}
}

// readCJKText finds the Japanese day and relation words anywhere in s.
func (r *reading) readCJKText(s string, add func(string)) {
	if !hasCJKRune(s) {
		return
	}
	for _, d := range cjkDayWords {
		if strings.Contains(s, d[0]) {
			r.days[d[1]] = true
			add(d[1])
		}
	}
	for _, w := range cjkRelationWords {
		if strings.Contains(s, w) {
			r.cjkKeys[w] = true
		}
	}
}

// synonyms maps the stem of every word of synonymGroups to the stem of its group's first.
var synonyms = func() map[string]string {
	m := map[string]string{}
	for _, g := range synonymGroups {
		for _, w := range g {
			m[stem(w)] = stem(g[0])
		}
	}
	return m
}()

// stem is the Porter stem of an ASCII word of three letters or more, as the keyword index
// stems; any other word is kept as it is.
func stem(w string) string {
	if len(w) < 3 || !isASCIILetters(w) {
		return w
	}
	return porter.StemString(w)
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
