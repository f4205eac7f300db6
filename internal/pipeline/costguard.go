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
//
// Calls are counted per key too (a guild, or one member's DMs), so that no one server or
// member can drain the budget everyone shares: with a share set, ShareSpent says when a
// key has used its part of the window, and the pipeline then lets other keys' waiting jobs
// go first (issue "one member can exhaust the global pipeline budget").
type CostGuard struct {
	limit  int
	window time.Duration
	now    func() time.Time
	share  float64

	mu    sync.Mutex
	calls []guardCall // oldest first, all within window of now
}

type guardCall struct {
	at  time.Time
	key string
}

// NewCostGuard allows limit calls per window (limit <= 0: unlimited), reading time from now.
func NewCostGuard(limit int, window time.Duration, now func() time.Time) *CostGuard {
	if now == nil {
		now = time.Now
	}
	return &CostGuard{limit: limit, window: window, now: now}
}

// WithShare sets the part of the limit (0–1) one key may use while others wait, and
// returns g. 0, a negative value or 1 and more means no share rule. Set it before use.
func (g *CostGuard) WithShare(share float64) *CostGuard {
	g.share = share
	return g
}

// Share returns the share set with WithShare.
func (g *CostGuard) Share() float64 { return g.share }

// prune drops calls that left the window. Callers hold mu.
func (g *CostGuard) prune(now time.Time) {
	cut := 0
	for cut < len(g.calls) && !g.calls[cut].at.After(now.Add(-g.window)) {
		cut++
	}
	g.calls = g.calls[cut:]
}

// Take spends one call if the budget allows it. When it does not, retryAt is when the
// oldest call in the window leaves it.
func (g *CostGuard) Take() (ok bool, retryAt time.Time) { return g.TakeFor("") }

// TakeFor is Take on behalf of key, whose calls ShareSpent counts.
func (g *CostGuard) TakeFor(key string) (ok bool, retryAt time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if g.limit <= 0 {
		return true, now
	}
	g.prune(now)
	if len(g.calls) >= g.limit {
		return false, g.calls[0].at.Add(g.window)
	}
	g.calls = append(g.calls, guardCall{at: now, key: key})
	return true, now
}

// ShareSpent reports whether key has used its share of the window (at least one call, and
// never the whole limit), and when enough of its calls will have left the window to make
// room for one more. Always false without a share rule, a limit or a key.
func (g *CostGuard) ShareSpent(key string) (spent bool, retryAt time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if g.limit <= 0 || g.share <= 0 || g.share >= 1 || key == "" {
		return false, now
	}
	g.prune(now)
	allowed := max(1, int(float64(g.limit)*g.share))
	var mine []time.Time
	for _, c := range g.calls {
		if c.key == key {
			mine = append(mine, c.at)
		}
	}
	if len(mine) < allowed {
		return false, now
	}
	// Oldest first: once the (len-allowed+1)th oldest leaves, the key is under its share.
	return true, mine[len(mine)-allowed].Add(g.window)
}

// UsedBy is the number of calls in the current window made on behalf of key.
func (g *CostGuard) UsedBy(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prune(g.now())
	n := 0
	for _, c := range g.calls {
		if c.key == key {
			n++
		}
	}
	return n
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
		return false, g.calls[0].at.Add(g.window)
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
