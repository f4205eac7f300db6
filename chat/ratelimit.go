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

// limiter is the per-user turn rate limit: a token bucket per user refilling at
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

// allow takes one turn from userID's bucket at now. When the bucket is empty it reports
// false and roughly how long until the next turn is allowed.
func (l *limiter) allow(userID string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.users[userID]
	if !ok {
		if len(l.users) >= limiterSweepSize {
			l.sweep(now)
		}
		lim = rate.NewLimiter(l.every, l.burst)
		l.users[userID] = lim
	}
	if lim.AllowN(now, 1) {
		return 0, true
	}
	missing := 1 - lim.TokensAt(now)
	return time.Duration(missing / float64(l.every) * float64(time.Second)), false
}

// sweep drops the limiters of users whose bucket is full again.
func (l *limiter) sweep(now time.Time) {
	for id, lim := range l.users {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.users, id)
		}
	}
}
