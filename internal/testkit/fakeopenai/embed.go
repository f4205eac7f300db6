package fakeopenai

import (
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// DefaultDims is the embedding size the fake returns unless told otherwise;
// 384 is the size of the small sentence-embedding models a self-hosted bot is
// likely to run, so vector code is exercised at a realistic width.
const DefaultDims = 384

// hashesPerToken spreads each token over a few dimensions so that a single
// hash collision between two unrelated words does not make them look alike.
const hashesPerToken = 3

// stopWords are dropped before hashing because they occur in almost every
// English sentence and would otherwise make unrelated texts look similar,
// which defeats the purpose of ranking tests.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "was": true,
	"were": true, "be": true, "been": true, "to": true, "of": true, "and": true,
	"or": true, "in": true, "on": true, "at": true, "for": true, "with": true,
	"it": true, "its": true, "this": true, "that": true, "i": true, "you": true,
	"he": true, "she": true, "we": true, "they": true, "my": true, "your": true,
	"me": true, "do": true, "does": true, "did": true, "what": true,
}

// EmbedText is the fake's embedding function: a signed, hashed bag of words,
// L2-normalised to unit length. It is deterministic and needs no model, yet
// texts that share words get a high cosine similarity and texts that share
// none are close to orthogonal, which is enough to test ranking.
//
// Text is lowercased and split on anything that is not a letter, digit or
// mark; common English stop words are dropped (unless nothing else is left);
// runs of Han, Hiragana or Katakana, which have no spaces, become character
// bigrams. A text without tokens still gets a unit vector, as real models
// never return the zero vector and cosine on it is undefined. dims <= 0
// means DefaultDims.
func EmbedText(text string, dims int) []float32 {
	if dims <= 0 {
		dims = DefaultDims
	}
	acc := make([]float64, dims)
	for _, tok := range tokens(text) {
		for k := range hashesPerToken {
			h := fnv.New64a()
			h.Write([]byte{byte(k)})
			h.Write([]byte(tok))
			sum := h.Sum64()
			sign := 1.0
			if sum>>63 == 1 {
				sign = -1
			}
			acc[sum%uint64(dims)] += sign
		}
	}
	var norm float64
	for _, x := range acc {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dims)
	if norm == 0 {
		// Every token cancelled out; any fixed unit vector keeps the
		// "never zero" promise.
		out[0] = 1
		return out
	}
	for i, x := range acc {
		out[i] = float32(x / norm)
	}
	return out
}

// tokens splits text the way EmbedText hashes it.
func tokens(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	var toks, stops []string
	for _, w := range words {
		if hasCJK(w) {
			toks = append(toks, bigrams(w)...)
			continue
		}
		if stopWords[w] {
			stops = append(stops, w)
			continue
		}
		toks = append(toks, w)
	}
	if len(toks) == 0 {
		toks = stops
	}
	if len(toks) == 0 {
		// The empty token gives empty and punctuation-only texts one shared,
		// stable direction.
		toks = []string{""}
	}
	return toks
}

func hasCJK(w string) bool {
	for _, r := range w {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			return true
		}
	}
	return false
}

func bigrams(w string) []string {
	rs := []rune(w)
	if len(rs) < 2 {
		return []string{w}
	}
	out := make([]string, 0, len(rs)-1)
	for i := 0; i+1 < len(rs); i++ {
		out = append(out, string(rs[i:i+2]))
	}
	return out
}

// estimateTokens approximates a token count the way the rest of the project
// budgets prompts (about four characters a token), never returning zero so
// usage accounting is visibly exercised.
func estimateTokens(chars int) int {
	return max(1, (chars+3)/4)
}
