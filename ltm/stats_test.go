package ltm_test

import (
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestMemoryCounts: live memories are counted by scope and type across every guild and
// member; forgotten ones are not.
func TestMemoryCounts(t *testing.T) {
	s := testkit.MustOpenStore(t)
	if got, err := s.Health.MemoryCounts(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	testkit.MustRemember(t, s, server("g1", "Raids are on Friday"))
	testkit.MustRemember(t, s, server("g2", "The bank is run by Kenji"))
	pref := server("g1", "Replies should be short")
	pref.Type = memory.TypePreference
	testkit.MustRemember(t, s, pref)
	testkit.MustRemember(t, s, personal("u1", "g1", "Alice has a cat called Miso"))
	gone := testkit.MustRemember(t, s, personal("u2", "", "Bob likes green tea"))
	if _, err := s.Memories.Forget(ctx, gone.Owner(), []int64{gone.ID}, "test", "test"); err != nil {
		t.Fatal(err)
	}

	got, err := s.Health.MemoryCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []memory.MemoryCount{
		{Scope: memory.ScopePersonal, Type: memory.TypeFact, Count: 1},
		{Scope: memory.ScopeServer, Type: memory.TypeFact, Count: 2},
		{Scope: memory.ScopeServer, Type: memory.TypePreference, Count: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("MemoryCounts = %+v, want %+v", got, want)
	}
}
