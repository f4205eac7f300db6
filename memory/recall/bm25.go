package recall

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
)

// BM25 parameters of ScanBM25: the keyword index's (internal/kwindex.DefaultParams), so a
// scan answering while a scope's index builds ranks like the index.
const (
	bm25K1 = 1.2
	bm25B  = 0.3
)

// ScanBM25 scores documents found by a scan of unsegmented (CJK) text: for each doc, BM25
// over grams (character n-grams, counted wherever they occur) and words (Latin words
// written inside CJK text, counted as whole words only: "api" in "明日のapiは" but not in
// "rapid"). docs are the NFKC-folded texts of every row holding at least one term, so
// document frequencies are exact; scopeSize is the number of rows in the searched scopes.
// The average length is taken over docs, a fair stand-in for the scope's. Scores are ≥ 0,
// higher is better, in the order of docs.
func ScanBM25(docs, grams, words []string, scopeSize int) []float64 {
	if len(docs) == 0 {
		return nil
	}
	terms := len(grams) + len(words)
	lens := make([]float64, len(docs))
	var totalLen int
	for i, d := range docs {
		n := utf8.RuneCountInString(d)
		lens[i] = float64(n)
		totalLen += n
	}
	avg := float64(totalLen) / float64(len(docs))
	tf := make([][]int, len(docs))
	df := make([]int, terms)
	for i, d := range docs {
		tf[i] = make([]int, terms)
		for j := range terms {
			var c int
			if j < len(grams) {
				c = strings.Count(d, grams[j])
			} else {
				c = countWholeWord(d, words[j-len(grams)])
			}
			if c > 0 {
				tf[i][j] = c
				df[j]++
			}
		}
	}
	out := make([]float64, len(docs))
	for i := range docs {
		var x float64
		for j := range terms {
			if tf[i][j] == 0 {
				continue
			}
			idf := math.Log(1 + (float64(scopeSize)-float64(df[j])+0.5)/(float64(df[j])+0.5))
			f := float64(tf[i][j])
			x += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*lens[i]/avg))
		}
		out[i] = x
	}
	return out
}

// countWholeWord counts the occurrences of a Latin word that are whole words: inside CJK
// text ("明日のdeployは") or standing alone, but not inside another word ("api" in "rapid").
// The scan reads the NFKC-folded text, so full-width ＡＰＩ counts as api.
func countWholeWord(text, word string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return n
		}
		start, end := i+j, i+j+len(word)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if !isWordRune(before) && !isWordRune(after) {
			n++
		}
		i = end
	}
}

// isWordRune reports a Latin-script letter or digit: a rune that would continue a Latin word.
func isWordRune(r rune) bool {
	return r != utf8.RuneError && !memory.IsCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
