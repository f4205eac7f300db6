package recall

import (
	"strings"
	"unicode/utf8"
)

// tenseOf reads which way a statement's undated dates lean: a plan looks ahead, a past
// tense looks back, and a statement with neither (or both) leans nowhere.
func tenseOf(s string) lean {
	future, past := enTense(s)
	if !isASCIIString(s) {
		f, p := jaTense(s)
		future, past = future || f, past || p
	}
	switch {
	case future && !past:
		return leanFuture
	case past && !future:
		return leanPast
	}
	return leanNearest
}

// enFutureWords mark a plan: the future tense, intentions and arrangements already made
// ("booked for Friday" looks ahead though "booked" is a past form). "going to" and "see
// you" do too.
var enFutureWords = toSet(`will ll shall gonna wanna plan plans planning planned scheduled booked reserved
postponed rescheduled let lets upcoming soon hope hoping intend intending`)

// enPastWords are past forms that do not end in -ed, and the words that put a statement in
// the past.
var enPastWords = toSet(`was were wasn weren did didn went had came saw met made took left ate ran gave
told said bought brought thought found began wrote spent sent lost felt kept heard paid slept ago
yesterday`)

// enNotPastEd are words ending in -ed that are not past forms, or are past forms that
// speak of the present or the future ("excited for Friday").
var enNotPastEd = toSet(`need feed seed speed indeed breed greed proceed succeed exceed embed bed red shed wed
fed led ted ned fred jed ahmed mohammed excited interested supposed prepared tired bored scared based
named related`)

// enTense looks for cues of a plan and of the past in English words.
func enTense(s string) (future, past bool) {
	prev := ""
	for w := range strings.FieldsFuncSeq(s, isNotLetter) {
		switch {
		case enFutureWords[w], w == "to" && prev == "going", w == "you" && prev == "see":
			future = true
		case enPastWords[w]:
			past = true
		case len(w) > 3 && strings.HasSuffix(w, "ed") && !enNotPastEd[w]:
			past = true
		}
		prev = w
	}
	return future, past
}

func isNotLetter(r rune) bool { return !('a' <= r && r <= 'z') && !('A' <= r && r <= 'Z') }

// jaFutureCues mark a plan in Japanese: 予定 (planned), つもり (intend), ましょう (let us),
// 楽しみ (looking forward), 今度 (next time), 予約 (booked).
var jaFutureCues = []string{"予定", "つもり", "ましょう", "楽しみ", "今度", "予約"}

// jaTense looks for cues of a plan and of the past in Japanese: a clause ending in the past
// た (行った, 食べた, でした; not また, "again", nor あした, "tomorrow"), or in a non-past
// polite ます (行きます), a volitional form (行こう, 集まろう, 会おう, しよう; not おはよう),
// a wish (行きたい), or a word of planning.
func jaTense(s string) (future, past bool) {
	for _, cue := range jaFutureCues {
		if strings.Contains(s, cue) {
			future = true
			break
		}
	}
	prev := rune(0)
	for i, r := range s {
		rest := s[i+utf8.RuneLen(r):]
		switch {
		case !endsClause(rest):
		case r == 'た' && prev != 'ま' && prev != 0 && !strings.HasSuffix(s[:i], "あし"):
			past = true
		case r == 'す' && prev == 'ま', r == 'い' && prev == 'た':
			future = true
		case r == 'う' && strings.ContainsRune("ころおよもごぼぽぞ", prev) && !strings.HasSuffix(s[:i], "おはよ"):
			future = true
		}
		prev = r
	}
	return future, past
}

// endsClause reports whether rest (what follows a verb ending) starts a new clause: the
// end of the text, punctuation, or a sentence-final particle.
func endsClause(rest string) bool {
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	switch r {
	case '。', '、', '!', '?', '.', ',', ' ', '\n', '…', 'よ', 'ね', 'な', 'わ', 'け', 'か', 'し', 'の', 'ぞ', 'ぜ':
		return true
	}
	return false
}
