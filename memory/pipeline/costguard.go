package pipeline

import (
	"sync"
	"time"
)

// CostGuard caps model calls in a sliding window (SPEC §4: pipeline calls per hour). It
// only counts; what to do when the budget is spent is the caller's choice, and the
// pipeline's is to let jobs wait, never to fail them.
//
// The count lives in memory, so a restart starts a fresh window; at worst one extra
// window's worth of calls, which a crash loop already bounds by the job's max attempts.
type CostGuard struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	calls []time.Time // oldest first, all within window of now
}

// NewCostGuard allows limit calls per window (limit <= 0: unlimited), reading time from now.
func NewCostGuard(limit int, window time.Duration, now func() time.Time) *CostGuard {
	if now == nil {
		now = time.Now
	}
	return &CostGuard{limit: limit, window: window, now: now}
}

// prune drops calls that left the window. Callers hold mu.
func (g *CostGuard) prune(now time.Time) {
	cut := 0
	for cut < len(g.calls) && !g.calls[cut].After(now.Add(-g.window)) {
		cut++
	}
	g.calls = g.calls[cut:]
}

// Take spends one call if the budget allows it. When it does not, retryAt is when the
// oldest call in the window leaves it.
func (g *CostGuard) Take() (ok bool, retryAt time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if g.limit <= 0 {
		return true, now
	}
	g.prune(now)
	if len(g.calls) >= g.limit {
		return false, g.calls[0].Add(g.window)
	}
	g.calls = append(g.calls, now)
	return true, now
}

// Available reports whether a call could be taken now, without taking it.
func (g *CostGuard) Available() (ok bool, retryAt time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if g.limit <= 0 {
		return true, now
	}
	g.prune(now)
	if len(g.calls) >= g.limit {
		return false, g.calls[0].Add(g.window)
	}
	return true, now
}

// Used is the number of calls in the current window.
func (g *CostGuard) Used() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prune(g.now())
	return len(g.calls)
}

// Limit is the number of calls allowed per window; <= 0 means unlimited.
func (g *CostGuard) Limit() int { return g.limit }
