package keyrate_test

import (
	"testing"
	"time"

	"github.com/kioku-bot/kioku/keyrate"
)

// TestTakeRefillAndUndo: a key gets its burst, then waits about a refill; another key has
// its own bucket; undo gives a token back.
func TestTakeRefillAndUndo(t *testing.T) {
	l := keyrate.New(60) // one a second, bursts of 60
	now := time.Unix(1_000_000, 0)
	for i := range 60 {
		if _, _, ok := l.Take("a", now); !ok {
			t.Fatalf("take %d of the burst refused", i+1)
		}
	}
	_, wait, ok := l.Take("a", now)
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("past the burst: ok %v, wait %v; want refused for at most a second", ok, wait)
	}
	if _, _, ok := l.Take("b", now); !ok {
		t.Fatal("another key shares the first key's bucket")
	}
	if _, _, ok := l.Take("a", now.Add(time.Second)); !ok {
		t.Fatal("a second later the bucket has not refilled one")
	}
	undo, _, ok := l.Take("c", now)
	if !ok {
		t.Fatal("a new key refused")
	}
	for range 59 {
		l.Take("c", now)
	}
	undo()
	if _, _, ok := l.Take("c", now); !ok {
		t.Fatal("undo did not give the token back")
	}
}
