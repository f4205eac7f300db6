package ltm_test

import (
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
)

// TestModelCallBudget: calls are counted per key and day; with a limit the last call is
// taken once and refused after, a call counted without a limit always lands, and a new day
// starts from zero.
func TestModelCallBudget(t *testing.T) {
	s := testkit.MustOpenStore(t)
	ctx := t.Context()
	const day1, day2 = "2025-03-01", "2025-03-02"
	for i := 1; i <= 2; i++ {
		total, ok, err := s.Budgets.AddModelCalls(ctx, "g:1", day1, 1, 2)
		if err != nil || !ok || total != i {
			t.Fatalf("call %d: total %d ok %v %v", i, total, ok, err)
		}
	}
	if total, ok, err := s.Budgets.AddModelCalls(ctx, "g:1", day1, 1, 2); err != nil || ok || total != 2 {
		t.Fatalf("call over the limit: total %d ok %v %v; want refused at 2", total, ok, err)
	}
	if total, ok, err := s.Budgets.AddModelCalls(ctx, "g:1", day1, 3, 0); err != nil || !ok || total != 5 {
		t.Fatalf("calls counted without a limit: total %d ok %v %v; want 5", total, ok, err)
	}
	if n, err := s.Budgets.ModelCalls(ctx, "g:2", day1); err != nil || n != 0 {
		t.Fatalf("another key: %d %v", n, err)
	}
	if n, err := s.Budgets.ModelCalls(ctx, "g:1", day2); err != nil || n != 0 {
		t.Fatalf("the next day before any call: %d %v", n, err)
	}
	if total, ok, err := s.Budgets.AddModelCalls(ctx, "g:1", day2, 1, 2); err != nil || !ok || total != 1 {
		t.Fatalf("first call of the next day: total %d ok %v %v", total, ok, err)
	}
	if n, err := s.Budgets.ModelCalls(ctx, "g:1", day1); err != nil || n != 0 {
		t.Fatalf("the previous day is no longer counted: %d %v", n, err)
	}
	// A server's purge takes its count with it; other servers keep theirs.
	if _, _, err := s.Budgets.AddModelCalls(ctx, "g:2", day2, 1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Guilds.PurgeGuild(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{"g:1": 0, "g:2": 1} {
		if n, err := s.Budgets.ModelCalls(ctx, key, day2); err != nil || n != want {
			t.Fatalf("%s after purging server 1: %d %v, want %d", key, n, err, want)
		}
	}
}
