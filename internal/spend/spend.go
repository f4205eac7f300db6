// Package spend meters the embedding calls kioku makes to its model provider: each is
// charged to the daily model budget of the server (or member's DMs) that pays for it and
// passes that payer's rate limit. cmd/kioku wraps the embedding client with a Meter and
// hands the wrapped function to the store, so every embedding call — the query vectors of
// searches and chat recall, the vectors of new memories and imports, the embedding
// tracker's — goes through this one place. Chat turns and the pipeline's calls draw on the
// same budgets where they are made (chat.DailyBudget).
package spend

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/kioku-bot/kioku/memory"
)

// EmbedFunc embeds texts, one vector per text in order (ltm.EmbedFunc's shape).
type EmbedFunc = func(ctx context.Context, texts []string) ([][]float32, error)

// Budget is the daily model budget a call is charged to; *chat.DailyBudget satisfies it.
type Budget interface {
	// TakeKey spends one call of the budget named key when one is left; ok is false when
	// none is, and resetAt is then when it starts afresh.
	TakeKey(ctx context.Context, key string) (ok bool, resetAt time.Time, err error)
}

// limiterSweepSize is how many per-payer buckets may pile up before full ones are dropped
// (a full bucket is the same as a new one).
const limiterSweepSize = 10_000

// Meter charges embedding calls to their payer (memory.PayerFrom of the call's context).
type Meter struct {
	budget Budget // nil: no daily budget
	every  rate.Limit
	burst  int
	now    func() time.Time
	log    *slog.Logger

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// New meters calls against budget (nil: none) and at most perMinute calls a minute per
// payer, in bursts of as many (perMinute <= 0: no rate limit).
func New(budget Budget, perMinute int, log *slog.Logger) *Meter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Meter{budget: budget, now: time.Now, log: log, buckets: map[string]*rate.Limiter{}}
	if perMinute > 0 {
		m.every, m.burst = rate.Limit(float64(perMinute)/60), perMinute
	}
	return m
}

// Embedder returns fn behind the meter: a call whose payer is over its rate or its daily
// budget is refused with an error wrapping memory.ErrSpendLimited, noted in its context
// (memory.SpendLimited), and never reaches the provider. A call without a payer (the CLI
// run by the operator) passes the rate limit of its own shared bucket and is not charged.
func (m *Meter) Embedder(fn EmbedFunc) EmbedFunc {
	return func(ctx context.Context, texts []string) ([][]float32, error) {
		if err := m.take(ctx); err != nil {
			memory.NoteSpendLimited(ctx)
			return nil, err
		}
		return fn(ctx, texts)
	}
}

// take passes one call of ctx's payer through its rate limit and charges it to its budget.
func (m *Meter) take(ctx context.Context) error {
	p, _ := memory.PayerFrom(ctx)
	key := p.Key()
	if wait, ok := m.pass(key); !ok {
		m.log.InfoContext(ctx, "embedding call refused: rate limit", slog.String("payer", key), slog.Duration("retry_in", wait))
		return fmt.Errorf("%w: embedding rate of %s, retry in %s", memory.ErrSpendLimited, payerName(key), wait.Round(time.Second))
	}
	if m.budget == nil || key == "" {
		return nil
	}
	ok, resetAt, err := m.budget.TakeKey(ctx, key)
	if err != nil {
		return fmt.Errorf("couldn't charge an embedding call: %w", err)
	}
	if !ok {
		m.log.InfoContext(ctx, "embedding call refused: daily model budget spent", slog.String("payer", key), slog.Time("resets_at", resetAt))
		return fmt.Errorf("%w: daily model budget of %s, until %s", memory.ErrSpendLimited, payerName(key), resetAt.Format(time.RFC3339))
	}
	return nil
}

// pass takes one call from key's bucket, or reports roughly how long until one is there.
func (m *Meter) pass(key string) (wait time.Duration, ok bool) {
	if m.burst == 0 {
		return 0, true
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	lim, found := m.buckets[key]
	if !found {
		if len(m.buckets) >= limiterSweepSize {
			m.sweep(now)
		}
		lim = rate.NewLimiter(m.every, m.burst)
		m.buckets[key] = lim
	}
	if tokens := lim.TokensAt(now); tokens < 1 {
		return time.Duration((1 - tokens) / float64(m.every) * float64(time.Second)), false
	}
	lim.AllowN(now, 1)
	return 0, true
}

// sweep drops the buckets that are full again. Callers hold mu.
func (m *Meter) sweep(now time.Time) {
	for k, lim := range m.buckets {
		if lim.TokensAt(now) >= float64(m.burst) {
			delete(m.buckets, k)
		}
	}
}

func payerName(key string) string {
	if key == "" {
		return "calls without a payer"
	}
	return key
}
