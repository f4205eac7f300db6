package kwindex_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/internal/vecindex"
)

var words = []string{"game", "night", "pizza", "hiking", "trip", "kyoto", "release", "deploy", "friday", "cat",
	"painting", "ski", "skiing", "games", "nights", "board", "climbing", "coffee", "rain", "report"}

func randomDoc(r *rand.Rand, id int64) kwindex.Doc {
	n := 1 + r.IntN(12)
	text := ""
	for i := range n {
		if i > 0 {
			text += " "
		}
		text += words[r.IntN(len(words))]
	}
	return kwindex.Doc{ID: id, Content: text, Author: []string{"alice", "bob", "kyoto cat"}[r.IntN(3)],
		Meta: vecindex.Meta{Type: []string{"fact", "decision"}[r.IntN(2)], CreatedAt: int64(r.IntN(1000))}}
}

// TestChurnMatchesFreshBuild puts, replaces and removes documents at random (enough to
// trigger compactions) and checks after each round that every query ranks exactly as an
// index built from scratch over the surviving documents: deletes keep the statistics exact.
func TestChurnMatchesFreshBuild(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	idx := kwindex.NewScope(kwindex.DefaultParams)
	live := map[int64]kwindex.Doc{}
	next := int64(1)
	queries := []kwindex.Query{
		{Terms: []string{"game", "night"}, Pairs: [][2]string{{"game", "night"}}},
		{Terms: []string{"kyoto"}},
		{Terms: []string{"skiing", "trip"}, Pairs: [][2]string{{"skiing", "trip"}}, Limit: 5},
		{Terms: []string{"cat"}, Filter: &vecindex.Filter{Types: []string{"decision"}}, Limit: 10},
		{Terms: []string{"nothing"}},
	}
	for round := range 30 {
		for range 40 {
			switch op := r.IntN(10); {
			case op < 5 || len(live) == 0:
				d := randomDoc(r, next)
				next++
				idx.Put(d)
				live[d.ID] = d
			case op < 7:
				for id := range live {
					d := randomDoc(r, id)
					idx.Put(d)
					live[id] = d
					break
				}
			default:
				for id := range live {
					idx.Remove(id)
					delete(live, id)
					break
				}
			}
		}
		fresh := kwindex.NewScope(kwindex.DefaultParams)
		docs := make([]kwindex.Doc, 0, len(live))
		for _, d := range live {
			docs = append(docs, d)
		}
		fresh.Put(docs...)
		if got, want := idx.Len(), fresh.Len(); got != want {
			t.Fatalf("round %d: %d live docs, fresh %d", round, got, want)
		}
		for _, q := range queries {
			got, want := idx.Search(q), fresh.Search(q)
			if !slices.EqualFunc(got, want, func(a, b kwindex.Hit) bool {
				return a.ID == b.ID && fmt.Sprintf("%.9f", a.Score) == fmt.Sprintf("%.9f", b.Score)
			}) {
				t.Fatalf("round %d, %v: churned index %v, fresh %v", round, q.Terms, got, want)
			}
		}
	}
}

func TestRemovedWordsLeaveTheIndex(t *testing.T) {
	idx := kwindex.NewScope(kwindex.DefaultParams)
	idx.Put(kwindex.Doc{ID: 1, Content: "my secret is quokkazebra", Author: "alice"},
		kwindex.Doc{ID: 2, Content: "the secret of bob", Author: "bob"})
	if !idx.Holds("quokkazebra") || !idx.Holds("alice") {
		t.Fatal("the index lacks words it was given")
	}
	idx.Remove(1)
	for _, w := range []string{"quokkazebra", "alice"} {
		if idx.Holds(w) {
			t.Errorf("%q is still held after its only document was removed", w)
		}
	}
	if !idx.Holds("secret") {
		t.Error("a word another document holds was dropped")
	}
	if hits := idx.Search(kwindex.Query{Terms: []string{"quokkazebra"}}); len(hits) != 0 {
		t.Errorf("a removed document still matches: %v", hits)
	}
	// Replacing a document's text drops its old words.
	idx.Put(kwindex.Doc{ID: 2, Content: "nothing left", Author: "bob"})
	if idx.Holds("secret") {
		t.Error("an edited document's old word is still held")
	}
}

func TestPhrasesNeedAdjacency(t *testing.T) {
	idx := kwindex.NewScope(kwindex.DefaultParams)
	idx.Put(kwindex.Doc{ID: 1, Content: "game night on friday"},
		kwindex.Doc{ID: 2, Content: "night game on friday"},
		kwindex.Doc{ID: 3, Content: "a game", Author: "night owl"})
	hits := idx.Search(kwindex.Query{Terms: []string{"game", "night"}, Pairs: [][2]string{{"game", "night"}}})
	if len(hits) != 3 || hits[0].ID != 1 {
		t.Fatalf("the phrase match should rank first: %v", hits)
	}
	if hits[1].Score >= hits[0].Score {
		t.Errorf("adjacent words in another order scored like the phrase: %v", hits)
	}
}

func TestFilterAndLimit(t *testing.T) {
	idx := kwindex.NewScope(kwindex.DefaultParams)
	for i := int64(1); i <= 30; i++ {
		typ := "fact"
		if i%3 == 0 {
			typ = "decision"
		}
		idx.Put(kwindex.Doc{ID: i, Content: "deploy on friday", Meta: vecindex.Meta{Type: typ}})
	}
	hits := idx.Search(kwindex.Query{Terms: []string{"deploy"}, Filter: &vecindex.Filter{Types: []string{"decision"}}, Limit: 4})
	if len(hits) != 4 {
		t.Fatalf("want 4 hits, got %v", hits)
	}
	for _, h := range hits {
		if h.ID%3 != 0 {
			t.Errorf("hit %d fails the filter", h.ID)
		}
	}
	// Equal scores are ordered by id so results are stable.
	if !slices.IsSortedFunc(hits, func(a, b kwindex.Hit) int { return int(a.ID - b.ID) }) {
		t.Errorf("ties not ordered by id: %v", hits)
	}
}

func TestCJKBigrams(t *testing.T) {
	idx := kwindex.NewScope(kwindex.DefaultParams)
	idx.Put(kwindex.Doc{ID: 1, Content: "明日 の deploy は 中止", Grams: "明日のdeployは中止 たろう"},
		kwindex.Doc{ID: 2, Content: "来週 の 旅行", Grams: "来週の旅行 はなこ"},
		kwindex.Doc{ID: 3, Content: "deploy friday", Grams: "deploy friday bob"})
	hits := idx.SearchCJK(kwindex.CJKQuery{Grams: []string{"明日", "中止"}})
	if len(hits) != 1 || hits[0].ID != 1 {
		t.Fatalf("bigram search: %v", hits)
	}
	// Latin words embedded in a Japanese question count too, and rank the memory holding
	// both above the one holding only the word.
	hits = idx.SearchCJK(kwindex.CJKQuery{Grams: []string{"中止"}, Words: []string{"deploy"}})
	if len(hits) != 2 || hits[0].ID != 1 {
		t.Fatalf("bigrams and words: %v", hits)
	}
	if !idx.Holds("旅行") {
		t.Fatal("the index lacks a bigram it was given")
	}
	idx.Remove(2)
	if idx.Holds("旅行") || idx.Holds("はなこ") {
		t.Error("a removed memory's Japanese words are still held")
	}
	if hits := idx.SearchCJK(kwindex.CJKQuery{Grams: []string{"旅行"}}); len(hits) != 0 {
		t.Errorf("a removed memory still matches: %v", hits)
	}
}

// TestPhrasesStopAtUnsegmentedText checks that a CJK token, which the word index never
// matches, still stands between two words: they are not a phrase across it.
func TestPhrasesStopAtUnsegmentedText(t *testing.T) {
	idx := kwindex.NewScope(kwindex.DefaultParams)
	idx.Put(kwindex.Doc{ID: 1, Content: "game 日本 night"}, kwindex.Doc{ID: 2, Content: "game night"})
	hits := idx.Search(kwindex.Query{Pairs: [][2]string{{"game", "night"}}})
	if len(hits) != 1 || hits[0].ID != 2 {
		t.Fatalf("the pair matched across unsegmented text: %v", hits)
	}
}

// TestLongDocumentKeepsItsExactLength checks the BM25 score of a memory longer than the
// lengths kept in two bytes against the formula: its length must not be rounded.
func TestLongDocumentKeepsItsExactLength(t *testing.T) {
	long := strings.Repeat("filler ", 70_000) + "needle"
	idx := kwindex.NewScope(kwindex.DefaultParams)
	idx.Put(kwindex.Doc{ID: 1, Content: long}, kwindex.Doc{ID: 2, Content: "needle in a haystack"})
	hits := idx.Search(kwindex.Query{Terms: []string{"needle"}})
	if len(hits) != 2 {
		t.Fatalf("want both memories, got %v", hits)
	}
	p := kwindex.DefaultParams
	n, df := 2.0, 2.0
	avgdl := (70_001 + 4) / n
	idf := math.Log1p((n - df + 0.5) / (df + 0.5))
	score := func(d float64) float64 { return idf * (p.K1 + 1) / (1 + p.K1*(1-p.B+p.B*d/avgdl)) }
	want := map[int64]float64{1: score(70_001), 2: score(4)}
	for _, h := range hits {
		if h.Score != want[h.ID] {
			t.Errorf("memory %d scores %v, want %v", h.ID, h.Score, want[h.ID])
		}
	}
}

// TestConcurrentSearchesAndWrites searches, asks Has and Holds from several goroutines
// while another puts and removes documents (run with -race to check the locking), then
// checks the index ranks as a fresh build of the surviving documents.
func TestConcurrentSearchesAndWrites(t *testing.T) {
	idx := kwindex.NewScope(kwindex.DefaultParams)
	r := rand.New(rand.NewPCG(11, 12))
	live := map[int64]kwindex.Doc{}
	for id := int64(1); id <= 300; id++ {
		live[id] = randomDoc(r, id)
		idx.Put(live[id])
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				w := words[(g+i)%len(words)]
				idx.Search(kwindex.Query{Terms: []string{w, "night"}, Pairs: [][2]string{{w, "night"}}, Limit: 5})
				idx.SearchCJK(kwindex.CJKQuery{Words: []string{w}, Limit: 5})
				idx.Has(int64(i % 400))
				idx.Holds(w)
			}
		})
	}
	for step := range 2000 {
		id := int64(1 + r.IntN(400))
		if step%3 == 0 {
			idx.Remove(id)
			delete(live, id)
			continue
		}
		live[id] = randomDoc(r, id)
		idx.Put(live[id])
	}
	close(done)
	wg.Wait()
	fresh := kwindex.NewScope(kwindex.DefaultParams)
	for _, d := range live {
		fresh.Put(d)
	}
	for _, w := range words {
		q := kwindex.Query{Terms: []string{w, "night"}, Pairs: [][2]string{{w, "night"}}}
		got, want := idx.Search(q), fresh.Search(q)
		if !slices.EqualFunc(got, want, func(a, b kwindex.Hit) bool {
			return a.ID == b.ID && fmt.Sprintf("%.9f", a.Score) == fmt.Sprintf("%.9f", b.Score)
		}) {
			t.Fatalf("%q: %v, fresh %v", w, got, want)
		}
	}
	for id := int64(1); id <= 400; id++ {
		if _, ok := live[id]; idx.Has(id) != ok {
			t.Errorf("Has(%d) = %v, want %v", id, !ok, ok)
		}
	}
}
