// Package keyrate limits a rate per key (a member, a server, a client address, a session):
// a token bucket per key, refilling at a number a minute in bursts of as many, kept in one
// process. The chat engine limits turns with it and the web dashboard requests.
package keyrate

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// sweepSize is how many buckets may pile up before full ones are dropped. A bucket that
// has refilled completely is indistinguishable from a new one, so dropping it loses
// nothing; sweeping only past this size keeps the common path to a map lookup.
const sweepSize = 10_000

// Limiter is a rate limit per key. It is safe for concurrent use.
type Limiter struct {
	mu    sync.Mutex
	every rate.Limit
	burst int
	keys  map[string]*rate.Limiter
}

// New returns a limiter allowing perMinute a minute per key, in bursts of perMinute.
func New(perMinute int) *Limiter {
	return &Limiter{every: rate.Limit(float64(perMinute) / 60), burst: perMinute, keys: make(map[string]*rate.Limiter)}
}

// Take takes one from key's bucket at now. When the bucket is empty it reports false and
// roughly how long until the next is allowed. undo gives it back, for a request a later
// check refuses after all.
func (l *Limiter) Take(key string, now time.Time) (undo func(), wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, found := l.keys[key]
	if !found {
		if len(l.keys) >= sweepSize {
			l.sweep(now)
		}
		lim = rate.NewLimiter(l.every, l.burst)
		l.keys[key] = lim
	}
	if tokens := lim.TokensAt(now); tokens < 1 {
		return func() {}, time.Duration((1 - tokens) / float64(l.every) * float64(time.Second)), false
	}
	// A token is there, so the reservation is immediate; cancelling it at the time it was
	// made puts the token back.
	r := lim.ReserveN(now, 1)
	return func() { r.CancelAt(now) }, 0, true
}

// sweep drops the buckets that are full again.
func (l *Limiter) sweep(now time.Time) {
	for k, lim := range l.keys {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.keys, k)
		}
	}
}
