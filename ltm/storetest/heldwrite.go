package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// WriteHolder keeps a save a near-duplicate answer stopped until its writer decides.
type WriteHolder interface {
	HoldWrite(ctx context.Context, w memory.HeldWrite, actor memory.Actor) (string, time.Time, error)
	HeldWrite(ctx context.Context, owner memory.Owner, token string, actor memory.Actor) (memory.HeldWrite, error)
	DropWrite(ctx context.Context, owner memory.Owner, token string, actor memory.Actor) error
}

func holderOf(t *testing.T, s Stores) WriteHolder {
	t.Helper()
	h, ok := s.Confirmations.(WriteHolder)
	if !ok {
		t.Fatal("the store's confirmations hold no writes (HoldWrite, HeldWrite, DropWrite)")
	}
	return h
}

// testHeldWrites: a held write comes back whole to its writer in its scope, any number of
// times until it is dropped or expires, and to nobody else; a credential is never held; and
// forget-me of the member whose words it holds, or the purge of the guild it was made in,
// removes it.
func testHeldWrites(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	h := holderOf(t, s)
	ctx := t.Context()
	const alice, bob = "100", "200"
	g1 := memory.ServerOwner("g1")
	hold := func(m memory.Memory, actor memory.Actor, evidence ...memory.MessageRef) string {
		t.Helper()
		token, expires, err := h.HoldWrite(ctx, memory.HeldWrite{Memory: m, Evidence: evidence}, actor)
		if err != nil {
			t.Fatal(err)
		}
		if token == "" || !expires.Equal(s.Clock.Now().Add(s.ConfirmTTL)) {
			t.Fatalf("held under %q until %v, want a token until %v", token, expires, s.Clock.Now().Add(s.ConfirmTTL))
		}
		return token
	}
	// Bob's Remember-this of Alice's message, in g1's server memory.
	said := server("g1", "  Kenji   has a peanut allergy ")
	said.Type, said.Tags, said.Pinned, said.SubjectID = memory.TypeFact, []string{"Food"}, true, alice
	said.Provenance = memory.Provenance{AuthorID: alice, Author: "Alice", ChannelID: "general", MessageID: "m1"}
	ref := memory.MessageRef{MessageID: "m1", AuthorID: alice}
	token := hold(said, memory.UserActor(bob), ref)

	t.Run("ComesBackWholeUntilDropped", func(t *testing.T) {
		for range 2 {
			got, err := h.HeldWrite(ctx, g1, token, memory.UserActor(bob))
			if err != nil {
				t.Fatal(err)
			}
			m := got.Memory
			if m.Content != "Kenji has a peanut allergy" || m.Scope != memory.ScopeServer || m.GuildID != "g1" || m.SubjectID != alice ||
				!m.Pinned || len(m.Tags) != 1 || m.Tags[0] != "food" || m.Provenance != said.Provenance ||
				len(got.Evidence) != 1 || got.Evidence[0] != ref {
				t.Fatalf("held write came back as %+v", got)
			}
		}
	})
	t.Run("NobodyElseFindsIt", func(t *testing.T) {
		_, err := h.HeldWrite(ctx, g1, token, memory.UserActor(alice))
		wantCode(t, err, memory.ENOTFOUND)
		_, err = h.HeldWrite(ctx, memory.ServerOwner("g2"), token, memory.UserActor(bob))
		wantCode(t, err, memory.ENOTFOUND)
		_, err = h.HeldWrite(ctx, memory.PersonalOwner(bob), token, memory.UserActor(bob))
		wantCode(t, err, memory.ENOTFOUND)
		// Dropping it as someone else drops nothing.
		if err := h.DropWrite(ctx, g1, token, memory.UserActor(alice)); err != nil {
			t.Fatal(err)
		}
		if _, err := h.HeldWrite(ctx, g1, token, memory.UserActor(bob)); err != nil {
			t.Fatalf("another member's drop took it: %v", err)
		}
	})
	t.Run("CredentialsAreNeverHeld", func(t *testing.T) {
		_, _, err := h.HoldWrite(ctx, memory.HeldWrite{Memory: server("g1", "the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD")},
			memory.UserActor(bob))
		wantCode(t, err, memory.EINVALID)
	})
	t.Run("DroppedIsGone", func(t *testing.T) {
		other := hold(server("g1", "The raid starts at nine"), memory.UserActor(bob))
		if err := h.DropWrite(ctx, g1, other, memory.UserActor(bob)); err != nil {
			t.Fatal(err)
		}
		_, err := h.HeldWrite(ctx, g1, other, memory.UserActor(bob))
		wantCode(t, err, memory.ENOTFOUND)
		if err := h.DropWrite(ctx, g1, other, memory.UserActor(bob)); err != nil {
			t.Errorf("dropping a dropped write: %v", err)
		}
	})
	t.Run("Expires", func(t *testing.T) {
		late := hold(server("g1", "Movie night is on Saturday"), memory.UserActor(bob))
		s.Clock.Advance(s.ConfirmTTL + time.Second)
		_, err := h.HeldWrite(ctx, g1, late, memory.UserActor(bob))
		wantCode(t, err, memory.EEXPIRED)
	})
	t.Run("ForgetMeOfTheSubjectRemovesIt", func(t *testing.T) {
		copied := server("g1", "Alice said Kenji avoids peanuts")
		copied.SubjectID = alice
		mine := hold(copied, memory.UserActor(bob), ref)
		bobs := hold(server("g1", "Kenji avoids nuts of every kind"), memory.UserActor(bob))
		preview, err := s.ForgetMe.PreviewForgetMe(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ForgetMe.ConfirmForgetMe(ctx, alice, preview.Token); err != nil {
			t.Fatal(err)
		}
		_, err = h.HeldWrite(ctx, g1, mine, memory.UserActor(bob))
		wantCode(t, err, memory.ENOTFOUND)
		if _, err := h.HeldWrite(ctx, g1, bobs, memory.UserActor(bob)); err != nil {
			t.Errorf("Alice's forget-me took Bob's own held write: %v", err)
		}
	})
	t.Run("GuildPurgeRemovesWhatWasMadeThere", func(t *testing.T) {
		if s.Guilds == nil {
			t.Skip("the store keeps no guilds")
		}
		bobMe := memory.PersonalOwner(bob)
		inG1 := hold(personal(bob, "g1", "I raid on Fridays"), memory.UserActor(bob))
		serverG1 := hold(server("g1", "Raids are on Fridays"), memory.UserActor(bob))
		inDM := hold(personal(bob, "", "I raid on Fridays and Sundays"), memory.UserActor(bob))
		if _, err := s.Guilds.PurgeGuild(ctx, "g1"); err != nil {
			t.Fatal(err)
		}
		_, err := h.HeldWrite(ctx, bobMe, inG1, memory.UserActor(bob))
		wantCode(t, err, memory.ENOTFOUND)
		_, err = h.HeldWrite(ctx, g1, serverG1, memory.UserActor(bob))
		wantCode(t, err, memory.ENOTFOUND)
		if _, err := h.HeldWrite(ctx, bobMe, inDM, memory.UserActor(bob)); err != nil {
			t.Errorf("a DM's held write went with the guild: %v", err)
		}
	})
}
