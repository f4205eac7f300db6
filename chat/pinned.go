package chat

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// DefaultPinnedTTL is how long a guild's pinned server memories are reused between turns
// at most. Pinned memories are curated by admins and change rarely, while reading them
// costs a pass over the guild's whole server memory. Staleness is not what the TTL bounds:
// every use first compares the store's pinned change counter (Memories.PinnedVersion), which
// any change by any path or process moves, so a forgotten pinned memory is never served.
const DefaultPinnedTTL = time.Minute

// pinnedCache keeps each guild's pinned server memories for a short while.
type pinnedCache struct {
	limit int
	ttl   time.Duration
	now   func() time.Time

	mu     sync.Mutex
	guilds map[string]pinnedEntry
	// gen counts invalidations, so a load that raced with one is not cached: it may
	// have read the memories from before the change.
	gen uint64
}

type pinnedEntry struct {
	mems     []*memory.Memory
	loadedAt time.Time
	// version is the store's pinned change counter read before the memories were.
	version int64
}

func newPinnedCache(limit int, ttl time.Duration, now func() time.Time) *pinnedCache {
	return &pinnedCache{limit: limit, ttl: ttl, now: now, guilds: make(map[string]pinnedEntry)}
}

// get returns the guild's pinned memories, newest first, loading them when the cached
// copy is missing or older than the TTL. The slice is the caller's; the memories are
// shared and must not be modified.
func (c *pinnedCache) get(ctx context.Context, store Memories, guildID string) ([]*memory.Memory, error) {
	now := c.now()
	owner := memory.ServerOwner(guildID)
	// Read before the memories: a change that lands between the two reads leaves an older
	// version with the entry, so the next turn loads again rather than keep stale data.
	version, err := store.PinnedVersion(ctx, owner)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	ent, ok := c.guilds[guildID]
	gen := c.gen
	c.mu.Unlock()
	if ok && ent.version == version && now.Sub(ent.loadedAt) < c.ttl && !now.Before(ent.loadedAt) {
		return slices.Clone(ent.mems), nil
	}
	// Loaded without the lock: two turns of one guild may both load at expiry, which
	// costs one extra read and never blocks the other guilds' turns.
	pinned := true
	mems, _, err := store.List(ctx, owner, memory.ListOptions{Pinned: &pinned, Limit: c.limit})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen == gen {
		if len(c.guilds) >= pinnedCacheSize {
			clear(c.guilds)
		}
		c.guilds[guildID] = pinnedEntry{mems: mems, loadedAt: now, version: version}
	}
	c.mu.Unlock()
	return slices.Clone(mems), nil
}

// pinnedCacheSize bounds the cache; past it the whole cache is dropped, which at worst
// costs each active guild one reload.
const pinnedCacheSize = 10_000

// invalidate drops a guild's cached pinned memories.
func (c *pinnedCache) invalidate(guildID string) {
	c.mu.Lock()
	delete(c.guilds, guildID)
	c.gen++
	c.mu.Unlock()
}

// Invalidate drops what the engine caches about a guild's server memory, so the next turn
// there reads it afresh. Callers need not: the cache notices every change to pinned
// memories by itself (Memories.PinnedVersion); Invalidate remains for callers that want a
// reload regardless.
func (e *Engine) Invalidate(guildID string) {
	if guildID != "" {
		e.pinned.invalidate(guildID)
	}
}
