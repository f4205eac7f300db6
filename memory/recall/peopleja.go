package recall

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Japanese questions name people the way friends talk: a nickname in kana with an honorific
// ("けんちゃん", "みおっち", "ダイ" for ダイスケ), while display names are often romaji
// ("kenta_m", "Mio.N") or the full name in kana. japaneseNames finds such names; NameMatches
// compares them by kana prefix and by their romaji reading.

// honorifics follow a name; the longest are tried first.
var honorifics = []string{"っちゃん", "ちゃん", "くん", "さん", "っち", "たん", "さま", "様", "君"}

// nameParticles follow a bare name ("ダイが", "ダイは", "ダイの").
var nameParticles = []string{"って", "が", "は", "の", "に", "と", "も", "へ"}

// japaneseNames returns the kana names a Japanese question mentions: a kana run of at least
// two characters before an honorific, or a katakana run before a particle. They are returned
// in hiragana (katakana folded), so ダイ and だい are one name.
func japaneseNames(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(name string) {
		name = toHiragana(name)
		if utf8.RuneCountInString(name) >= 2 && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	rs := []rune(text)
	for i := 0; i < len(rs); {
		if !isKana(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && isKana(rs[j]) {
			j++
		}
		run := string(rs[i:j])
		found := false
		for _, h := range honorifics {
			if k := strings.Index(run, h); k > 0 {
				add(run[:k])
				found = true
				break
			}
		}
		if !found && isKatakana(rs[i]) {
			// A katakana word followed by a particle or by the end of the kana run.
			k := i
			for k < j && (isKatakana(rs[k]) || rs[k] == 'ー') {
				k++
			}
			rest := string(rs[k:j])
			if k-i >= 2 && (k == j || hasAnyPrefix(rest, nameParticles)) {
				add(string(rs[i:k]))
			}
		}
		i = j
	}
	return out
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func isKana(r rune) bool {
	return unicode.In(r, unicode.Hiragana, unicode.Katakana) || r == 'ー'
}

func isKatakana(r rune) bool { return unicode.Is(unicode.Katakana, r) }

// toHiragana folds katakana to hiragana; everything else is kept.
func toHiragana(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'ァ' && r <= 'ヶ' {
			r -= 'ァ' - 'ぁ'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// japaneseNameMatches reports whether the kana name q (hiragana) may refer to someone whose
// display name has the word w: w in kana starting with q ("だい" for ダイスケ), or w in
// Latin letters starting with q's romaji reading ("けん" for kenta, "みお" for mio).
func japaneseNameMatches(q, w string) bool {
	if w == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(w)
	if isKana(first) {
		// Display-name words are folded without marks (foldName: ダ → タ), so q is too.
		return strings.HasPrefix(toHiragana(w), toHiragana(foldName(q)))
	}
	if first > unicode.MaxASCII {
		return false
	}
	rom := romaji(q)
	return len(rom) >= 3 && strings.HasPrefix(w, rom)
}

// romaji reads hiragana in Hepburn romanization; it returns "" for a character it does not
// know.
func romaji(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if i+1 < len(rs) {
			if v, ok := kanaDigraphs[string(rs[i:i+2])]; ok {
				b.WriteString(v)
				i++
				continue
			}
		}
		switch r := rs[i]; {
		case r == 'っ' && i+1 < len(rs):
			if next := kanaRomaji[rs[i+1]]; next != "" {
				b.WriteByte(next[0])
			}
		case r == 'ー':
			// a long vowel: nothing more to write
		default:
			v, ok := kanaRomaji[r]
			if !ok {
				return ""
			}
			b.WriteString(v)
		}
	}
	return b.String()
}

var kanaRomaji = func() map[rune]string {
	m := map[rune]string{}
	rows := []struct {
		kana string
		rom  []string
	}{
		{"あいうえお", []string{"a", "i", "u", "e", "o"}},
		{"かきくけこ", []string{"ka", "ki", "ku", "ke", "ko"}},
		{"がぎぐげご", []string{"ga", "gi", "gu", "ge", "go"}},
		{"さしすせそ", []string{"sa", "shi", "su", "se", "so"}},
		{"ざじずぜぞ", []string{"za", "ji", "zu", "ze", "zo"}},
		{"たちつてと", []string{"ta", "chi", "tsu", "te", "to"}},
		{"だぢづでど", []string{"da", "ji", "zu", "de", "do"}},
		{"なにぬねの", []string{"na", "ni", "nu", "ne", "no"}},
		{"はひふへほ", []string{"ha", "hi", "fu", "he", "ho"}},
		{"ばびぶべぼ", []string{"ba", "bi", "bu", "be", "bo"}},
		{"ぱぴぷぺぽ", []string{"pa", "pi", "pu", "pe", "po"}},
		{"まみむめも", []string{"ma", "mi", "mu", "me", "mo"}},
		{"やゆよ", []string{"ya", "yu", "yo"}},
		{"らりるれろ", []string{"ra", "ri", "ru", "re", "ro"}},
		{"わをん", []string{"wa", "o", "n"}},
		{"ぁぃぅぇぉ", []string{"a", "i", "u", "e", "o"}},
	}
	for _, row := range rows {
		for i, r := range []rune(row.kana) {
			m[r] = row.rom[i]
		}
	}
	return m
}()

var kanaDigraphs = func() map[string]string {
	m := map[string]string{}
	for _, base := range []struct{ kana, rom string }{
		{"き", "ky"}, {"ぎ", "gy"}, {"し", "sh"}, {"じ", "j"}, {"ち", "ch"}, {"に", "ny"}, {"ひ", "hy"},
		{"び", "by"}, {"ぴ", "py"}, {"み", "my"}, {"り", "ry"},
	} {
		for small, vowel := range map[string]string{"ゃ": "a", "ゅ": "u", "ょ": "o"} {
			m[base.kana+small] = base.rom + vowel
		}
	}
	return m
}()
