package main

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The in-process indexes are bounded (KIOKU_VECTOR_CACHE_MB, KIOKU_KEYWORD_INDEX_MEMORIES),
// but Go's collector by default lets the heap grow to twice what is live before it
// collects: a process whose indexes hold 800 MB can sit at 1.6 GB and more. A soft memory
// limit near the bounds makes the collector work at that size instead, so the bounds are
// what the operator sees in the process's resident memory.

const (
	// keywordBytesPerMemory is what the keyword index holds per memory, with margin: 105
	// bytes in one scope of 100,000 memories and 345 in scopes of 1,000 (internal/kwindex
	// TestIndexBytesPerMemory and TestSmallScopesBytesPerMemory), about 260 for kioku
	// bench's corpus in scopes of 1,000 (kioku bench --memprofile).
	keywordBytesPerMemory = 280
	// baseHeapBytes is the rest of a running bot: caches, short-term memory, buffers of
	// the turns and the pipeline in flight.
	baseHeapBytes = 128 << 20
)

// memoryLimitBytes is the soft limit cfg asks for: KIOKU_MEMORY_LIMIT_MB when set, else the
// indexes' bounds plus the base; 0 for none (an unbounded vector cache has no size to
// derive a limit from).
func memoryLimitBytes(cfg Config) int64 {
	if cfg.MemoryLimitMB >= 0 {
		return int64(cfg.MemoryLimitMB) << 20
	}
	if cfg.VectorCacheMB == 0 {
		return 0
	}
	return int64(cfg.VectorCacheMB)<<20 + int64(cfg.KeywordIndexMemories)*keywordBytesPerMemory + baseHeapBytes
}

// A soft limit below the live heap makes the collector run back to back: it then takes up
// to half the CPU and recall slows tenfold. The auto limit is an estimate, so a running bot
// watches the live heap and raises the limit when the live heap comes near it
// (raisedMemoryLimit), logging what it did: the limit then costs no latency even when the
// indexes hold more than estimated, and an operator's own limit is treated the same way.

// memoryLimitHeadroom: the limit is raised once the live heap passes this share of it, to
// the live heap over this share.
const memoryLimitHeadroom = 0.8

// raisedMemoryLimit returns the limit to set when live bytes are live under limit, and
// whether it changed.
func raisedMemoryLimit(limit, live int64) (int64, bool) {
	if limit <= 0 || float64(live) <= memoryLimitHeadroom*float64(limit) {
		return limit, false
	}
	return int64(float64(live) / memoryLimitHeadroom), true
}

// watchMemoryLimit raises the soft limit, every interval until ctx ends, whenever the live
// heap (runtime/metrics /gc/heap/live:bytes, as of the last collection) nears it.
func watchMemoryLimit(ctx context.Context, limit int64, interval time.Duration, logger *slog.Logger) {
	if limit <= 0 {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		live := int64(sample[0].Value.Uint64())
		if next, raised := raisedMemoryLimit(limit, live); raised {
			debug.SetMemoryLimit(next)
			logger.Warn("the live heap came near the memory limit; raised the limit so the collector does not run back to back",
				"live_mb", live>>20, "old_limit_mb", limit>>20, "limit_mb", next>>20)
			limit = next
		}
	}
}

// startMemoryLimit applies cfg's memory limit and watches it every interval until the
// returned stop, which waits for the watcher to end, is called or ctx ends.
func startMemoryLimit(ctx context.Context, cfg Config, interval time.Duration, logger *slog.Logger) (stop func()) {
	limit := applyMemoryLimit(cfg, logger)
	if limit <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchMemoryLimit(ctx, limit, interval, logger)
	}()
	return func() {
		cancel()
		<-done
	}
}

// applyMemoryLimit sets the runtime's soft memory limit from cfg, unless GOMEMLIMIT is set
// (the operator's own setting wins) or cfg asks for none. It returns the limit in force
// from kioku's side, 0 when it set none.
func applyMemoryLimit(cfg Config, logger *slog.Logger) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit := memoryLimitBytes(cfg)
	if limit <= 0 {
		return 0
	}
	debug.SetMemoryLimit(limit)
	logger.Debug("memory limit set", "mb", limit>>20)
	return limit
}
