package storetest

import (
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// testIDsNeverReused: a memory's id is never given to another one, even after the memory
// with the highest id was deleted for good, so an old notice's Undo or Edit button, a
// history row or any other stale reference to it never reaches a new memory. Forget-me and,
// when the store has them, a guild purge do the deleting.
func testIDsNeverReused(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	mustRemember(t, s, server("g1", "The raid is on Friday"))
	highest := mustRemember(t, s, personal("alice", "g1", "My word is marmalade"))
	preview, err := s.ForgetMe.PreviewForgetMe(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ForgetMe.ConfirmForgetMe(ctx, "alice", preview.Token); err != nil {
		t.Fatal(err)
	}
	next := mustRemember(t, s, personal("alice", "g1", "My word is honey"))
	if next.ID <= highest.ID {
		t.Fatalf("after forget-me erased #%d, the next memory got #%d", highest.ID, next.ID)
	}
	if h, err := s.Memories.History(ctx, memory.PersonalOwner("alice"), next.ID); err != nil || len(h) != 1 {
		t.Errorf("the new memory's history = %+v (%v), want its one creation", h, err)
	}
	if s.Guilds == nil {
		return
	}
	last := mustRemember(t, s, server("g2", "A server that leaves"))
	if _, err := s.Guilds.PurgeGuild(ctx, "g2"); err != nil {
		t.Fatal(err)
	}
	if again := mustRemember(t, s, server("g1", "Written after the purge")); again.ID <= last.ID {
		t.Errorf("after a guild purge erased #%d, the next memory got #%d", last.ID, again.ID)
	}
}
