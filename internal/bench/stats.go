package bench

import (
	"math"
	"slices"
	"time"
)

func pct(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := min(max(int(math.Ceil(p*float64(len(s))))-1, 0), len(s)-1)
	return math.Round(float64(s[i].Microseconds())) / 1000
}

// ratio is a / b to two decimals, 0 when either is not measured.
func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return math.Round(a/b*100) / 100
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }
func mb(b uint64) float64        { return round1(float64(b) / (1 << 20)) }
func round1(x float64) float64   { return math.Round(x*10) / 10 }
func round4(x float64) float64   { return math.Round(x*10000) / 10000 }
