package intent

import "unicode/utf8"

// Japanese has no spaces between words, so phrases are found as substrings
// of the normalized text. Matching skips single spaces inside a phrase
// ("覚えて おいて", "これ　覚えて" with an ideographic space) because people
// space Japanese freely in chat and normalization has already reduced every
// run of white space to one ASCII space.
//
// The verbs are matched as a stem and a continuation rather than as a list of
// finished phrases, because the continuation decides the meaning: 覚えておいて
// asks the bot to remember, 覚えてる? asks whether it does, and
// 覚えててくれたんだ thanks it for having done so.

// teVerb is a verb whose request forms are built on its te-form: 覚えて,
// メモして, 記憶して. The phrases are the forms ExplicitPhrase reports.
type teVerb struct {
	stem string // up to the te-form: "覚え", "メモし"
	// bareTe allows the plain te-form to be a request on its own, at the
	// end of a sentence ("覚えて!") or after これ/それ ("これ覚えて"). It is
	// off for メモっ, whose bare form is the topic particle in "メモって何?".
	bareTe bool

	keep      string // 覚えておいて / 覚えて置いて
	keepShort string // 覚えといて
	command   string // 覚えておけ / 覚えて置け
	commandSh string // 覚えとけ
	keepOn    string // 覚えてて
	keepIn    string // 覚えていて
	te        string // 覚えて, with a request ending or in a request position
}

func newTeVerb(stem string, bareTe bool) teVerb {
	return teVerb{
		stem:      stem,
		bareTe:    bareTe,
		keep:      stem + "ておいて",
		keepShort: stem + "といて",
		command:   stem + "ておけ",
		commandSh: stem + "とけ",
		keepOn:    stem + "てて",
		keepIn:    stem + "ていて",
		te:        stem + "て",
	}
}

// teVerbs lists the verbs whose request forms mean "remember this" or "note
// this", in kanji and kana spellings.
var teVerbs = [...]teVerb{
	newTeVerb("覚え", true),
	newTeVerb("おぼえ", true),
	newTeVerb("憶え", true),
	newTeVerb("記憶し", true),
	newTeVerb("メモし", true),
	newTeVerb("メモっ", false),
}

// forgetVerb is 忘れる, whose requests are negative: 忘れないで ("don't
// forget") and 忘れるな ("do not forget!").
type forgetVerb struct {
	stem      string // "忘れ"
	dont      string // 忘れないで
	mustNot   string // 忘れるな
	mustNotSh string // 忘れんな
	notAllow  string // 忘れちゃだめ
}

func newForgetVerb(stem string) forgetVerb {
	return forgetVerb{
		stem:      stem,
		dont:      stem + "ないで",
		mustNot:   stem + "るな",
		mustNotSh: stem + "んな",
		notAllow:  stem + "ちゃだめ",
	}
}

// forgetVerbs lists the kanji and kana spellings of 忘れる.
var forgetVerbs = [...]forgetVerb{
	newForgetVerb("忘れ"),
	newForgetVerb("わすれ"),
}

// requestEndings follow a bare te-form and make it a request: 覚えてください,
// 覚えてね, 覚えてくれる?, 覚えてほしい, 覚えてもらえる?.
var requestEndings = [...]string{
	"ください", "下さい", "くれ", "ほしい", "欲しい", "ね", "よ",
	"もらえ", "もらい", "ちょうだい", "頂戴",
}

// doneEndings turn a request form into thanks or a report of the past:
// 覚えててくれた ("you remembered"), 覚えておいてよかった ("glad I kept it in
// mind"), 忘れないでくれてありがとう.
var doneEndings = [...]string{"くれた", "くれて", "くれま", "もらった", "よかった"}

// commandNotEndings turn 覚えておけ into something else: 覚えておけば ("if
// you remember"), 覚えておける ("can remember").
var commandNotEndings = [...]string{"ば", "る"}

// stillEndings turn 忘れないで into a state: 忘れないでいる ("keep not
// forgetting"), 忘れないでいた.
var stillEndings = [...]string{"いる", "いた", "いま", "いら"}

// mustNotEndings turn 忘れるな into something else: 忘れるなんて ("to
// forget, of all things"), 忘れるなら ("if you forget"), 忘れるなぁ
// ("I keep forgetting").
var mustNotEndings = [...]string{"ん", "ら", "あ", "ぁ", "い"}

// notAllowed spells ちゃだめ ("must not") in its usual scripts.
var notAllowed = [...]string{"ちゃだめ", "ちゃダメ", "ちゃ駄目"}

// requestCues before a bare te-form make it a request even mid-sentence:
// これ覚えて, それを覚えて, 今後のために覚えて, 後で使えるように覚えて,
// ちゃんと覚えて.
var requestCues = [...]string{
	"これ", "それ", "あれ", "これを", "それを", "あれを", "これも", "それも",
	"ために", "ように", "ちゃんと", "しっかり",
}

// explicitJapanese returns the Japanese explicit-intent phrase in the
// normalized text s, if any.
func explicitJapanese(s string) (string, bool) {
	for i := 0; i < len(s); {
		r, size := decodeAt(s, i)
		switch r {
		case '覚', 'お', '憶', '記', 'メ':
			for v := range teVerbs {
				if end, ok := prefixAt(s, i, teVerbs[v].stem); ok {
					if p := teRequest(s, i, end, &teVerbs[v]); p != "" {
						return p, true
					}
				}
			}
		case '忘', 'わ':
			for v := range forgetVerbs {
				if end, ok := prefixAt(s, i, forgetVerbs[v].stem); ok {
					if p := forgetRequestJa(s, end, &forgetVerbs[v]); p != "" {
						return p, true
					}
				}
			}
		}
		i += size
	}
	return "", false
}

// teRequest judges the continuation at s[i:] of the stem of v that starts at
// s[start].
func teRequest(s string, start, i int, v *teVerb) string {
	if j, ok := prefixAnyAt(s, i, "ておいて", "て置いて"); ok && !hasAnyPrefix(s, j, doneEndings[:]) {
		return v.keep
	}
	if j, ok := prefixAt(s, i, "といて"); ok && !hasAnyPrefix(s, j, doneEndings[:]) {
		return v.keepShort
	}
	if j, ok := prefixAnyAt(s, i, "ておけ", "て置け"); ok && !hasAnyPrefix(s, j, commandNotEndings[:]) {
		return v.command
	}
	if j, ok := prefixAt(s, i, "とけ"); ok && !hasAnyPrefix(s, j, commandNotEndings[:]) {
		return v.commandSh
	}
	j, ok := prefixAt(s, i, "て")
	if !ok || hasAnyPrefix(s, j, doneEndings[:]) {
		return ""
	}
	if k, ok := prefixAt(s, j, "て"); ok {
		if hasAnyPrefix(s, k, doneEndings[:]) {
			return ""
		}
		return v.keepOn
	}
	if k, ok := prefixAt(s, j, "いて"); ok {
		if hasAnyPrefix(s, k, doneEndings[:]) {
			return ""
		}
		return v.keepIn
	}
	if hasAnyPrefix(s, j, requestEndings[:]) {
		return v.te
	}
	if !v.bareTe {
		return ""
	}
	if sentenceEndAt(s, j) {
		return v.te
	}
	// After a cue, anything but a hiragana ending keeps the request: any
	// hiragana here would be an auxiliary (覚えてる, 覚えてた, 覚えてない,
	// 覚えておく, 覚えてから) and none of those asks for anything.
	if hasAnySuffix(s, start, requestCues[:]) && !hiraganaAt(s, j) {
		return v.te
	}
	return ""
}

// forgetRequestJa judges the continuation at s[i:] of a stem of 忘れる.
func forgetRequestJa(s string, i int, v *forgetVerb) string {
	if j, ok := prefixAt(s, i, "ないで"); ok {
		if hasAnyPrefix(s, j, doneEndings[:]) || hasAnyPrefix(s, j, stillEndings[:]) {
			return ""
		}
		return v.dont
	}
	if j, ok := prefixAt(s, i, "るな"); ok && !hasAnyPrefix(s, j, mustNotEndings[:]) {
		return v.mustNot
	}
	if j, ok := prefixAt(s, i, "んな"); ok && !hasAnyPrefix(s, j, mustNotEndings[:]) {
		return v.mustNotSh
	}
	if _, ok := prefixAnyAt(s, i, notAllowed[:]...); ok {
		return v.notAllow
	}
	return ""
}

// jaSignals is Japanese decision and preference language for HighSignal:
// decided (決めた, 決定, 決まり, ことにした), let's go with (にしよう), like and
// dislike (好き, 嫌い, 苦手), and standing rules (これから, 今後, 次から,
// 今度から, 方がいい).
var jaSignals = [...]string{
	"決めた", "決めました", "決めよう", "決定", "決まり", "決まった",
	"にしよう", "にしましょう", "ことにし", "ことにする",
	"好き", "嫌い", "苦手",
	"これから", "今後", "次から", "今度から",
	"ほうがいい", "方がいい",
}

// signalJapanese reports whether the normalized text s holds Japanese
// decision or preference language.
func signalJapanese(s string) bool {
	for i := 0; i < len(s); {
		r, size := decodeAt(s, i)
		switch r {
		// The first rune of every entry of jaSignals; the tests check
		// that each entry is found.
		case '決', 'に', 'こ', '好', '嫌', '苦', '今', '次', 'ほ', '方':
			if _, ok := prefixAnyAt(s, i, jaSignals[:]...); ok {
				return true
			}
		}
		i += size
	}
	return false
}

// prefixAt reports whether lit occurs in s at i, allowing spaces before any
// of its runes, and returns the end of the match.
func prefixAt(s string, i int, lit string) (int, bool) {
	for j := 0; j < len(lit); j++ {
		c := lit[j]
		if utf8.RuneStart(c) {
			for i < len(s) && s[i] == ' ' {
				i++
			}
		}
		if i >= len(s) || s[i] != c {
			return 0, false
		}
		i++
	}
	return i, true
}

// prefixAnyAt is prefixAt for the first of lits that matches.
func prefixAnyAt(s string, i int, lits ...string) (int, bool) {
	for _, lit := range lits {
		if end, ok := prefixAt(s, i, lit); ok {
			return end, true
		}
	}
	return 0, false
}

// hasAnyPrefix reports whether one of lits occurs at s[i:].
func hasAnyPrefix(s string, i int, lits []string) bool {
	_, ok := prefixAnyAt(s, i, lits...)
	return ok
}

// hasAnySuffix reports whether one of lits ends just before s[end].
func hasAnySuffix(s string, end int, lits []string) bool {
	for _, lit := range lits {
		if suffixAt(s, end, lit) {
			return true
		}
	}
	return false
}

// suffixAt reports whether lit ends at s[end], allowing spaces after any of
// its runes.
func suffixAt(s string, end int, lit string) bool {
	for j := len(lit) - 1; j >= 0; j-- {
		if j == len(lit)-1 || utf8.RuneStart(lit[j+1]) {
			for end > 0 && s[end-1] == ' ' {
				end--
			}
		}
		if end == 0 || s[end-1] != lit[j] {
			return false
		}
		end--
	}
	return true
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// sentenceEndAt reports whether the text ends at s[i], after any space, or
// continues with punctuation that closes a sentence or an emoji. A comma
// does not count: 覚えて、 is usually "memorize and then …".
func sentenceEndAt(s string, i int) bool {
	i = skipSpaces(s, i)
	if i == len(s) {
		return true
	}
	r, _ := decodeAt(s, i)
	switch r {
	case '。', '.', '!', '?', '~', '〜', 'ー', '…', '♪', '☆', '★', '♡', '♥':
		return true
	}
	return r >= 0x1F000 // emoji and pictographs
}

// hiraganaAt reports whether the rune at s[i], after any space, is hiragana.
func hiraganaAt(s string, i int) bool {
	i = skipSpaces(s, i)
	if i == len(s) {
		return false
	}
	r, _ := decodeAt(s, i)
	return 0x3041 <= r && r <= 0x309F
}
