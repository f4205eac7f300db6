package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

func mustTurn(t *testing.T, s Stores, turn memory.Turn) int64 {
	t.Helper()
	if turn.Role == "" {
		turn.Role = memory.RoleUser
	}
	id, err := s.Transcripts.AppendTurn(t.Context(), turn)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func turnTexts(turns []memory.Turn) string {
	texts := make([]string, len(turns))
	for i, tu := range turns {
		texts[i] = tu.Content
	}
	return strings.Join(texts, "|")
}

// testTranscripts: turns are appended and read back per channel in order, by recency or
// after a cursor; Discord's deletions and edits reach them.
func testTranscripts(t *testing.T, open func(*testing.T) Stores) {
	t.Run("RecentIsTheNewestOldestFirst", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		for _, c := range []string{"one", "two", "three", "four"} {
			mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Content: c})
		}
		mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c2", UserID: "u1", Content: "elsewhere"})
		turns, err := s.Transcripts.RecentTurns(ctx, "g1", "c1", "u1", 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := turnTexts(turns); got != "two|three|four" {
			t.Fatalf("recent turns = %q, want two|three|four", got)
		}
		if turns[0].CreatedAt.IsZero() || !turns[0].CreatedAt.Equal(s.Clock.Now()) {
			t.Errorf("a turn without a time got %v, want the store clock's %v", turns[0].CreatedAt, s.Clock.Now())
		}
	})
	t.Run("GuildChannelShowsEveryoneDMOnlyItsUser", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Content: "from u1"})
		mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u2", Content: "from u2"})
		mustTurn(t, s, memory.Turn{ChannelID: "dm1", UserID: "u1", Content: "private"})
		if turns, _ := s.Transcripts.RecentTurns(ctx, "g1", "c1", "u2", 10); turnTexts(turns) != "from u1|from u2" {
			t.Errorf("guild channel for u2 = %q", turnTexts(turns))
		}
		if turns, _ := s.Transcripts.RecentTurns(ctx, "", "dm1", "u1", 10); turnTexts(turns) != "private" {
			t.Errorf("DM for its user = %q", turnTexts(turns))
		}
		if turns, _ := s.Transcripts.RecentTurns(ctx, "", "dm1", "u2", 10); len(turns) != 0 {
			t.Errorf("another user read a DM transcript: %q", turnTexts(turns))
		}
		if turns, _ := s.Transcripts.RecentTurns(ctx, "g2", "c1", "u1", 10); len(turns) != 0 {
			t.Errorf("another guild's channel of the same id shows %q", turnTexts(turns))
		}
	})
	t.Run("AfterCursorInOrder", func(t *testing.T) {
		s := open(t)
		var ids []int64
		for i, c := range []string{"a", "b", "c", "d", "e"} {
			ids = append(ids, mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Content: c,
				CreatedAt: s.Clock.Now().Add(time.Duration(i) * time.Second)}))
		}
		mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c2", UserID: "u1", Content: "other channel"})
		if !slices.IsSorted(ids) {
			t.Fatalf("turn ids %v do not grow", ids)
		}
		turns, err := s.Transcripts.TurnsAfter(t.Context(), "g1", "c1", ids[1], 2)
		if err != nil || turnTexts(turns) != "c|d" {
			t.Fatalf("after #%d, limit 2 = %q %v; want c|d", ids[1], turnTexts(turns), err)
		}
		turns, _ = s.Transcripts.TurnsAfter(t.Context(), "g1", "c1", turns[1].ID, 10)
		if turnTexts(turns) != "e" || !turns[0].CreatedAt.Equal(s.Clock.Now().Add(4*time.Second)) {
			t.Fatalf("after the cursor = %+v, want e at +4s", turns)
		}
		if n, err := s.Transcripts.CountTurns(t.Context(), "u1"); err != nil || n != 6 {
			t.Fatalf("count = %d %v, want 6", n, err)
		}
	})
	t.Run("SecretsRedactedAndBadTurnsRefused", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		mustTurn(t, s, memory.Turn{ChannelID: "dm1", UserID: "u1", MessageID: "m1",
			Content: "my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123 keep it", CanEditServer: true, AuthorName: "Ann"})
		turns, _ := s.Transcripts.RecentTurns(ctx, "", "dm1", "u1", 10)
		if len(turns) != 1 || strings.Contains(turns[0].Content, "sk-proj") || !strings.Contains(turns[0].Content, "keep it") {
			t.Fatalf("turns = %+v", turns)
		}
		if tu := turns[0]; !tu.CanEditServer || tu.AuthorName != "Ann" || tu.MessageID != "m1" || tu.Role != memory.RoleUser {
			t.Errorf("turn fields lost: %+v", tu)
		}
		for name, bad := range map[string]memory.Turn{
			"UnknownRole": {ChannelID: "c1", UserID: "u1", Role: "system", Content: "x"},
			"NoChannel":   {UserID: "u1", Role: memory.RoleUser, Content: "x"},
			"NoUser":      {ChannelID: "c1", Role: memory.RoleUser, Content: "x"},
		} {
			if _, err := s.Transcripts.AppendTurn(ctx, bad); err == nil {
				t.Errorf("%s: appended", name)
			}
		}
	})
	t.Run("DeleteByMessageID", func(t *testing.T) { testDeleteMessages(t, open(t)) })
	t.Run("EditReplacesTheText", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Content: "see you at 8", MessageID: "m1"})
		mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: memory.RoleAssistant, Content: "ok"})
		mustTurn(t, s, memory.Turn{GuildID: "g2", ChannelID: "c9", UserID: "u1", Content: "untouched", MessageID: "m1"})
		res, err := s.Transcripts.EditMessage(ctx, "g1", "c1", "m1", "see you at 9, token sk-proj-abcdefghijklmnopqrstuvwxyz0123")
		if err != nil || res.Turns != 1 {
			t.Fatalf("edit = %+v %v, want 1 turn", res, err)
		}
		turns, _ := s.Transcripts.RecentTurns(ctx, "g1", "c1", "", 10)
		if len(turns) != 2 || !strings.HasPrefix(turns[0].Content, "see you at 9") || strings.Contains(turns[0].Content, "sk-proj") ||
			turns[1].Content != "ok" {
			t.Fatalf("after the edit: %q", turnTexts(turns))
		}
		if turns, _ := s.Transcripts.RecentTurns(ctx, "g2", "c9", "", 10); turnTexts(turns) != "untouched" {
			t.Errorf("another channel's message with the same id was edited: %q", turnTexts(turns))
		}
		if res, err := s.Transcripts.EditMessage(ctx, "g1", "c1", "never-stored", "x"); err != nil || res.Turns != 0 {
			t.Errorf("edit of an unknown message = %+v %v", res, err)
		}
	})
}

// testDeleteMessages: a deleted message leaves the transcript of its channel; a pipeline
// memory learned only from deleted messages is soft-deleted (recoverably, with history),
// while deliberate saves and memories with evidence left stay.
func testDeleteMessages(t *testing.T, s Stores) {
	ctx := t.Context()
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "alice", Content: "my locker code is 4412", MessageID: "m1"})
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "alice", Role: memory.RoleAssistant, Content: "Noted."})
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "bob", Content: "mine is 7781", MessageID: "m2"})
	mustTurn(t, s, memory.Turn{GuildID: "g2", ChannelID: "c9", UserID: "alice", Content: "other server", MessageID: "m1"})

	w := memory.WriteContext{WriterID: "pipeline", GuildID: "g1", ChannelID: "c1"}
	remember := func(m memory.Memory, evidence ...memory.MessageRef) *memory.Memory {
		t.Helper()
		res, err := s.Memories.RememberAs(ctx, w, m, memory.ActorPipeline, evidence...)
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	m1 := memory.MessageRef{MessageID: "m1", AuthorID: "alice"}
	m2 := memory.MessageRef{MessageID: "m2", AuthorID: "bob"}
	pipelined := func(m memory.Memory) memory.Memory { m.Source = memory.SourcePipeline; return m }
	onlyM1 := remember(pipelined(server("g1", "Alice's locker code is 4412")), m1)
	twoMessages := remember(pipelined(personal("bob", "g1", "Bob's locker code is 7781")), m1, m2)
	saved := remember(memory.Memory{Scope: memory.ScopePersonal, UserID: "alice", GuildID: "g1", Source: memory.SourceTool,
		Content: "My locker code is 4412"}, m1)

	res, err := s.Transcripts.DeleteMessages(ctx, "g1", "c1", []string{"m1", "m1", "", "never-stored"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 1 {
		t.Errorf("deleted %d transcript turns, want 1", res.Turns)
	}
	if len(res.Forgotten) != 1 || res.Forgotten[0].ID != onlyM1.ID {
		t.Fatalf("forgot %+v, want only #%d", res.Forgotten, onlyM1.ID)
	}
	turns, _ := s.Transcripts.RecentTurns(ctx, "g1", "c1", "", 10)
	if got := turnTexts(turns); got != "Noted.|mine is 7781" {
		t.Errorf("transcript = %q, want the deleted message gone and the rest kept", got)
	}
	if turns, _ := s.Transcripts.RecentTurns(ctx, "g2", "c9", "", 10); len(turns) != 1 {
		t.Error("another channel's message with the same id was deleted")
	}
	if isLive(t, s, onlyM1.Owner(), onlyM1.ID) {
		t.Error("the pipeline memory learned only from the deleted message is still live")
	}
	hist, err := s.Memories.History(ctx, onlyM1.Owner(), onlyM1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last := hist[len(hist)-1]; last.Action != memory.ActionDelete || last.Reason != ltm.ReasonSourceDeleted ||
		last.Actor != memory.ActorDiscord || last.Version != 2 || last.OldContent != onlyM1.Content {
		t.Errorf("last history row = %+v, want a versioned delete for %q", last, ltm.ReasonSourceDeleted)
	}
	if !isLive(t, s, twoMessages.Owner(), twoMessages.ID) || !isLive(t, s, saved.Owner(), saved.ID) {
		t.Error("a memory with evidence left, or a deliberate save, was forgotten")
	}
	t.Run("LastEvidenceGoneForgets", func(t *testing.T) {
		res, err := s.Transcripts.DeleteMessages(ctx, "g1", "c1", []string{"m2"})
		if err != nil || len(res.Forgotten) != 1 || res.Forgotten[0].ID != twoMessages.ID {
			t.Fatalf("deleting the last message = %+v %v, want #%d forgotten", res, err, twoMessages.ID)
		}
	})
	t.Run("Recoverable", func(t *testing.T) {
		if _, err := s.Memories.Recover(ctx, onlyM1.Owner(), onlyM1.ID, 0, memory.ActorCLI); err != nil {
			t.Fatal(err)
		}
	})
}
