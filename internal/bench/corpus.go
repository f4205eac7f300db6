package bench

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// corpus is a deterministic synthetic memory set: chat-like texts over topic vocabularies
// and vectors that look like sentence embeddings (SPEC §8) — a shared mean direction (real
// embeddings are anisotropic), topic centroids, sub-topics inside each topic, and a
// per-topic spread, so neighbourhoods have structure and "recall against exact search"
// means something.
//
// The texts read like a group chat, so the write path's entity linker, decision detector
// and the recall's date windows and name boosts have real work: a recurring cast of people
// called by their names and nicknames, Discord mentions, places, games and tools, dated
// events ("on 3 March", "last weekend"), a few decisions, and some Japanese.
//
// Memories are spread over scopes (scopePlan): one hot guild, the other guilds smaller
// with a skew, and a few members' personal memory.
type corpus struct {
	dims    int
	texts   []string
	authors []int // index into cast
	scopeOf []int // index into scopes
	vecs    [][]float32
	created []time.Time
	scopes  []scopeInfo
	// queries are timed in the hot guild (scope 0); see queryKinds.
	queries []query
	// bucketQueries are perturbed queries per scope-size bucket (medium, small, personal).
	bucketQueries map[string][]query
	// coldQueries are one query for each of up to coldScopes small guilds, asked first
	// after the store is reopened.
	coldQueries []query
	// scopeQueries hold one query for every scope, to touch each once after reopening.
	scopeQueries []query
	// byText maps every text (memory or query) to its vector, for the store's embedder.
	byText map[string][]float32
}

// query is one timed question. source is the index of the memory it was perturbed from,
// or -1 for questions with no single source (names, dates, no-match, …).
type query struct {
	kind   string
	text   string
	vec    []float32
	source int
	scope  int
	// askedAt anchors relative dates ("last weekend"): the newest memory of its scope.
	askedAt time.Time
}

// scopeInfo is one scope of the corpus.
type scopeInfo struct {
	personal bool
	id       string // guild id, or user id for personal memory
	origin   string // a personal memory's guild of origin
	bucket   string // hot, medium, small or personal
	members  []int  // memory indexes
	newest   time.Time
}

// Query kinds and their share of the hot guild's query set: a realistic mix of what people
// ask. Only perturbed, long and short queries have a source memory.
var queryKinds = []struct {
	kind  string
	share int // per cent
}{
	{"perturbed", 50}, {"long", 10}, {"short", 8}, {"common", 6}, {"name", 8}, {"date", 8}, {"cjk", 6}, {"nomatch", 4},
}

const (
	subtopics     = 8
	vocabPerTopic = 60
	commonVocab   = 300
	// coldScopes bounds the small guilds measured cold after reopening.
	coldScopes = 50
	// bucketQueryCap bounds the perturbed queries timed per scope-size bucket.
	bucketQueryCap = 200
)

// corpusStart is the creation time of the first memory; each next one is a minute later.
var corpusStart = time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)

// person is a member of the recurring cast: a display name (the author name kept with
// their memories) and the nicknames and spellings friends use in text.
type person struct {
	name    string
	aliases []string
}

var cast = []person{
	{"Katherine", []string{"Kate", "Kathryn", "Katie"}}, {"Alexander", []string{"Alex", "Sasha"}},
	{"Priya", []string{"Pri"}}, {"Marcus", []string{"Marc"}}, {"Jennifer", []string{"Jen", "Jenny"}},
	{"Thomas", []string{"Tom", "Tommy"}}, {"Rebecca", []string{"Becca", "Becky"}}, {"Devika", []string{"Dev"}},
	{"Kenji", []string{"Ken"}}, {"Louise", []string{"Lou"}}, {"Samuel", []string{"Sam", "Sammy"}},
	{"Oluwaseun", []string{"Olu", "Seun"}}, {"Yuki", nil}, {"Katia", []string{"Katya"}},
	{"Robert", []string{"Rob", "Bobby"}}, {"Margaret", []string{"Maggie", "Meg"}}, {"William", []string{"Will", "Bill"}},
	{"Elizabeth", []string{"Liz", "Beth"}}, {"Daniel", []string{"Dan", "Danny"}}, {"Michael", []string{"Mike"}},
	{"Sofia", []string{"Sophia"}}, {"Haruto", nil}, {"Aiko", nil}, {"Mateo", nil}, {"Chloe", nil},
	{"Ibrahim", []string{"Ibby"}}, {"Nadia", nil}, {"Felix", nil}, {"Greta", nil}, {"Omar", nil},
}

// userID is the Discord-like id of cast member i (or of any member index beyond the cast).
func userID(i int) string { return fmt.Sprintf("%d", 400000000000000000+i) }

func (p person) called(rng *rand.Rand) string {
	if len(p.aliases) == 0 || rng.IntN(3) == 0 {
		return p.name
	}
	return p.aliases[rng.IntN(len(p.aliases))]
}

var (
	places = []string{"Kyoto", "Osaka", "Lisbon", "Berlin", "the lake house", "Brighton", "Hakone", "the climbing gym",
		"Cafe Lumen", "Tokyo Station", "Vancouver", "Porto", "the park", "Nara", "Seattle", "the office", "Granada"}
	things = []string{"Minecraft", "Factorio", "Postgres", "SQLite", "Grafana", "Elden Ring", "Valheim", "Notion",
		"Obsidian", "Figma", "Rust", "Go", "Terraform", "Stardew Valley", "Blender", "Jellyfin"}
	dates = []string{"on 3 March", "on 14 February", "on 21 July", "on 9 November", "last weekend", "last Saturday",
		"yesterday", "two weeks ago", "on Friday", "in the first week of January", "on 12 May", "last night"}
	jaNames  = []string{"ゆき", "けんじ", "あいこ", "はると", "さくら", "たけし"}
	jaPlaces = []string{"京都", "大阪", "箱根", "奈良", "渋谷", "横浜", "札幌", "福岡"}
	jaWords  = []string{"ラーメン", "温泉", "紅葉", "花見", "寿司", "映画", "旅行", "カラオケ", "山登り", "抹茶", "焼肉", "水族館", "美術館", "ゲーム大会"}
	jaDates  = []string{"3月3日", "先週末", "昨日", "来週の金曜日", "1月の第一週", "先月"}
)

// scopePlan decides how many memories each scope holds. With one scope everything is one
// guild. Otherwise the hot guild holds 1/11 of the corpus (100k of 1.1M), 2% goes to the
// personal memory of max(2, n/10) members, and the other guilds share the rest with a mild
// Zipf skew (weight 1/(rank + n/4)): the biggest of them a few times the smallest.
func scopePlan(n, guilds int) []scopeInfo {
	if guilds <= 1 {
		return []scopeInfo{{id: "bench", bucket: "hot", members: make([]int, 0, n)}}
	}
	personal := max(2, guilds/10)
	sizes := make([]int, 0, guilds+personal)
	pers := max(n/50, personal)
	c := float64(guilds) / 4
	var sum float64
	for r := range guilds - 1 {
		sum += 1 / (float64(r) + c)
	}
	// The hot guild stays at least twice the biggest other one, which with few guilds is
	// more than 1/11.
	w0 := (1 / c) / sum
	hot := max(n/11, int(math.Ceil(2*w0*float64(n-pers)/(1+2*w0))), 1)
	rest := n - hot - pers
	sizes = append(sizes, hot)
	left := rest
	for r := range guilds - 1 {
		k := int(float64(rest) * (1 / (float64(r) + c)) / sum)
		if r == guilds-2 {
			k = left
		}
		k = min(max(k, 1), left-(guilds-2-r))
		sizes = append(sizes, k)
		left -= k
	}
	per := pers / personal
	for p := range personal {
		k := per
		if p == personal-1 {
			k = pers - per*(personal-1)
		}
		sizes = append(sizes, k)
	}
	medium := max(1, (guilds-1)/10)
	out := make([]scopeInfo, len(sizes))
	for s := range sizes {
		switch {
		case s == 0:
			out[s] = scopeInfo{id: "bench-hot", bucket: "hot"}
		case s < guilds:
			b := "small"
			if s <= medium {
				b = "medium"
			}
			out[s] = scopeInfo{id: fmt.Sprintf("bench-%04d", s), bucket: b}
		default:
			p := s - guilds
			out[s] = scopeInfo{personal: true, id: userID(p), origin: fmt.Sprintf("bench-%04d", 1+p%(guilds-1)), bucket: "personal"}
		}
		out[s].members = make([]int, 0, sizes[s])
	}
	return out
}

func newCorpus(seed uint64, n, dims, nq, guilds int) *corpus {
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

	// Which scope each memory goes to: the plan's sizes, shuffled, so every scope's
	// memories spread over the whole time span as real servers' do.
	c.scopes = scopePlan(n, guilds)
	c.scopeOf = make([]int, 0, n)
	for s := range c.scopes {
		size := cap(c.scopes[s].members)
		for range size {
			c.scopeOf = append(c.scopeOf, s)
		}
	}
	rng.Shuffle(len(c.scopeOf), func(i, j int) { c.scopeOf[i], c.scopeOf[j] = c.scopeOf[j], c.scopeOf[i] })

	topicWords := func(t, k int) string {
		parts := make([]string, 0, k)
		for range k {
			if rng.IntN(3) == 0 {
				parts = append(parts, common[zc.Uint64()])
			} else {
				parts = append(parts, vocab[t][zw.Uint64()])
			}
		}
		return strings.Join(parts, " ")
	}
	seen := make(map[string]bool, n)
	for len(c.texts) < n {
		t := int(zt.Uint64())
		s := rng.IntN(subtopics)
		author := rng.IntN(len(cast))
		other := (author + 1 + rng.IntN(len(cast)-1)) % len(cast)
		a, b := cast[author].called(rng), cast[other].called(rng)
		var text string
		switch k := rng.IntN(100); {
		case k < 62: // plain chat about the topic
			text = topicWords(t, 8+rng.IntN(12))
		case k < 70:
			text = fmt.Sprintf("%s and %s went to %s %s, %s", a, b, places[rng.IntN(len(places))], dates[rng.IntN(len(dates))], topicWords(t, 4+rng.IntN(6)))
		case k < 76:
			text = fmt.Sprintf("met %s at %s %s to talk about %s", b, places[rng.IntN(len(places))], dates[rng.IntN(len(dates))], topicWords(t, 4+rng.IntN(6)))
		case k < 82:
			text = fmt.Sprintf("%s is playing %s with %s again, %s", b, things[rng.IntN(len(things))], a, topicWords(t, 3+rng.IntN(6)))
		case k < 86: // a Discord mention, resolved to a member by the linker
			text = fmt.Sprintf("<@%s> can you bring the %s %s?", userID(other), topicWords(t, 3+rng.IntN(5)), dates[rng.IntN(len(dates))])
		case k < 89:
			text = fmt.Sprintf("%s told <@%s> about %s", a, userID(other), topicWords(t, 5+rng.IntN(6)))
		case k < 91: // decisions
			text = fmt.Sprintf("we decided to use %s for the %s", things[rng.IntN(len(things))], topicWords(t, 3+rng.IntN(5)))
		case k < 92:
			x := rng.IntN(len(things))
			text = fmt.Sprintf("%s switched from %s to %s for %s", a, things[x], things[(x+1+rng.IntN(len(things)-1))%len(things)], topicWords(t, 3+rng.IntN(4)))
		case k < 93:
			x := rng.IntN(len(things))
			text = fmt.Sprintf("%s prefers %s over %s, %s", b, things[x], things[(x+1+rng.IntN(len(things)-1))%len(things)], topicWords(t, 3+rng.IntN(4)))
		case k < 95:
			text = fmt.Sprintf("%s said %s was lovely %s, %s", a, places[rng.IntN(len(places))], dates[rng.IntN(len(dates))], topicWords(t, 4+rng.IntN(6)))
		default: // Japanese
			jn, jp, jw := jaNames[rng.IntN(len(jaNames))], jaPlaces[rng.IntN(len(jaPlaces))], jaWords[rng.IntN(len(jaWords))]
			switch rng.IntN(4) {
			case 0:
				text = fmt.Sprintf("%sさんと%sに行った。%sがとても良かった %s", jn, jp, jw, topicWords(t, 2))
			case 1:
				text = fmt.Sprintf("%sに%sで%sさんと%sを楽しんだ %s", jaDates[rng.IntN(len(jaDates))], jp, jn, jw, topicWords(t, 2))
			case 2:
				text = fmt.Sprintf("%sを使うことに決めた。%sの件 %s", things[rng.IntN(len(things))], jw, topicWords(t, 2))
			default:
				text = fmt.Sprintf("%sさんは%sが好きらしい %s", jn, jw, topicWords(t, 3))
			}
		}
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
	perturbed := func(kind string, src int) (query, bool) {
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
	free := func(kind, text string) (query, bool) {
		if _, dup := c.byText[text]; dup {
			return query{}, false
		}
		v := c.vector(text)
		c.byText[text] = v
		return query{kind: kind, text: text, vec: v, source: -1, askedAt: c.scopes[0].newest}, true
	}
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
			q, ok = perturbed(kind, hot[rng.IntN(len(hot))])
		case "common":
			q, ok = free(kind, fmt.Sprintf("%s %s %s", common[rng.IntN(12)], common[rng.IntN(12)], common[rng.IntN(40)]))
		case "name":
			switch rng.IntN(3) {
			case 0:
				q, ok = free(kind, fmt.Sprintf("what did %s say about %s?", p, vocab[int(zt.Uint64())][rng.IntN(vocabPerTopic)]))
			case 1:
				q, ok = free(kind, fmt.Sprintf("what games does %s play", p))
			default:
				q, ok = free(kind, fmt.Sprintf("where did %s and %s go %s", p, cast[rng.IntN(len(cast))].called(rng), dates[rng.IntN(len(dates))]))
			}
		case "date":
			switch rng.IntN(3) {
			case 0:
				q, ok = free(kind, fmt.Sprintf("what did we do %s", dates[rng.IntN(len(dates))]))
			case 1:
				q, ok = free(kind, fmt.Sprintf("where was %s %s?", p, dates[rng.IntN(len(dates))]))
			default:
				q, ok = free(kind, fmt.Sprintf("what did we decide about %s %s", things[rng.IntN(len(things))], dates[rng.IntN(len(dates))]))
			}
		case "cjk":
			switch rng.IntN(3) {
			case 0:
				q, ok = free(kind, fmt.Sprintf("%sさんと%sに行ったのはいつ？", jaNames[rng.IntN(len(jaNames))], jaPlaces[rng.IntN(len(jaPlaces))]))
			case 1:
				q, ok = free(kind, fmt.Sprintf("%sの件はどうなった？", jaWords[rng.IntN(len(jaWords))]))
			default:
				q, ok = free(kind, fmt.Sprintf("%sに何をした？", jaDates[rng.IntN(len(jaDates))]))
			}
		case "nomatch":
			q, ok = free(kind, fmt.Sprintf("%s %s %s", nonWord(rng), nonWord(rng), nonWord(rng)))
		}
		if ok {
			c.queries = append(c.queries, q)
		}
	}

	if len(c.scopes) > 1 {
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
				if q, ok := perturbed("perturbed", m[rng.IntN(len(m))]); ok {
					c.bucketQueries[b] = append(c.bucketQueries[b], q)
				}
			}
		}
		// The cold guilds are the smallest ones, asked first after reopening; none of them
		// is touched before.
		small := byBucket["small"]
		for i := len(small) - 1; i >= 0 && len(c.coldQueries) < coldScopes; i-- {
			m := c.scopes[small[i]].members
			for tries := 0; tries < 20; tries++ {
				if q, ok := perturbed("perturbed", m[rng.IntN(len(m))]); ok {
					c.coldQueries = append(c.coldQueries, q)
					break
				}
			}
		}
	}
	for s, sc := range c.scopes {
		if len(sc.members) == 0 {
			continue
		}
		for tries := 0; tries < 20; tries++ {
			if q, ok := perturbed("perturbed", sc.members[rng.IntN(len(sc.members))]); ok {
				q.scope = s
				c.scopeQueries = append(c.scopeQueries, q)
				break
			}
		}
	}
	return c
}

func pickKind(rng *rand.Rand) string {
	k := rng.IntN(100)
	for _, qk := range queryKinds {
		if k < qk.share {
			return qk.kind
		}
		k -= qk.share
	}
	return queryKinds[0].kind
}

func userIndex(id string) int64 {
	var n int64
	fmt.Sscan(id, &n)
	return n - 400000000000000000
}

// release drops what only the load needed (memory texts and vectors), keeping the
// queries' vectors for the embedder, so the memory the store uses after reopening is not
// hidden under the corpus's own.
func (c *corpus) release() {
	keep := make(map[string][]float32)
	for _, qs := range [][]query{c.queries, c.coldQueries, c.scopeQueries} {
		for _, q := range qs {
			keep[q.text] = q.vec
		}
	}
	for _, qs := range c.bucketQueries {
		for _, q := range qs {
			keep[q.text] = q.vec
		}
	}
	c.byText = keep
	c.texts, c.vecs = nil, nil
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

// nonWord makes a word no memory holds: the corpus's syllables and names never contain "x"
// twice.
func nonWord(rng *rand.Rand) string {
	return "x" + syllables[rng.IntN(len(syllables))] + "x" + syllables[rng.IntN(len(syllables))]
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
