package sqlite

import (
	"context"
	"log/slog"
	"time"
)

// flushLoop runs a flush a moment after it is woken, so that what several writes leave
// waiting goes in one transaction, and a last one when stopped: the background half of the
// index writer (ltm's vector writer has one of its own).
type flushLoop struct {
	kick  chan struct{}
	quit  chan struct{}
	done  chan struct{}
	delay func() time.Duration
	flush func(ctx context.Context) error
	// failed is logged with a flush's error.
	failed string
}

func (l *flushLoop) start(flush func(ctx context.Context) error, delay func() time.Duration, failed string) {
	l.flush, l.delay, l.failed = flush, delay, failed
	l.kick = make(chan struct{}, 1)
	l.quit = make(chan struct{})
	l.done = make(chan struct{})
	go l.loop()
}

func (l *flushLoop) loop() {
	defer close(l.done)
	for {
		select {
		case <-l.quit:
			return
		case <-l.kick:
		}
		select {
		case <-l.quit:
			return // stop flushes what waits
		case <-time.After(l.delay()):
		}
		if err := l.flush(context.Background()); err != nil {
			slog.Warn(l.failed, slog.Any("err", err))
		}
	}
}

// started reports whether the loop runs.
func (l *flushLoop) started() bool { return l.kick != nil }

// wake asks the loop to flush after its delay.
func (l *flushLoop) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// stop ends the loop and flushes what waits.
func (l *flushLoop) stop() {
	if !l.started() {
		return
	}
	close(l.quit)
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.flush(ctx); err != nil {
		slog.Warn(l.failed, slog.Any("err", err))
	}
}
