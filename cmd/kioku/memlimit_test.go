package main

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
)

// The limit follows the index bounds unless the operator names one; an unbounded vector
// cache gives nothing to derive it from, and GOMEMLIMIT wins over kioku's setting.
func TestMemoryLimit(t *testing.T) {
	base := Config{VectorCacheMB: int(ltm.DefaultVectorCacheBytes >> 20), KeywordIndexMemories: ltm.DefaultKeywordIndexMax, MemoryLimitMB: -1}
	if got, want := memoryLimitBytes(base), ltm.DefaultVectorCacheBytes+int64(ltm.DefaultKeywordIndexMax)*keywordBytesPerMemory+baseHeapBytes; got != want {
		t.Errorf("auto limit = %d, want %d", got, want)
	}
	named := base
	named.MemoryLimitMB = 700
	if got := memoryLimitBytes(named); got != 700<<20 {
		t.Errorf("KIOKU_MEMORY_LIMIT_MB=700 gives %d", got)
	}
	for name, c := range map[string]Config{
		"zero":      {VectorCacheMB: 512, KeywordIndexMemories: 10, MemoryLimitMB: 0},
		"unbounded": {VectorCacheMB: 0, KeywordIndexMemories: 10, MemoryLimitMB: -1},
	} {
		if got := memoryLimitBytes(c); got != 0 {
			t.Errorf("%s: limit %d, want none", name, got)
		}
	}

	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Setenv("GOMEMLIMIT", "")
	if got := applyMemoryLimit(named, logger); got != 700<<20 || debug.SetMemoryLimit(-1) != 700<<20 {
		t.Errorf("applied %d, runtime holds %d; want 700 MB", got, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(before)
	t.Setenv("GOMEMLIMIT", "2GiB")
	if got := applyMemoryLimit(named, logger); got != 0 || debug.SetMemoryLimit(-1) != before {
		t.Errorf("with GOMEMLIMIT set kioku applied %d; the operator's setting must win", got)
	}
}

// The limit is raised once the live heap passes 80% of it, to the live heap over 0.8, and
// never lowered or set where there is none.
func TestRaisedMemoryLimit(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		limit, live, want int64
		raised            bool
	}{
		{limit: 1000 * mb, live: 500 * mb, want: 1000 * mb},
		{limit: 1000 * mb, live: 800 * mb, want: 1000 * mb},
		{limit: 1000 * mb, live: 900 * mb, want: 1125 * mb, raised: true},
		{limit: 1000 * mb, live: 2000 * mb, want: 2500 * mb, raised: true},
		{limit: 0, live: 2000 * mb, want: 0},
	} {
		got, raised := raisedMemoryLimit(c.limit, c.live)
		if got != c.want || raised != c.raised {
			t.Errorf("limit %d MB, live %d MB: got %d MB (raised %v), want %d MB (raised %v)",
				c.limit/mb, c.live/mb, got/mb, raised, c.want/mb, c.raised)
		}
	}
}

// A running watcher raises the runtime's limit when the live heap already passes it.
func TestWatchMemoryLimitRaisesTheRuntimeLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	ballast := make([]byte, 64<<20)
	runtime.GC() // the live heap as of this collection holds the ballast
	const tiny = 16 << 20
	debug.SetMemoryLimit(tiny)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchMemoryLimit(ctx, tiny, time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	for debug.SetMemoryLimit(-1) == tiny {
		runtime.Gosched()
	}
	cancel()
	<-done
	if got := debug.SetMemoryLimit(-1); got < 64<<20 {
		t.Errorf("limit raised to %d MB with a 64 MB ballast live, want more than it", got>>20)
	}
	runtime.KeepAlive(ballast)
}

// startMemoryLimit sets the configured limit, and its stop returns once the watcher ended,
// so a restarted bench sets the bot's limit again without an old watcher raising it.
func TestStartMemoryLimitStops(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	t.Setenv("GOMEMLIMIT", "")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	stop := startMemoryLimit(t.Context(), Config{MemoryLimitMB: 900}, time.Hour, logger)
	if got := debug.SetMemoryLimit(-1); got != 900<<20 {
		t.Errorf("runtime limit %d MB, want 900", got>>20)
	}
	stop()
	stop = startMemoryLimit(t.Context(), Config{MemoryLimitMB: 700}, time.Hour, logger)
	defer stop()
	if got := debug.SetMemoryLimit(-1); got != 700<<20 {
		t.Errorf("after a restart the runtime limit is %d MB, want 700", got>>20)
	}
}
