package graph

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The Japanese rules: names before honorifics, quoted titles, katakana words, and the
// gazetteer matched inside runs of kanji and kana (Japanese has no spaces between words).

// honorifics finds people named with an honorific: 田中さん, ケンくん, Kateちゃん, 山田先生.
func (l *linker) honorifics() {
	for i := range l.toks {
		t := l.toks[i]
		if l.used[i] {
			continue
		}
		var name string
		last := i
		switch {
		case t.kind == tokKanji && hasKanjiHonorific(l.text(t)) != "":
			name = strings.TrimSuffix(l.text(t), hasKanjiHonorific(l.text(t)))
		case t.kind == tokKanji || t.kind == tokKatakana || t.kind == tokWord:
			if i+1 >= len(l.toks) || l.toks[i+1].space {
				continue
			}
			n := l.toks[i+1]
			next := l.text(n)
			if !(n.kind == tokHiragana || n.kind == tokKanji) || !hasPrefixAny(next, honorificsJA) {
				continue
			}
			if t.kind == tokKanji && (strings.HasPrefix(next, "っち") || strings.HasPrefix(next, "たん")) {
				continue // 買っちゃった, 簡単: only a kana or Latin nickname takes っち and たん
			}
			name, last = l.text(t), i+1
		default:
			continue
		}
		kind := t.kind
		if kind == tokKanji {
			name = trimTimeWord(name)
			if n := utf8.RuneCountInString(name); n > 4 {
				// A name run into the word before it: keep the surname's usual two kanji.
				_, size := utf8.DecodeLastRuneInString(name)
				_, size2 := utf8.DecodeLastRuneInString(name[:len(name)-size])
				name = name[len(name)-size-size2:]
			}
		}
		if !validNameJA(name, kind, l.t) {
			continue
		}
		l.mark(i, last)
		e := Entity{Name: name, Kind: KindPerson, Surface: name}
		if kind == tokWord {
			e.Name = CanonicalPerson(name)
		}
		if p, ok := l.memberNamed(name); ok {
			e.Name, e.UserID = p.Name, p.UserID
		} else if kind != tokWord {
			for _, p := range l.people {
				if p.cjk && p.key == Normalize(name) {
					e.Name, e.UserID = p.Name, p.UserID
				}
			}
		}
		l.add(e)
	}
}

// hasKanjiHonorific returns the honorific written in kanji that ends s (山田先生), or "".
func hasKanjiHonorific(s string) string {
	for _, h := range honorificsJA {
		r, _ := utf8.DecodeRuneInString(h)
		if isKanji(r) && strings.HasSuffix(s, h) && len(s) > len(h) {
			return h
		}
	}
	return ""
}

func hasPrefixAny(s string, list []string) bool {
	for _, p := range list {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func trimTimeWord(name string) string {
	for _, w := range timeWordsJA {
		if strings.HasPrefix(name, w) && len(name) > len(w) {
			return name[len(w):]
		}
	}
	return name
}

// validNameJA reports whether name can be a person's name: not a kinship word or a role
// (お父さん, 店員さん), and at least two characters in kanji or katakana.
func validNameJA(name string, kind tokenKind, t *tables) bool {
	if name == "" || t.notNamesJA[name] {
		return false
	}
	if kind == tokWord {
		return !has(t.stopCaps, name)
	}
	n := 0
	for _, r := range name {
		if r != 'ー' {
			n++
		}
	}
	return n >= 2
}

// quotedTitles finds titles in quotes: anything in 『』; 「」 followed by a cue (を見た,
// って映画) and not by reported speech (と言った); English “…” or "…" after a cue word
// ("watching", "a game called").
func (l *linker) quotedTitles() {
	s := l.s
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		var closing rune
		switch r {
		case '『':
			closing = '』'
		case '「':
			closing = '」'
		case '“':
			closing = '”'
		case '"':
			closing = '"'
		default:
			i += n
			continue
		}
		end := strings.IndexRune(s[i+n:], closing)
		if end < 0 {
			i += n
			continue
		}
		inner := strings.TrimSpace(s[i+n : i+n+end])
		next := i + n + end + utf8.RuneLen(closing)
		kind, ok := l.quotedKind(r, inner, s[:i], s[next:])
		if ok {
			l.markSpan(i, next)
			l.add(Entity{Name: inner, Kind: kind, Surface: inner})
			i = next
			continue
		}
		i += n
	}
}

// quotedKind decides whether the quoted inner text is a title (or a game), given the text
// before and after the quotes.
func (l *linker) quotedKind(open rune, inner, before, after string) (Kind, bool) {
	runes := utf8.RuneCountInString(inner)
	if runes == 0 || runes > 60 || strings.ContainsAny(inner, "\n「『“\"") {
		return "", false
	}
	if k, ok := jaGazetteerKind(l.t, inner); ok {
		return k, true
	}
	switch open {
	case '『':
		return KindTitle, true
	case '「':
		if hasPrefixAny(after, speechCueJA) {
			return "", false
		}
		if hasPrefixAny(after, gameAfterJA) {
			return KindGame, true
		}
		if hasPrefixAny(after, titleCueJA) {
			return KindTitle, true
		}
		return "", false
	}
	// English quotes: a capitalised title of a few words after a cue.
	first, _ := utf8.DecodeRuneInString(inner)
	if !unicode.IsUpper(first) && !isCJK(first) || len(strings.Fields(inner)) > 8 {
		return "", false
	}
	words := strings.Fields(strings.ToLower(before))
	last := func(n int) string {
		if len(words) < n {
			return ""
		}
		return strings.Trim(strings.Join(words[len(words)-n:], " "), ",:")
	}
	for _, n := range []int{1, 2, 3} {
		w := last(n)
		if w == "" {
			continue
		}
		if cueIn(l.t.gameBefore, w) {
			return KindGame, true
		}
		if cueIn(l.t.titleBefore, w) {
			return KindTitle, true
		}
	}
	return "", false
}

// cueIn reports whether the lowercase words w are a cue of c.
func cueIn(c cueSet, w string) bool {
	if c.words[w] {
		return true
	}
	for _, p := range c.phrases {
		if strings.Join(p, " ") == w {
			return true
		}
	}
	return false
}

func jaGazetteerKind(t *tables, s string) (Kind, bool) {
	r, _ := utf8.DecodeRuneInString(s)
	for _, e := range t.ja[r] {
		if e.text == s {
			return e.kind, true
		}
	}
	if isASCII(s) {
		var buf [48]byte
		if low, ok := lowerASCII(buf[:], s); ok {
			first, _, _ := strings.Cut(string(low), " ")
			for _, p := range t.phrases[first] {
				if strings.Join(p.words, " ") == string(low) {
					return p.kind, true
				}
			}
		}
	}
	return "", false
}

// gazetteerJA finds the places, games and titles written in Japanese. A katakana entry must
// be a whole katakana word (タイ the country is not in タイム); a place followed by 語 or 人
// is a language or a nationality, not the place.
func (l *linker) gazetteerJA() {
	s := l.s
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		entries := l.t.ja[r]
		matched := false
		for _, e := range entries {
			if !strings.HasPrefix(s[i:], e.text) {
				continue
			}
			end := i + len(e.text)
			if isKatakana(r) {
				prev, _ := utf8.DecodeLastRuneInString(s[:i])
				next, _ := utf8.DecodeRuneInString(s[end:])
				if isKatakana(prev) || isKatakana(next) {
					continue
				}
			}
			if e.kind == KindPlace && (strings.HasPrefix(s[end:], "語") || strings.HasPrefix(s[end:], "人")) {
				continue
			}
			if l.spanUsed(i, end) {
				continue
			}
			l.markSpan(i, end)
			l.add(Entity{Name: e.text, Kind: e.kind, Surface: e.text})
			i, matched = end, true
			break
		}
		if !matched {
			i += n
		}
	}
}

// spanUsed reports whether a token inside [from, to) already belongs to an entity.
func (l *tokenScan) spanUsed(from, to int) bool {
	for i, t := range l.toks {
		if t.s < to && t.e > from && l.used[i] {
			return true
		}
	}
	return false
}

// katakana finds katakana words that are not common loanwords: names, brands and games
// (ヴァルヘイム, ジョン・スミス). The words after one say what it is: をプレイ a game, に行く a
// place; プロジェクト around it a project.
func (l *linker) katakana() {
	for i, t := range l.toks {
		if l.used[i] || t.kind != tokKatakana {
			continue
		}
		w := l.text(t)
		kind := KindOther
		for _, p := range projectJA {
			if strings.HasSuffix(w, p) && len(w) > len(p) {
				w, kind = strings.TrimSuffix(w, p), KindProject
			} else if strings.HasPrefix(w, p) && len(w) > len(p) {
				w, kind = strings.TrimPrefix(w, p), KindProject
			}
		}
		if kind != KindProject && i > 0 && !t.space && l.toks[i-1].kind == tokKatakana && projectJA[0] == l.text(l.toks[i-1]) {
			kind = KindProject
		}
		if n := utf8.RuneCountInString(strings.ReplaceAll(w, "ー", "")); n < 2 || commonKatakana(l.t, w, 0) {
			continue
		}
		after := l.s[t.e:]
		switch {
		case kind == KindProject:
		case hasPrefixAny(after, gameAfterJA):
			kind = KindGame
		case hasPrefixAny(after, placeAfterJA):
			kind = KindPlace
		case strings.ContainsAny(w, "・･") || hasPrefixAny(after, personAfterJA):
			kind = KindPerson
		}
		l.used[i] = true
		l.add(Entity{Name: w, Kind: kind, Surface: w})
	}
}

// personAfterJA follow a person written without honorific: ジョンって人, マリアが言ってた.
var personAfterJA = []string{"って人", "という人", "が言って", "が言った", "って言って", "と話", "に聞いた", "に聞いて", "に会"}

// commonKatakana reports whether w is a common loanword or a compound of at most three of
// them (ゲームサーバー).
func commonKatakana(t *tables, w string, depth int) bool {
	if t.katakanaCommon[w] {
		return true
	}
	if depth >= 2 {
		return false
	}
	for i := range w {
		if i == 0 {
			continue
		}
		if t.katakanaCommon[w[:i]] && commonKatakana(t, w[i:], depth+1) {
			return true
		}
	}
	return false
}

// cueAfterJA returns the kind Japanese words right after the Latin run ending at j point to
// (Valheimをプレイ, Lyonに住んでる), or "".
func (l *tokenScan) cueAfterJA(j int) Kind {
	if !l.beforeCJK(j) {
		return ""
	}
	after := l.s[l.toks[j].e:]
	switch {
	case hasPrefixAny(after, gameAfterJA):
		return KindGame
	case hasPrefixAny(after, placeAfterJA):
		return KindPlace
	case hasPrefixAny(after, personAfterJA):
		return KindPerson
	case hasPrefixAny(after, projectJA):
		return KindProject
	}
	return ""
}
