package memory_test

import (
	"math"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

func TestEffectiveImportance(t *testing.T) {
	now := time.Date(2026, 4, 20, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	tests := []struct {
		name string
		m    memory.Memory
		want float64
	}{
		{"ZeroDays", memory.Memory{Importance: 0.8, CreatedAt: now}, 0.8},
		{"UnderADayIsZeroDays", memory.Memory{Importance: 0.8, CreatedAt: now.Add(-day + time.Millisecond)}, 0.8},
		{"OneDay", memory.Memory{Importance: 0.8, CreatedAt: now.Add(-day)}, 0.8 * 0.95},
		{"FourteenDays", memory.Memory{Importance: 0.8, CreatedAt: now.Add(-14 * day)}, 0.8 * math.Pow(0.95, 14)},
		{"WholeDaysOnly", memory.Memory{Importance: 0.8, CreatedAt: now.Add(-14*day - 23*time.Hour)}, 0.8 * math.Pow(0.95, 14)},
		{"LastAccessOverCreation", memory.Memory{Importance: 0.8, CreatedAt: now.Add(-100 * day), AccessedAt: now.Add(-day)}, 0.8 * 0.95},
		{"UpdateDoesNotResetTheClock", memory.Memory{Importance: 0.8, CreatedAt: now.Add(-2 * day), UpdatedAt: now}, 0.8 * 0.95 * 0.95},
		{"PinnedNeverDecays", memory.Memory{Importance: 0.8, Pinned: true, CreatedAt: now.Add(-365 * day)}, 0.8},
		{"DecisionNeverDecays", memory.Memory{Importance: 0.8, Type: memory.TypeDecision, CreatedAt: now.Add(-365 * day)}, 0.8},
		{"OtherTypesDecay", memory.Memory{Importance: 0.8, Type: memory.TypePreference, CreatedAt: now.Add(-day)}, 0.8 * 0.95},
		{"FutureCreationClampsToZeroDays", memory.Memory{Importance: 0.8, CreatedAt: now.Add(3 * day)}, 0.8},
		{"FutureAccessClampsToZeroDays", memory.Memory{Importance: 0.8, CreatedAt: now.Add(-30 * day), AccessedAt: now.Add(day)}, 0.8},
		{"YearsFadeTowardZero", memory.Memory{Importance: 1, CreatedAt: now.Add(-3 * 365 * day)}, math.Pow(0.95, 3*365)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.m.EffectiveImportance(now)
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("EffectiveImportance = %v, want %v", got, tt.want)
			}
			if got > tt.m.Importance {
				t.Errorf("EffectiveImportance = %v, above the base %v", got, tt.m.Importance)
			}
		})
	}
}

func TestDecayDays(t *testing.T) {
	now := time.Date(2026, 4, 20, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		last time.Time
		want int64
	}{
		{"Same", now, 0},
		{"JustUnderOneDay", now.Add(-24*time.Hour + time.Millisecond), 0},
		{"ExactlyOneDay", now.Add(-24 * time.Hour), 1},
		{"Future", now.Add(48 * time.Hour), 0},
		// The zero time is a row without the time, stored as 0: counted from the Unix epoch,
		// as the store's SQL counts it.
		{"ZeroTime", time.Time{}, now.UnixMilli() / (24 * 3600 * 1000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := memory.DecayDays(tt.last, now); got != tt.want {
				t.Errorf("DecayDays = %d, want %d", got, tt.want)
			}
		})
	}
}
