package fakediscord

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"
)

// RateLimitNext makes the next n requests for which match returns true answer
// 429 Too Many Requests the way Discord does when a route's bucket is empty:
// a JSON body with retry_after in seconds (fractions allowed), global false,
// and the Retry-After and X-RateLimit-* headers. A client that honours it
// waits retryAfter before trying again; what it does is recorded like any
// request (Status 429, then the retry). Match sees the request before it is
// routed, as with FailNext.
func (f *Fake) RateLimitNext(n int, match func(Request) bool, retryAfter time.Duration) {
	secs := retryAfter.Seconds()
	raw, err := json.Marshal(map[string]any{
		"message":     "You are being rate limited.",
		"retry_after": secs,
		"global":      false,
		"code":        0,
	})
	if err != nil {
		panic(err) // only plain values above
	}
	header := http.Header{}
	// Retry-After is whole seconds, rounded up as Discord does; the precise
	// wait is in the body and X-RateLimit-Reset-After.
	header.Set("Retry-After", strconv.Itoa(int(math.Ceil(secs))))
	header.Set("X-RateLimit-Limit", "5")
	header.Set("X-RateLimit-Remaining", "0")
	header.Set("X-RateLimit-Reset-After", strconv.FormatFloat(secs, 'f', 3, 64))
	header.Set("X-RateLimit-Scope", "user")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, &failure{remaining: n, match: match, status: http.StatusTooManyRequests, body: raw, header: header})
}
