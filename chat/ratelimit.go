package chat

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiterSweepSize is how many per-user limiters may pile up before idle ones are
// dropped. A limiter that has refilled completely is indistinguishable from a new one,
// so dropping it loses nothing; sweeping only past this size keeps the common path to a
// map lookup.
const limiterSweepSize = 10_000

// limiter is a turn rate limit per key: a token bucket per user (or per guild) refilling at
// perMinute per minute, with bursts of perMinute, so someone can fire off a few quick
// messages but not keep the model busy for everyone else.
type limiter struct {
	mu    sync.Mutex
	every rate.Limit
	burst int
	users map[string]*rate.Limiter
}

func newLimiter(perMinute int) *limiter {
	return &limiter{every: rate.Limit(float64(perMinute) / 60), burst: perMinute, users: make(map[string]*rate.Limiter)}
}

// take takes one turn from key's bucket at now. When the bucket is empty it reports false
// and roughly how long until the next turn is allowed. undo gives the turn back, for a
// message that a later check refuses after all (it was no turn).
func (l *limiter) take(key string, now time.Time) (undo func(), wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, found := l.users[key]
	if !found {
		if len(l.users) >= limiterSweepSize {
			l.sweep(now)
		}
		lim = rate.NewLimiter(l.every, l.burst)
		l.users[key] = lim
	}
	if tokens := lim.TokensAt(now); tokens < 1 {
		return func() {}, time.Duration((1 - tokens) / float64(l.every) * float64(time.Second)), false
	}
	// A token is there, so the reservation is immediate; cancelling it at the time it was
	// made puts the token back.
	r := lim.ReserveN(now, 1)
	return func() { r.CancelAt(now) }, 0, true
}

// sweep drops the limiters of users whose bucket is full again.
func (l *limiter) sweep(now time.Time) {
	for id, lim := range l.users {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.users, id)
		}
	}
}
