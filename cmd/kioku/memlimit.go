package main

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// The in-process indexes are bounded (KIOKU_VECTOR_CACHE_MB, KIOKU_KEYWORD_INDEX_MEMORIES),
// but Go's collector by default lets the heap grow to twice what is live before it
// collects: a process whose indexes hold 800 MB can sit at 1.6 GB and more. A soft memory
// limit near the bounds makes the collector work at that size instead, so the bounds are
// what the operator sees in the process's resident memory.

const (
	// keywordBytesPerMemory is what the keyword index holds per memory, with margin: 136
	// bytes at 15 words (memory/kwindex TestIndexBytesPerMemory), and about 400 for the
	// longer memories of kioku bench's corpus (names, dates, decisions), whose live heap at
	// 1.1M memories was 1.1 GB with both default bounds. A limit below the live heap makes
	// the collector run back to back (it then takes up to half the CPU and recall's p99
	// rose tenfold), so the estimate errs high.
	keywordBytesPerMemory = 400
	// baseHeapBytes is the rest of a running bot: caches, short-term memory, buffers of
	// the turns and the pipeline in flight.
	baseHeapBytes = 256 << 20
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
