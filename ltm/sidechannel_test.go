package ltm_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// TestRankingSideChannel measures what memories a member cannot see do to the order of
// those they can, on SQLite (SECURITY.md, "Known limits"). The keyword leg's BM25 statistics
// (document count, average length, each term's document frequency) are the whole scope's,
// hidden channels included, so hidden memories may move visible ones; they never appear,
// and the set of candidates is the audience's.
//
// Part one: 1,000 corpus memories in #general, 200 paraphrase queries from a #general
// member, top 10 each, before and after 500 more memories are saved in #mods. It logs the
// share of queries whose top 10 changed (order or membership) and the mean Kendall tau
// over the results both lists share, and asserts that no hidden memory is ever returned.
//
// Part two, the probe an attacker would run: two visible memories of one length, one saying
// "alpha" twice and one "bravo" once, and a query for both. Hidden memories that say "alpha" lower its weight
// until the bravo memory ranks first: the flip tells the member that hidden memories use
// the word. The test asserts the flip happens (the channel is real, as documented), and
// logs how many hidden memories it took.
func TestRankingSideChannel(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	member := &memory.Audience{Channels: map[string]bool{"general": true}}
	t.Run("Corpus", func(t *testing.T) {
		c := newBenchCorpus(1500)
		s := testkit.MustOpenStore(t)
		s.Recall.SetEmbedder(c.embed, "bench-clustered-384")
		save := func(texts []string, channel string) map[int64]bool {
			t.Helper()
			mems := make([]memory.Memory, len(texts))
			for i, text := range texts {
				mems[i] = memory.Memory{Scope: memory.ScopeServer, GuildID: benchOwner.GuildID, Content: text,
					Source: memory.SourceImport, Provenance: memory.Provenance{ChannelID: channel},
					CreatedAt: time.Date(2024, 1, 1, 0, i, 0, 0, time.UTC)}
			}
			res, err := s.Transfer.RememberMany(ctx, mems, "measure")
			if err != nil {
				t.Fatal(err)
			}
			ids := map[int64]bool{}
			for _, id := range res.IDs {
				ids[id] = true
			}
			return ids
		}
		save(c.texts[:1000], "general")
		modes := []string{"keyword", "hybrid"}
		before := map[string][][]int64{}
		for _, mode := range modes {
			before[mode] = topTens(t, s, c.queries, member, mode == "keyword")
		}
		hidden := save(c.texts[1000:], "mods")
		for _, mode := range modes {
			after := topTens(t, s, c.queries, member, mode == "keyword")
			checkNoneOf(t, hidden, after)
			changed, taus, shared := 0, 0.0, 0
			for i := range after {
				if !slices.Equal(before[mode][i], after[i]) {
					changed++
				}
				if tau, ok := kendallTau(before[mode][i], after[i]); ok {
					taus += tau
					shared++
				}
			}
			t.Logf("%s: %d of %d queries' top 10 changed after 500 hidden #mods memories; mean Kendall tau %.3f over %d queries",
				mode, changed, len(after), taus/float64(max(shared, 1)), shared)
		}
	})
	t.Run("Probe", func(t *testing.T) {
		s := testkit.MustOpenStore(t)
		in := func(channel, content string) *memory.Memory {
			return testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g", Content: content,
				Provenance: memory.Provenance{ChannelID: channel}})
		}
		alpha := in("general", "alpha alpha plans for the weekend")
		bravo := in("general", "bravo plans for the weekend trip")
		for i := range 20 {
			in("general", fmt.Sprintf("unrelated note number %d about lunch", i))
		}
		first := func() int64 {
			res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "alpha bravo", Owners: []memory.Owner{memory.ServerOwner("g")},
				KeywordOnly: true, Audience: member, Limit: 5})
			if err != nil || len(res) == 0 {
				t.Fatalf("search: %d results, %v", len(res), err)
			}
			return res[0].Memory.ID
		}
		if got := first(); got != alpha.ID {
			t.Fatalf("before any hidden memory #%d ranks first, want the alpha memory #%d", got, alpha.ID)
		}
		for k := 1; k <= 50; k++ {
			in("mods", fmt.Sprintf("alpha moderation case %d", k))
			if first() == bravo.ID {
				t.Logf("%d hidden #mods memories saying alpha put the bravo memory first for a #general member", k)
				return
			}
		}
		t.Error("50 hidden memories saying alpha never moved the visible order: update SECURITY.md's bound")
	})
}

// topTens runs every query as the audience and returns the ids of each top 10.
func topTens(t *testing.T, s *ltm.Store, queries []string, aud *memory.Audience, keywordOnly bool) [][]int64 {
	t.Helper()
	out := make([][]int64, len(queries))
	for i, q := range queries {
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: q, Owners: []memory.Owner{benchOwner},
			KeywordOnly: keywordOnly, Audience: aud, Limit: 10})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		for _, r := range res {
			out[i] = append(out[i], r.Memory.ID)
		}
	}
	return out
}

// checkNoneOf fails when a hidden id is in any result list.
func checkNoneOf(t *testing.T, hidden map[int64]bool, lists [][]int64) {
	t.Helper()
	for _, l := range lists {
		for _, id := range l {
			if hidden[id] {
				t.Fatalf("hidden memory #%d was returned to a #general member", id)
			}
		}
	}
}

// kendallTau compares the order of the ids two rankings share: 1 is the same order, -1
// the reverse. Fewer than two shared ids have no order to compare.
func kendallTau(a, b []int64) (float64, bool) {
	var shared []int64
	for _, id := range a {
		if slices.Contains(b, id) {
			shared = append(shared, id)
		}
	}
	if len(shared) < 2 {
		return 0, false
	}
	posB := map[int64]int{}
	for i, id := range b {
		posB[id] = i
	}
	concordant, discordant := 0, 0
	for i := range shared {
		for j := i + 1; j < len(shared); j++ {
			if posB[shared[i]] < posB[shared[j]] {
				concordant++
			} else {
				discordant++
			}
		}
	}
	return float64(concordant-discordant) / float64(concordant+discordant), true
}
