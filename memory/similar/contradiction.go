package similar

import (
	"slices"
	"strings"
	"unicode"
)

// Contradiction detection is a cheap, deliberately simple screen that the pipeline runs
// (SPEC §4): two statements that share at least two content words and differ by a negation
// ("Alice likes jazz" / "Alice doesn't like jazz") or by an antonym pair ("the raid is on
// Friday mornings" / "the raid is on Friday evenings") are flagged for a person to review.
// It never blocks a write; the cost of a false flag is one history row. Its negations and
// antonym pairs are also the near-duplicate check's guards (Compare): the one list of them.

// minSharedTokens is how many content words two statements must share before a negation or
// antonym between them counts as a contradiction rather than two unrelated statements.
const minSharedTokens = 2

// negations mark a statement as negated (English words; Japanese endings are found by
// cjkTokens). A "no" against a "yes" is one of them.
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "none": true, "nobody": true, "nothing": true,
	"neither": true, "nor": true, "without": true, "cannot": true, "stopped": true,
}

// antonymPairs are word pairs whose swap flips a statement's meaning.
var antonymPairs = [][2]string{
	{"like", "dislike"}, {"likes", "dislikes"}, {"liked", "disliked"},
	{"love", "hate"}, {"loves", "hates"}, {"loved", "hated"},
	{"always", "never"}, {"true", "false"},
	{"open", "closed"}, {"enabled", "disabled"}, {"enable", "disable"},
	{"allowed", "forbidden"}, {"allowed", "banned"}, {"allow", "forbid"},
	{"start", "stop"}, {"starts", "stops"}, {"increase", "decrease"},
	{"accept", "reject"}, {"accepted", "rejected"}, {"agree", "disagree"},
	{"include", "exclude"}, {"add", "remove"}, {"available", "unavailable"},
	{"before", "after"}, {"early", "late"}, {"earlier", "later"},
	{"morning", "evening"}, {"mornings", "evenings"}, {"day", "night"},
	{"more", "less"}, {"best", "worst"}, {"good", "bad"}, {"hot", "cold"},
	{"win", "lose"}, {"won", "lost"}, {"online", "offline"}, {"public", "private"},
	{"required", "optional"}, {"mandatory", "optional"}, {"prefer", "avoid"},
	{"prefers", "avoids"},
	{"allow", "deny"}, {"allows", "denies"}, {"allowed", "denied"}, {"permit", "deny"},
	{"permitted", "denied"}, {"approve", "deny"}, {"approved", "denied"},
	{"on", "off"}, {"visible", "hidden"}, {"shown", "hidden"},
	{"included", "excluded"}, {"active", "inactive"}, {"present", "absent"},
	{"好き", "嫌い"}, {"賛成", "反対"}, {"可能", "不可能"}, {"有効", "無効"},
	{"許可", "禁止"}, {"許可", "拒否"}, {"開始", "終了"}, {"得意", "苦手"}, {"朝", "夜"}, {"前", "後"},
	{"オン", "オフ"}, {"参加", "不参加"}, {"出席", "欠席"}, {"成功", "失敗"}, {"勝ち", "負け"},
	{"増加", "減少"}, {"公開", "非公開"}, {"表示", "非表示"}, {"必須", "任意"}, {"あり", "なし"},
}

// cjkAntonyms are the Japanese words of antonymPairs, longest first: a word that holds
// another (不可能 holds 可能, 非公開 holds 公開) is taken before the word it holds.
var cjkAntonyms = func() []string {
	var out []string
	for _, p := range antonymPairs {
		for _, w := range p {
			if hasCJKRune(w) && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}()

var antonymOf = func() map[string][]string {
	m := make(map[string][]string)
	for _, p := range antonymPairs {
		m[p[0]] = append(m[p[0]], p[1])
		m[p[1]] = append(m[p[1]], p[0])
	}
	return m
}()

// stopTokens carry no topic; sharing them does not make two statements about one thing.
var stopTokens = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "were": true, "be": true,
	"to": true, "of": true, "and": true, "or": true, "in": true, "on": true, "at": true, "for": true,
	"with": true, "it": true, "its": true, "this": true, "that": true, "i": true, "we": true, "they": true,
	"he": true, "she": true, "his": true, "her": true, "their": true, "our": true, "my": true, "you": true,
	"your": true, "does": true, "do": true, "did": true, "has": true, "have": true, "had": true, "as": true,
	"by": true, "from": true, "but": true, "so": true, "very": true, "really": true, "also": true,
	"now": true, "then": true, "there": true, "here": true, "any": true, "all": true, "some": true,
	"would": true, "should": true, "could": true, "than": true,
	"は": true, "が": true, "を": true, "に": true, "の": true, "で": true, "と": true, "も": true,
}

// Contradicts reports whether statements a and b look like opposite claims about the same
// thing: at least two shared content words, and a negation in one but not the other, or a
// word in one whose antonym is in the other.
func Contradicts(a, b string) bool {
	ta, tb := contradictionTokens(a), contradictionTokens(b)
	shared := 0
	for t := range ta.content {
		if tb.content[t] {
			shared++
		}
	}
	return shared >= minSharedTokens && opposed(ta, tb) != ""
}

// opposed says how statements read as ta and tb flip each other, "" when they do not: a
// negation in one but not the other (ApartNegation), or a word in one whose antonym is in
// the other (ApartAntonym).
func opposed(ta, tb tokenSet) Apart {
	if ta.negated != tb.negated {
		return ApartNegation
	}
	for w := range ta.all {
		for _, opp := range antonymOf[w] {
			if tb.all[opp] && !ta.all[opp] && !tb.all[w] {
				return ApartAntonym
			}
		}
	}
	return ""
}

type tokenSet struct {
	content map[string]bool // topic words: not stop words, negations or antonyms
	all     map[string]bool
	negated bool
}

func contradictionTokens(s string) tokenSet {
	ts := tokenSet{content: map[string]bool{}, all: map[string]bool{}}
	s = strings.ToLower(strings.ReplaceAll(s, "’", "'"))
	words := strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
	negs := 0
	for _, w := range words {
		w = strings.Trim(w, "'")
		if w == "" {
			continue
		}
		if hasCJKRune(w) {
			toks, n := cjkTokens(w)
			negs += n
			for _, t := range toks {
				ts.all[t] = true
				if !stopTokens[t] && antonymOf[t] == nil {
					ts.content[t] = true
				}
			}
			continue
		}
		ts.all[w] = true
		if negations[w] || strings.HasSuffix(w, "n't") {
			negs++
			continue
		}
		if stopTokens[w] || antonymOf[w] != nil {
			continue
		}
		ts.content[w] = true
	}
	// "not … never" cancel out; what matters is whether the statement ends up negated.
	ts.negated = negs%2 == 1
	return ts
}

// cjkTokens splits a run of unsegmented (Japanese) text into tokens: the antonym words
// found in it, then character bigrams of what is left, the usual way to compare text
// without word boundaries. Negative endings (ない, ません) are counted and removed first,
// so "好きではない" and "好き" share their topic bigrams and differ in negation.
func cjkTokens(w string) (toks []string, negations int) {
	negations = strings.Count(w, "ない") + strings.Count(w, "ません")
	rest := strings.NewReplacer("ない", " ", "ません", " ").Replace(w)
	for _, word := range cjkAntonyms {
		if strings.Contains(rest, word) {
			toks = append(toks, word)
			rest = strings.ReplaceAll(rest, word, " ")
		}
	}
	for _, part := range strings.Fields(rest) {
		rs := []rune(part)
		if len(rs) == 1 {
			toks = append(toks, part)
			continue
		}
		for i := 0; i+1 < len(rs); i++ {
			toks = append(toks, string(rs[i:i+2]))
		}
	}
	return toks, negations
}

func hasCJKRune(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			return true
		}
	}
	return false
}
