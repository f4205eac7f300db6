package graph

import (
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// linker is the scratch state of one Link call, pooled so that linking a text with no
// entity allocates nothing but its normalized copy (and none for ASCII text).
type linker struct {
	t      *tables
	s      string
	ctx    Context
	toks   []token
	used   []bool
	out    []Entity
	people []personName
	// words holds the people's name words; nameToks is scratch for splitting names.
	words    []string
	nameToks []token
}

// personName is a member of the Context with their name split for matching.
type personName struct {
	Person
	key   string   // the normalized display name
	words []string // the display name's Latin words, as written
	cjk   bool     // the display name has CJK characters: matched as a substring
}

var linkers = sync.Pool{New: func() any { return &linker{} }}

// maxLinkInput bounds the text the linker reads; memories are at most 2000 characters,
// and the rest of anything longer is not scanned.
const maxLinkInput = 8000

// Link returns the entities text mentions, in the order they first appear, one per
// entity: people (Discord mentions, members' display names, capitalised names and names
// with Japanese honorifics), places, projects, games, titles (quoted, or after a cue like
// "watching"), channels (#general, <#id>) and other proper nouns (capitalised runs,
// katakana words that are not common loanwords). Names of the nickname table and spelling
// variants of a name already found are merged into one entity.
func Link(text string, c Context) []Entity {
	text = truncate(text)
	ascii := isASCII(text)
	if !ascii {
		text = norm.NFKC.String(text)
	}
	l := linkers.Get().(*linker)
	defer func() {
		// Nothing of the text stays in the pool: a forgotten member's words must not
		// outlive the call.
		clear(l.people)
		clear(l.words)
		*l = linker{toks: l.toks[:0], used: l.used[:0], people: l.people[:0], words: l.words[:0], nameToks: l.nameToks[:0]}
		linkers.Put(l)
	}()
	l.t, l.s, l.ctx = vocab(), text, c
	l.toks = tokenize(l.toks, text)
	if cap(l.used) < len(l.toks) {
		l.used = make([]bool, len(l.toks))
	}
	l.used = l.used[:len(l.toks)]
	for i := range l.used {
		l.used[i] = false
	}
	l.preparePeople()
	l.discordRefs()
	l.quotedTitles()
	if !ascii { // the Japanese rules have nothing to find in ASCII text
		l.honorifics()
		l.gazetteerJA()
	}
	l.gazetteerEN()
	l.members()
	if !ascii {
		l.katakana()
	}
	l.capitalised()
	l.thisChannel()
	out := l.out
	l.out = nil
	return mergeVariants(out)
}

// truncate cuts text to maxLinkInput bytes at the last space before the limit, so that no
// word is read cut in half.
func truncate(text string) string {
	if len(text) <= maxLinkInput {
		return text
	}
	cut := text[:maxLinkInput]
	if sp := strings.LastIndexAny(cut, " \n\t　"); sp > maxLinkInput/2 {
		return cut[:sp]
	}
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut
}

func (l *linker) text(t token) string { return l.s[t.s:t.e] }

// span is the text from token i to token j (inclusive).
func (l *linker) span(i, j int) string { return l.s[l.toks[i].s:l.toks[j].e] }

func (l *linker) mark(i, j int) {
	for k := i; k <= j; k++ {
		l.used[k] = true
	}
}

// add records an entity unless one with the same key (or the same member) is known.
func (l *linker) add(e Entity) {
	e.Name = strings.TrimSpace(e.Name)
	if e.Name == "" {
		return
	}
	for i, o := range l.out {
		if e.UserID != "" && o.UserID == e.UserID {
			return
		}
		if o.Kind == e.Kind || o.Kind == KindOther || e.Kind == KindOther {
			if strings.EqualFold(o.Name, e.Name) || Normalize(o.Name) == Normalize(e.Name) {
				if o.Kind == KindOther && e.Kind != KindOther {
					l.out[i].Kind = e.Kind
				}
				return
			}
		}
	}
	l.out = append(l.out, e)
}

// preparePeople splits the context's display names for matching.
func (l *linker) preparePeople() {
	l.addPerson(l.ctx.AuthorID, l.ctx.AuthorName)
	for _, p := range l.ctx.People {
		if p.UserID != l.ctx.AuthorID || l.ctx.AuthorName == "" {
			l.addPerson(p.UserID, p.Name)
		}
	}
}

func (l *linker) addPerson(id, name string) {
	name = trimDecoration(name)
	if id == "" || name == "" {
		return
	}
	pn := personName{Person: Person{UserID: id, Name: name}}
	for _, r := range name {
		if isCJK(r) {
			pn.cjk = true
			pn.key = Normalize(name)
			break
		}
	}
	l.nameToks = tokenize(l.nameToks[:0], name)
	from := len(l.words)
	for _, t := range l.nameToks {
		if t.kind == tokWord {
			l.words = append(l.words, name[t.s:t.e])
		}
	}
	pn.words = l.words[from:len(l.words):len(l.words)]
	l.people = append(l.people, pn)
}

// trimDecoration drops what people put around a display name: emoji and symbols at its
// ends, and a suffix after a separator ("Kate | she/her", "Bob (away)").
func trimDecoration(name string) string {
	if i := strings.IndexAny(name, "|(/[【"); i > 0 {
		name = name[:i]
	}
	return strings.TrimFunc(name, func(r rune) bool { return !isWordRune(r) && !isCJK(r) })
}

// discordRefs turns <@id>, <#id> and #name into entities.
func (l *linker) discordRefs() {
	for i, t := range l.toks {
		switch t.kind {
		case tokUserRef:
			id := strings.TrimLeft(l.s[t.s+2:t.e-1], "!")
			name := "<@" + id + ">"
			for _, p := range l.people {
				if p.UserID == id {
					name = p.Name
				}
			}
			l.add(Entity{Name: name, Kind: KindPerson, Surface: l.text(t), UserID: id})
		case tokChannelRef:
			id := l.s[t.s+2 : t.e-1]
			name := "<#" + id + ">"
			if id == l.ctx.ChannelID && l.ctx.ChannelName != "" {
				name = "#" + strings.TrimPrefix(l.ctx.ChannelName, "#")
			}
			l.add(Entity{Name: name, Kind: KindChannel, Surface: l.text(t)})
		case tokHashtag:
			name := l.text(t)
			if trimmed := strings.TrimSuffix(name, "チャンネル"); len(trimmed) > 1 {
				name = trimmed // #お知らせチャンネル is the channel #お知らせ
			}
			l.add(Entity{Name: strings.ToLower(name), Kind: KindChannel, Surface: l.text(t)})
		default:
			continue
		}
		l.used[i] = true
	}
}

// thisChannel names the context's channel when the text says "this channel".
func (l *linker) thisChannel() {
	if l.ctx.ChannelName == "" {
		return
	}
	found := strings.Contains(l.s, "このチャンネル")
	for i := 0; !found && i+1 < len(l.toks); i++ {
		found = l.isWord(i, "this") && l.isWord(i+1, "channel")
	}
	if found {
		name := "#" + strings.TrimPrefix(l.ctx.ChannelName, "#")
		l.add(Entity{Name: name, Kind: KindChannel, Surface: name})
	}
}

// isWord reports whether token i is the word w, in any case.
func (l *linker) isWord(i int, w string) bool {
	return i >= 0 && i < len(l.toks) && l.toks[i].kind == tokWord && strings.EqualFold(l.text(l.toks[i]), w)
}

// members finds the context's members by their display names: the whole name in any case
// ("kuro_neko"), or the first word of a longer name when capitalised ("Kate" of "Kate
// Lin"); a Japanese name anywhere in the text.
func (l *linker) members() {
	for _, p := range l.people {
		if p.cjk {
			if at := strings.Index(l.s, p.Name); at >= 0 {
				l.markSpan(at, at+len(p.Name))
				l.add(Entity{Name: p.Name, Kind: KindPerson, Surface: p.Name, UserID: p.UserID})
			}
			continue
		}
		if len(p.words) == 0 {
			continue
		}
		for i := range l.toks {
			if l.used[i] || l.toks[i].kind != tokWord {
				continue
			}
			if j, ok := l.matchWords(i, p.words); ok {
				l.mark(i, j)
				l.add(Entity{Name: p.Name, Kind: KindPerson, Surface: l.span(i, j), UserID: p.UserID})
				break
			}
			w := stripPossessive(l.text(l.toks[i]))
			if len(p.words) > 1 && l.toks[i].cap && len(w) >= 3 && strings.EqualFold(w, p.words[0]) && !has(l.t.stopCaps, w) {
				if only, ok := l.memberNamed(w); ok && only.UserID == p.UserID {
					l.used[i] = true
					l.add(Entity{Name: p.Name, Kind: KindPerson, Surface: w, UserID: p.UserID})
					break
				}
			}
		}
	}
}

// markSpan marks the tokens inside the byte span [from, to).
func (l *linker) markSpan(from, to int) {
	for i, t := range l.toks {
		if t.s < to && t.e > from {
			l.used[i] = true
		}
	}
}

// matchWords reports whether the words of want follow one another from token i (case
// folded, a possessive allowed on the last) and returns the last token.
func (l *linker) matchWords(i int, want []string) (int, bool) {
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

// phrasesFor returns the gazetteer entries whose first word is w, in any case.
func (l *linker) phrasesFor(w string) []phrase {
	var buf [48]byte
	if low, ok := lowerASCII(buf[:], w); ok {
		return l.t.phrases[string(low)]
	}
	return l.t.phrases[Normalize(w)]
}

func trimPossessiveSpan(s string) string {
	if sp := strings.LastIndexByte(s, ' '); sp >= 0 {
		return s[:sp+1] + stripPossessive(s[sp+1:])
	}
	return stripPossessive(s)
}

// matchPhrase reports whether gazetteer entry p is written from token i.
func (l *linker) matchPhrase(i int, p phrase) (int, bool) {
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
func (l *linker) followedByCue(j int) bool {
	t := l.t
	return l.cueAfter(j, t.gameAfter) || l.cueAfter(j, t.titleAfter) || l.cueAfter(j, t.projectAfter) || l.cueAfter(j, t.personAfter)
}

func (l *linker) precededByCue(i int) bool {
	t := l.t
	return l.cueBefore(i, t.gameBefore) || l.cueBefore(i, t.titleBefore) || l.cueBefore(i, t.projectBefore) ||
		l.cueBefore(i, t.placeBefore) || l.cueBefore(i, t.personBefore)
}

// cueBefore reports whether the words right before token i are one of the cues of c.
func (l *linker) cueBefore(i int, c cueSet) bool {
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
func (l *linker) cueAfter(j int, c cueSet) bool {
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
func (l *linker) cueKind(i, j int) Kind {
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
func (l *linker) switchFrom(i int) bool {
	return l.isWord(i-1, "from") && i > 1 && l.toks[i-2].kind == tokWord && has(l.t.switchVerbs, l.text(l.toks[i-2]))
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

// capWord reports whether token i can be part of a proper noun: an unused capitalised word
// that is not a stop word (The, Monday, API).
func (l *linker) capWord(i int) bool {
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
func (l *linker) softCap(i int) bool {
	if i < 0 || i >= len(l.toks) || l.used[i] || l.toks[i].kind != tokWord || !l.toks[i].cap {
		return false
	}
	return has(l.t.softStops, stripPossessive(l.text(l.toks[i])))
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
	if sentenceStart && i == j && !known && cue == "" && !honorific && !acronym(first) && !l.personHint(j) {
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
	case l.personHint(j):
		kind = KindPerson
	}
	l.mark(i, j)
	l.addRun(i, j, kind)
}

// personHint reports a possessive or "and I" after the run ending at j: "Marisol's cat".
func (l *linker) personHint(j int) bool {
	w := l.text(l.toks[j])
	return stripPossessive(w) != w && !strings.HasSuffix(w, "s'")
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

func (l *linker) afterCJK(i int) bool {
	if i == 0 || l.toks[i].space {
		return false
	}
	k := l.toks[i-1].kind
	return k == tokKanji || k == tokHiragana || k == tokKatakana
}

func (l *linker) beforeCJK(j int) bool {
	if j+1 >= len(l.toks) || l.toks[j+1].space {
		return false
	}
	k := l.toks[j+1].kind
	return k == tokKanji || k == tokHiragana || k == tokKatakana
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

// memberNamed returns the one member of the context the name can mean: their display
// name, its first word, a nickname or a spelling variant of it. Two members who fit make
// the name ambiguous, and it stays unlinked.
func (l *linker) memberNamed(name string) (Person, bool) {
	var found *personName
	for k := range l.people {
		p := &l.people[k]
		if len(p.words) == 0 {
			continue
		}
		if !(SameName(name, p.Name) || len(p.words) > 1 && SameName(name, p.words[0])) {
			continue
		}
		if found != nil && found.UserID != p.UserID {
			return Person{}, false
		}
		found = p
	}
	if found == nil {
		return Person{}, false
	}
	return found.Person, true
}

// mergeVariants merges people whose names are spelling variants of one another (Katia
// and Katya in one text): the first spelling is kept.
func mergeVariants(out []Entity) []Entity {
	for i := 0; i < len(out); i++ {
		if out[i].Kind != KindPerson {
			continue
		}
		for j := i + 1; j < len(out); j++ {
			if out[j].Kind != KindPerson || out[i].UserID != out[j].UserID && out[i].UserID != "" && out[j].UserID != "" {
				continue
			}
			if strings.Contains(out[i].Name, " ") || strings.Contains(out[j].Name, " ") || !SameName(out[i].Name, out[j].Name) {
				continue
			}
			if out[i].UserID == "" {
				out[i].UserID, out[i].Name = out[j].UserID, pickName(out[j], out[i])
			}
			out = append(out[:j], out[j+1:]...)
			j--
		}
	}
	return out
}

func pickName(withID, other Entity) string {
	if withID.UserID != "" {
		return withID.Name
	}
	return other.Name
}
