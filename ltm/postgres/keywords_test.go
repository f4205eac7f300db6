package postgres_test

import (
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/memory"
)

func keywordSearch(t *testing.T, s *postgres.Store, owner memory.Owner, text string) []int64 {
	t.Helper()
	res, err := s.Recall.Search(t.Context(), memory.SearchQuery{Text: text, Owners: []memory.Owner{owner}, KeywordOnly: true})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	return resultIDs(res)
}

// TestPostgresKeywordIndexAcrossProcesses: a store finds what it just wrote at once (its
// next query waits for its own notices), and another store's writes, edits and forgets
// reach its in-memory keyword index by the change feed.
func TestPostgresKeywordIndexAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	a, b := stores[0], stores[1]
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	lantern := remember(t, a, g, "the lantern parade starts at dusk")
	gone := remember(t, a, g, "bring a lantern and snacks")
	for i, s := range stores {
		if got := keywordSearch(t, s, g, "lantern"); len(got) != 2 {
			t.Fatalf("store %d finds %v for lantern, want 2 memories", i, got)
		}
	}
	// Read your own writes: no wait for the feed between the write and the query.
	added := remember(t, b, g, "a paper lantern workshop on sunday")
	if got := keywordSearch(t, b, g, "workshop"); !slices.Equal(got, []int64{added.ID}) {
		t.Errorf("the writing store finds %v for its own new memory, want #%d", got, added.ID)
	}
	if !b.Recall.KeywordIndexHas(added.ID) {
		t.Error("the writing store answered without its keyword index")
	}
	content := "the torch parade starts at dusk"
	if _, err := b.Memories.Modify(ctx, g, lantern.ID, memory.Change{Content: &content}, memory.ActorCLI); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Memories.Forget(ctx, g, []int64{gone.ID}, memory.ActorCLI, ""); err != nil {
		t.Fatal(err)
	}
	syncChanges(t, a)
	if got := keywordSearch(t, a, g, "lantern"); !slices.Equal(got, []int64{added.ID}) {
		t.Errorf("lantern after the other store's writes: %v, want only #%d", got, added.ID)
	}
	if got := keywordSearch(t, a, g, "torch"); !slices.Equal(got, []int64{lantern.ID}) {
		t.Errorf("torch (the edited text): %v, want #%d", got, lantern.ID)
	}
	if a.Recall.KeywordIndexHolds("snacks") || a.Recall.KeywordIndexHas(gone.ID) {
		t.Error("the forgotten memory is still in the other store's keyword index")
	}
}

// TestPostgresForgetMeRemovesKeywords: a forget-me in one process takes the member's words
// out of every process's in-memory keyword index: her memories leave it, and her name
// leaves the memories she wrote in a server, which stay anonymised.
func TestPostgresForgetMeRemovesKeywords(t *testing.T) {
	stores := openShared(t, 2)
	a, b := stores[0], stores[1]
	ctx := t.Context()
	const alice, bob = "100000000000000001", "200000000000000002"
	aliceMe, g := memory.PersonalOwner(alice), memory.ServerOwner("g1")
	hers := remember(t, a, aliceMe, "My locker code is quokka")
	said, err := a.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "the picnic is on saturday",
		Provenance: memory.Provenance{AuthorID: alice, Author: "Wombatina Smith"}}, memory.ActorCLI)
	if err != nil {
		t.Fatal(err)
	}
	his, err := a.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "bring lemonade to the picnic",
		Provenance: memory.Provenance{AuthorID: bob, Author: "Rex Hound"}}, memory.ActorCLI)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		if got := keywordSearch(t, s, aliceMe, "quokka"); !slices.Equal(got, []int64{hers.ID}) {
			t.Fatalf("store %d finds %v for her word, want #%d", i, got, hers.ID)
		}
		if got := keywordSearch(t, s, g, "wombatina"); !slices.Equal(got, []int64{said.Memory.ID}) {
			t.Fatalf("store %d finds %v for her name, want #%d", i, got, said.Memory.ID)
		}
		if !s.Recall.KeywordIndexHolds("quokka") || !s.Recall.KeywordIndexHolds("wombatina") {
			t.Fatalf("store %d's keyword index does not hold her words before her forget-me", i)
		}
	}
	preview, err := a.Confirmations.PreviewForgetMe(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Confirmations.ConfirmForgetMe(ctx, alice, preview.Token); err != nil {
		t.Fatal(err)
	}
	// The store that erased her reads its own write; the other hears of it by the feed.
	syncChanges(t, b)
	for i, s := range stores {
		if got := keywordSearch(t, s, aliceMe, "quokka"); len(got) != 0 {
			t.Errorf("store %d still finds %v for her word", i, got)
		}
		if got := keywordSearch(t, s, g, "wombatina"); len(got) != 0 {
			t.Errorf("store %d still finds %v for her name", i, got)
		}
		for _, word := range []string{"quokka", "locker", "wombatina", "smith"} {
			if s.Recall.KeywordIndexHolds(word) {
				t.Errorf("store %d's keyword index still holds %q", i, word)
			}
		}
		if s.Recall.KeywordIndexHas(hers.ID) {
			t.Errorf("store %d's keyword index still holds her memory #%d", i, hers.ID)
		}
		if got := keywordSearch(t, s, g, "picnic"); len(got) != 2 {
			t.Errorf("store %d finds %v for picnic, want the anonymised memory and his", i, got)
		}
		if !s.Recall.KeywordIndexHolds("lemonade") || !s.Recall.KeywordIndexHas(his.Memory.ID) {
			t.Errorf("store %d's keyword index lost his memory", i)
		}
	}
}

// TestPostgresKeywordIndexAfterReconnect: while the change feed is down, keyword recall
// answers from the database, which sees what another process wrote meanwhile; once the
// feed is back, the indexes that may have missed those writes are rebuilt, and a memory
// forgotten during the gap is in none of them.
func TestPostgresKeywordIndexAfterReconnect(t *testing.T) {
	stores := openShared(t, 2)
	a, b := stores[0], stores[1]
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	kept := remember(t, a, g, "the lantern parade starts at dusk")
	gone := remember(t, a, g, "bring a lantern and snacks")
	if got := keywordSearch(t, b, g, "lantern"); len(got) != 2 || !b.Recall.KeywordIndexHas(gone.ID) {
		t.Fatalf("before: %v, want both memories from the keyword index", got)
	}

	release := b.HoldReconnect()
	pid := b.ListenerPID()
	if _, err := a.Pool().Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFeedDown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Memories.Forget(ctx, g, []int64{gone.ID}, memory.ActorCLI, ""); err != nil {
		t.Fatal(err)
	}
	added := remember(t, a, g, "a paper lantern workshop on sunday")
	// b's own write while its feed is down: answered without waiting for the feed.
	mine := remember(t, b, g, "lantern oil is in the shed")
	want := []int64{kept.ID, added.ID, mine.ID}
	got := keywordSearch(t, b, g, "lantern")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("while the feed is down: %v, want %v", got, want)
	}

	release()
	syncChanges(t, b)
	if b.Recall.KeywordIndexHas(gone.ID) || b.Recall.KeywordIndexHolds("snacks") {
		t.Error("the memory forgotten while the feed was down is still in the keyword index")
	}
	got = keywordSearch(t, b, g, "lantern")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("after the feed is back: %v, want %v", got, want)
	}
	if !b.Recall.KeywordIndexHas(added.ID) || b.Recall.KeywordIndexHas(gone.ID) {
		t.Error("after the feed is back, the keyword index does not answer with the gap's writes")
	}
}
