package ltm_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestAboutMember: the memories whose subject is a member, outside their own scope, live
// ones only, newest first and counted; a memory about someone else is not among them.
func TestAboutMember(t *testing.T) {
	s := testkit.MustOpenStore(t)
	about := func(m memory.Memory, subject string) *memory.Memory {
		m.SubjectID = subject
		return testkit.MustRemember(t, s, m)
	}
	first := about(server("g1", "u1 organises the spring meetup"), "u1")
	copyOf := about(personal("u2", "g1", "u1 said the bus leaves at nine"), "u1")
	gone := about(server("g2", "u1 moderates the art channel"), "u1")
	about(server("g1", "u3 runs the quiz"), "u3")
	testkit.MustRemember(t, s, personal("u1", "", "I like plums"))
	if _, err := s.Memories.Forget(ctx, gone.Owner(), []int64{gone.ID}, "test", "test"); err != nil {
		t.Fatal(err)
	}

	got, total, err := s.Overview.AboutMember(ctx, "u1", 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if total != 2 || !slices.Equal(ids, []int64{copyOf.ID, first.ID}) {
		t.Errorf("AboutMember(u1) = %v (total %d), want [%d %d] (2)", ids, total, copyOf.ID, first.ID)
	}
	if got, total, err := s.Overview.AboutMember(ctx, "u1", 1); err != nil || len(got) != 1 || total != 2 {
		t.Errorf("AboutMember(u1, 1) = %d memories, total %d, %v", len(got), total, err)
	}
}

// TestUserTurns: a member's turns across channels and DMs, newest first, and no one
// else's.
func TestUserTurns(t *testing.T) {
	s := testkit.MustOpenStore(t)
	add := func(guild, channel, user, content string) {
		t.Helper()
		if _, err := s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: guild, ChannelID: channel, UserID: user,
			Role: memory.RoleUser, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	add("g1", "c1", "u1", "hello from the server")
	add("g1", "c1", "u2", "someone else speaking")
	add("", "dm1", "u1", "hello from a DM")
	turns, err := s.Transcripts.UserTurns(ctx, "u1", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tn := range turns {
		got = append(got, tn.Content)
	}
	if want := []string{"hello from a DM", "hello from the server"}; !slices.Equal(got, want) {
		t.Errorf("UserTurns(u1) = %q, want %q", got, want)
	}
}

// TestModifyStaleVersionSaysChangedSince: an edit from an old view fails with
// ErrChangedSince in its chain (and ECONFLICT), so callers can tell it from a duplicate.
func TestModifyStaleVersionSaysChangedSince(t *testing.T) {
	s := testkit.MustOpenStore(t)
	m := testkit.MustRemember(t, s, personal("u1", "", "The cat is called Miso"))
	c1, c2 := "The cat is called Mochi", "The cat is called Kuro"
	if _, err := s.Memories.Modify(ctx, m.Owner(), m.ID, memory.Change{Content: &c1, IfVersion: m.Version}, "user:u1"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Memories.Modify(ctx, m.Owner(), m.ID, memory.Change{Content: &c2, IfVersion: m.Version}, "user:u1")
	if !errors.Is(err, memory.ErrChangedSince) || memory.ErrorCode(err) != memory.ECONFLICT {
		t.Fatalf("stale modify: %v", err)
	}
	other := testkit.MustRemember(t, s, personal("u1", "", "The dog is called Pochi"))
	_, err = s.Memories.Modify(ctx, m.Owner(), other.ID, memory.Change{Content: &c1}, "user:u1")
	if errors.Is(err, memory.ErrChangedSince) || memory.ErrorCode(err) != memory.ECONFLICT {
		t.Fatalf("duplicate modify: %v", err)
	}
}
