package memory

import (
	"math"
	"time"
)

// Importance decay (SPEC §4): a memory nobody has recalled for a while counts for less. The
// stored importance stays the base a person or the pipeline gave; the decayed value is worked
// out whenever it is read, from the base and the time since the memory was last recalled for
// someone, so decay costs no writes: no daily pass over every row, no history row per step.
const (
	// ImportanceDecayPerDay multiplies a memory's importance once per whole day since its
	// last access.
	ImportanceDecayPerDay = 0.95
	// msPerDay is one decay step in the store's Unix-millisecond timestamps.
	msPerDay = int64(24 * time.Hour / time.Millisecond)
)

// DecayDays returns the whole days from last to now, the exponent of the decay. Both times
// count in Unix milliseconds as the store keeps them, the zero time as 0 (a row without the
// time), so that the store's SQL and this function agree to the day. A last time after now
// (a clock that moved back, a row written by a machine whose clock ran ahead) counts as 0
// days: decay never makes a memory more important than its base.
func DecayDays(last, now time.Time) int64 {
	d := unixMilliOrZero(now) - unixMilliOrZero(last)
	if d <= 0 {
		return 0
	}
	return d / msPerDay
}

// DecayedImportance returns base × ImportanceDecayPerDay^days, with days below 0 counted
// as 0.
func DecayedImportance(base float64, days int64) float64 {
	if days <= 0 {
		return base
	}
	return base * math.Pow(ImportanceDecayPerDay, float64(days))
}

// Decays reports whether m's importance decays. Pinned memories never do: pinning says "keep
// this in front". Decisions never do either: a decision the server took stays as binding a
// year later whether or not anyone asked about it in between.
func (m *Memory) Decays() bool {
	return !m.Pinned && m.Type != TypeDecision
}

// LastAccess is the time m's decay counts from: when it was last recalled for someone
// (AccessedAt), else when it was created. UpdatedAt is deliberately not used: it also moves
// when the pipeline merges a fact into the memory, when maintenance repairs it or when it is
// forgotten and recovered, none of which is anyone using the memory.
func (m *Memory) LastAccess() time.Time {
	if !m.AccessedAt.IsZero() {
		return m.AccessedAt
	}
	return m.CreatedAt
}

// EffectiveImportance is m's importance as recall weighs, filters and shows it at now: the
// base Importance × ImportanceDecayPerDay^(whole days since LastAccess), or the base itself
// for a memory that does not decay (Decays).
func (m *Memory) EffectiveImportance(now time.Time) float64 {
	if !m.Decays() {
		return m.Importance
	}
	return DecayedImportance(m.Importance, DecayDays(m.LastAccess(), now))
}

func unixMilliOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
