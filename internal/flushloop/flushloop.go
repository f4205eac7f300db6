// Package flushloop runs a flush a moment after it is woken, so that what several writes
// leave waiting goes in one transaction: the background half of the long-term store's vector
// writer and of SQLite's deferred full-text indexing.
package flushloop

import (
	"context"
	"log/slog"
	"time"
)

// Loop runs a flush a moment after it is woken, and a last one when stopped. The zero Loop
// is not started: Wake does nothing and Stop returns at once.
type Loop struct {
	kick  chan struct{}
	quit  chan struct{}
	done  chan struct{}
	delay func() time.Duration
	// full reports that enough waits to flush at once, without the delay (nil: never).
	full  func() bool
	flush func(ctx context.Context) error
	// failed is logged with a flush's error.
	failed string
}

// Start runs the loop: woken, it waits delay() (unless full, when not nil, reports that
// enough waits already) and calls flush, logging its error with failed.
func (l *Loop) Start(flush func(ctx context.Context) error, delay func() time.Duration, full func() bool, failed string) {
	l.flush, l.delay, l.full, l.failed = flush, delay, full, failed
	l.kick = make(chan struct{}, 1)
	l.quit = make(chan struct{})
	l.done = make(chan struct{})
	go l.loop()
}

func (l *Loop) loop() {
	defer close(l.done)
	for {
		select {
		case <-l.quit:
			return
		case <-l.kick:
		}
		if l.full == nil || !l.full() {
			select {
			case <-l.quit:
				return // stop flushes what waits
			case <-time.After(l.delay()):
			}
		}
		if err := l.flush(context.Background()); err != nil {
			slog.Warn(l.failed, slog.Any("err", err))
		}
	}
}

// Started reports whether the loop runs.
func (l *Loop) Started() bool { return l.kick != nil }

// Wake asks the loop to flush after its delay.
func (l *Loop) Wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Stop ends the loop and flushes what waits.
func (l *Loop) Stop() {
	if !l.Started() {
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
