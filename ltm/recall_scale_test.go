package ltm_test

import (
	"fmt"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// Recall ranks the whole FTS index first and then checks scope (wordLeg). A small server in
// a database dominated by another server's better matches must still get its own matches,
// all of them, and never the other server's.
func TestRecallSmallScopeInLargeDatabase(t *testing.T) {
	s := testkit.MustOpenStore(t)
	var big []memory.Memory
	for i := range 400 {
		big = append(big, server("big", fmt.Sprintf("tea tea tea matcha tea number %d", i)))
	}
	if _, err := s.Transfer.RememberMany(ctx, big, "test"); err != nil {
		t.Fatal(err)
	}
	small := []string{
		"On long winter evenings in the old clubhouse Rin sometimes drinks a cup of tea",
		"The quarterly planning meeting agreed that tea would be served after the talks",
		"Somebody left a box of tea bags next to the projector in room four last week",
	}
	for _, c := range small {
		if _, err := s.Memories.Remember(ctx, server("small", c), "test"); err != nil {
			t.Fatal(err)
		}
	}
	for _, limit := range []int{2, 10} {
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "tea", Owners: []memory.Owner{memory.ServerOwner("small")}, Limit: limit, KeywordOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if want := min(limit, len(small)); len(res) != want {
			t.Fatalf("limit %d: %d results, want %d", limit, len(res), want)
		}
		for _, r := range res {
			if r.Memory.GuildID != "small" {
				t.Fatalf("limit %d: result from guild %q leaked into a search of guild small", limit, r.Memory.GuildID)
			}
		}
	}
	// The dominant server's own search takes the global top list directly and is still
	// ordered best first.
	res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "tea", Owners: []memory.Owner{memory.ServerOwner("big")}, Limit: 10, KeywordOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 10 {
		t.Fatalf("%d results, want 10", len(res))
	}
	for i := 1; i < len(res); i++ {
		if res[i].Keyword > res[i-1].Keyword {
			t.Fatalf("results not ordered by keyword score at %d: %v > %v", i, res[i].Keyword, res[i-1].Keyword)
		}
	}
}
