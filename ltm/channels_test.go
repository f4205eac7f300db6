package ltm_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

func TestGuildChannels(t *testing.T) {
	s := testkit.MustOpenStore(t)
	mods := memory.GuildChannel{GuildID: "g1", ChannelID: "mods", Kind: 0,
		Overwrites: []memory.Overwrite{{ID: "g1", Type: 0, Deny: 1024}, {ID: "r-mod", Type: 0, Allow: 1024}}}
	thread := memory.GuildChannel{GuildID: "g1", ChannelID: "t1", ParentID: "mods", Kind: 12, PrivateThread: true}
	other := memory.GuildChannel{GuildID: "g2", ChannelID: "general"}
	if err := s.Channels.SaveGuildChannels(ctx, []memory.GuildChannel{mods, thread, other}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Channels.GuildChannels(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ChannelID != "mods" || len(got[0].Overwrites) != 2 || got[0].Overwrites[1] != mods.Overwrites[1] ||
		got[1].ParentID != "mods" || !got[1].PrivateThread || got[1].Kind != 12 || got[1].Overwrites == nil || !got[0].DeletedAt.IsZero() {
		t.Fatalf("channels of g1 = %+v", got)
	}

	t.Run("DeleteKeepsTheRule", func(t *testing.T) {
		if err := s.Channels.MarkChannelDeleted(ctx, "g1", "mods"); err != nil {
			t.Fatal(err)
		}
		if err := s.Channels.MarkChannelDeleted(ctx, "g1", "never-seen"); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Channels.GuildChannels(ctx, "g1")
		if len(got) != 2 || got[0].DeletedAt.IsZero() || len(got[0].Overwrites) != 2 || !got[1].DeletedAt.IsZero() {
			t.Fatalf("after delete: %+v", got)
		}
		// Seen again (a restored channel): live again, with its new rule.
		mods.Overwrites = nil
		if err := s.Channels.SaveGuildChannels(ctx, []memory.GuildChannel{mods}); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Channels.GuildChannels(ctx, "g1")
		if !got[0].DeletedAt.IsZero() || len(got[0].Overwrites) != 0 {
			t.Fatalf("after seeing it again: %+v", got[0])
		}
	})

	t.Run("SavedAsDeleted", func(t *testing.T) {
		gone := memory.GuildChannel{GuildID: "g3", ChannelID: "old", Overwrites: []memory.Overwrite{{ID: "g3", Deny: 1024}},
			DeletedAt: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)}
		if err := s.Channels.SaveGuildChannels(ctx, []memory.GuildChannel{gone}); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Channels.GuildChannels(ctx, "g3")
		if len(got) != 1 || !got[0].DeletedAt.Equal(gone.DeletedAt) || got[0].Overwrites[0] != gone.Overwrites[0] {
			t.Fatalf("channel saved as deleted = %+v", got)
		}
	})

	t.Run("ErrMissingIDs", func(t *testing.T) {
		if err := s.Channels.SaveGuildChannels(ctx, []memory.GuildChannel{{GuildID: "g1"}}); err == nil {
			t.Fatal("a channel without an id was saved")
		}
	})
}

// TestRecallAudience: a search or listing with an audience returns memories learned in the
// audience's channels, in DMs, or with no recorded channel, and nothing from elsewhere, in
// every leg, and the vector leg filters before its top k.
func TestRecallAudience(t *testing.T) {
	forEachMode(t, func(t *testing.T, hybrid bool) {
		s, _ := recallStore(t, hybrid)
		owner, user := memory.ServerOwner("gA"), memory.PersonalOwner("uA")
		at := func(channel, content string) *memory.Memory {
			return testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "gA", Content: content,
				Provenance: memory.Provenance{ChannelID: channel}})
		}
		general := at("c-general", "the pizza party is on friday")
		mods := at("c-mods", "the pizza vendor is banned for fraud")
		old := at("", "pizza toppings are voted on monthly")
		dm := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "uA", Content: "I like pizza with pineapple",
			Provenance: memory.Provenance{ChannelID: "dm-1"}})
		elsewhere := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "uA", GuildID: "gA",
			Content: "my pizza order is always late", Provenance: memory.Provenance{ChannelID: "c-private"}})

		q := memory.SearchQuery{Text: "pizza", Owners: []memory.Owner{owner, user},
			Audience: &memory.Audience{Channels: map[string]bool{"c-general": true}}}
		wantOnly(t, mustSearch(t, s, q), general.ID, old.ID, dm.ID)

		q.Audience = &memory.Audience{Channels: map[string]bool{"c-general": true, "c-mods": true, "c-private": true}}
		wantOnly(t, mustSearch(t, s, q), general.ID, mods.ID, old.ID, dm.ID, elsewhere.ID)

		q.Audience = &memory.Audience{}
		wantOnly(t, mustSearch(t, s, q), old.ID, dm.ID)

		q.Audience = nil
		wantOnly(t, mustSearch(t, s, q), general.ID, mods.ID, old.ID, dm.ID, elsewhere.ID)

		list, total, err := s.Memories.List(ctx, owner, memory.ListOptions{Audience: &memory.Audience{Channels: map[string]bool{"c-mods": true}}})
		if err != nil {
			t.Fatal(err)
		}
		if total != 2 || len(list) != 2 || list[0].ID != old.ID || list[1].ID != mods.ID {
			t.Fatalf("list with the #mods audience = %d %v", total, list)
		}
	})
}

func TestRecallAudienceFiltersVectorsBeforeTopK(t *testing.T) {
	s, _ := recallStore(t, true)
	var crowd []memory.Memory
	for i := range 60 {
		crowd = append(crowd, memory.Memory{Scope: memory.ScopeServer, GuildID: "gV", Content: fmt.Sprintf("lamp number %d", i),
			Provenance: memory.Provenance{ChannelID: "c-mods"}})
	}
	if _, err := s.Transfer.RememberMany(ctx, crowd, "test"); err != nil {
		t.Fatal(err)
	}
	target := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "gV",
		Content: "the lantern hangs by the pizza oven", Provenance: memory.Provenance{ChannelID: "c-general"}})
	res := mustSearch(t, s, memory.SearchQuery{Text: "lamp", Limit: 10, Owners: []memory.Owner{memory.ServerOwner("gV")},
		Audience: &memory.Audience{Channels: map[string]bool{"c-general": true}}})
	if r, ok := find(res, target.ID); !ok || math.Abs(r.Vector-math.Sqrt2/2) > 1e-5 || len(res) != 1 {
		t.Fatalf("want only #%d by its vector:%s", target.ID, describe(res))
	}
}

func TestModifyMovesOriginChannel(t *testing.T) {
	s := testkit.MustOpenStore(t)
	m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g", Content: "standup is at nine",
		Provenance: memory.Provenance{ChannelID: "c-general"}})
	content, channel := "standup is at ten", "c-mods"
	got, err := s.Memories.Modify(ctx, m.Owner(), m.ID, memory.Change{Content: &content, ChannelID: &channel}, "test")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := s.Memories.Get(ctx, m.Owner(), m.ID)
	if got.Provenance.ChannelID != "c-mods" || again.Provenance.ChannelID != "c-mods" {
		t.Fatalf("origin channel after the change = %q, stored %q", got.Provenance.ChannelID, again.Provenance.ChannelID)
	}
	other := "standup is at eleven"
	got, _ = s.Memories.Modify(ctx, m.Owner(), m.ID, memory.Change{Content: &other}, "test")
	if got.Provenance.ChannelID != "c-mods" {
		t.Fatalf("a change without a channel moved it to %q", got.Provenance.ChannelID)
	}
}

// TestExportWithinAudience: an export is a view like any other; memories from channels the
// caller cannot read are left out, and the whole scope is exported without an audience.
func TestExportWithinAudience(t *testing.T) {
	s := testkit.MustOpenStore(t)
	public := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
		Content: "Raid night is Thursday", Provenance: memory.Provenance{ChannelID: "general"}})
	testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
		Content: "The vendor is banned for fraud", Provenance: memory.Provenance{ChannelID: "mods"}})
	aud := &memory.Audience{Channels: map[string]bool{"general": true}}
	f, err := s.Transfer.ExportWithin(ctx, memory.ServerOwner("g1"), aud)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Memories) != 1 || f.Memories[0].ID != public.ID {
		t.Fatalf("export for #general readers = %+v, want only #%d", f.Memories, public.ID)
	}
	all, err := s.Transfer.Export(ctx, memory.ServerOwner("g1"))
	if err != nil || len(all.Memories) != 2 {
		t.Fatalf("whole export = %d memories, %v; want 2", len(all.Memories), err)
	}
}
