package storetest

import (
	"context"
	"maps"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// CountStore counts a guild's memories for /kioku status, all of them or those an
// audience may see.
type CountStore interface {
	GuildMemoryCountsWithin(ctx context.Context, guildID string, aud *memory.Audience) (memory.GuildMemoryCounts, error)
}

// testGuildCountsWithin: counts under an audience leave out every memory learned in a
// channel outside it (server and personal, live and forgotten), keep those without an
// origin channel, and do not move when a hidden memory is saved; without an audience they
// count the whole guild.
func testGuildCountsWithin(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.Counts == nil {
		t.Skip("the store has no guild counts")
	}
	ctx := t.Context()
	in := func(channel string, m memory.Memory) memory.Memory {
		m.Provenance.ChannelID = channel
		return m
	}
	general := &memory.Audience{Channels: map[string]bool{"general": true}}
	counts := func(aud *memory.Audience) memory.GuildMemoryCounts {
		t.Helper()
		c, err := s.Counts.GuildMemoryCountsWithin(ctx, "g1", aud)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	same := func(a, b memory.GuildMemoryCounts) bool {
		return a.Server == b.Server && a.Forgotten == b.Forgotten && a.Personal == b.Personal &&
			maps.Equal(a.ServerByType, b.ServerByType)
	}

	fact := server("g1", "The raid is on Friday")
	fact.Type = memory.TypeFact
	mustRemember(t, s, in("general", fact))
	mustRemember(t, s, server("g1", "Older rows have no origin channel"))
	mustRemember(t, s, in("general", personal("u1", "g1", "I like tea")))
	before := counts(general)

	decision := server("g1", "Ban the spammer on sight")
	decision.Type = memory.TypeDecision
	hidden := mustRemember(t, s, in("mods", decision))
	mustRemember(t, s, in("mods", personal("u2", "g1", "I moderate on weekends")))
	gone := mustRemember(t, s, in("mods", server("g1", "An old mods rule")))
	mustForget(t, s, memory.ServerOwner("g1"), gone.ID)

	if after := counts(general); !same(before, after) {
		t.Errorf("a #general member's counts moved with #mods saves: %+v, then %+v", before, after)
	}
	if before.Server != 2 || before.Personal != 1 || before.Forgotten != 0 {
		t.Errorf("a #general member's counts = %+v, want 2 server, 1 personal", before)
	}
	all := counts(nil)
	if all.Server != 3 || all.Personal != 2 || all.Forgotten != 1 || all.ServerByType[hidden.Type] != 1 {
		t.Errorf("the guild's counts = %+v, want 3 server (1 %s), 2 personal, 1 forgotten", all, hidden.Type)
	}
	mods := counts(&memory.Audience{Channels: map[string]bool{"general": true, "mods": true}})
	if !same(all, mods) {
		t.Errorf("an audience of every channel counts %+v, the guild %+v", mods, all)
	}
}
