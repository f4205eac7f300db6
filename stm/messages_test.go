package stm_test

import (
	"testing"
	"time"

	"github.com/kioku-bot/kioku/stm"
)

// entryContents lists the contents of the messages of the entry at key.
func entryContents(s *stm.Store, key stm.Key) []string {
	e, _ := s.Get(key)
	var out []string
	for _, m := range e.Messages {
		out = append(out, m.Content)
	}
	return out
}

// capture appends a user message with its Discord id to the user's entry and the
// channel's shared entry, as a chat turn does.
func capture(t *testing.T, s *stm.Store, guild, channel, user, id, content string) {
	t.Helper()
	for _, k := range []stm.Key{stm.UserKey(guild, channel, user), stm.ChannelKey(guild, channel)} {
		if k.Validate() != nil {
			continue // a DM has no shared entry
		}
		if err := s.Append(k, stm.Message{AuthorID: user, Role: stm.RoleUser, Content: content, MessageID: id}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRemoveMessages(t *testing.T) {
	s, _ := MustNew(t, stm.Options{})
	capture(t, s, "g1", "c1", "alice", "m1", "my locker code is 4412")
	capture(t, s, "g1", "c1", "bob", "m2", "hello")
	capture(t, s, "g1", "c1", "alice", "m3", "see you")
	capture(t, s, "g1", "c2", "alice", "m4", "other channel")
	capture(t, s, "", "dm1", "alice", "m5", "a DM")

	// A channel whose entries do not hold the id, and an id in another channel, change nothing.
	if n := s.RemoveMessages("g1", "c2", "m1"); n != 0 {
		t.Fatalf("removed %d messages of another channel", n)
	}
	if n := s.RemoveMessages("g1", "c1", "m1", "", "missing"); n != 2 {
		t.Fatalf("removed %d copies, want 2 (alice's entry and the channel's)", n)
	}
	for _, k := range []stm.Key{stm.UserKey("g1", "c1", "alice"), stm.ChannelKey("g1", "c1")} {
		for _, c := range entryContents(s, k) {
			if c == "my locker code is 4412" {
				t.Errorf("%s still holds the deleted message", k)
			}
		}
	}
	if got := entryContents(s, stm.ChannelKey("g1", "c1")); len(got) != 2 {
		t.Errorf("channel entry holds %q, want bob's and alice's other message", got)
	}
	if got := entryContents(s, stm.UserKey("g1", "c2", "alice")); len(got) != 1 {
		t.Errorf("other channel's entry holds %q", got)
	}
	// DMs: the user's entry, keyed without a guild.
	if n := s.RemoveMessages("", "dm1", "m5"); n != 1 {
		t.Fatalf("removed %d DM messages, want 1", n)
	}
	if _, ok := s.Get(stm.UserKey("", "dm1", "alice")); ok {
		t.Error("the emptied DM entry is still there")
	}
}

func TestRemoveMessagesDropsSummariesFromThem(t *testing.T) {
	s, clock := MustNew(t, stm.Options{})
	shared := stm.ChannelKey("g1", "c1")
	capture(t, s, "g1", "c1", "alice", "m1", "my locker code is 4412")
	if err := s.SetSummary(shared, "Alice's locker code is 4412."); err != nil {
		t.Fatal(err)
	}
	if n := s.RemoveMessages("g1", "c1", "m1"); n != 2 {
		t.Fatalf("removed %d", n)
	}
	if e, ok := s.Get(shared); ok && e.Summary != "" {
		t.Errorf("summary written from the deleted message survived: %q", e.Summary)
	}

	// A summary written during a message's turn, before the turn captured it, may quote it.
	clock.Advance(time.Minute)
	sent := clock.Now()
	clock.Advance(time.Second)
	if err := s.SetSummary(shared, "Bob said his password is hunter2."); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(shared, stm.Message{AuthorID: "bob", Role: stm.RoleUser, Content: "my password is hunter2",
		MessageID: "m2", SentAt: sent}); err != nil {
		t.Fatal(err)
	}
	s.RemoveMessages("g1", "c1", "m2")
	if e, ok := s.Get(shared); ok && e.Summary != "" {
		t.Errorf("summary written during the deleted message's turn survived: %q", e.Summary)
	}

	// A summary that never saw the message stays.
	if err := s.SetSummary(shared, "People said hello."); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	capture(t, s, "g1", "c1", "carol", "m3", "later message")
	s.RemoveMessages("g1", "c1", "m3")
	if e, _ := s.Get(shared); e.Summary != "People said hello." {
		t.Errorf("summary = %q, want the unrelated one kept", e.Summary)
	}
}

func TestReplaceMessage(t *testing.T) {
	s, _ := MustNew(t, stm.Options{})
	capture(t, s, "g1", "c1", "alice", "m1", "meet at 5")
	capture(t, s, "g1", "c1", "alice", "m2", "bring snacks")
	shared := stm.ChannelKey("g1", "c1")
	if err := s.SetSummary(shared, "Meeting at 5."); err != nil {
		t.Fatal(err)
	}
	if n := s.ReplaceMessage("g1", "c1", "m1", "meet at 6"); n != 2 {
		t.Fatalf("replaced %d copies, want 2", n)
	}
	for _, k := range []stm.Key{stm.UserKey("g1", "c1", "alice"), shared} {
		got := entryContents(s, k)
		if len(got) != 2 || got[0] != "meet at 6" || got[1] != "bring snacks" {
			t.Errorf("%s holds %q, want the edit in place", k, got)
		}
	}
	if e, _ := s.Get(shared); e.Summary != "" {
		t.Errorf("summary of the old words survived the edit: %q", e.Summary)
	}
	if n := s.ReplaceMessage("g1", "c1", "", "x"); n != 0 {
		t.Errorf("an empty id replaced %d messages", n)
	}
}

// A summary in another member's own entry (their DM) may quote the member too, through a
// memory it was written from: "forget me" drops it there as in channel entries.
func TestClearUserDropsQuotingSummaryInOthersDM(t *testing.T) {
	s, err := stm.New(stm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dm := stm.UserKey("", "dm-sam", "sam")
	if err := s.Append(dm, stm.Message{AuthorID: "sam", Role: stm.RoleUser, Content: "what did Bob say?", SentAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSummary(dm, "Bob told Sam his locker code.", "bob"); err != nil {
		t.Fatal(err)
	}
	s.ClearUser("bob")
	e, ok := s.Get(dm)
	if !ok || e.Summary != "" || len(e.Messages) != 1 {
		t.Fatalf("Sam's DM after Bob's forget-me = %+v, %v; want Sam's message without the summary", e, ok)
	}
}
