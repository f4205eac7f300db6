package postgres

import "time"

// The forget-me fences are the service's (ltm fence.go); what stays here is how long they
// are kept, which the change feed (changes.go) reads to tell a fence it has seen from a new
// one. It goes when the change feed folds.

// forgetFenceKeep is how long a forget fence is kept: far longer than any pipeline job
// runs (leases are minutes, a postponed job restarts without its checkpoint), short enough
// that the member's id does not linger. Retention removes older fences.
const forgetFenceKeep = 24 * time.Hour
