package ltm_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

func lastHistory(t *testing.T, s *ltm.Store, owner memory.Owner, id int64) memory.HistoryEvent {
	t.Helper()
	events, err := s.Memories.History(t.Context(), owner, id)
	if err != nil {
		t.Fatal(err)
	}
	return events[len(events)-1]
}

// TestUndo: each kind of change is undone through the write path that mirrors it, the undo
// is a history row of its own (actor, "undo of change N"), and undoing it again redoes the
// change.
func TestUndo(t *testing.T) {
	s := testkit.MustOpenStore(t)
	ctx := t.Context()
	g := memory.ServerOwner("g1")

	t.Run("Edit", func(t *testing.T) {
		m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raid night is Friday",
			Type: memory.TypeEvent, Tags: []string{"raid"}})
		content, typ, tags, pinned := "Raid night is Saturday", memory.TypeDecision, []string{"raid", "weekend"}, true
		edited, err := s.Memories.Modify(ctx, g, m.ID, memory.Change{Content: &content, Type: &typ, Tags: &tags, Pinned: &pinned}, "user:1")
		if err != nil {
			t.Fatal(err)
		}
		edit := lastHistory(t, s, g, m.ID)
		res, err := s.Memories.Undo(ctx, g, m.ID, 0, "user:2")
		if err != nil {
			t.Fatal(err)
		}
		got := res.Memory
		if res.Action != memory.ActionUpdate || res.Change.ID != edit.ID || got.Content != "Raid night is Friday" ||
			got.Type != memory.TypeEvent || !slices.Equal(got.Tags, []string{"raid"}) || got.Pinned || got.Version != edited.Version+1 {
			t.Fatalf("undo of an edit = %+v, memory %+v", res, got)
		}
		undo := lastHistory(t, s, g, m.ID)
		if undo.Action != memory.ActionUpdate || undo.Actor != "user:2" || undo.Reason != fmt.Sprintf("undo of change %d", edit.ID) ||
			undo.OldContent != "Raid night is Saturday" || undo.NewContent != "Raid night is Friday" {
			t.Fatalf("history of the undo = %+v", undo)
		}
		// The search text follows the restored content.
		found, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "Friday", Owners: []memory.Owner{g}, KeywordOnly: true})
		if err != nil || len(found) != 1 || found[0].Memory.ID != m.ID {
			t.Fatalf("search for the restored words = %v, %v", found, err)
		}
		// Undoing the undo redoes the edit.
		again, err := s.Memories.Undo(ctx, g, m.ID, 0, "user:2")
		if err != nil || again.Memory.Content != "Raid night is Saturday" || !again.Memory.Pinned {
			t.Fatalf("undo of the undo = %+v, %v", again, err)
		}
	})

	t.Run("Forget", func(t *testing.T) {
		m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The bank is run by Kenji"})
		if _, err := s.Memories.Forget(ctx, g, []int64{m.ID}, "user:1", "by command"); err != nil {
			t.Fatal(err)
		}
		res, err := s.Memories.Undo(ctx, g, m.ID, 0, "cli")
		if err != nil {
			t.Fatal(err)
		}
		if res.Action != memory.ActionRecover || res.Memory.Deleted() {
			t.Fatalf("undo of a forget = %+v", res)
		}
		if _, err := s.Memories.Get(ctx, g, m.ID); err != nil {
			t.Fatalf("the memory is not back: %v", err)
		}
		if h := lastHistory(t, s, g, m.ID); h.Action != memory.ActionRecover || h.Reason != fmt.Sprintf("undo of change %d", res.Change.ID) || h.Actor != "cli" {
			t.Fatalf("history of the undo = %+v", h)
		}
	})

	t.Run("Create", func(t *testing.T) {
		m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Snacks on Fridays"})
		res, err := s.Memories.Undo(ctx, g, m.ID, 1, "cli")
		if err != nil {
			t.Fatal(err)
		}
		if res.Action != memory.ActionDelete || !res.Memory.Deleted() {
			t.Fatalf("undo of a creation = %+v", res)
		}
		if _, err := s.Memories.Get(ctx, g, m.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Fatalf("the created memory is still live: %v", err)
		}
		if h := lastHistory(t, s, g, m.ID); h.Action != memory.ActionDelete || h.Reason != fmt.Sprintf("undo of change %d", res.Change.ID) {
			t.Fatalf("history of the undo = %+v", h)
		}
	})

	t.Run("ErrChangedSince", func(t *testing.T) {
		m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Standup at nine"})
		c := "Standup at ten"
		if _, err := s.Memories.Modify(ctx, g, m.ID, memory.Change{Content: &c}, "user:1"); err != nil {
			t.Fatal(err)
		}
		c = "Standup at eleven"
		if _, err := s.Memories.Modify(ctx, g, m.ID, memory.Change{Content: &c}, "user:3"); err != nil {
			t.Fatal(err)
		}
		// The change that made version 2 is no longer the memory's state.
		_, err := s.Memories.Undo(ctx, g, m.ID, 2, "user:1")
		if !errors.Is(err, memory.ErrChangedSince) || memory.ErrorCode(err) != memory.ECONFLICT {
			t.Fatalf("undo after the memory moved on: %v, want ECONFLICT and ErrChangedSince", err)
		}
		if got, _ := s.Memories.Get(ctx, g, m.ID); got.Content != "Standup at eleven" || got.Version != 3 {
			t.Fatalf("a refused undo changed the memory: %+v", got)
		}
	})

	t.Run("OtherScopeIsNotFound", func(t *testing.T) {
		m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", Content: "I like green tea"})
		for _, owner := range []memory.Owner{memory.PersonalOwner("u2"), g} {
			_, err := s.Memories.Undo(ctx, owner, m.ID, 0, "user:u2")
			want := strings.ReplaceAll(memory.ErrorMessage(missingUndo(t, s, owner)), "#999999", fmt.Sprintf("#%d", m.ID))
			if memory.ErrorCode(err) != memory.ENOTFOUND || memory.ErrorMessage(err) != want {
				t.Fatalf("undo from %s: %v, want the not-found answer of a missing id", owner.Key(), err)
			}
		}
		if got, err := s.Memories.Get(ctx, memory.PersonalOwner("u1"), m.ID); err != nil || got.Version != 1 {
			t.Fatalf("the owner's memory = %+v, %v", got, err)
		}
	})

	t.Run("EditWithoutOldContent", func(t *testing.T) {
		// An edit whose earlier words history does not hold cannot be undone.
		m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Movie night is Sunday"})
		c := "Movie night is Monday"
		if _, err := s.Memories.Modify(ctx, g, m.ID, memory.Change{Content: &c}, "user:1"); err != nil {
			t.Fatal(err)
		}
		mustExec(t, rawDB(t, s), `UPDATE memory_history SET old_content = '' WHERE memory_id = ? AND action = 'update'`, m.ID)
		if _, err := s.Memories.Undo(ctx, g, m.ID, 0, "user:1"); memory.ErrorCode(err) != memory.EINVALID {
			t.Fatalf("undo without the old content: %v, want EINVALID", err)
		}
	})

	t.Run("RestoredDuplicate", func(t *testing.T) {
		m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Quiz on Thursdays"})
		c := "Quiz on Wednesdays"
		if _, err := s.Memories.Modify(ctx, g, m.ID, memory.Change{Content: &c}, "user:1"); err != nil {
			t.Fatal(err)
		}
		testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "quiz on thursdays!"})
		if _, err := s.Memories.Undo(ctx, g, m.ID, 0, "user:1"); memory.ErrorCode(err) != memory.ECONFLICT || errors.Is(err, memory.ErrChangedSince) {
			t.Fatalf("undo onto a duplicate: %v, want the duplicate conflict", err)
		}
	})

	t.Run("HiddenOrigin", func(t *testing.T) {
		// The version before the edit was learned in channel c1; a writer whose audience
		// lacks it cannot bring those words back.
		m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The launch is on May 2nd",
			Provenance: memory.Provenance{ChannelID: "c1"}})
		c, ch := "The launch is on May 9th", "c2"
		if _, err := s.Memories.Modify(ctx, g, m.ID, memory.Change{Content: &c, ChannelID: &ch}, memory.ActorPipeline); err != nil {
			t.Fatal(err)
		}
		w := memory.WriteContext{WriterID: "u9", GuildID: "g1", ChannelID: "c2", Audience: &memory.Audience{Channels: map[string]bool{"c2": true}}}
		if _, err := s.Memories.UndoAs(ctx, w, g, m.ID, 0, "user:u9"); memory.ErrorCode(err) != memory.EFORBIDDEN {
			t.Fatalf("undo to a hidden origin: %v, want EFORBIDDEN", err)
		}
		w.Audience.Channels["c1"] = true
		res, err := s.Memories.UndoAs(ctx, w, g, m.ID, 0, "user:u9")
		if err != nil || res.Memory.Content != "The launch is on May 2nd" || res.Memory.Provenance.ChannelID != "c1" {
			t.Fatalf("undo with both channels in view = %+v, %v", res, err)
		}
	})
}

// missingUndo is the error of an undo of an id that exists nowhere.
func missingUndo(t *testing.T, s *ltm.Store, owner memory.Owner) error {
	t.Helper()
	_, err := s.Memories.Undo(t.Context(), owner, 999999, 0, "cli")
	if err == nil {
		t.Fatal("undo of a missing id succeeded")
	}
	return err
}
