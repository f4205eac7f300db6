// Package similar tells whether two memories say the same thing in other words (a
// near-duplicate: "Kenji is allergic to peanuts" / "Kenji has a peanut allergy"), and
// whether two statements contradict each other (contradiction.go). It reads words only,
// in English and Japanese, and never touches a store.
//
// A near-duplicate check must above all not call two different statements the same: a
// write it stops saves nothing. So the comparison is a cheap word overlap guarded by the
// ways a statement changes its meaning with one word: another thing ("prefers tea" /
// "prefers coffee"), another number or day, another person, a negation or an antonym. Any
// of them keeps two statements apart however many words they share.
package similar

import "unicode"

// Threshold is the least Score of two statements Compare calls similar. Past the guards,
// the words of one statement are a subset of the other's (a word in each that the other
// lacks is a substitution, never similar), so the score only bounds how much one may add:
// at 0.75 a statement of three content words may gain two more, one of six four more.
// Measured on the labelled set (testdata/pairs.json, TestLabelledPairs).
const Threshold = 0.75

// CosineThreshold is the least cosine of two memories' embeddings that lets CompareCosine
// call them similar where the words alone do not: a paraphrase in other words. Sentence
// embeddings of one statement reworded sit at 0.9 and above, while a statement with one
// detail changed (another drink, another day) usually stays under 0.9; the guards still
// refuse a changed number, day, name, person, negation or antonym whatever the cosine, and
// at most one word on each side may differ.
const CosineThreshold = 0.92

// minCosineScore is the least word overlap CompareCosine asks beside a high cosine: half
// the content words shared, so that two statements about different things that an
// embedding finds close (a topic, not a statement) stay apart.
const minCosineScore = 0.5

// Apart names what keeps two statements apart.
type Apart string

// Why two statements are not near-duplicates.
const (
	ApartNegation Apart = "negation" // one is negated and the other is not
	ApartAntonym  Apart = "antonym"  // a word in one has its antonym in the other
	ApartNumber   Apart = "number"   // they hold different numbers
	ApartDay      Apart = "day"      // they name different days, months or relative days
	ApartName     Apart = "name"     // a name or relation word of one is missing in the other
	ApartWording  Apart = "wording"  // each holds a content word the other lacks: a substitution
	ApartOverlap  Apart = "overlap"  // too few words in common
)

// Verdict is the outcome of comparing two statements.
type Verdict struct {
	// Similar is set when the two say the same thing.
	Similar bool
	// Score is the share of content words they have in common (Dice coefficient), 0–1.
	Score float64
	// Apart says what keeps them apart when Similar is false.
	Apart Apart
}

// Compare reports whether statements a and b are near-duplicates by their words.
func Compare(a, b string) Verdict {
	return compare(read(a), read(b), 0)
}

// CompareCosine is Compare for two memories whose embeddings have the given cosine: a
// pair the words leave apart by their wording alone (one word substituted on each side,
// half the words shared at least) is similar when the cosine reaches CosineThreshold.
// Every other guard holds as in Compare.
func CompareCosine(a, b string, cosine float64) Verdict {
	return compare(read(a), read(b), cosine)
}

func compare(ra, rb reading, cosine float64) Verdict {
	restA, restB := unmatched(ra.words, rb.words), unmatched(rb.words, ra.words)
	ma, mb := len(ra.words)-len(restA), len(rb.words)-len(restB)
	v := Verdict{}
	if total := len(ra.words) + len(rb.words); total > 0 {
		v.Score = float64(ma+mb) / float64(total)
	}
	extraA, extraB := len(restA), len(restB)
	switch {
	case opposed(ra.flips, rb.flips) != "":
		v.Apart = opposed(ra.flips, rb.flips)
	case !sameSet(ra.numbers, rb.numbers):
		v.Apart = ApartNumber
	case !sameSet(ra.days, rb.days):
		v.Apart = ApartDay
	case !keysHeld(ra, rb) || !keysHeld(rb, ra) || !sameSet(ra.cjkKeys, rb.cjkKeys):
		v.Apart = ApartName
	case ma < 2 || mb < 2:
		v.Apart = ApartOverlap
	case extraA > 0 && extraB > 0:
		// Past a high cosine, one word each may differ, but not a capitalised one: a name
		// at a sentence's start ("Ravi is the guild leader" / "Sara is …") is not a key.
		if cosine >= CosineThreshold && extraA == 1 && extraB == 1 && v.Score >= minCosineScore &&
			!ra.capitals[restA[0]] && !rb.capitals[restB[0]] {
			v.Similar = true
		} else {
			v.Apart = ApartWording
		}
	case v.Score >= Threshold:
		v.Similar = true
	case cosine >= CosineThreshold && v.Score >= minCosineScore:
		v.Similar = true
	default:
		v.Apart = ApartOverlap
	}
	return v
}

// unmatched returns the words of a that b does not hold (sameWord). A Japanese bigram
// that only bridges two words a run wrote together (ツア in ピーナッツアレルギー, read against
// ピーナッツ and アレルギー apart) counts as held when the bigrams on both its sides are.
func unmatched(a, b []string) []string {
	held := make([]bool, len(a))
	for i, w := range a {
		held[i] = holds(b, w)
	}
	var out []string
	for i, w := range a {
		if !held[i] && !bridges(w, a, held) {
			out = append(out, w)
		}
	}
	return out
}

// bridges reports whether the CJK bigram w joins a held word that ends with its first
// character to a held word that starts with its second.
func bridges(w string, words []string, held []bool) bool {
	rs := []rune(w)
	if len(rs) != 2 || !hasCJKRune(w) {
		return false
	}
	var before, after bool
	for i, o := range words {
		if !held[i] || o == w {
			continue
		}
		or := []rune(o)
		before = before || or[len(or)-1] == rs[0]
		after = after || or[0] == rs[1]
	}
	return before && after
}

func holds(words []string, w string) bool {
	for _, o := range words {
		if sameWord(o, w) {
			return true
		}
	}
	return false
}

// sameWord reports whether two content words are one: equal; a kanji that a bigram of
// the other holds (変 of 変わる in 変更, 匹 in 匹飼, where a run wrote two words together);
// or two long stems of one word the stemmer cut differently ("allerg" from allergic,
// "allergi" from allergy): a shared beginning of five letters or more that leaves the
// shorter at most one letter.
func sameWord(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if ra, rb := []rune(a), []rune(b); len(ra) == 1 && len(rb) == 2 && unicode.Is(unicode.Han, ra[0]) {
		return rb[0] == ra[0] || rb[1] == ra[0]
	}
	if len(a) < 5 || !isASCIILetters(a) || !isASCIILetters(b) {
		return false
	}
	p := 0
	for p < len(a) && a[p] == b[p] {
		p++
	}
	return p >= 5 && p >= len(a)-1 && len(b)-p <= 2
}

// keysHeld reports whether every key word of ra is among rb's words.
func keysHeld(ra, rb reading) bool {
	for _, k := range ra.keys {
		if !holds(rb.words, k) && !holds(rb.keys, k) {
			return false
		}
	}
	return true
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
