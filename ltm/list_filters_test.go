package ltm_test

import (
	"context"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// List narrows by author and by words in the content (what /memory list's author filter and
// the id suggestions use), within the listed scope only.
func TestListAuthorAndContains(t *testing.T) {
	s := testkit.MustOpenStore(t)
	ctx := context.Background()
	owner := memory.ServerOwner("gL")
	add := func(guild, content, author string) *memory.Memory {
		return testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
			Provenance: memory.Provenance{AuthorID: author}})
	}
	climbing := add("gL", "The Climbing wall opens at 9", "100")
	add("gL", "Board games on Thursday", "200")
	jp := add("gL", "毎週金曜日にクライミング", "200")
	add("gOther", "Climbing club elsewhere", "100")

	ids := func(opt memory.ListOptions) []int64 {
		t.Helper()
		mems, total, err := s.Memories.List(ctx, owner, opt)
		if err != nil {
			t.Fatal(err)
		}
		if total != len(mems) {
			t.Errorf("total %d for %d listed", total, len(mems))
		}
		var out []int64
		for _, m := range mems {
			out = append(out, m.ID)
		}
		return out
	}
	for _, c := range []struct {
		name string
		opt  memory.ListOptions
		want []int64
	}{
		{"AuthorOnlyInScope", memory.ListOptions{AuthorID: "100"}, []int64{climbing.ID}},
		{"ContainsIgnoresASCIICase", memory.ListOptions{Contains: "climbing WALL"}, []int64{climbing.ID}},
		{"ContainsJapanese", memory.ListOptions{Contains: "クライミング"}, []int64{jp.ID}},
		{"Both", memory.ListOptions{AuthorID: "200", Contains: "金曜"}, []int64{jp.ID}},
		{"NoMatch", memory.ListOptions{Contains: "nothing like this"}, nil},
		{"LikeWildcardsAreLiteral", memory.ListOptions{Contains: "%"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ids(c.opt)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}
