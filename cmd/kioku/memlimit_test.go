package main

import (
	"io"
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/kioku-bot/kioku/ltm"
)

// The limit follows the index bounds unless the operator names one; an unbounded vector
// cache gives nothing to derive it from, and GOMEMLIMIT wins over kioku's setting.
func TestMemoryLimit(t *testing.T) {
	base := Config{VectorCacheMB: int(ltm.DefaultVectorCacheBytes >> 20), KeywordIndexMemories: ltm.DefaultKeywordIndexMax, MemoryLimitMB: -1}
	if got, want := memoryLimitBytes(base), ltm.DefaultVectorCacheBytes+int64(ltm.DefaultKeywordIndexMax)*400+256<<20; got != want {
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
