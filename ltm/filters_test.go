package ltm_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// The until and author filters and the score floor work on both legs: "lantern" reaches
// every memory through the keyword leg (and the vector leg, when hybrid), "lamp" shares no
// word with them and reaches them through the vector leg alone. An author filter never
// reaches past the searched scope.
func TestRecallUntilAuthorMinScore(t *testing.T) {
	forEachMode(t, func(t *testing.T, hybrid bool) {
		s, _ := recallStore(t, hybrid)
		owner := memory.ServerOwner("gU")
		day := func(d int) time.Time { return time.Date(2025, 1, d, 12, 0, 0, 0, time.UTC) }
		s.Now = testkit.NewClock(day(30)).Now
		remember := func(guild, content, author string, created time.Time) *memory.Memory {
			return testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
				CreatedAt: created, Provenance: memory.Provenance{AuthorID: author}})
		}
		early := remember("gU", "lantern early note", "100", day(1))
		middle := remember("gU", "lantern middle note", "200", day(10))
		late := remember("gU", "lantern late note", "100", day(20))
		// Same author, other server: never returned to a search of gU.
		remember("gOther", "lantern note from elsewhere", "100", day(1))

		cases := []struct {
			name string
			set  func(*memory.SearchQuery)
			want []int64
		}{
			{"UntilKeepsOlder", func(q *memory.SearchQuery) { q.Until = day(10) }, []int64{early.ID, middle.ID}},
			{"UntilIsInclusive", func(q *memory.SearchQuery) { q.Until = day(1) }, []int64{early.ID}},
			{"SinceAndUntilWindow", func(q *memory.SearchQuery) { q.Since, q.Until = day(5), day(15) }, []int64{middle.ID}},
			{"AuthorKeepsTheirs", func(q *memory.SearchQuery) { q.AuthorID = "100" }, []int64{early.ID, late.ID}},
			{"AuthorAndUntil", func(q *memory.SearchQuery) { q.AuthorID, q.Until = "100", day(15) }, []int64{early.ID}},
			{"UnknownAuthorKeepsNothing", func(q *memory.SearchQuery) { q.AuthorID = "999" }, nil},
		}
		texts := []string{"lantern"}
		if hybrid {
			texts = append(texts, "lamp")
		}
		for _, text := range texts {
			for _, c := range cases {
				t.Run(text+"/"+c.name, func(t *testing.T) {
					q := memory.SearchQuery{Text: text, Owners: []memory.Owner{owner}}
					c.set(&q)
					wantOnly(t, mustSearch(t, s, q), c.want...)
				})
			}
		}

		// The floor applies to the final score: a floor just above the weakest result drops it
		// and keeps the rest; a floor of 1 keeps nothing.
		q := memory.SearchQuery{Text: "lantern middle", Owners: []memory.Owner{owner}}
		res := mustSearch(t, s, q)
		if len(res) < 2 || res[0].Memory.ID != middle.ID {
			t.Fatalf("lantern middle: want #%d first:%s", middle.ID, describe(res))
		}
		q.MinScore = (res[0].Score + res[1].Score) / 2
		wantOnly(t, mustSearch(t, s, q), middle.ID)
		q.MinScore = 1
		wantOnly(t, mustSearch(t, s, q))
	})
}

// In a scope crowded with closer vectors, until and author are applied inside the vector
// leg, before its top k: the one passing row is still found.
func TestRecallVectorLegUntilAuthorBeforeTopK(t *testing.T) {
	s, _ := recallStore(t, true)
	owner := memory.ServerOwner("gW")
	day := func(d int) time.Time { return time.Date(2025, 1, d, 12, 0, 0, 0, time.UTC) }
	var crowd []memory.Memory
	for i := range 60 {
		crowd = append(crowd, memory.Memory{Scope: memory.ScopeServer, GuildID: "gW", Content: fmt.Sprintf("lamp number %d", i),
			CreatedAt: day(20), Provenance: memory.Provenance{AuthorID: "300"}})
	}
	if _, err := s.Transfer.RememberMany(ctx, crowd, "test"); err != nil {
		t.Fatal(err)
	}
	target := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "gW",
		Content: "the lantern hangs by the pizza oven", CreatedAt: day(1), Provenance: memory.Provenance{AuthorID: "400"}})
	for name, q := range map[string]memory.SearchQuery{
		"Until":  {Until: day(5)},
		"Author": {AuthorID: "400"},
	} {
		t.Run(name, func(t *testing.T) {
			q.Text, q.Limit, q.Owners = "lamp", 10, []memory.Owner{owner}
			res := mustSearch(t, s, q)
			if r, ok := find(res, target.ID); !ok || math.Abs(r.Vector-math.Sqrt2/2) > 1e-5 {
				t.Fatalf("#%d (cosine 0.71, passes the filter) not recalled:%s", target.ID, describe(res))
			}
		})
	}
}

// A bad filter is refused with a message naming it, before any query runs.
func TestRecallBadFilters(t *testing.T) {
	s, _ := recallStore(t, false)
	owner := memory.ServerOwner("gB")
	day := time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		q    memory.SearchQuery
		want string
	}{
		{"SinceAfterUntil", memory.SearchQuery{Since: day, Until: day.Add(-time.Hour)}, "since"},
		{"MinScoreAboveOne", memory.SearchQuery{MinScore: 1.5}, "min_score"},
		{"MinScoreNegative", memory.SearchQuery{MinScore: -0.1}, "min_score"},
		{"MinScoreNaN", memory.SearchQuery{MinScore: math.NaN()}, "min_score"},
		{"UnknownType", memory.SearchQuery{Types: []memory.Type{"gossip"}}, "gossip"},
		{"AuthorNotAnID", memory.SearchQuery{AuthorID: "Aiko"}, "author"},
		{"ImportanceAboveOne", memory.SearchQuery{ImportanceMin: 2}, "importance_min"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.q
			q.Text, q.Owners = "lantern", []memory.Owner{owner}
			_, err := s.Recall.Search(ctx, q)
			if memory.ErrorCode(err) != memory.EINVALID || !strings.Contains(memory.ErrorMessage(err), c.want) {
				t.Fatalf("Search(%s) = %v, want an invalid-input error naming %q", c.name, err, c.want)
			}
		})
	}
}
