package graph

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// tables are the lookup structures built once from the vocabulary (vocabulary.go).
type tables struct {
	nickname      map[string]string // folded name → canonical name of its group
	firstName     map[string]bool   // folded given names (nickname groups included)
	stopCaps      map[string]bool
	softStops     map[string]bool
	switchVerbs   map[string]bool
	starters      map[string]bool
	honorificsEN  map[string]bool
	personBefore  cueSet
	personAfter   cueSet
	placeBefore   cueSet
	gameBefore    cueSet
	gameAfter     cueSet
	titleBefore   cueSet
	titleAfter    cueSet
	projectBefore cueSet
	projectAfter  cueSet
	connectors    cueSet
	// phrases are the English gazetteer entries by their first folded word, longest first.
	phrases map[string][]phrase
	// ja are the Japanese gazetteer entries by their first rune, longest first.
	ja             map[rune][]jaEntry
	katakanaCommon map[string]bool
	notNamesJA     map[string]bool
	decisionEN     []decisionPattern
	negatorsEN     map[string]bool
}

// phrase is one gazetteer entry: its folded words, the canonical name and the kind.
type phrase struct {
	words     []string
	canonical string
	kind      Kind
	// exact entries match only when written with capitals as listed ("=Apex").
	exact bool
}

type jaEntry struct {
	text string
	kind Kind
}

// cueSet is a set of cue words and phrases; phrases are kept word by word.
type cueSet struct {
	words   map[string]bool
	phrases [][]string
}

func newCueSet(list []string) cueSet {
	c := cueSet{words: map[string]bool{}}
	for _, e := range list {
		f := strings.Fields(Normalize(e))
		if len(f) == 1 {
			c.words[f[0]] = true
		} else if len(f) > 1 {
			c.phrases = append(c.phrases, f)
		}
	}
	return c
}

func setOf(lists ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lists {
		for _, e := range l {
			m[Normalize(e)] = true
		}
	}
	return m
}

// vocab builds the tables on first use; they are read-only afterwards.
var vocab = sync.OnceValue(func() *tables {
	t := &tables{
		nickname:       map[string]string{},
		firstName:      setOf(firstNames),
		stopCaps:       setOf(stopCaps),
		softStops:      setOf(softStops),
		switchVerbs:    setOf(switchVerbs),
		starters:       setOf(sentenceStarters),
		honorificsEN:   setOf(honorificsEN),
		personBefore:   newCueSet(personBefore),
		personAfter:    newCueSet(personAfter),
		placeBefore:    newCueSet(placeBefore),
		gameBefore:     newCueSet(gameBefore),
		gameAfter:      newCueSet(gameAfter),
		titleBefore:    newCueSet(titleBefore),
		titleAfter:     newCueSet(titleAfter),
		projectBefore:  newCueSet(projectBefore),
		projectAfter:   newCueSet(projectAfter),
		connectors:     newCueSet(connectors),
		phrases:        map[string][]phrase{},
		ja:             map[rune][]jaEntry{},
		katakanaCommon: setOf(katakanaCommon),
		notNamesJA:     setOf(notNamesJA),
		negatorsEN:     setOf(decisionNegatorsEN),
	}
	for _, group := range nicknames {
		for _, name := range group {
			k := Normalize(name)
			t.firstName[k] = true
			if _, taken := t.nickname[k]; !taken {
				t.nickname[k] = group[0]
			}
		}
	}
	for _, list := range []struct {
		entries []string
		kind    Kind
	}{{places, KindPlace}, {games, KindGame}, {titles, KindTitle}, {projectWords, KindOther}} {
		for _, e := range list.entries {
			exact := strings.HasPrefix(e, "=")
			e = strings.TrimPrefix(e, "=")
			words := strings.Fields(Normalize(e))
			if len(words) == 0 {
				continue
			}
			p := phrase{words: words, canonical: e, kind: list.kind, exact: exact}
			if dupe := slices.IndexFunc(t.phrases[words[0]], func(q phrase) bool { return slices.Equal(q.words, words) }); dupe >= 0 {
				continue // the first listing of a name decides its kind
			}
			t.phrases[words[0]] = append(t.phrases[words[0]], p)
		}
	}
	for _, ps := range t.phrases {
		slices.SortStableFunc(ps, func(a, b phrase) int { return len(b.words) - len(a.words) })
	}
	for _, list := range []struct {
		entries []string
		kind    Kind
	}{{placesJA, KindPlace}, {gamesJA, KindGame}, {titlesJA, KindTitle}} {
		for _, e := range list.entries {
			r, _ := utf8.DecodeRuneInString(e)
			t.ja[r] = append(t.ja[r], jaEntry{text: e, kind: list.kind})
		}
	}
	for _, es := range t.ja {
		slices.SortStableFunc(es, func(a, b jaEntry) int { return len(b.text) - len(a.text) })
	}
	t.decisionEN = parseDecisionPatterns(decisionPhrasesEN)
	return t
})

// has reports whether the folded word w is in set, without allocating for ASCII words.
func has(set map[string]bool, w string) bool {
	var buf [48]byte
	if low, ok := lowerASCII(buf[:], w); ok {
		return set[string(low)]
	}
	return set[Normalize(w)]
}

// nicknameOf returns the canonical name of w's nickname group, or "".
func (t *tables) nicknameOf(w string) string {
	var buf [48]byte
	if low, ok := lowerASCII(buf[:], w); ok {
		return t.nickname[string(low)]
	}
	return t.nickname[Normalize(w)]
}
