package spend

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// TestMeterChargesThePayerAndLimitsItsRate: each embedding call is charged to the daily
// budget of its context's payer and passes that payer's rate; a refused call never reaches
// the provider, wraps memory.ErrSpendLimited and is noted in its context; other payers are
// not affected; a call without a payer passes uncharged.
func TestMeterChargesThePayerAndLimitsItsRate(t *testing.T) {
	ctx := t.Context()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	budget := chat.NewDailyBudget(3, store.Budgets, clock)
	m := New(budget, 2, nil)
	m.now = clock
	provider := 0
	embed := m.Embedder(func(context.Context, []string) ([][]float32, error) {
		provider++
		return [][]float32{{1}}, nil
	})
	used := func(key string) int {
		t.Helper()
		n, err := store.Budgets.ModelCalls(ctx, key, now.Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	call := func(p memory.Payer) (refused bool) {
		t.Helper()
		pctx := memory.WithPayer(ctx, p)
		_, err := embed(pctx, []string{"a query"})
		if err != nil && !errors.Is(err, memory.ErrSpendLimited) {
			t.Fatal(err)
		}
		if (err != nil) != memory.SpendLimited(pctx) {
			t.Fatalf("error %v, but SpendLimited says %v", err, memory.SpendLimited(pctx))
		}
		return err != nil
	}
	a := memory.Payer{GuildID: "A", UserID: "u1"}
	if call(a) || call(a) {
		t.Fatal("calls within the rate and budget refused")
	}
	if !call(a) || provider != 2 || used("g:A") != 2 {
		t.Fatalf("third call in a minute of a 2-a-minute rate: provider asked %d times, %d counted; want refused, 2 and 2", provider, used("g:A"))
	}
	if call(memory.Payer{ChannelID: "dm-1"}) || used("dm:dm-1") != 1 {
		t.Fatal("a member's DMs paid for by server A's rate or budget")
	}
	now = now.Add(time.Minute)
	if call(a) || used("g:A") != 3 {
		t.Fatal("a call after the rate refilled refused")
	}
	if !call(a) || provider != 4 || used("g:A") != 3 {
		t.Fatalf("a call over the daily budget: provider asked %d times, %d counted; want refused, 4 and 3", provider, used("g:A"))
	}
	if _, err := embed(ctx, []string{"from the CLI"}); err != nil || provider != 5 {
		t.Fatalf("a call without a payer: %v (provider asked %d times)", err, provider)
	}
}
