package tools_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// TestAudience: the tools see only memories whose origin channel the conversation's
// audience allows (SPEC §2 "Channel-aware memory"); an id from elsewhere is "not found",
// and new words said in a channel move the memory there.
func TestAudience(t *testing.T) {
	f := newFixture(t)
	mk := func(m memory.Memory) *memory.Memory { return testkit.MustRemember(t, f.store, m) }
	general := mk(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Tea night is on Friday",
		Provenance: memory.Provenance{ChannelID: "c1"}})
	mods := mk(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The tea vendor is banned for fraud",
		Provenance: memory.Provenance{ChannelID: "c-mods"}})
	private := mk(memory.Memory{Scope: memory.ScopePersonal, UserID: aiko.UserID, GuildID: "g1", Content: "Aiko drinks tea to calm down",
		Provenance: memory.Provenance{ChannelID: "c-mods"}})
	conv := guildConv()
	conv.Audience = &memory.Audience{Channels: map[string]bool{"c1": true}}

	t.Run("SearchSkipsOtherChannels", func(t *testing.T) {
		r := mustCall(t, f.box(conv), tools.NameSearch, `{"query":"tea"}`)
		if len(r.Results) != 1 || r.Results[0].ID != general.ID {
			t.Fatalf("results = %+v, want only #%d", r.Results, general.ID)
		}
	})
	t.Run("UpdateOfAnotherChannelsMemoryIsNotFound", func(t *testing.T) {
		for _, m := range []*memory.Memory{mods, private} {
			wantRefused(t, f.box(conv), tools.NameUpdateLTM, fmt.Sprintf(`{"memory_id":%d,"memory_content":""}`, m.ID),
				memory.ENOTFOUND, "no memory")
			if got, err := f.store.Memories.Get(context.Background(), m.Owner(), m.ID); err != nil || got.Content != m.Content {
				t.Fatalf("#%d changed: %v %v", m.ID, got, err)
			}
		}
	})
	t.Run("UpdateMovesTheOriginChannel", func(t *testing.T) {
		c := conv
		c.ChannelID = "c-mods"
		c.ServerEditor = true // a moderator: changing someone else's server memory needs the right
		c.Audience = &memory.Audience{Channels: map[string]bool{"c1": true, "c-mods": true}}
		mustCall(t, f.box(c), tools.NameUpdateLTM, fmt.Sprintf(`{"memory_id":%d,"memory_content":"Tea night moved to Saturday, vendor banned"}`, general.ID))
		got, err := f.store.Memories.Get(context.Background(), general.Owner(), general.ID)
		if err != nil || got.Provenance.ChannelID != "c-mods" {
			t.Fatalf("after an update from #mods: %+v %v", got, err)
		}
		// Back in #general it is #mods' now.
		r := mustCall(t, f.box(conv), tools.NameSearch, `{"query":"tea night"}`)
		if len(r.Results) != 0 {
			t.Fatalf("#general still finds %+v", r.Results)
		}
	})
}
