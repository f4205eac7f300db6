// Package backoff computes the waits between retries: an exponential delay
// with a cap, and the jitter that spreads callers failing together. Both the
// LLM client's retries and the pipeline's job queue use it.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Exponential is base doubled n times, capped at limit; n <= 0 gives base.
// A limit below base caps base too.
func Exponential(base, limit time.Duration, n int) time.Duration {
	d := min(base, limit)
	for range n {
		if d > limit/2 {
			// Doubling would pass the cap (or overflow); the cap is the answer.
			return limit
		}
		d *= 2
	}
	return d
}

// EqualJitter picks the actual wait uniformly between half and all of d, so
// that many callers failing together do not retry in lockstep.
func EqualJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
