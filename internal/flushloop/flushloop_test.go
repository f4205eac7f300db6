package flushloop

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoop: a wake flushes once the delay has passed, or at once when enough waits; Stop
// flushes what waits one last time; a zero Loop stops without flushing.
func TestLoop(t *testing.T) {
	var zero Loop
	zero.Wake()
	zero.Stop() // returns: never started

	flushed := make(chan struct{}, 8)
	var calls atomic.Int32
	var full atomic.Bool
	release := make(chan struct{})
	var l Loop
	l.Start(func(context.Context) error {
		calls.Add(1)
		flushed <- struct{}{}
		return errors.New("logged, not returned")
	}, func() time.Duration {
		<-release // the delay ends when the test says so
		return 0
	}, full.Load, "flush failed")
	if !l.Started() {
		t.Fatal("Started is false after Start")
	}

	l.Wake()
	select {
	case <-flushed:
		t.Fatal("flushed before its delay ended")
	case <-time.After(50 * time.Millisecond):
	}
	release <- struct{}{}
	<-flushed

	full.Store(true)
	l.Wake()
	<-flushed // no delay asked: release is never read again

	l.Stop()
	<-flushed
	if n := calls.Load(); n != 3 {
		t.Errorf("flushes %d, want 3 (delayed, full, on stop)", n)
	}
}
