package storetest

import (
	"errors"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// testUndo: the last change of a memory is undone by the write that mirrors it, the undo
// is a change of its own, and it holds to scopes and versions.
func testUndo(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	t.Run("EditIsRestored", func(t *testing.T) {
		m := mustRemember(t, s, server("g1", "Lunch is at noon"))
		c, pin := "Lunch is at one", true
		if _, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &c, Pinned: &pin}, "user:1"); err != nil {
			t.Fatal(err)
		}
		res, err := s.Memories.Undo(ctx, owner, m.ID, 2, "user:2")
		if err != nil {
			t.Fatal(err)
		}
		if res.Action != memory.ActionUpdate || res.Change.Action != memory.ActionUpdate || res.Memory.Content != "Lunch is at noon" ||
			res.Memory.Pinned || res.Memory.Version != 3 {
			t.Fatalf("undo of an edit = %+v, memory %+v", res, res.Memory)
		}
		events, err := s.Memories.History(ctx, owner, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if last := events[len(events)-1]; last.Actor != "user:2" || last.Version != 3 || last.Reason == "" {
			t.Fatalf("history of the undo = %+v", last)
		}
	})
	t.Run("ForgetIsRecovered", func(t *testing.T) {
		m := mustRemember(t, s, server("g1", "Dinner is at seven"))
		mustForget(t, s, owner, m.ID)
		res, err := s.Memories.Undo(ctx, owner, m.ID, 0, "user:2")
		if err != nil || res.Action != memory.ActionRecover || res.Memory.Deleted() {
			t.Fatalf("undo of a forget = %+v, %v", res, err)
		}
		if _, err := s.Memories.Get(ctx, owner, m.ID); err != nil {
			t.Fatalf("recovered memory: %v", err)
		}
	})
	t.Run("CreationIsForgotten", func(t *testing.T) {
		m := mustRemember(t, s, server("g1", "Breakfast is at eight"))
		res, err := s.Memories.Undo(ctx, owner, m.ID, 1, "user:2")
		if err != nil || res.Action != memory.ActionDelete || !res.Memory.Deleted() {
			t.Fatalf("undo of a creation = %+v, %v", res, err)
		}
		_, err = s.Memories.Get(ctx, owner, m.ID)
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("ErrChangedSince", func(t *testing.T) {
		m := mustRemember(t, s, server("g1", "Tea is at four"))
		c := "Tea is at five"
		if _, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &c}, "user:1"); err != nil {
			t.Fatal(err)
		}
		_, err := s.Memories.Undo(ctx, owner, m.ID, 1, "user:1")
		wantCode(t, err, memory.ECONFLICT)
		if !errors.Is(err, memory.ErrChangedSince) {
			t.Fatalf("undo of an old version: %v, want ErrChangedSince in the chain", err)
		}
		if got, _ := s.Memories.Get(ctx, owner, m.ID); got.Content != c || got.Version != 2 {
			t.Fatalf("a refused undo changed the memory: %+v", got)
		}
	})
	t.Run("OtherScopeIsNotFound", func(t *testing.T) {
		m := mustRemember(t, s, personal("u1", "g1", "I take my tea with lemon"))
		for _, other := range []memory.Owner{memory.PersonalOwner("u2"), owner, memory.ServerOwner("g2")} {
			_, err := s.Memories.Undo(ctx, other, m.ID, 0, "user:u2")
			wantCode(t, err, memory.ENOTFOUND)
			w := memory.WriteContext{WriterID: "u2", GuildID: "g1"}
			_, err = s.Memories.UndoAs(ctx, w, other, m.ID, 0, "user:u2")
			wantCode(t, err, memory.ENOTFOUND)
		}
		if got, err := s.Memories.Get(ctx, memory.PersonalOwner("u1"), m.ID); err != nil || got.Version != 1 {
			t.Fatalf("the owner's memory after others' undos = %+v, %v", got, err)
		}
	})
}
