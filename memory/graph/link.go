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
	tokenScan
	ctx    Context
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
		*l = linker{tokenScan: tokenScan{toks: l.toks[:0], used: l.used[:0]}, people: l.people[:0], words: l.words[:0], nameToks: l.nameToks[:0]}
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
