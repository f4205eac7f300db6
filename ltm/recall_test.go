package ltm_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// wordDims is the test embedding model: every listed word is one unit along its dimension,
// so words sharing a dimension are synonyms (cosine 1) that FTS sees as different words,
// and cosines between texts can be worked out by hand. Text with no listed word embeds to
// the zero vector, which the store never indexes.
var wordDims = map[string]int{
	"car": 0, "automobile": 0,
	"lamp": 1, "lantern": 1,
	"coffee": 2, "espresso": 2,
	"dog": 3, "puppy": 3, "hound": 3,
	"pizza":  4,
	"guitar": 5,
}

const tableDims = 8

func tableVector(text string) []float32 {
	v := make([]float32, tableDims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		if d, ok := wordDims[w]; ok {
			v[d]++
		}
	}
	return v
}

// tableCosine is the cosine the store should report between a query and a memory.
func tableCosine(query, content string) float64 {
	a, b := tableVector(query), tableVector(content)
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// tableEmbedder is the EmbedFunc of these tests. It counts calls, and fail or block make it
// behave like a provider that is down or hangs.
type tableEmbedder struct {
	calls atomic.Int64
	fail  atomic.Bool
	block atomic.Bool
}

func (e *tableEmbedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	if e.block.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if e.fail.Load() {
		return nil, errors.New("embedding provider is down")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = tableVector(t)
	}
	return out, nil
}

// recallStore opens a store holding 30 filler memories in a guild no test searches, so
// FTS5's BM25 (whose document frequencies span the whole table) has a corpus to weigh
// terms against, and, when hybrid, sets the table embedder.
func recallStore(t *testing.T, hybrid bool) (*ltm.Store, *tableEmbedder) {
	t.Helper()
	s := testkit.MustOpenStore(t)
	fillers := make([]memory.Memory, 30)
	for i := range fillers {
		fillers[i] = server("g-filler", fmt.Sprintf("filler note %d about unrelated weekly chatter", i))
	}
	if _, err := s.Transfer.RememberMany(ctx, fillers, "test"); err != nil {
		t.Fatal(err)
	}
	e := &tableEmbedder{}
	if hybrid {
		s.Recall.SetEmbedder(e.embed, "table-test")
	}
	return s, e
}

// fill saves n memories of unrelated chatter in guild's server scope, so the scope's term
// statistics look like a real server's rather than a handful of test memories'.
func fill(t *testing.T, s *ltm.Store, guild string, n int) {
	t.Helper()
	fillers := make([]memory.Memory, n)
	for i := range fillers {
		fillers[i] = server(guild, fmt.Sprintf("filler note %d about unrelated weekly chatter", i))
	}
	if _, err := s.Transfer.RememberMany(ctx, fillers, "test"); err != nil {
		t.Fatal(err)
	}
}

// forEachMode runs f against a keyword-only store and a hybrid store.
func forEachMode(t *testing.T, f func(t *testing.T, hybrid bool)) {
	t.Run("KeywordStore", func(t *testing.T) { f(t, false) })
	t.Run("HybridStore", func(t *testing.T) { f(t, true) })
}

func mustSearch(t *testing.T, s *ltm.Store, q memory.SearchQuery) []memory.SearchResult {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 100
	}
	res, err := s.Recall.Search(ctx, q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	for i := 1; i < len(res); i++ {
		if res[i].Score > res[i-1].Score {
			t.Fatalf("search %q: results not sorted by score: %v", q.Text, describe(res))
		}
	}
	return res
}

func find(res []memory.SearchResult, id int64) (memory.SearchResult, bool) {
	for _, r := range res {
		if r.Memory.ID == id {
			return r, true
		}
	}
	return memory.SearchResult{}, false
}

func idsOf(res []memory.SearchResult) []int64 {
	out := make([]int64, len(res))
	for i, r := range res {
		out[i] = r.Memory.ID
	}
	return out
}

func describe(res []memory.SearchResult) string {
	var b strings.Builder
	for _, r := range res {
		fmt.Fprintf(&b, "\n  #%d %q score=%.4f kw=%.4f vec=%.4f", r.Memory.ID, r.Memory.Content, r.Score, r.Keyword, r.Vector)
	}
	return b.String()
}

// matched reports whether either leg matched the result: a keyword hit or a positive
// cosine. A hybrid store may return unmatched rows of a small scope (score 0 plus
// tie-breakers) because the vector leg returns the nearest rows whatever their cosine.
func matched(r memory.SearchResult) bool { return r.Keyword > 0 || r.Vector > 1e-6 }

func wantOnly(t *testing.T, res []memory.SearchResult, want ...int64) {
	t.Helper()
	got := idsOf(res)
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got ids %v, want %v:%s", got, want, describe(res))
	}
}

func TestRecallBlend(t *testing.T) {
	s, _ := recallStore(t, true)
	// The blend itself, without the post-fusion dampening (TestRecallGravity covers that).
	s.Dampen = recall.Dampening{}
	owner := memory.ServerOwner("gBlend")
	// Against the query "coffee" (dimension 2):
	keywordStrong := testkit.MustRemember(t, s, server("gBlend", "coffee dog puppy hound car automobile pizza")) // cos 1/√15
	vectorOnly := testkit.MustRemember(t, s, server("gBlend", "espresso tasting notes"))                         // cos 1, no shared word
	both := testkit.MustRemember(t, s, server("gBlend", "coffee and guitar practice"))                           // cos 1/√2
	neither := testkit.MustRemember(t, s, server("gBlend", "guitar strings"))                                    // cos 0
	q := memory.SearchQuery{Text: "coffee", Owners: []memory.Owner{owner}}

	checkBlend := func(t *testing.T, res []memory.SearchResult, alpha float64) {
		t.Helper()
		for _, r := range res {
			if r.Keyword < 0 || r.Keyword >= 1 {
				t.Errorf("#%d Keyword = %v, want in [0,1)", r.Memory.ID, r.Keyword)
			}
			if want := tableCosine(q.Text, r.Memory.Content); math.Abs(r.Vector-want) > 1e-5 {
				t.Errorf("#%d Vector = %v, want cosine %v", r.Memory.ID, r.Vector, want)
			}
			blend := alpha*max(0, r.Vector) + (1-alpha)*r.Keyword
			if d := r.Score - blend; d < -1e-9 || d > 0.01+1e-9 {
				t.Errorf("#%d Score %v = blend %v + %v; tie-breakers must add [0, 0.01]", r.Memory.ID, r.Score, blend, d)
			}
		}
	}

	t.Run("ScoreIsAlphaBlendPlusTieBreak", func(t *testing.T) {
		res := mustSearch(t, s, q)
		for _, m := range []*memory.Memory{keywordStrong, vectorOnly, both} {
			if r, ok := find(res, m.ID); !ok || !matched(r) {
				t.Fatalf("#%d %q not recalled:%s", m.ID, m.Content, describe(res))
			}
		}
		if r, ok := find(res, neither.ID); ok && matched(r) {
			t.Fatalf("#%d %q matched neither leg but scored %+v", neither.ID, neither.Content, r)
		}
		checkBlend(t, res, ltm.DefaultAlpha)
	})
	t.Run("VectorOnlyCandidateFound", func(t *testing.T) {
		r, ok := find(mustSearch(t, s, q), vectorOnly.ID)
		if !ok || r.Keyword != 0 || r.Vector < 0.999 {
			t.Fatalf("espresso memory for query coffee: found=%v %+v, want Keyword 0 and Vector 1", ok, r)
		}
	})
	t.Run("SharedWordGivesKeywordScore", func(t *testing.T) {
		res := mustSearch(t, s, q)
		for _, m := range []*memory.Memory{keywordStrong, both} {
			if r, _ := find(res, m.ID); r.Keyword <= 0 {
				t.Errorf("#%d %q shares the query word but Keyword = %v", m.ID, m.Content, r.Keyword)
			}
		}
	})
	t.Run("DefaultAlphaRanksVectorMatchAboveKeywordMatch", func(t *testing.T) {
		res := mustSearch(t, s, q)
		rs, _ := find(res, keywordStrong.ID)
		rv, _ := find(res, vectorOnly.ID)
		if rv.Score <= rs.Score {
			t.Fatalf("alpha 0.7: vector-only scores %v, keyword match %v; want the vector match higher:%s", rv.Score, rs.Score, describe(res))
		}
	})
	t.Run("LowAlphaRanksKeywordMatchAboveVectorMatch", func(t *testing.T) {
		s.Alpha = 0.1
		defer func() { s.Alpha = ltm.DefaultAlpha }()
		res := mustSearch(t, s, q)
		checkBlend(t, res, 0.1)
		rs, _ := find(res, keywordStrong.ID)
		rv, _ := find(res, vectorOnly.ID)
		if rs.Score <= rv.Score {
			t.Fatalf("alpha 0.1: keyword match scores %v, vector-only %v; want the keyword match higher", rs.Score, rv.Score)
		}
	})
	t.Run("MinScoreDropsLowResults", func(t *testing.T) {
		all := mustSearch(t, s, q)
		cut := (all[1].Score + all[2].Score) / 2
		q := q
		q.MinScore = cut
		res := mustSearch(t, s, q)
		if !slices.Equal(idsOf(res), idsOf(all[:2])) {
			t.Fatalf("MinScore %v kept %v, want the two results above it %v", cut, idsOf(res), idsOf(all[:2]))
		}
		q.MinScore = all[0].Score + 0.001
		if res := mustSearch(t, s, q); len(res) != 0 {
			t.Fatalf("MinScore above every score kept %d results", len(res))
		}
	})
}

func TestRecallKeywordNormalization(t *testing.T) {
	s, _ := recallStore(t, false)
	owner := memory.ServerOwner("gKw")
	best := testkit.MustRemember(t, s, server("gKw", "lantern festival lantern parade lantern"))
	mid := testkit.MustRemember(t, s, server("gKw", "lantern light"))
	weak := testkit.MustRemember(t, s, server("gKw", "we hung one lantern above the long wooden porch yesterday evening"))
	testkit.MustRemember(t, s, server("gKw", "nothing relevant here"))

	res := mustSearch(t, s, memory.SearchQuery{Text: "lantern", Owners: []memory.Owner{owner}})
	wantOnly(t, res, best.ID, mid.ID, weak.ID)

	t.Run("BetterBM25MatchScoresHigher", func(t *testing.T) {
		kw := func(id int64) float64 { r, _ := find(res, id); return r.Keyword }
		if !(kw(best.ID) > kw(mid.ID) && kw(mid.ID) > kw(weak.ID)) {
			t.Fatalf("keyword scores best %v, mid %v, weak %v; want strictly decreasing", kw(best.ID), kw(mid.ID), kw(weak.ID))
		}
		if res[0].Memory.ID != best.ID {
			t.Fatalf("top = #%d, want the three-mention memory #%d", res[0].Memory.ID, best.ID)
		}
	})
	t.Run("KeywordIsBM25OverOnePlusBest", func(t *testing.T) {
		// The documented formula for a one-word query (one term, no phrase pairs), worked
		// out by hand over the scope's own statistics: x = idf × f(k1+1) / (f + k1(1 − b +
		// b·|D|/avgdl)), idf = ln(1 + (N − df + 0.5)/(df + 0.5)), and k = x / (1 + xmax).
		p := s.KeywordParams
		docs := map[int64]string{best.ID: "lantern festival lantern parade lantern", mid.ID: "lantern light",
			weak.ID: "we hung one lantern above the long wooden porch yesterday evening", 0: "nothing relevant here"}
		lens := map[int64]float64{}
		var total float64
		for id, text := range docs {
			kwindex.Tokenize(text, func(string, bool) { lens[id]++ })
			total += lens[id]
		}
		n, df := float64(len(docs)), 3.0
		avgdl := total / n
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		x := map[int64]float64{}
		var xmax float64
		for id, f := range map[int64]float64{best.ID: 3, mid.ID: 1, weak.ID: 1} {
			x[id] = idf * f * (p.K1 + 1) / (f + p.K1*(1-p.B+p.B*lens[id]/avgdl))
			xmax = max(xmax, x[id])
		}
		for _, r := range res {
			want := x[r.Memory.ID] / (1 + xmax)
			if math.Abs(r.Keyword-want) > 1e-9 {
				t.Errorf("#%d Keyword = %v, want %v / (1 + %v) = %v", r.Memory.ID, r.Keyword, x[r.Memory.ID], xmax, want)
			}
			if r.Keyword <= 0 || r.Keyword >= 1 {
				t.Errorf("#%d Keyword = %v, want in (0,1)", r.Memory.ID, r.Keyword)
			}
			if d := r.Score - r.Keyword; d < 0 || d > 0.01 {
				t.Errorf("#%d keyword-only Score %v is not Keyword %v plus at most 0.01", r.Memory.ID, r.Score, r.Keyword)
			}
		}
	})
}

func TestRecallFilters(t *testing.T) {
	forEachMode(t, func(t *testing.T, hybrid bool) {
		s, _ := recallStore(t, hybrid)
		owner := memory.ServerOwner("gF")
		day := func(d int) time.Time { return time.Date(2025, 1, d, 12, 0, 0, 0, time.UTC) }
		// The store's clock stands on the day the memories were made, so no importance has
		// decayed yet (TestRecallImportanceMinDecays covers decay in this filter).
		s.Now = testkit.NewClock(day(1)).Now
		remember := func(m memory.Memory) *memory.Memory {
			m.Scope, m.GuildID = memory.ScopeServer, "gF"
			if m.CreatedAt.IsZero() {
				m.CreatedAt = day(1)
			}
			return testkit.MustRemember(t, s, m)
		}
		// Every memory mentions the lantern and differs from plain in exactly one field.
		plain := remember(memory.Memory{Content: "lantern plain note"})
		decision := remember(memory.Memory{Content: "lantern decision note", Type: memory.TypeDecision})
		tagged := remember(memory.Memory{Content: "lantern tagged note", Tags: []string{"Camping"}})
		important := remember(memory.Memory{Content: "lantern important note", Importance: 0.9})
		recent := remember(memory.Memory{Content: "lantern recent note", CreatedAt: day(20)})
		pinned := remember(memory.Memory{Content: "lantern pinned note", Pinned: true})
		all := []int64{plain.ID, decision.ID, tagged.ID, important.ID, recent.ID, pinned.ID}

		cases := []struct {
			name string
			set  func(*memory.SearchQuery)
			want []int64
		}{
			{"NoFilterFindsAll", func(*memory.SearchQuery) {}, all},
			{"TypesKeepsDecisionOnly", func(q *memory.SearchQuery) { q.Types = []memory.Type{memory.TypeDecision} }, []int64{decision.ID}},
			{"TwoTypesKeepEither", func(q *memory.SearchQuery) {
				q.Types = []memory.Type{memory.TypeDecision, memory.TypeFact}
			}, []int64{plain.ID, decision.ID, tagged.ID, important.ID, recent.ID, pinned.ID}},
			{"TagsKeepsTaggedOnly", func(q *memory.SearchQuery) { q.Tags = []string{"CAMPING"} }, []int64{tagged.ID}},
			{"UnknownTagKeepsNothing", func(q *memory.SearchQuery) { q.Tags = []string{"fishing"} }, nil},
			{"ImportanceMinKeepsImportantOnly", func(q *memory.SearchQuery) { q.ImportanceMin = 0.8 }, []int64{important.ID}},
			{"SinceKeepsRecentOnly", func(q *memory.SearchQuery) { q.Since = day(10) }, []int64{recent.ID}},
			{"PinnedOnlyKeepsPinnedOnly", func(q *memory.SearchQuery) { q.PinnedOnly = true }, []int64{pinned.ID}},
			{"FiltersCombineWithAnd", func(q *memory.SearchQuery) { q.PinnedOnly, q.Since = true, day(10) }, nil},
		}
		// "lantern" reaches every memory through both legs; "lamp" shares no word with them,
		// so in the hybrid store it exercises the vector leg's own filtering.
		texts := []string{"lantern"}
		if hybrid {
			texts = append(texts, "lamp")
		}
		for _, text := range texts {
			group := "ByKeywordAndVector"
			if text == "lamp" {
				group = "ByVectorOnly"
			}
			for _, c := range cases {
				t.Run(group+"/"+c.name, func(t *testing.T) {
					q := memory.SearchQuery{Text: text, Owners: []memory.Owner{owner}}
					c.set(&q)
					res := mustSearch(t, s, q)
					wantOnly(t, res, c.want...)
					for _, r := range res {
						if !matched(r) {
							t.Errorf("#%d returned without a match:%s", r.Memory.ID, describe(res))
						}
					}
				})
			}
		}
	})
}

func TestRecallScopeIsolation(t *testing.T) {
	forEachMode(t, func(t *testing.T, hybrid bool) {
		s, _ := recallStore(t, hybrid)
		gA, gB := memory.ServerOwner("gA"), memory.ServerOwner("gB")
		uX, uY := memory.PersonalOwner("uX"), memory.PersonalOwner("uY")
		a := testkit.MustRemember(t, s, server("gA", "the guild puppy is called Biscuit"))
		b := testkit.MustRemember(t, s, server("gB", "the guild dog is called Pepper"))
		x := testkit.MustRemember(t, s, personal("uX", "gA", "my hound is named Rex"))
		y := testkit.MustRemember(t, s, personal("uY", "gA", "my puppy is named Mochi"))
		xB := testkit.MustRemember(t, s, personal("uX", "gB", "my hound Rex sleeps in guild B"))
		xDM := testkit.MustRemember(t, s, personal("uX", "", "hound Rex dislikes baths"))

		type scopeCase struct {
			name   string
			q      memory.SearchQuery
			banned []int64
			want   []int64 // must be found (by keyword, or by vector in the hybrid store)
		}
		cases := []scopeCase{
			{"GuildBNeverSeesGuildA", memory.SearchQuery{Text: "puppy Biscuit", Owners: []memory.Owner{gB}}, []int64{a.ID, x.ID, y.ID, xB.ID, xDM.ID}, nil},
			{"GuildANeverSeesGuildB", memory.SearchQuery{Text: "dog Pepper", Owners: []memory.Owner{gA}}, []int64{b.ID, x.ID, y.ID, xB.ID, xDM.ID}, nil},
			{"UserXNeverSeesUserY", memory.SearchQuery{Text: "puppy Mochi", Owners: []memory.Owner{uX}}, []int64{y.ID, a.ID, b.ID}, nil},
			{"UserYNeverSeesUserX", memory.SearchQuery{Text: "hound Rex", Owners: []memory.Owner{uY}}, []int64{x.ID, xB.ID, xDM.ID, a.ID, b.ID}, nil},
			{"OriginGuildKeepsThatGuildsPersonalOnly", memory.SearchQuery{Text: "hound Rex",
				Visible: []memory.Visible{{Owner: uX, OriginGuildID: "gA"}}}, []int64{xB.ID, xDM.ID, y.ID, a.ID, b.ID}, []int64{x.ID}},
			{"NoOriginKeepsEveryPersonal", memory.SearchQuery{Text: "hound Rex",
				Visible: []memory.Visible{{Owner: uX}}}, []int64{y.ID, a.ID, b.ID}, []int64{x.ID, xB.ID, xDM.ID}},
			{"OwnersAndVisibleAddUp", memory.SearchQuery{Text: "dog Pepper hound Rex", Owners: []memory.Owner{gB},
				Visible: []memory.Visible{{Owner: uX, OriginGuildID: "gB"}}}, []int64{a.ID, x.ID, xDM.ID, y.ID}, []int64{b.ID, xB.ID}},
		}
		if hybrid {
			// Synonyms only: these reach the banned memories through the vector leg alone.
			cases = append(cases,
				scopeCase{"VectorLegGuildBNeverSeesGuildA", memory.SearchQuery{Text: "dog", Owners: []memory.Owner{gB}}, []int64{a.ID}, []int64{b.ID}},
				scopeCase{"VectorLegUserYNeverSeesUserX", memory.SearchQuery{Text: "dog", Owners: []memory.Owner{uY}}, []int64{x.ID, xB.ID, xDM.ID}, []int64{y.ID}},
				scopeCase{"VectorLegOriginGuildKeepsThatGuildsPersonalOnly", memory.SearchQuery{Text: "dog",
					Visible: []memory.Visible{{Owner: uX, OriginGuildID: "gA"}}}, []int64{xB.ID, xDM.ID}, []int64{x.ID}},
			)
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := mustSearch(t, s, c.q)
				for _, id := range c.banned {
					if _, ok := find(res, id); ok {
						t.Errorf("#%d leaked into the search:%s", id, describe(res))
					}
				}
				for _, id := range c.want {
					if r, ok := find(res, id); !ok || !matched(r) {
						t.Errorf("#%d not found:%s", id, describe(res))
					}
				}
			})
		}
	})
}

func TestRecallForgottenAndModified(t *testing.T) {
	forEachMode(t, func(t *testing.T, hybrid bool) {
		s, _ := recallStore(t, hybrid)
		owner := memory.ServerOwner("gD")
		gone := testkit.MustRemember(t, s, server("gD", "the spare lantern is in the shed"))
		kept := testkit.MustRemember(t, s, server("gD", "lantern oil sits on the top shelf"))
		texts := []string{"lantern shed"}
		if hybrid {
			texts = append(texts, "lamp") // vector leg only
		}
		search := func(t *testing.T, text string) []memory.SearchResult {
			return mustSearch(t, s, memory.SearchQuery{Text: text, Owners: []memory.Owner{owner}})
		}
		if err := s.Recall.WarmVectors(ctx, owner); err != nil {
			t.Fatal(err)
		}
		indexed := s.Recall.EmbedStatus().Vectors
		if _, err := s.Memories.Forget(ctx, owner, []int64{gone.ID}, "test", ""); err != nil {
			t.Fatal(err)
		}
		if hybrid {
			t.Run("ForgetDropsTheVector", func(t *testing.T) {
				if got := s.Recall.EmbedStatus().Vectors; got != indexed-1 {
					t.Fatalf("index holds %d vectors after forget, want %d", got, indexed-1)
				}
			})
		}
		for _, text := range texts {
			t.Run("ForgottenNeverReturned/"+text, func(t *testing.T) {
				res := search(t, text)
				if _, ok := find(res, gone.ID); ok {
					t.Fatalf("forgotten #%d returned:%s", gone.ID, describe(res))
				}
				if _, ok := find(res, kept.ID); !ok {
					t.Fatalf("live #%d missing:%s", kept.ID, describe(res))
				}
			})
		}
		if _, err := s.Memories.Recover(ctx, owner, gone.ID, 0, "test"); err != nil {
			t.Fatal(err)
		}
		if got := s.Recall.EmbedStatus().Vectors; hybrid && got != indexed {
			t.Errorf("index holds %d vectors after recover, want %d", got, indexed)
		}
		for _, text := range texts {
			t.Run("RecoveredReturnedAgain/"+text, func(t *testing.T) {
				if r, ok := find(search(t, text), gone.ID); !ok || !matched(r) {
					t.Fatalf("recovered #%d not found (%+v)", gone.ID, r)
				}
			})
		}

		pet := testkit.MustRemember(t, s, server("gD", "our mascot is a puppy named Rex"))
		newContent := "our mascot is a guitar named Rex"
		if _, err := s.Memories.Modify(ctx, owner, pet.ID, memory.Change{Content: &newContent}, "test"); err != nil {
			t.Fatal(err)
		}
		t.Run("ModifiedFoundByNewWords", func(t *testing.T) {
			r, ok := find(search(t, "guitar"), pet.ID)
			if !ok || r.Keyword <= 0 || r.Memory.Content != newContent {
				t.Fatalf("modified #%d by its new word: found=%v %+v", pet.ID, ok, r)
			}
			if hybrid && r.Vector < 0.99 {
				t.Fatalf("modified #%d has Vector %v for its new word; the index kept the old vector", pet.ID, r.Vector)
			}
		})
		for _, text := range []string{"puppy", "dog"} {
			t.Run("ModifiedNotFoundByOldWords/"+text, func(t *testing.T) {
				if r, ok := find(search(t, text), pet.ID); ok && matched(r) {
					t.Fatalf("modified #%d still matches its old content: %+v", pet.ID, r)
				}
			})
		}
	})
}

// A memory changed while the provider is down has no vector for its new content yet; it
// must not keep answering with the vector of its old content.
func TestRecallModifiedWhileProviderDown(t *testing.T) {
	s, e := recallStore(t, true)
	owner := memory.ServerOwner("gM")
	pet := testkit.MustRemember(t, s, server("gM", "our mascot is a puppy named Rex"))
	q := memory.SearchQuery{Text: "dog", Owners: []memory.Owner{owner}}
	if r, ok := find(mustSearch(t, s, q), pet.ID); !ok || r.Vector < 0.99 {
		t.Fatalf("before the change: %+v, want a vector match", r) // also caches the query vector
	}
	e.fail.Store(true)
	changed := "our mascot is a guitar named Rex"
	if _, err := s.Memories.Modify(ctx, owner, pet.ID, memory.Change{Content: &changed}, "test"); err != nil {
		t.Fatal(err)
	}
	if r, ok := find(mustSearch(t, s, q), pet.ID); ok && matched(r) {
		t.Fatalf("changed memory still matches its old content's vector: %+v", r)
	}
}

func TestRecallKeywordOnlyFallback(t *testing.T) {
	setup := func(t *testing.T) (*ltm.Store, *tableEmbedder, *testkit.Clock, *memory.Memory, *memory.Memory) {
		s, e := recallStore(t, true)
		clock := testkit.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
		s.Now = clock.Now
		kw := testkit.MustRemember(t, s, server("gE", "coffee beans are in the pantry"))
		vec := testkit.MustRemember(t, s, server("gE", "espresso machine needs descaling"))
		return s, e, clock, kw, vec
	}
	owner := memory.ServerOwner("gE")

	t.Run("EmbedderErrorAnswersFromKeywords", func(t *testing.T) {
		s, e, clock, kw, vec := setup(t)
		e.fail.Store(true)
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "coffee", Owners: []memory.Owner{owner}})
		if err != nil {
			t.Fatalf("search with a failing embedder returned an error: %v", err)
		}
		wantOnly(t, res, kw.ID)
		if res[0].Vector != 0 || res[0].Keyword <= 0 || math.Abs(res[0].Score-res[0].Keyword) > 0.01 {
			t.Fatalf("keyword-only result scored %+v, want Keyword alone", res[0])
		}
		if !s.Recall.EmbedStatus().Down {
			t.Fatal("EmbedStatus does not report the provider down")
		}
		t.Run("ProviderNotAskedWhileDown", func(t *testing.T) {
			calls := e.calls.Load()
			if _, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "coffee pantry", Owners: []memory.Owner{owner}}); err != nil {
				t.Fatal(err)
			}
			if got := e.calls.Load(); got != calls {
				t.Fatalf("provider called %d more times while marked down", got-calls)
			}
		})
		t.Run("VectorLegBackAfterRetryWindow", func(t *testing.T) {
			e.fail.Store(false)
			clock.Advance(s.EmbedRetryAfter + time.Second)
			res := mustSearch(t, s, memory.SearchQuery{Text: "coffee beans", Owners: []memory.Owner{owner}})
			if r, ok := find(res, vec.ID); !ok || r.Vector < 0.99 {
				t.Fatalf("vector-only memory not recalled after the provider recovered:%s", describe(res))
			}
		})
	})
	t.Run("EmbedderFailingFromTheStartAnswersFromKeywords", func(t *testing.T) {
		s, e := recallStore(t, true)
		e.fail.Store(true)
		kw := testkit.MustRemember(t, s, server("gE", "coffee beans are in the pantry"))
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "pantry", Owners: []memory.Owner{owner}})
		if err != nil {
			t.Fatal(err)
		}
		wantOnly(t, res, kw.ID)
	})
	t.Run("HangingEmbedderTimesOutToKeywords", func(t *testing.T) {
		s, e, _, kw, _ := setup(t)
		s.QueryEmbedTimeout = 50 * time.Millisecond
		e.block.Store(true)
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "coffee", Owners: []memory.Owner{owner}})
		if err != nil {
			t.Fatal(err)
		}
		wantOnly(t, res, kw.ID)
	})
	t.Run("KeywordOnlySkipsVectorLeg", func(t *testing.T) {
		s, e, _, kw, vec := setup(t)
		calls := e.calls.Load()
		res := mustSearch(t, s, memory.SearchQuery{Text: "coffee", Owners: []memory.Owner{owner}, KeywordOnly: true})
		if got := e.calls.Load(); got != calls {
			t.Fatalf("KeywordOnly search called the embedder %d times", got-calls)
		}
		wantOnly(t, res, kw.ID)
		if res[0].Vector != 0 {
			t.Fatalf("KeywordOnly result has Vector %v", res[0].Vector)
		}
		// The same query with the vector leg does reach the synonym, so the above is not
		// vacuous.
		if _, ok := find(mustSearch(t, s, memory.SearchQuery{Text: "coffee", Owners: []memory.Owner{owner}}), vec.ID); !ok {
			t.Fatal("hybrid search did not find the vector-only memory")
		}
	})
}

func TestSearchJapanese(t *testing.T) {
	s, _ := recallStore(t, false)
	owner := memory.ServerOwner("gJ")
	fee := testkit.MustRemember(t, s, server("gJ", "来月から会費は500円に上がります"))
	study := testkit.MustRemember(t, s, server("gJ", "勉強会は毎週木曜日に図書館で開催します"))
	apiJa := testkit.MustRemember(t, s, server("gJ", "ＡＰＩの利用制限は毎分60回です"))
	apiEn := testkit.MustRemember(t, s, server("gJ", "The API gateway runs behind the proxy"))
	deploy := testkit.MustRemember(t, s, server("gJ", "明日のdeployはstagingから始めます"))
	testkit.MustRemember(t, s, server("gJ", "駅前のラーメン屋が閉店した"))

	type cjkCase struct {
		name string
		text string
		want int64
		rank string // "only": the one match; "top": ranked first; "found": among the results
	}
	cases := []cjkCase{
		{"TwoCharacterWordFindsFee", "会費", fee.ID, "only"},
		{"TwoCharacterWordInQuestionFindsFee", "会費はいくら？", fee.ID, "top"},
		{"ThreeCharacterWordFindsStudyGroup", "図書館", study.ID, "only"},
		{"LongerPhraseFindsStudyGroup", "勉強会の場所", study.ID, "top"},
		{"HalfWidthAPIWithJapaneseFindsFullWidth", "API 制限", apiJa.ID, "top"},
		{"FullWidthAPIFindsHalfWidth", "ＡＰＩ gateway", apiEn.ID, "top"},
		{"MixedQueryFindsMixedMemory", "staging の deploy", deploy.ID, "only"},
		{"JapaneseWordOfMixedMemory", "明日 deploy", deploy.ID, "only"},
		// English-only queries go to the word index alone, which holds the folded text.
		{"EnglishQueryFindsFullWidth", "what is the api limit", apiJa.ID, "found"},
		{"EnglishQueryFindsLatinInsideJapanese", "deploy from staging", deploy.ID, "only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustSearch(t, s, memory.SearchQuery{Text: c.text, Owners: []memory.Owner{owner}})
			r, ok := find(res, c.want)
			switch {
			case !ok || r.Keyword <= 0:
				t.Fatalf("%q did not find #%d:%s", c.text, c.want, describe(res))
			case c.rank != "found" && res[0].Memory.ID != c.want:
				t.Fatalf("%q: want #%d first:%s", c.text, c.want, describe(res))
			case c.rank == "only" && len(res) != 1:
				t.Fatalf("%q matched more than #%d:%s", c.text, c.want, describe(res))
			}
		})
	}
	t.Run("UnrelatedJapaneseFindsNothing", func(t *testing.T) {
		if res := mustSearch(t, s, memory.SearchQuery{Text: "駐車場", Owners: []memory.Owner{owner}}); len(res) != 0 {
			t.Fatalf("unrelated query matched:%s", describe(res))
		}
	})
}

func TestSearchMixedScriptQueryRanking(t *testing.T) {
	s, _ := recallStore(t, false)
	owner := memory.ServerOwner("gJ")
	apiJa := testkit.MustRemember(t, s, server("gJ", "ＡＰＩの利用制限は毎分60回です"))
	apiEn := testkit.MustRemember(t, s, server("gJ", "The API gateway runs behind the proxy"))
	rapid := testkit.MustRemember(t, s, server("gJ", "The rapid train leaves at noon"))
	res := mustSearch(t, s, memory.SearchQuery{Text: "API 制限", Owners: []memory.Owner{owner}})
	t.Run("LatinQueryWordIsNotMatchedInsideOtherWords", func(t *testing.T) {
		if _, ok := find(res, rapid.ID); ok {
			t.Fatalf("%q matched the word rapid:%s", "API", describe(res))
		}
	})
	// The word index holds "ＡＰＩの" as the word "api", so the memory with both words
	// scores in both legs and ranks above the one with only "API".
	if len(res) == 0 || res[0].Memory.ID != apiJa.ID {
		t.Fatalf("%q: want #%d, which has both words, first:%s", "API 制限", apiJa.ID, describe(res))
	}
	if _, ok := find(res, apiEn.ID); !ok {
		t.Fatalf("%q did not find #%d, which has API:%s", "API 制限", apiEn.ID, describe(res))
	}
}

// The vector leg keeps only its best candidates (50, or 3×Limit) before SQL applies the
// filters, so a filter it does not apply itself lets rows that fail it crowd out rows that
// pass. Here 60 memories with cosine 1 fail each filter and one with cosine 1/√2 passes.
func TestRecallVectorLegFiltersBeforeTopK(t *testing.T) {
	s, _ := recallStore(t, true)
	owner, user := memory.ServerOwner("gV"), memory.PersonalOwner("uV")
	day := func(d int) time.Time { return time.Date(2025, 1, d, 12, 0, 0, 0, time.UTC) }
	var crowd []memory.Memory
	for i := range 60 {
		crowd = append(crowd,
			memory.Memory{Scope: memory.ScopeServer, GuildID: "gV", Content: fmt.Sprintf("lamp number %d", i), CreatedAt: day(1)},
			memory.Memory{Scope: memory.ScopePersonal, UserID: "uV", GuildID: "gB", Content: fmt.Sprintf("lamp number %d", i), CreatedAt: day(1)})
	}
	if _, err := s.Transfer.RememberMany(ctx, crowd, "test"); err != nil {
		t.Fatal(err)
	}
	// "lamp" shares no word with the targets: only the vector leg can find them.
	const content = "the lantern hangs by the pizza oven" // cosine 1/√2 to "lamp"
	target := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "gV", Content: content,
		Type: memory.TypeDecision, Pinned: true, Tags: []string{"garden"}, Importance: 0.9, CreatedAt: day(20)})
	personalTarget := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "uV", GuildID: "gA",
		Content: content, CreatedAt: day(1)})

	cases := []struct {
		name string
		q    memory.SearchQuery
		want int64
	}{
		{"TypesKeepsTheMatchingVectorHit", memory.SearchQuery{Owners: []memory.Owner{owner}, Types: []memory.Type{memory.TypeDecision}}, target.ID},
		{"SinceKeepsTheMatchingVectorHit", memory.SearchQuery{Owners: []memory.Owner{owner}, Since: day(10)}, target.ID},
		{"PinnedOnlyKeepsTheMatchingVectorHit", memory.SearchQuery{Owners: []memory.Owner{owner}, PinnedOnly: true}, target.ID},
		{"OriginGuildKeepsTheMatchingVectorHit", memory.SearchQuery{Visible: []memory.Visible{{Owner: user, OriginGuildID: "gA"}}}, personalTarget.ID},
		{"TagsKeepsTheMatchingVectorHit", memory.SearchQuery{Owners: []memory.Owner{owner}, Tags: []string{"garden"}}, target.ID},
		{"ImportanceMinKeepsTheMatchingVectorHit", memory.SearchQuery{Owners: []memory.Owner{owner}, ImportanceMin: 0.8}, target.ID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.q
			q.Text, q.Limit = "lamp", 10
			res := mustSearch(t, s, q)
			if r, ok := find(res, c.want); !ok || math.Abs(r.Vector-math.Sqrt2/2) > 1e-5 {
				t.Fatalf("#%d (cosine 0.71, passes the filter) not recalled:%s", c.want, describe(res))
			}
		})
	}
}

func TestRecallAccessTracking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	clock := testkit.NewClock(time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC))
	s.Now = clock.Now
	owner := memory.ServerOwner("gT")
	hit := testkit.MustRemember(t, s, server("gT", "the guitar amp is in room 4"))
	miss := testkit.MustRemember(t, s, server("gT", "the piano is tuned monthly"))
	get := func(id int64) *memory.Memory {
		t.Helper()
		m, err := s.Memories.Get(ctx, owner, id)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	search := func() {
		t.Helper()
		res := mustSearch(t, s, memory.SearchQuery{Text: "guitar amp", Owners: []memory.Owner{owner}, CountAccess: true})
		wantOnly(t, res, hit.ID)
	}

	t.Run("RecalledCountedAfterFlush", func(t *testing.T) {
		search()
		if err := s.Recall.FlushAccess(ctx); err != nil {
			t.Fatal(err)
		}
		m := get(hit.ID)
		if m.AccessCount != 1 || !m.AccessedAt.Equal(clock.Now()) {
			t.Fatalf("recalled memory: count %d at %v, want 1 at %v", m.AccessCount, m.AccessedAt, clock.Now())
		}
		if m := get(miss.ID); m.AccessCount != 0 || !m.AccessedAt.IsZero() {
			t.Fatalf("memory that was not recalled: count %d at %v, want untouched", m.AccessCount, m.AccessedAt)
		}
	})
	t.Run("SeveralRecallsAddUpInOneFlush", func(t *testing.T) {
		clock.Advance(time.Hour)
		search()
		search()
		if err := s.Recall.FlushAccess(ctx); err != nil {
			t.Fatal(err)
		}
		if m := get(hit.ID); m.AccessCount != 3 || !m.AccessedAt.Equal(clock.Now()) {
			t.Fatalf("count %d at %v, want 3 at %v", m.AccessCount, m.AccessedAt, clock.Now())
		}
	})
	t.Run("CloseFlushesPendingCounts", func(t *testing.T) {
		search()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		closed = true
		s2, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		m, err := s2.Memories.Get(ctx, owner, hit.ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.AccessCount != 4 {
			t.Fatalf("after Close: count %d, want 4", m.AccessCount)
		}
	})
}
