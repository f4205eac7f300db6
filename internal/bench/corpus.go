package bench

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
)

// corpus is a deterministic synthetic memory set: chat-like texts over topic vocabularies
// and vectors that look like sentence embeddings (SPEC §8) — a shared mean direction (real
// embeddings are anisotropic), topic centroids, sub-topics inside each topic, and a
// per-topic spread, so neighbourhoods have structure and "recall against exact search"
// means something.
type corpus struct {
	dims    int
	texts   []string
	authors []string
	vecs    [][]float32 // unit length
	// queries are perturbations of stored memories: a few of the memory's words and its
	// vector plus small noise; source is the memory's index.
	queries []query
	// byText maps every text (memory or query) to its vector, for the store's embedder.
	byText map[string][]float32
}

type query struct {
	text   string
	vec    []float32
	source int
}

const (
	subtopics     = 8
	vocabPerTopic = 60
	commonVocab   = 300
)

var names = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
	"mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yuki",
	"priya", "marcus", "jen", "tom", "becca", "dev", "kenji", "lou", "sam", "olu"}

func newCorpus(seed uint64, n, dims, nq int) *corpus {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	topics := min(max(n/1000, 16), 256)
	c := &corpus{dims: dims, byText: make(map[string][]float32, n+nq)}

	mean := randUnit(rng, dims)
	centroids := make([][]float32, topics)
	subs := make([][][]float32, topics)
	spread := make([]float64, topics)
	vocab := make([][]string, topics)
	for t := range topics {
		centroids[t] = randUnit(rng, dims)
		subs[t] = make([][]float32, subtopics)
		for s := range subtopics {
			subs[t][s] = randUnit(rng, dims)
		}
		spread[t] = 0.5 + rng.Float64() // 0.5–1.5: some topics tight, some diffuse
		vocab[t] = make([]string, vocabPerTopic)
		for i := range vocab[t] {
			vocab[t][i] = word(rng)
		}
	}
	common := make([]string, commonVocab)
	for i := range common {
		common[i] = word(rng)
	}
	// Topic popularity is skewed, as chat is: a few topics dominate.
	zt := rand.NewZipf(rng, 1.2, 4, uint64(topics-1))
	zw := rand.NewZipf(rng, 1.1, 2, vocabPerTopic-1)
	zc := rand.NewZipf(rng, 1.05, 3, commonVocab-1)

	seen := make(map[string]bool, n)
	for len(c.texts) < n {
		t := int(zt.Uint64())
		s := rng.IntN(subtopics)
		words := 8 + rng.IntN(12)
		parts := make([]string, 0, words)
		for range words {
			if rng.IntN(3) == 0 {
				parts = append(parts, common[zc.Uint64()])
			} else {
				parts = append(parts, vocab[t][zw.Uint64()])
			}
		}
		text := strings.Join(parts, " ")
		if seen[text] {
			continue
		}
		seen[text] = true
		v := make([]float32, dims)
		sd := spread[t] / math.Sqrt(float64(dims))
		for d := range v {
			v[d] = float32(0.5*float64(mean[d]) + float64(centroids[t][d]) + 0.6*float64(subs[t][s][d]) + sd*rng.NormFloat64())
		}
		unit(v)
		c.texts = append(c.texts, text)
		c.authors = append(c.authors, names[rng.IntN(len(names))])
		c.vecs = append(c.vecs, v)
		c.byText[text] = v
	}
	for len(c.queries) < nq {
		src := rng.IntN(n)
		words := strings.Fields(c.texts[src])
		k := 3 + rng.IntN(3)
		picked := make([]string, 0, k)
		for range k {
			picked = append(picked, words[rng.IntN(len(words))])
		}
		text := strings.Join(picked, " ")
		if _, dup := c.byText[text]; dup {
			continue
		}
		v := make([]float32, dims)
		sd := 0.25 / math.Sqrt(float64(dims)) // noise of norm ≈ 0.25: a paraphrase, not a copy
		for d := range v {
			v[d] = c.vecs[src][d] + float32(sd*rng.NormFloat64())
		}
		unit(v)
		c.queries = append(c.queries, query{text: text, vec: v, source: src})
		c.byText[text] = v
	}
	return c
}

// vector returns the vector of text, or a deterministic hash-seeded vector for texts the
// corpus did not generate.
func (c *corpus) vector(text string) []float32 {
	if v, ok := c.byText[text]; ok {
		return v
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	return randUnit(rand.New(rand.NewPCG(h.Sum64(), 1)), c.dims)
}

var syllables = []string{"ka", "ri", "to", "mu", "sen", "la", "po", "ver", "di", "na", "shi", "ro", "bel",
	"gan", "tu", "mi", "zo", "fer", "qua", "lin", "dor", "pe", "sa", "vo", "chi", "rem", "tal", "ne"}

// word makes a pronounceable pseudo-word; no stop word, so every generated word is a term.
func word(rng *rand.Rand) string {
	n := 2 + rng.IntN(2)
	var b strings.Builder
	for range n {
		b.WriteString(syllables[rng.IntN(len(syllables))])
	}
	return b.String()
}

func randUnit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for d := range v {
		v[d] = float32(rng.NormFloat64())
	}
	unit(v)
	return v
}

func unit(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}
