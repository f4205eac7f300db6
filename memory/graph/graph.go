// Package graph is the pure half of kioku's knowledge graph: the inline entity linker that
// finds the people, places, projects, games, titles and channels a memory mentions (in
// English and Japanese), their aliases (nicknames, spelling variants, display names), and
// the detection of decision language. It has no I/O: the store (ltm) runs it inside a
// memory's write transaction and keeps the result in its graph tables.
//
// The linker only annotates. Whose memory something is, and who may see it, is decided by
// user ids and scopes elsewhere; a name the linker ties to a user id is a hint for recall
// and for the operator's graph view, never an owner.
package graph

import (
	"slices"
	"strings"
)

// Kind says what sort of thing an entity is.
type Kind string

// The kinds of entity the linker tells apart.
const (
	KindPerson  Kind = "person"
	KindPlace   Kind = "place"
	KindProject Kind = "project"
	KindGame    Kind = "game"
	KindTitle   Kind = "title"
	KindChannel Kind = "channel"
	KindOther   Kind = "other"
)

// Kinds lists every kind in a stable order.
var Kinds = []Kind{KindPerson, KindPlace, KindProject, KindGame, KindTitle, KindChannel, KindOther}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return slices.Contains(Kinds, k) }

// Person is a member the text may name: a user id and the display name they go by.
type Person struct {
	UserID string
	Name   string
}

// Context is what the linker knows besides the text: who wrote it, the members around it
// (the speakers of a conversation), and the channel it was said in.
type Context struct {
	AuthorID   string
	AuthorName string
	// People are other members who may be named (the author need not be repeated).
	People []Person
	// ChannelID and ChannelName, when known, resolve "<#id>" and "this channel".
	ChannelID   string
	ChannelName string
}

// Entity is one entity a text mentions.
type Entity struct {
	// Name is the canonical name: a person's display name when the mention resolves to a
	// member, the first name of a nickname group ("Kate" is "Katherine"), or the name as
	// written without possessive, quotes or honorific.
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Surface is the mention as written in the text.
	Surface string `json:"surface"`
	// UserID is the member a person mention names: a Discord mention, or a name that
	// matches exactly one member of the Context.
	UserID string `json:"user_id,omitempty"`
}

// Key is the entity's lookup form: its canonical name, normalized.
func (e Entity) Key() string { return Normalize(e.Name) }

// Aliases returns the normalized names the entity can be found by, its Key first: the
// form it was written in and, for a person, the canonical name of their nickname group.
func (e Entity) Aliases() []string {
	out := []string{e.Key()}
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	add(Normalize(e.Surface))
	if e.Kind == KindPerson {
		first, _, _ := strings.Cut(e.Name, " ")
		if canon := vocab().nicknameOf(first); canon != "" && !strings.Contains(e.Name, " ") {
			add(Normalize(canon))
		}
		if canon := vocab().nicknameOf(e.Surface); canon != "" {
			add(Normalize(canon))
		}
	}
	return out
}

// CanonicalPerson returns the canonical form of a person's single name: the first name of
// its nickname group ("Bill" → "William"), or the name itself.
func CanonicalPerson(name string) string {
	if strings.ContainsAny(name, " \t") {
		return name
	}
	if canon := vocab().nicknameOf(name); canon != "" {
		return canon
	}
	return name
}

// SameName reports whether two person names are one name written two ways: equal once
// normalized, in one nickname group, or spelling variants of each other (SpellingVariant).
func SameName(a, b string) bool {
	na, nb := Normalize(a), Normalize(b)
	if na == "" || nb == "" {
		return false
	}
	if na == nb {
		return true
	}
	t := vocab()
	if ca, cb := t.nickname[na], t.nickname[nb]; ca != "" && ca == cb {
		return true
	}
	return SpellingVariant(na, nb)
}

// SpellingVariant reports whether two normalized single names are spelling variants of one
// name: the same after folding the spellings English and romanised names vary in (y and i,
// ph and f, c and k, doubled letters, a silent h, th and t), or, for names of five
// letters or more, one vowel apart ("Katia" and "Katya", "Maria" and "Marie"). Consonant
// changes never count: "Jason" and "Mason" are two people.
func SpellingVariant(a, b string) bool {
	if a == b {
		return a != ""
	}
	if len(a) < 3 || len(b) < 3 || !isASCII(a) || !isASCII(b) || strings.ContainsRune(a, ' ') || strings.ContainsRune(b, ' ') {
		return false
	}
	var ka, kb [64]byte
	sa, sb := spellingKey(ka[:0], a), spellingKey(kb[:0], b)
	if string(sa) == string(sb) {
		return true
	}
	if len(a) != len(b) || len(a) < 5 {
		return false
	}
	diff := 0
	for i := 0; i < len(a); i++ {
		if a[i] == b[i] {
			continue
		}
		if !isVowel(a[i]) || !isVowel(b[i]) || i == 0 {
			return false
		}
		diff++
	}
	return diff == 1
}

// spellingKey folds a lowercase ASCII name into dst: ph→f, th→t, c→k, y→i, doubled letters
// once, a silent h (final, or after a vowel before a consonant) dropped.
func spellingKey(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 'p' && i+1 < len(s) && s[i+1] == 'h':
			c = 'f'
			i++
		case c == 't' && i+1 < len(s) && s[i+1] == 'h':
			i++
		case c == 'c':
			c = 'k'
		case c == 'y':
			c = 'i'
		case c == 'h' && (i == len(s)-1 || i > 0 && isVowel(s[i-1]) && !isVowel(s[i+1])):
			continue // Sarah and Sara, John and Jon
		}
		if n := len(dst); n > 0 && dst[n-1] == c {
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}
