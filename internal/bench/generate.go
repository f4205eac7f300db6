package bench

// Generating the corpus: topics with their vectors and words, memories written about
// them in the scopes of the plan, and the queries asked of them. Every draw comes from one
// seeded generator in a fixed order, so a seed always gives the same corpus (and a kept
// database stays valid for it).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// corpusBuilder is the generator's state while newCorpus builds c.
type corpusBuilder struct {
	rng  *rand.Rand
	c    *corpus
	dims int
	mean []float32
	// Per topic: its centroid, its subtopics' directions, how diffuse it is, its words.
	centroids [][]float32
	subs      [][][]float32
	spread    []float64
	vocab     [][]string
	common    []string
	// Zipf draws of a topic, a topic word and a common word: a few dominate, as in chat.
	zt, zw, zc *rand.Zipf
}

func newCorpus(seed uint64, n, dims, nq, guilds int) *corpus {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := newCorpusBuilder(rng, n, dims, nq)
	g.assignScopes(n, guilds)
	g.memories(n)
	g.hotQueries(nq)
	if len(g.c.scopes) > 1 {
		g.scopeSizeQueries(nq)
	}
	g.everyScopeQueries()
	return g.c
}

// newCorpusBuilder draws the topics: their centroids, subtopics, spread and vocabulary,
// and the words common to all.
func newCorpusBuilder(rng *rand.Rand, n, dims, nq int) *corpusBuilder {
	topics := min(max(n/1000, 16), 256)
	g := &corpusBuilder{rng: rng, dims: dims, c: &corpus{dims: dims, byText: make(map[string][]float32, n+nq)}}
	g.mean = randUnit(rng, dims)
	g.centroids = make([][]float32, topics)
	g.subs = make([][][]float32, topics)
	g.spread = make([]float64, topics)
	g.vocab = make([][]string, topics)
	for t := range topics {
		g.centroids[t] = randUnit(rng, dims)
		g.subs[t] = make([][]float32, subtopics)
		for s := range subtopics {
			g.subs[t][s] = randUnit(rng, dims)
		}
		g.spread[t] = 0.5 + rng.Float64() // 0.5–1.5: some topics tight, some diffuse
		g.vocab[t] = make([]string, vocabPerTopic)
		for i := range g.vocab[t] {
			g.vocab[t][i] = word(rng)
		}
	}
	g.common = make([]string, commonVocab)
	for i := range g.common {
		g.common[i] = word(rng)
	}
	// Topic popularity is skewed, as chat is: a few topics dominate.
	g.zt = rand.NewZipf(rng, 1.2, 4, uint64(topics-1))
	g.zw = rand.NewZipf(rng, 1.1, 2, vocabPerTopic-1)
	g.zc = rand.NewZipf(rng, 1.05, 3, commonVocab-1)
	return g
}

// assignScopes decides which scope each memory goes to: the plan's sizes, shuffled, so
// every scope's memories spread over the whole time span as real servers' do.
func (g *corpusBuilder) assignScopes(n, guilds int) {
	c := g.c
	c.scopes = scopePlan(n, guilds)
	c.scopeOf = make([]int, 0, n)
	for s := range c.scopes {
		size := cap(c.scopes[s].members)
		for range size {
			c.scopeOf = append(c.scopeOf, s)
		}
	}
	g.rng.Shuffle(len(c.scopeOf), func(i, j int) { c.scopeOf[i], c.scopeOf[j] = c.scopeOf[j], c.scopeOf[i] })
}

// topicWords is k words of topic t, a third of them common ones.
func (g *corpusBuilder) topicWords(t, k int) string {
	parts := make([]string, 0, k)
	for range k {
		if g.rng.IntN(3) == 0 {
			parts = append(parts, g.common[g.zc.Uint64()])
		} else {
			parts = append(parts, g.vocab[t][g.zw.Uint64()])
		}
	}
	return strings.Join(parts, " ")
}

// memories writes n distinct memories.
func (g *corpusBuilder) memories(n int) {
	rng, c := g.rng, g.c
	seen := make(map[string]bool, n)
	for len(c.texts) < n {
		t := int(g.zt.Uint64())
		s := rng.IntN(subtopics)
		author := rng.IntN(len(cast))
		other := (author + 1 + rng.IntN(len(cast)-1)) % len(cast)
		a, b := cast[author].called(rng), cast[other].called(rng)
		text := g.chatText(t, other, a, b)
		if seen[text] {
			continue
		}
		seen[text] = true
		g.addMemory(text, t, s, author)
	}
}

// chatText is one message about topic t by the cast member called a, who may mention b
// (cast member other): mostly plain chat, else outings, mentions, decisions and Japanese.
func (g *corpusBuilder) chatText(t, other int, a, b string) string {
	rng := g.rng
	topicWords := g.topicWords
	switch k := rng.IntN(100); {
	case k < 62: // plain chat about the topic
		return topicWords(t, 8+rng.IntN(12))
	case k < 70:
		return fmt.Sprintf("%s and %s went to %s %s, %s", a, b, places[rng.IntN(len(places))], dates[rng.IntN(len(dates))], topicWords(t, 4+rng.IntN(6)))
	case k < 76:
		return fmt.Sprintf("met %s at %s %s to talk about %s", b, places[rng.IntN(len(places))], dates[rng.IntN(len(dates))], topicWords(t, 4+rng.IntN(6)))
	case k < 82:
		return fmt.Sprintf("%s is playing %s with %s again, %s", b, things[rng.IntN(len(things))], a, topicWords(t, 3+rng.IntN(6)))
	case k < 86: // a Discord mention, resolved to a member by the linker
		return fmt.Sprintf("<@%s> can you bring the %s %s?", userID(other), topicWords(t, 3+rng.IntN(5)), dates[rng.IntN(len(dates))])
	case k < 89:
		return fmt.Sprintf("%s told <@%s> about %s", a, userID(other), topicWords(t, 5+rng.IntN(6)))
	case k < 91: // decisions
		return fmt.Sprintf("we decided to use %s for the %s", things[rng.IntN(len(things))], topicWords(t, 3+rng.IntN(5)))
	case k < 92:
		x := rng.IntN(len(things))
		return fmt.Sprintf("%s switched from %s to %s for %s", a, things[x], things[(x+1+rng.IntN(len(things)-1))%len(things)], topicWords(t, 3+rng.IntN(4)))
	case k < 93:
		x := rng.IntN(len(things))
		return fmt.Sprintf("%s prefers %s over %s, %s", b, things[x], things[(x+1+rng.IntN(len(things)-1))%len(things)], topicWords(t, 3+rng.IntN(4)))
	case k < 95:
		return fmt.Sprintf("%s said %s was lovely %s, %s", a, places[rng.IntN(len(places))], dates[rng.IntN(len(dates))], topicWords(t, 4+rng.IntN(6)))
	}
	// Japanese
	jn, jp, jw := jaNames[rng.IntN(len(jaNames))], jaPlaces[rng.IntN(len(jaPlaces))], jaWords[rng.IntN(len(jaWords))]
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprintf("%sさんと%sに行った。%sがとても良かった %s", jn, jp, jw, topicWords(t, 2))
	case 1:
		return fmt.Sprintf("%sに%sで%sさんと%sを楽しんだ %s", jaDates[rng.IntN(len(jaDates))], jp, jn, jw, topicWords(t, 2))
	case 2:
		return fmt.Sprintf("%sを使うことに決めた。%sの件 %s", things[rng.IntN(len(things))], jw, topicWords(t, 2))
	default:
		return fmt.Sprintf("%sさんは%sが好きらしい %s", jn, jw, topicWords(t, 3))
	}
}

// addMemory adds text, about subtopic s of topic t, as the next memory: its vector near
// the subtopic, its scope, author and time.
func (g *corpusBuilder) addMemory(text string, t, s, author int) {
	c, dims := g.c, g.dims
	v := make([]float32, dims)
	sd := g.spread[t] / math.Sqrt(float64(dims))
	for d := range v {
		v[d] = float32(0.5*float64(g.mean[d]) + float64(g.centroids[t][d]) + 0.6*float64(g.subs[t][s][d]) + sd*g.rng.NormFloat64())
	}
	unit(v)
	i := len(c.texts)
	sc := c.scopeOf[i]
	at := corpusStart.Add(time.Duration(i) * time.Minute)
	c.scopes[sc].members = append(c.scopes[sc].members, i)
	c.scopes[sc].newest = at
	if c.scopes[sc].personal {
		// Personal memory is its member's own words.
		author = int(userIndex(c.scopes[sc].id)) % len(cast)
	}
	c.texts = append(c.texts, text)
	c.authors = append(c.authors, author)
	c.vecs = append(c.vecs, v)
	c.created = append(c.created, at)
	c.byText[text] = v
}

// perturbed makes a query from a few of a memory's words and its vector plus small noise.
func (g *corpusBuilder) perturbed(kind string, src int) (query, bool) {
	rng, c, dims := g.rng, g.c, g.dims
	words := strings.Fields(c.texts[src])
	var text string
	switch kind {
	case "short":
		text = words[rng.IntN(len(words))]
	case "long":
		k := 8 + rng.IntN(5)
		picked := make([]string, 0, k)
		for range k {
			picked = append(picked, words[rng.IntN(len(words))])
		}
		text = "do you remember what we said about " + strings.Join(picked, " ")
	default:
		k := 3 + rng.IntN(3)
		picked := make([]string, 0, k)
		for range k {
			picked = append(picked, words[rng.IntN(len(words))])
		}
		text = strings.Join(picked, " ")
	}
	if _, dup := c.byText[text]; dup {
		return query{}, false
	}
	v := make([]float32, dims)
	sd := 0.25 / math.Sqrt(float64(dims)) // noise of norm ≈ 0.25: a paraphrase, not a copy
	for d := range v {
		v[d] = c.vecs[src][d] + float32(sd*rng.NormFloat64())
	}
	unit(v)
	c.byText[text] = v
	sc := c.scopeOf[src]
	return query{kind: kind, text: text, vec: v, source: src, scope: sc, askedAt: c.scopes[sc].newest}, true
}

// free makes a query with no source memory; its vector is a hash of its text.
func (g *corpusBuilder) free(kind, text string) (query, bool) {
	c := g.c
	if _, dup := c.byText[text]; dup {
		return query{}, false
	}
	v := c.vector(text)
	c.byText[text] = v
	return query{kind: kind, text: text, vec: v, source: -1, askedAt: c.scopes[0].newest}, true
}

// hotQueries makes nq queries of every kind for the hot guild.
func (g *corpusBuilder) hotQueries(nq int) {
	rng, c := g.rng, g.c
	hot := c.scopes[0].members
	for tries := 0; len(c.queries) < nq && tries < 100*nq+1000; tries++ {
		kind := pickKind(rng)
		p := cast[rng.IntN(len(cast))].called(rng)
		var (
			q  query
			ok bool
		)
		switch kind {
		case "perturbed", "long", "short":
			q, ok = g.perturbed(kind, hot[rng.IntN(len(hot))])
		case "common", "name", "date", "cjk", "nomatch":
			q, ok = g.free(kind, g.freeText(kind, p))
		}
		if ok {
			c.queries = append(c.queries, q)
		}
	}
}

// freeText is the text of a query of kind with no source memory, about the cast member
// called p where it names someone.
func (g *corpusBuilder) freeText(kind, p string) string {
	rng, common := g.rng, g.common
	switch kind {
	case "common":
		return fmt.Sprintf("%s %s %s", common[rng.IntN(12)], common[rng.IntN(12)], common[rng.IntN(40)])
	case "name":
		switch rng.IntN(3) {
		case 0:
			return fmt.Sprintf("what did %s say about %s?", p, g.vocab[int(g.zt.Uint64())][rng.IntN(vocabPerTopic)])
		case 1:
			return fmt.Sprintf("what games does %s play", p)
		default:
			return fmt.Sprintf("where did %s and %s go %s", p, cast[rng.IntN(len(cast))].called(rng), dates[rng.IntN(len(dates))])
		}
	case "date":
		switch rng.IntN(3) {
		case 0:
			return fmt.Sprintf("what did we do %s", dates[rng.IntN(len(dates))])
		case 1:
			return fmt.Sprintf("where was %s %s?", p, dates[rng.IntN(len(dates))])
		default:
			return fmt.Sprintf("what did we decide about %s %s", things[rng.IntN(len(things))], dates[rng.IntN(len(dates))])
		}
	case "cjk":
		switch rng.IntN(3) {
		case 0:
			return fmt.Sprintf("%sさんと%sに行ったのはいつ？", jaNames[rng.IntN(len(jaNames))], jaPlaces[rng.IntN(len(jaPlaces))])
		case 1:
			return fmt.Sprintf("%sの件はどうなった？", jaWords[rng.IntN(len(jaWords))])
		default:
			return fmt.Sprintf("%sに何をした？", jaDates[rng.IntN(len(jaDates))])
		}
	case "nomatch":
		return fmt.Sprintf("%s %s %s", nonWord(rng), nonWord(rng), nonWord(rng))
	}
	return ""
}

// scopeSizeQueries makes the perturbed queries of the medium, small and personal buckets,
// and those of the cold guilds: the smallest, asked first after reopening.
func (g *corpusBuilder) scopeSizeQueries(nq int) {
	rng, c := g.rng, g.c
	byBucket := map[string][]int{}
	for s, sc := range c.scopes {
		if s > 0 && len(sc.members) > 0 {
			byBucket[sc.bucket] = append(byBucket[sc.bucket], s)
		}
	}
	c.bucketQueries = map[string][]query{}
	for _, b := range []string{"medium", "small", "personal"} {
		ss := byBucket[b]
		if len(ss) == 0 {
			continue
		}
		want := min(nq, bucketQueryCap)
		for tries := 0; len(c.bucketQueries[b]) < want && tries < 100*want; tries++ {
			m := c.scopes[ss[rng.IntN(len(ss))]].members
			if q, ok := g.perturbed("perturbed", m[rng.IntN(len(m))]); ok {
				c.bucketQueries[b] = append(c.bucketQueries[b], q)
			}
		}
	}
	// None of the cold guilds is touched before they are asked.
	small := byBucket["small"]
	for i := len(small) - 1; i >= 0 && len(c.coldQueries) < coldScopes; i-- {
		m := c.scopes[small[i]].members
		for tries := 0; tries < 20; tries++ {
			if q, ok := g.perturbed("perturbed", m[rng.IntN(len(m))]); ok {
				c.coldQueries = append(c.coldQueries, q)
				break
			}
		}
	}
}

// everyScopeQueries makes one query for every scope, to touch each once after reopening.
func (g *corpusBuilder) everyScopeQueries() {
	rng, c := g.rng, g.c
	for s, sc := range c.scopes {
		if len(sc.members) == 0 {
			continue
		}
		for tries := 0; tries < 20; tries++ {
			if q, ok := g.perturbed("perturbed", sc.members[rng.IntN(len(sc.members))]); ok {
				q.scope = s
				c.scopeQueries = append(c.scopeQueries, q)
				break
			}
		}
	}
}
