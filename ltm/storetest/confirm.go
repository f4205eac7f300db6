package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// testForgetByQuery: a preview deletes nothing; its token forgets exactly the previewed
// memories, once, in its own scope, before it expires.
func testForgetByQuery(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	a := mustRemember(t, s, server("g1", "The old minecraft server address is mc.example.net"))
	b := mustRemember(t, s, server("g1", "Minecraft night is on Saturdays"))
	keep := mustRemember(t, s, server("g1", "Board game night is on Fridays"))
	other := mustRemember(t, s, server("g2", "Minecraft in guild two"))

	preview, err := s.Confirmations.PreviewForget(ctx, owner, "minecraft", "user:1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("PreviewShowsMatchesAndDeletesNothing", func(t *testing.T) {
		var ids []int64
		for _, m := range preview.Matches {
			ids = append(ids, m.ID)
		}
		slices.Sort(ids)
		if want := []int64{a.ID, b.ID}; !slices.Equal(ids, want) {
			t.Fatalf("preview matched %v, want %v", ids, want)
		}
		if preview.Token == "" || !preview.ExpiresAt.Equal(s.Clock.Now().Add(s.ConfirmTTL)) {
			t.Fatalf("preview token %q expires %v, want a token expiring at %v", preview.Token, preview.ExpiresAt, s.Clock.Now().Add(s.ConfirmTTL))
		}
		for _, id := range []int64{a.ID, b.ID, keep.ID} {
			if !isLive(t, s, owner, id) {
				t.Fatalf("preview deleted #%d", id)
			}
		}
	})
	t.Run("PreviewNeverHoldsANeighbourOfAMatch", func(t *testing.T) {
		// Recall may lift the messages written around a strong match (neighbourhood
		// smoothing); forgetting by query forgets what matches, never what sat next to it.
		g3 := memory.ServerOwner("g3")
		say := func(content string) *memory.Memory {
			m := server("g3", content)
			m.Provenance = memory.Provenance{ChannelID: "c1", AuthorID: "1", Author: "Aiko"}
			return mustRemember(t, s, m)
		}
		kayak := say("The kayak trip is on Sunday")
		say("Kenji runs the guild bank")
		p, err := s.Confirmations.PreviewForget(ctx, g3, "kayak", "user:1", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Matches) != 1 || p.Matches[0].ID != kayak.ID {
			var got []int64
			for _, m := range p.Matches {
				got = append(got, m.ID)
			}
			t.Fatalf("preview for kayak holds %v, want only #%d", got, kayak.ID)
		}
	})
	t.Run("ErrWrongToken", func(t *testing.T) {
		_, err := s.Confirmations.ConfirmForget(ctx, owner, "not-a-token", "user:1")
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("ErrTokenFromAnotherScope", func(t *testing.T) {
		_, err := s.Confirmations.ConfirmForget(ctx, memory.ServerOwner("g2"), preview.Token, "user:1")
		wantCode(t, err, memory.ENOTFOUND)
		if !isLive(t, s, memory.ServerOwner("g2"), other.ID) {
			t.Fatal("another guild's memory was deleted")
		}
	})
	t.Run("TokenExecutesExactlyThePreview", func(t *testing.T) {
		later := mustRemember(t, s, server("g1", "Minecraft mods list is pinned"))
		got, err := s.Confirmations.ConfirmForget(ctx, owner, preview.Token, "user:2")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("forgot %d, want 2", len(got))
		}
		for _, id := range []int64{keep.ID, later.ID} {
			if !isLive(t, s, owner, id) {
				t.Errorf("#%d should have survived", id)
			}
		}
		// Forgotten the ordinary way: recoverable, with history naming the confirmer.
		if ids := listIDs(t, s, owner, memory.ListOptions{Deleted: true}); len(ids) != 2 {
			t.Errorf("forgotten memories listed: %v, want 2", ids)
		}
		hist, err := s.Memories.History(ctx, owner, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if last := hist[len(hist)-1]; last.Action != memory.ActionDelete || last.Actor != "user:2" {
			t.Errorf("last history row %+v, want a delete by user:2", last)
		}
		if _, err := s.Memories.Recover(ctx, owner, a.ID, 0, "user:2"); err != nil {
			t.Errorf("a memory forgotten by query cannot be recovered: %v", err)
		}
	})
	t.Run("ErrTokenReused", func(t *testing.T) {
		_, err := s.Confirmations.ConfirmForget(ctx, owner, preview.Token, "user:1")
		wantCode(t, err, memory.ECONFLICT)
		if !isLive(t, s, owner, a.ID) {
			t.Fatal("a reused token forgot the recovered memory again")
		}
	})
	t.Run("ErrTokenExpired", func(t *testing.T) {
		p, err := s.Confirmations.PreviewForget(ctx, owner, "board game", "user:1", 0)
		if err != nil {
			t.Fatal(err)
		}
		s.Clock.Advance(s.ConfirmTTL + time.Second)
		_, err = s.Confirmations.ConfirmForget(ctx, owner, p.Token, "user:1")
		wantCode(t, err, memory.EEXPIRED)
		if !isLive(t, s, owner, keep.ID) {
			t.Error("an expired token deleted a memory")
		}
	})
	t.Run("MemoryGoneMeanwhileIsSkipped", func(t *testing.T) {
		x := mustRemember(t, s, server("g1", "Kite festival in April"))
		y := mustRemember(t, s, server("g1", "Kite repair kit is in the shed"))
		p, err := s.Confirmations.PreviewForget(ctx, owner, "kite", "user:1", 0)
		if err != nil || len(p.Matches) != 2 {
			t.Fatalf("preview %+v %v", p, err)
		}
		mustForget(t, s, owner, x.ID)
		got, err := s.Confirmations.ConfirmForget(ctx, owner, p.Token, "user:1")
		if err != nil || len(got) != 1 || got[0].ID != y.ID {
			t.Fatalf("confirm = %+v %v, want only #%d", got, err, y.ID)
		}
	})
	t.Run("PreviewWithinHidesWhatTheAudienceCannotSee", func(t *testing.T) {
		mods := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Zeppelin ban list",
			Provenance: memory.Provenance{ChannelID: "mods"}})
		open := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Zeppelin meetup",
			Provenance: memory.Provenance{ChannelID: "general"}})
		aud := &memory.Audience{Channels: map[string]bool{"general": true}}
		p, err := s.Confirmations.PreviewForgetWithin(ctx, owner, "zeppelin", "user:1", 0, aud)
		if err != nil || len(p.Matches) != 1 || p.Matches[0].ID != open.ID {
			t.Fatalf("preview from #general = %+v %v, want only #%d", p.Matches, err, open.ID)
		}
		if _, err := s.Confirmations.ConfirmForget(ctx, owner, p.Token, "user:1"); err != nil {
			t.Fatal(err)
		}
		if !isLive(t, s, owner, mods.ID) {
			t.Fatal("a memory the audience could not see was forgotten")
		}
	})
	t.Run("ErrNoMatch", func(t *testing.T) {
		_, err := s.Confirmations.PreviewForget(ctx, owner, "dirigible", "user:1", 0)
		wantCode(t, err, memory.ENOTFOUND)
	})
}
