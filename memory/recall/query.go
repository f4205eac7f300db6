package recall

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/kioku-bot/kioku/memory"
)

// Plan is what recall reads out of a query's text before touching the database.
type Plan struct {
	// Terms are the query's content words (lowercased, NFKC-folded, stop words removed),
	// in order and without repeats. The FTS5 tokenizer stems them.
	Terms []string
	// Pairs are adjacent content words of the query ("game night"), matched as phrases.
	Pairs [][2]string
	// CJK are the runs of unsegmented (Han, kana, Hangul) text, NFKC-folded.
	CJK []string
	// Current is set by "now", "currently", "these days", 今, 現在…: the question asks for
	// the latest state of something that may have changed.
	Current bool
	// When is set by "when", "what date", "what time", いつ, 何時…: the answer is likely a
	// memory that states a date or time.
	When bool
	// Months lists month names the query mentions ("in september"), matched against the
	// memory's creation date.
	Months []time.Month
	// Window is the span of time the question names ("last weekend", "3 March"), resolved
	// against the time it is asked (AnalyzeAt); zero when it names none.
	Window Window
	// People are the person names the question may mention (capitalised words and the
	// words of CJK runs), folded (foldName); a candidate's author matching one gets the
	// named-person boost.
	People []string
	// Expansion are the member words of the everyday categories the question names
	// ("hobbies" → bouldering, knitting…; lexicon.go), searched as a weaker second net.
	Expansion []string
	// Common is set by "in common", "both", 共通, 二人とも…: the answer is spread over
	// several people or conversations (coverage.go).
	Common bool
}

// AnalyzeAt is Analyze for a question asked at asked (zero: now), which also resolves the
// dates it names.
func AnalyzeAt(text string, asked time.Time) Plan {
	p := Analyze(text)
	if w, ok := DateWindow(text, asked); ok {
		p.Window = w
	}
	p.People = append(queryNames(text), japaneseNames(norm.NFKC.String(text))...)
	return p
}

// Analyze turns a query's free text into a Plan.
func Analyze(text string) Plan {
	var p Plan
	s := strings.ToLower(text)
	if !isASCIIString(s) {
		s = strings.ToLower(norm.NFKC.String(s))
	}
	words := splitWords(s)
	var content, stops []string
	prevContent := false
	seen := map[string]bool{}
	for i, w := range words {
		if isCJKWord(w) {
			p.CJK = append(p.CJK, cjkRuns(w)...)
			for _, run := range splitNonCJK(w) {
				content, p.Pairs, prevContent = addTerm(run, content, p.Pairs, prevContent, seen)
			}
			prevContent = false
			continue
		}
		if m, ok := monthNames[w]; ok && !(w == "may" && !monthContext(words, i)) {
			p.Months = append(p.Months, m)
		}
		if currentWords[w] {
			p.Current = true
		}
		if whenWords[w] || (w == "what" && i+1 < len(words) && (words[i+1] == "date" || words[i+1] == "time" || words[i+1] == "day")) {
			p.When = true
		}
		if stopWords[w] || (utf8.RuneCountInString(w) == 1 && !unicode.IsDigit([]rune(w)[0])) {
			stops = append(stops, w)
			prevContent = false
			continue
		}
		content, p.Pairs, prevContent = addTerm(w, content, p.Pairs, prevContent, seen)
	}
	if strings.Contains(s, "these days") || strings.Contains(s, "any more") {
		p.Current = true
	}
	for _, run := range p.CJK {
		for _, cue := range cjkCurrentCues {
			if strings.Contains(run, cue) {
				p.Current = true
			}
		}
		for _, cue := range cjkWhenCues {
			if strings.Contains(run, cue) {
				p.When = true
			}
		}
	}
	p.Terms = content
	p.Expansion, p.Common = expandConcepts(words, p.CJK), asksInCommon(words, p.CJK)
	if len(p.Terms) == 0 && len(p.CJK) == 0 {
		// A question made only of stop words ("who was it?") still deserves an answer.
		for _, w := range stops {
			if !seen[w] {
				seen[w] = true
				p.Terms = append(p.Terms, w)
			}
		}
	}
	return p
}

func addTerm(w string, content []string, pairs [][2]string, prevContent bool, seen map[string]bool) ([]string, [][2]string, bool) {
	if prevContent && len(content) > 0 {
		pairs = append(pairs, [2]string{content[len(content)-1], w})
	}
	if !seen[w] {
		seen[w] = true
		content = append(content, w)
	} else {
		// Keep the pair chain going on a repeated word by moving it to the end.
		for i, c := range content {
			if c == w {
				content = append(append(content[:i:i], content[i+1:]...), w)
				break
			}
		}
	}
	return content, pairs, true
}

// monthContext tells "may" the month ("in may", "may 5", "may 2023") from "may" the verb.
func monthContext(words []string, i int) bool {
	if i > 0 && (words[i-1] == "in" || words[i-1] == "of" || words[i-1] == "since" || words[i-1] == "early" || words[i-1] == "late" || words[i-1] == "mid") {
		return true
	}
	if i+1 < len(words) && words[i+1] != "" && unicode.IsDigit([]rune(words[i+1])[0]) {
		return true
	}
	return false
}

// splitWords splits on anything that is not a letter, digit or mark, as FTS5's unicode61
// tokenizer does.
func splitWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
}

// cjkRuns returns the maximal runs of CJK characters in w.
func cjkRuns(w string) []string {
	return strings.FieldsFunc(w, func(r rune) bool { return !memory.IsCJK(r) })
}

// splitNonCJK returns the non-CJK words inside a mixed word ("pr出して" → "pr").
func splitNonCJK(w string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(w, memory.IsCJK) {
		if utf8.RuneCountInString(part) > 1 || (part != "" && unicode.IsDigit([]rune(part)[0])) {
			out = append(out, part)
		}
	}
	return out
}

func isCJKWord(w string) bool {
	for _, r := range w {
		if memory.IsCJK(r) {
			return true
		}
	}
	return false
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// CJKGrams returns the distinct character n-grams of the plan's CJK runs; a run shorter
// than n (but at least two characters) is returned whole.
func (p *Plan) CJKGrams(n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, run := range p.CJK {
		rs := []rune(run)
		if len(rs) < n {
			if len(rs) >= 2 && !seen[run] {
				seen[run] = true
				out = append(out, run)
			}
			continue
		}
		for i := 0; i+n <= len(rs); i++ {
			g := string(rs[i : i+n])
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// hasDateOrTime reports whether text states a date or a time of day: a month or weekday
// name, "9am", "6:30", "5/27", "14th", 5月, 3日, 15時, (土)…
func hasDateOrTime(text string) bool {
	s := strings.ToLower(text)
	words := splitWords(s)
	for i, w := range words {
		if _, ok := monthNames[w]; ok && w != "may" {
			return true
		}
		if weekdayNames[w] {
			return true
		}
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsDigit(r) {
			continue
		}
		for _, suf := range []string{"am", "pm", "st", "nd", "rd", "th", "h"} {
			if strings.HasSuffix(w, suf) && len(w) > len(suf) && allDigits(w[:len(w)-len(suf)]) {
				return true
			}
		}
		if i+1 < len(words) && (words[i+1] == "am" || words[i+1] == "pm") {
			return true
		}
	}
	for i := 0; i+1 < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' && (s[i+1] == '/' || s[i+1] == ':') && i+2 < len(s) && s[i+2] >= '0' && s[i+2] <= '9' {
			return true
		}
	}
	n := norm.NFKC.String(s)
	prevDigit := false
	for _, r := range n {
		if prevDigit && (r == '月' || r == '日' || r == '時' || r == '年') {
			return true
		}
		prevDigit = unicode.IsDigit(r)
	}
	for _, cue := range []string{"(月)", "(火)", "(水)", "(木)", "(金)", "(土)", "(日)", "曜"} {
		if strings.Contains(n, cue) {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var monthNames = map[string]time.Month{
	"january": time.January, "jan": time.January, "february": time.February, "feb": time.February,
	"march": time.March, "mar": time.March, "april": time.April, "apr": time.April, "may": time.May,
	"june": time.June, "jun": time.June, "july": time.July, "jul": time.July, "august": time.August,
	"aug": time.August, "september": time.September, "sept": time.September, "sep": time.September,
	"october": time.October, "oct": time.October, "november": time.November, "nov": time.November,
	"december": time.December, "dec": time.December,
}

var weekdayNames = map[string]bool{
	"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
	"saturday": true, "sunday": true, "mon": true, "tue": true, "tues": true, "wed": true,
	"thu": true, "thur": true, "thurs": true, "fri": true, "sat": true, "sun": true,
	"mondays": true, "tuesdays": true, "wednesdays": true, "thursdays": true, "fridays": true,
	"saturdays": true, "sundays": true, "tomorrow": true, "tonight": true, "yesterday": true,
}

var currentWords = map[string]bool{
	"now": true, "currently": true, "current": true, "nowadays": true, "anymore": true,
	"still": true, "latest": true, "today": true, "updated": true,
	// What comes next is asked about from now: a plan whose day has passed is not it.
	"next": true, "upcoming": true,
}

var whenWords = map[string]bool{"when": true, "date": true}

var cjkCurrentCues = []string{"今は", "今の", "現在", "最新", "いまは", "今って", "今何", "今いくら", "次の", "次回", "今度の"}

var cjkWhenCues = []string{"いつ", "何時", "何日", "何曜", "日程", "日付"}

// stopWords are English function words and question words. They are dropped from keyword
// queries: they match most memories, add nothing to ranking, and make FTS5 score every row.
var stopWords = toSet(`a about above after again against all am an and any are aren as at be because been
before being below between both but by can cannot could couldn did didn do does doesn doing don down during
each few for from further had hadn has hasn have haven having he her here hers herself him himself his how
i if in into is isn it its itself just let ll me more most mustn my myself no nor not of off on once only or
other ought our ours ourselves out over own re same shan she should shouldn so some such than that the
their theirs them themselves then there these they this those through to too under until up ve very was
wasn we were weren what whats when where which while who whom whose why will with won would wouldn you
your yours yourself yourselves s t d m o y ok okay also got get gets getting go going gonna wanna kind
sort thing things anyone anybody someone somebody something anything everything ever really actually
again yes yeah hey hi hello please thanks thank now currently current nowadays days these still anymore
latest today did do tell know remember say said`)

func toSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
