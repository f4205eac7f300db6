package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory/backoff"
)

func TestExponential(t *testing.T) {
	tests := map[string]struct {
		base, limit time.Duration
		n           int
		want        time.Duration
	}{
		"FirstIsBase":      {time.Second, time.Hour, 0, time.Second},
		"NegativeIsBase":   {time.Second, time.Hour, -3, time.Second},
		"Doubles":          {time.Second, time.Hour, 3, 8 * time.Second},
		"Capped":           {time.Minute, time.Hour, 6, time.Hour},
		"ExactlyAtCap":     {time.Minute, 4 * time.Minute, 2, 4 * time.Minute},
		"OddCapNotRounded": {time.Minute, 3 * time.Minute, 1, 2 * time.Minute},
		"BaseAboveCap":     {time.Hour, time.Minute, 0, time.Minute},
		"HugeNNoOverflow":  {time.Millisecond, math.MaxInt64, 200, math.MaxInt64},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := backoff.Exponential(tc.base, tc.limit, tc.n); got != tc.want {
				t.Errorf("Exponential(%v, %v, %d) = %v, want %v", tc.base, tc.limit, tc.n, got, tc.want)
			}
		})
	}
}

func TestEqualJitter(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 2, 3, time.Second} {
		for range 200 {
			got := backoff.EqualJitter(d)
			if got < d/2 || got > d {
				t.Fatalf("EqualJitter(%v) = %v, want within [%v, %v]", d, got, d/2, d)
			}
		}
	}
}
