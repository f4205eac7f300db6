package ltm_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

func ids(res []memory.SearchResult) []int64 {
	out := make([]int64, len(res))
	for i, r := range res {
		out[i] = r.Memory.ID
	}
	return out
}

func keywordScores(t *testing.T, s *ltm.Store, owner memory.Owner, text string) map[int64]float64 {
	t.Helper()
	res := mustSearch(t, s, memory.SearchQuery{Text: text, Owners: []memory.Owner{owner}, KeywordOnly: true})
	out := map[int64]float64{}
	for _, r := range res {
		out[r.Memory.ID] = r.Keyword
	}
	return out
}

// A second store on the same file stands for another process (the CLI, an import): what it
// writes, edits, forgets and purges reaches the first store's in-memory index by its next
// query.
func TestKeywordIndexSeesOtherProcessWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	bot, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	owner := memory.ServerOwner("gShared")
	fill(t, bot, "gShared", 10)
	edited := testkit.MustRemember(t, bot, server("gShared", "the lantern parade starts at dusk"))
	gone := testkit.MustRemember(t, bot, server("gShared", "bring a lantern and snacks"))
	if got := ids(mustSearch(t, bot, memory.SearchQuery{Text: "lantern", Owners: []memory.Owner{owner}})); len(got) != 2 {
		t.Fatalf("before: %v", got)
	}

	cli, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	added := testkit.MustRemember(t, cli, server("gShared", "a paper lantern workshop on sunday"))
	content := "the torch parade starts at dusk"
	if _, err := cli.Memories.Modify(ctx, owner, edited.ID, memory.Change{Content: &content}, memory.ActorCLI); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Memories.Forget(ctx, owner, []int64{gone.ID}, memory.ActorCLI, ""); err != nil {
		t.Fatal(err)
	}

	if got := ids(mustSearch(t, bot, memory.SearchQuery{Text: "lantern", Owners: []memory.Owner{owner}})); !slices.Equal(got, []int64{added.ID}) {
		t.Errorf("lantern after the other process's writes: %v, want only #%d", got, added.ID)
	}
	if got := ids(mustSearch(t, bot, memory.SearchQuery{Text: "torch", Owners: []memory.Owner{owner}})); !slices.Equal(got, []int64{edited.ID}) {
		t.Errorf("torch (the edited text): %v, want #%d", got, edited.ID)
	}
	if bot.Recall.KeywordIndexHolds("snacks") {
		t.Error("a word only the forgotten memory had is still in the index")
	}
}

// One guild's term statistics never move another guild's scores.
func TestKeywordStatisticsArePerScope(t *testing.T) {
	s := testkit.MustOpenStore(t)
	a := memory.ServerOwner("gQuiet")
	fill(t, s, "gQuiet", 12)
	testkit.MustRemember(t, s, server("gQuiet", "the lantern festival is in august"))
	testkit.MustRemember(t, s, server("gQuiet", "lantern repairs cost too much"))
	before := keywordScores(t, s, a, "lantern festival")
	if len(before) != 2 {
		t.Fatalf("want 2 matches, got %v", before)
	}
	loud := make([]memory.Memory, 300)
	for i := range loud {
		loud[i] = server("gLoud", fmt.Sprintf("lantern festival lantern festival number %d", i))
	}
	if _, err := s.Transfer.RememberMany(ctx, loud, "test"); err != nil {
		t.Fatal(err)
	}
	mustSearch(t, s, memory.SearchQuery{Text: "lantern", Owners: []memory.Owner{memory.ServerOwner("gLoud")}})
	after := keywordScores(t, s, a, "lantern festival")
	for id, x := range before {
		if after[id] != x {
			t.Errorf("#%d: keyword score %v became %v after another guild wrote the same words", id, x, after[id])
		}
	}
}

// When retention trimmed changes a process never read, it rebuilds its indexes instead of
// answering from a stale one.
func TestKeywordIndexRebuildsAfterTrimmedLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	bot, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	owner := memory.ServerOwner("gTrim")
	fill(t, bot, "gTrim", 5)
	mustSearch(t, bot, memory.SearchQuery{Text: "chatter", Owners: []memory.Owner{owner}})

	cli, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var want []int64
	for i := range 3 {
		want = append(want, testkit.MustRemember(t, cli, server("gTrim", fmt.Sprintf("the kayak trip number %d", i))).ID)
	}
	raw, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `DELETE FROM memory_changes WHERE seq < (SELECT max(seq) FROM memory_changes)`); err != nil {
		t.Fatal(err)
	}
	got := ids(mustSearch(t, bot, memory.SearchQuery{Text: "kayak", Owners: []memory.Owner{owner}}))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("kayak after a trimmed change log: %v, want %v", got, want)
	}
}

// With a bound smaller than the scopes searched, the least recently searched scope is
// dropped and rebuilt when it is needed again, with the same answers.
func TestKeywordIndexEviction(t *testing.T) {
	s := testkit.MustOpenStore(t)
	s.KeywordIndexMax = 8
	want := map[string]int64{}
	for _, g := range []string{"gE1", "gE2", "gE3"} {
		fill(t, s, g, 4)
		want[g] = testkit.MustRemember(t, s, server(g, "the canoe is in "+g)).ID
	}
	for range 2 {
		for _, g := range []string{"gE1", "gE2", "gE3"} {
			got := ids(mustSearch(t, s, memory.SearchQuery{Text: "canoe", Owners: []memory.Owner{memory.ServerOwner(g)}}))
			if !slices.Equal(got, []int64{want[g]}) {
				t.Errorf("%s: %v, want #%d", g, got, want[g])
			}
		}
	}
	if !s.Recall.KeywordIndexHolds("gE3") || s.Recall.KeywordIndexHolds("gE1") {
		t.Error("the bound did not drop the least recently searched scope")
	}
}

// A scope too large to index inside a query answers from the full-text index until its
// in-memory index is built, and from the index afterwards.
func TestLargeScopeAnswersWhileItsIndexBuilds(t *testing.T) {
	s := testkit.MustOpenStore(t)
	s.KeywordSyncBuild = 3
	owner := memory.ServerOwner("gBig")
	fill(t, s, "gBig", 10)
	canoe := testkit.MustRemember(t, s, server("gBig", "the canoe club meets on tuesdays"))
	first := ids(mustSearch(t, s, memory.SearchQuery{Text: "canoe club", Owners: []memory.Owner{owner}}))
	if !slices.Equal(first, []int64{canoe.ID}) {
		t.Fatalf("first search (full-text index): %v, want #%d", first, canoe.ID)
	}
	if err := s.Recall.WarmKeywordIndex(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if !s.Recall.KeywordIndexHolds("tuesdays") {
		t.Fatal("the scope's index was not built")
	}
	if got := ids(mustSearch(t, s, memory.SearchQuery{Text: "canoe club", Owners: []memory.Owner{owner}})); !slices.Equal(got, first) {
		t.Errorf("after the build: %v, want %v", got, first)
	}
}

// Settle waits for the background build a search started: afterwards the scope's index
// holds its words without anyone warming it.
func TestSettleWaitsForBackgroundBuild(t *testing.T) {
	s := testkit.MustOpenStore(t)
	s.KeywordSyncBuild = 3
	owner := memory.ServerOwner("gSettle")
	fill(t, s, "gSettle", 3000)
	testkit.MustRemember(t, s, server("gSettle", "the rowing club meets on thursdays"))
	mustSearch(t, s, memory.SearchQuery{Text: "rowing club", Owners: []memory.Owner{owner}})
	if err := s.Recall.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if !s.Recall.KeywordIndexHolds("thursdays") {
		t.Fatal("after Settle the scope's index does not hold its words: the background build was not waited for")
	}
}

// Neighbourhood smoothing lifts the messages around a strong match into recall; a search
// that asks for matches only (forget by query, /memory search) never returns them.
func TestMatchesOnlyLeavesNeighboursOut(t *testing.T) {
	s := testkit.MustOpenStore(t)
	owner := memory.ServerOwner("gNb")
	say := func(content string) *memory.Memory {
		m := server("gNb", content)
		m.Provenance = memory.Provenance{ChannelID: "c1", AuthorID: "u1", Author: "Aiko"}
		return testkit.MustRemember(t, s, m)
	}
	raid := say("Raid night is Friday at 20:00")
	kenji := say("Kenji runs the guild bank")
	all := ids(mustSearch(t, s, memory.SearchQuery{Text: "raid", Owners: []memory.Owner{owner}}))
	if !slices.Contains(all, kenji.ID) {
		t.Fatalf("recall without MatchesOnly %v: the neighbour #%d was not lifted, so this test shows nothing", all, kenji.ID)
	}
	only := ids(mustSearch(t, s, memory.SearchQuery{Text: "raid", Owners: []memory.Owner{owner}, MatchesOnly: true}))
	if !slices.Equal(only, []int64{raid.ID}) {
		t.Errorf("MatchesOnly found %v, want only the match #%d", only, raid.ID)
	}
	preview, err := s.Confirmations.PreviewForget(ctx, owner, "raid", memory.UserActor("u1"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(preview.Matches) != 1 || preview.Matches[0].ID != raid.ID {
		t.Errorf("forget-by-query preview %+v, want only #%d", preview.Matches, raid.ID)
	}
}
