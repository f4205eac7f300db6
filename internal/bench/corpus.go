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
