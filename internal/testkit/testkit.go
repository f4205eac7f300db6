// Package testkit holds helpers shared by kioku's tests: a real SQLite store in a temporary
// directory, a controllable clock, and Must* helpers. The fake OpenAI server and the fake
// Discord live in the fakeopenai and fakediscord subpackages.
package testkit

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// MustOpenStore opens a real SQLite store in a fresh temporary directory and closes it when
// the test ends.
func MustOpenStore(tb testing.TB) *ltm.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "kioku.db"))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return s
}

// MustRemember stores a memory and fails the test on error.
func MustRemember(tb testing.TB, s *ltm.Store, m memory.Memory) *memory.Memory {
	tb.Helper()
	res, err := s.Memories.Remember(context.Background(), m, "test")
	if err != nil {
		tb.Fatalf("remember %q: %v", m.Content, err)
	}
	return res.Memory
}

// Clock is a hand-driven clock for TTL, retention and decay tests.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock set to start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
