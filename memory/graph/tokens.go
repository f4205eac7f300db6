package graph

import "strings"

// tokenScan is a text read as tokens, with what the linker has already taken: the
// questions the rules ask of it (is this a capitalised word, which cue words surround
// this run, does this gazetteer phrase start here) in one place.
type tokenScan struct {
	t    *tables
	s    string
	toks []token
	used []bool // used[i]: token i already belongs to an entity
}

func (l *tokenScan) text(t token) string { return l.s[t.s:t.e] }

// span is the text from token i to token j (inclusive).
func (l *tokenScan) span(i, j int) string { return l.s[l.toks[i].s:l.toks[j].e] }

// mark marks tokens i to j (inclusive) as taken by an entity.
func (l *tokenScan) mark(i, j int) {
	for k := i; k <= j; k++ {
		l.used[k] = true
	}
}

// markSpan marks the tokens inside the byte span [from, to).
func (l *tokenScan) markSpan(from, to int) {
	for i, t := range l.toks {
		if t.s < to && t.e > from {
			l.used[i] = true
		}
	}
}

// isWord reports whether token i is the word w, in any case.
func (l *tokenScan) isWord(i int, w string) bool {
	return i >= 0 && i < len(l.toks) && l.toks[i].kind == tokWord && strings.EqualFold(l.text(l.toks[i]), w)
}

// matchWords reports whether the words of want follow one another from token i (case
// folded, a possessive allowed on the last) and returns the last token.
func (l *tokenScan) matchWords(i int, want []string) (int, bool) {
	j := i
	for k, w := range want {
		if j >= len(l.toks) || l.toks[j].kind != tokWord || l.used[j] || (k > 0 && !l.toks[j].space) {
			return 0, false
		}
		got := l.text(l.toks[j])
		if k == len(want)-1 {
			got = stripPossessive(got)
		}
		if !equalFold(got, w) {
			return 0, false
		}
		j++
	}
	return j - 1, true
}

// phrasesFor returns the gazetteer entries whose first word is w, in any case.
func (l *tokenScan) phrasesFor(w string) []phrase {
	var buf [48]byte
	if low, ok := lowerASCII(buf[:], w); ok {
		return l.t.phrases[string(low)]
	}
	return l.t.phrases[Normalize(w)]
}

// matchPhrase reports whether gazetteer entry p is written from token i.
func (l *tokenScan) matchPhrase(i int, p phrase) (int, bool) {
	j := i
	for k, w := range p.words {
		if j >= len(l.toks) || l.used[j] {
			return 0, false
		}
		t := l.toks[j]
		if t.kind != tokWord || (k > 0 && !t.space) {
			return 0, false
		}
		got := l.text(t)
		if !equalFold(got, w) && (k != len(p.words)-1 || !equalFold(stripPossessive(got), w)) {
			return 0, false
		}
		j++
	}
	j--
	if p.exact {
		// Written with the capitals of the entry: "Apex" the game, not "apex" the word.
		words := strings.Fields(p.canonical)
		for k := range words {
			if stripPossessive(l.text(l.toks[i+k])) != words[k] {
				return 0, false
			}
		}
		if l.toks[i].start && j == i && !l.followedByCue(j) && !l.precededByCue(i) {
			return 0, false // a capitalised common word starting a sentence
		}
	}
	return j, true
}

// followedByCue and precededByCue report a kind cue right after or before a run.
func (l *tokenScan) followedByCue(j int) bool {
	t := l.t
	return l.cueAfter(j, t.gameAfter) || l.cueAfter(j, t.titleAfter) || l.cueAfter(j, t.projectAfter) || l.cueAfter(j, t.personAfter)
}

func (l *tokenScan) precededByCue(i int) bool {
	t := l.t
	return l.cueBefore(i, t.gameBefore) || l.cueBefore(i, t.titleBefore) || l.cueBefore(i, t.projectBefore) ||
		l.cueBefore(i, t.placeBefore) || l.cueBefore(i, t.personBefore)
}

// cueBefore reports whether the words right before token i are one of the cues of c.
func (l *tokenScan) cueBefore(i int, c cueSet) bool {
	if i == 0 || l.toks[i-1].kind != tokWord || l.toks[i].start {
		return false
	}
	if has(c.words, l.text(l.toks[i-1])) {
		return true
	}
	for _, p := range c.phrases {
		if i-len(p) < 0 {
			continue
		}
		ok := true
		for k, w := range p {
			tk := l.toks[i-len(p)+k]
			if tk.kind != tokWord || !strings.EqualFold(l.text(tk), w) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// cueAfter reports whether the words right after token j are one of the cues of c; a
// possessive on token j counts as the cue "'s".
func (l *tokenScan) cueAfter(j int, c cueSet) bool {
	if j+1 >= len(l.toks) || l.toks[j+1].start {
		return false
	}
	n := l.toks[j+1]
	if n.kind == tokWord && has(c.words, l.text(n)) {
		return true
	}
	for _, p := range c.phrases {
		ok := true
		for k, w := range p {
			if j+1+k >= len(l.toks) {
				ok = false
				break
			}
			tk := l.toks[j+1+k]
			if !strings.EqualFold(l.text(tk), w) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// cueKind returns the kind the words around the run i..j point to, or "".
func (l *tokenScan) cueKind(i, j int) Kind {
	t := l.t
	if k := l.cueAfterJA(j); k != "" {
		return k
	}
	switch {
	case l.cueBefore(i, t.projectBefore) || l.cueAfter(j, t.projectAfter):
		return KindProject
	case l.cueBefore(i, t.gameBefore) || l.cueAfter(j, t.gameAfter):
		return KindGame
	case l.cueBefore(i, t.titleBefore) || l.cueAfter(j, t.titleAfter):
		return KindTitle
	case l.cueBefore(i, t.personBefore):
		return KindPerson
	case l.cueBefore(i, t.placeBefore) && !l.switchFrom(i):
		return KindPlace
	case l.cueAfter(j, t.personAfter):
		return KindPerson
	}
	return ""
}

// switchFrom reports "switched from" before token i: what follows is left behind, not a
// place.
func (l *tokenScan) switchFrom(i int) bool {
	return l.isWord(i-1, "from") && i > 1 && l.toks[i-2].kind == tokWord && has(l.t.switchVerbs, l.text(l.toks[i-2]))
}

// capWord reports whether token i can be part of a proper noun: an unused capitalised word
// that is not a stop word (The, Monday, API).
func (l *tokenScan) capWord(i int) bool {
	if i < 0 || i >= len(l.toks) || l.used[i] {
		return false
	}
	t := l.toks[i]
	if t.kind != tokWord || !t.cap {
		return false
	}
	w := stripPossessive(l.text(t))
	return len(w) > 1 && !has(l.t.stopCaps, w) && !isNumber(w)
}

// softCap reports whether token i is a capitalised soft stop word, which continues a name
// begun before it ("Blue Note").
func (l *tokenScan) softCap(i int) bool {
	if i < 0 || i >= len(l.toks) || l.used[i] || l.toks[i].kind != tokWord || !l.toks[i].cap {
		return false
	}
	return has(l.t.softStops, stripPossessive(l.text(l.toks[i])))
}

// personHint reports a possessive or "and I" after the run ending at j: "Marisol's cat".
func (l *tokenScan) personHint(j int) bool {
	w := l.text(l.toks[j])
	return stripPossessive(w) != w && !strings.HasSuffix(w, "s'")
}

func (l *tokenScan) afterCJK(i int) bool {
	if i == 0 || l.toks[i].space {
		return false
	}
	k := l.toks[i-1].kind
	return k == tokKanji || k == tokHiragana || k == tokKatakana
}

func (l *tokenScan) beforeCJK(j int) bool {
	if j+1 >= len(l.toks) || l.toks[j+1].space {
		return false
	}
	k := l.toks[j+1].kind
	return k == tokKanji || k == tokHiragana || k == tokKatakana
}
