package graph

import "strings"

// gazetteerEN finds the known places, games, titles and tools of the English tables. A
// tool's name followed by more capitalised words names a product of it ("GitHub Actions").
func (l *linker) gazetteerEN() {
	for i := 0; i < len(l.toks); i++ {
		t := l.toks[i]
		if l.used[i] || t.kind != tokWord {
			continue
		}
		w := l.text(t)
		cands := l.phrasesFor(w)
		if bare := stripPossessive(w); bare != w {
			cands = append(cands[:len(cands):len(cands)], l.phrasesFor(bare)...)
		}
		for _, p := range cands {
			j, ok := l.matchPhrase(i, p)
			if !ok {
				continue
			}
			name, kind := p.canonical, p.kind
			if k := l.cueKind(i, j); k != "" && k != KindPerson && k != KindPlace && kind != KindPlace {
				kind = k // "the Dune movie": the cue says which of its kinds is meant
			}
			if kind == KindOther {
				for l.capWord(j+1) && l.toks[j+1].space && !l.toks[j+1].start && stripPossessive(l.text(l.toks[j])) == l.text(l.toks[j]) {
					j++
				}
				if j > i+len(p.words)-1 {
					name = trimPossessiveSpan(l.span(i, j))
				}
			}
			l.mark(i, j)
			l.add(Entity{Name: name, Kind: kind, Surface: trimPossessiveSpan(l.span(i, j))})
			i = j
			break
		}
	}
}

func trimPossessiveSpan(s string) string {
	if sp := strings.LastIndexByte(s, ' '); sp >= 0 {
		return s[:sp+1] + stripPossessive(s[sp+1:])
	}
	return stripPossessive(s)
}

func equalFold(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	if isASCII(a) && isASCII(b) {
		return false
	}
	return Normalize(a) == Normalize(b)
}

func stripPossessive(w string) string {
	for _, suf := range [...]string{"'s", "’s", "'S", "’"} {
		if len(w) > len(suf)+1 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	if len(w) > 2 && (strings.HasSuffix(w, "s'")) {
		return w[:len(w)-1]
	}
	return w
}

// capitalised finds the remaining proper nouns of Latin script: runs of capitalised words
// (with "of", "the" and the like between them), kind by the first name tables and the cue
// words around them. A lone capitalised word starting a sentence counts only when it is a
// known name or a cue follows it: otherwise it is just the first word.
func (l *linker) capitalised() {
	for i := 0; i < len(l.toks); i++ {
		if !l.capWord(i) {
			continue
		}
		j := i
		for {
			if (l.capWord(j+1) || l.softCap(j+1)) && l.toks[j+1].space && !l.toks[j+1].start {
				j++
				continue
			}
			// A connector between two capitalised words: "Bank of Japan".
			if c := j + 1; c+1 < len(l.toks) && l.toks[c].kind == tokWord && !l.used[c] && has(l.t.connectors.words, l.text(l.toks[c])) &&
				!l.toks[c].start && l.capWord(c+1) && !l.toks[c+1].start {
				j = c + 1
				continue
			}
			// A number after a name: "Persona 5", "Factorio 2".
			if n := j + 1; n < len(l.toks) && !l.used[n] && l.toks[n].kind == tokWord && l.toks[n].space && isNumber(l.text(l.toks[n])) &&
				n+1 < len(l.toks) && l.toks[n+1].kind != tokWord {
				j = n
			}
			break
		}
		l.classifyRun(i, j)
		i = j
	}
}

func isNumber(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// classifyRun decides whether the capitalised run i..j is an entity and of which kind.
func (l *linker) classifyRun(i, j int) {
	t := l.t
	first := stripPossessive(l.text(l.toks[i]))
	sentenceStart := l.toks[i].start && !l.afterCJK(i) && !l.beforeCJK(j)
	if sentenceStart && j > i && has(t.starters, first) {
		i++ // "Ask Kate": the verb starts the sentence, the name follows
		sentenceStart = false
		first = stripPossessive(l.text(l.toks[i]))
	}
	honorific := i > 0 && l.toks[i-1].kind == tokWord && has(t.honorificsEN, l.text(l.toks[i-1])) ||
		i > 1 && l.toks[i-1].kind == tokPunct && l.text(l.toks[i-1]) == "." && l.toks[i-2].kind == tokWord &&
			has(t.honorificsEN, l.text(l.toks[i-2]))
	if j > i && has(t.honorificsEN, first) {
		l.used[i] = true // "Aunt Rosa": the title is not part of the name
		i, honorific, sentenceStart = i+1, true, false
		first = stripPossessive(l.text(l.toks[i]))
	}
	// What is being read, watched or played is a title or a game whatever its words are
	// ("reading Project Hail Mary").
	if l.cueBefore(i, t.titleBefore) || l.cueBefore(i, t.gameBefore) {
		kind := KindTitle
		if l.cueBefore(i, t.gameBefore) {
			kind = KindGame
		}
		l.mark(i, j)
		l.addRun(i, j, kind)
		return
	}
	// "Project Falcon": the cue is written as part of the name.
	if j > i && has(t.projectBefore.words, first) {
		l.mark(i, j)
		l.addRun(i+1, j, KindProject)
		return
	}
	known := has(t.firstName, first)
	cue := l.cueKind(i, j)
	paired := l.pairedWithPerson(i, j)
	if sentenceStart && i == j && !known && cue == "" && !honorific && !acronym(first) && !l.personHint(j) && !paired {
		return // just the first word of a sentence
	}
	kind := KindOther
	switch {
	case honorific:
		kind = KindPerson
	case cue == KindProject || cue == KindGame || cue == KindTitle:
		kind = cue
	case known:
		kind = KindPerson
	case cue != "":
		kind = cue
	case l.personHint(j), paired:
		kind = KindPerson
	}
	l.mark(i, j)
	l.addRun(i, j, kind)
}

func acronym(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if !(w[i] >= 'A' && w[i] <= 'Z' || w[i] >= '0' && w[i] <= '9') {
			return false
		}
	}
	return true
}

// addRun adds the run i..j as an entity of kind: its words as written, a possessive
// dropped, a lone person name replaced by its nickname group's canonical name.
func (l *linker) addRun(i, j int, kind Kind) {
	if i > j {
		return
	}
	surface := trimPossessiveSpan(l.span(i, j))
	name := surface
	if strings.ContainsAny(name, "\n\t  ") {
		name = strings.Join(strings.Fields(name), " ")
	}
	e := Entity{Name: name, Kind: kind, Surface: surface}
	if kind == KindPerson || kind == KindOther {
		if p, ok := l.memberNamed(name); ok {
			e.Name, e.UserID, e.Kind = p.Name, p.UserID, KindPerson
		} else if kind == KindPerson && i == j {
			e.Name = CanonicalPerson(name)
		}
	}
	l.add(e)
}

// pairedWithPerson reports whether the run i..j is joined by "and" or "&" to a person the
// text names beyond doubt: a Discord mention, a known first name or a member's display name
// ("Tomasz and Priya run the server", "Tomasz & <@42> host tonight", "ask Priya and
// Tomasz"). People are named together; a sentence's first word rarely stands beside a name
// that way, and a comma is left out ("Yesterday, Priya said…").
func (l *linker) pairedWithPerson(i, j int) bool {
	return l.personAcross(j+1, j+2) || l.personAcross(i-1, i-2)
}

// personAcross reports whether token join is "and" or "&" and token other a person named
// beyond doubt.
func (l *linker) personAcross(join, other int) bool {
	if min(join, other) < 0 || max(join, other) >= len(l.toks) {
		return false
	}
	jt, ot := l.toks[join], l.toks[other]
	switch w := l.text(jt); {
	case jt.kind == tokWord && strings.EqualFold(w, "and"), jt.kind == tokPunct && w == "&":
	default:
		return false
	}
	if ot.kind == tokUserRef {
		return true
	}
	if ot.kind != tokWord || !ot.cap {
		return false
	}
	name := stripPossessive(l.text(ot))
	if has(l.t.firstName, name) {
		return true
	}
	_, member := l.memberNamed(name)
	return member
}
