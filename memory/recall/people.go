package recall

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// nicknames groups given names with their common short forms. It is deliberately small;
// every name in a group matches every other. (memory/graph keeps a fuller table; the two
// are meant to become one.)
var nicknames = [][]string{
	{"katherine", "catherine", "kathryn", "kate", "katie", "kat", "kathy", "cathy", "katya", "kitty"},
	{"dmitri", "dmitry", "dimitri", "dima", "mitya"},
	{"thomas", "tom", "tommy"},
	{"robert", "rob", "robbie", "bob", "bobby", "bert"},
	{"william", "will", "bill", "billy", "liam"},
	{"elizabeth", "liz", "lizzie", "beth", "betty", "eliza"},
	{"michael", "mike", "mikey", "mick"},
	{"alexander", "alexandra", "alex", "sasha", "sandy", "lexi"},
	{"james", "jim", "jimmy", "jamie"},
	{"richard", "rich", "rick", "dick"},
	{"beatrice", "beatriz", "bea", "trixie"},
	{"priyanka", "priya", "pri"},
	{"margaret", "maggie", "meg", "peggy"},
	{"edward", "ed", "eddie", "ted", "ned"},
	{"jennifer", "jen", "jenny"},
	{"christopher", "chris", "kit"},
	{"nicholas", "nick", "nicky"},
	{"daniel", "dan", "danny"},
	{"samuel", "samantha", "sam", "sammy"},
	{"joseph", "joe", "joey"},
	{"benjamin", "ben", "benny"},
	{"susan", "sue", "suzy"},
	{"anastasia", "nastya", "stacy"},
	{"yekaterina", "ekaterina", "katya", "katia"},
	{"luana", "lu"},
}

var nicknameGroups = func() map[string][]int {
	m := map[string][]int{}
	for i, g := range nicknames {
		for _, n := range g {
			m[n] = append(m[n], i)
		}
	}
	return m
}()

// foldName lowercases s and strips diacritics ("Zoë" → "zoe").
func foldName(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// nameWords splits a display name into folded words ("Katherine Liu" → katherine, liu;
// "dmitri_v" → dmitri, v).
func nameWords(s string) []string {
	return strings.FieldsFunc(foldName(s), func(r rune) bool { return !unicode.IsLetter(r) })
}

// queryNames returns the folded words of the question that may be a person's name:
// capitalised words that are not stop words, month or day names.
func queryNames(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")
		r := []rune(w)
		if len(r) < 2 || !unicode.IsUpper(r[0]) || r[0] > unicode.MaxLatin1 && !unicode.Is(unicode.Latin, r[0]) {
			continue
		}
		f := foldName(w)
		if stopWords[f] || questionWords[f] || seen[f] {
			continue
		}
		if _, ok := monthByName[f]; ok {
			continue
		}
		if _, ok := weekdays[f]; ok {
			continue
		}
		seen[f] = true
		out = append(out, f)
	}
	return out
}

// questionWords are capitalised at the start of a question but never names.
var questionWords = map[string]bool{"what": true, "who": true, "whose": true, "which": true, "where": true,
	"when": true, "why": true, "how": true, "did": true, "does": true, "do": true, "is": true, "was": true,
	"are": true, "were": true, "has": true, "have": true, "can": true, "could": true, "would": true, "should": true}

// NameMatches reports whether the question's name q (folded) may refer to someone whose
// display name has the word w (folded): the same word, a spelling variant (edit distance ≤ 1
// when both have at least five letters: "katya"/"katia"), a nickname of the same given name
// ("kate"/"katherine"), or a short form the name starts with ("pri"/"priyanka", three
// letters or more).
func NameMatches(q, w string) bool {
	if q == w {
		return true
	}
	if r, _ := utf8.DecodeRuneInString(q); isKana(r) {
		return japaneseNameMatches(q, w)
	}
	if len(q) >= 5 && len(w) >= 5 && editDistanceAtMost1(q, w) {
		return true
	}
	if len(q) >= 3 && len(w) > len(q) && strings.HasPrefix(w, q) {
		return true
	}
	for _, gi := range nicknameGroups[q] {
		for _, gj := range nicknameGroups[w] {
			if gi == gj {
				return true
			}
		}
	}
	return false
}

// namesPerson reports whether the candidate was written by a person the plan names.
func (p *Plan) namesPerson(c *Candidate) bool {
	if c.AuthorName == "" {
		return false
	}
	for _, w := range nameWords(c.AuthorName) {
		for _, q := range p.People {
			if NameMatches(q, w) {
				return true
			}
		}
	}
	return false
}

// authorsNamed remembers, for one ranking, whether each author name is a person the plan
// names: a scope's candidates share a handful of authors, and folding and matching a name
// for every candidate was most of a ranking's allocations.
type authorsNamed map[string]bool

func (a *authorsNamed) namesPerson(p *Plan, c *Candidate) bool {
	if named, ok := (*a)[c.AuthorName]; ok {
		return named
	}
	if *a == nil {
		*a = make(authorsNamed, 8)
	}
	named := p.namesPerson(c)
	(*a)[c.AuthorName] = named
	return named
}

// editDistanceAtMost1 reports whether a and b differ by at most one insertion, deletion or
// substitution.
func editDistanceAtMost1(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) < len(rb) {
		ra, rb = rb, ra
	}
	if len(ra)-len(rb) > 1 {
		return false
	}
	i, j, diff := 0, 0, 0
	for i < len(ra) && j < len(rb) {
		if ra[i] == rb[j] {
			i++
			j++
			continue
		}
		diff++
		if diff > 1 {
			return false
		}
		if len(ra) == len(rb) {
			j++
		}
		i++
	}
	return diff+(len(ra)-i) <= 1
}
