package ltm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

func TestRetention(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	embed := func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range texts {
			out[i] = []float32{1, float32(i + 1)}
		}
		return out, nil
	}
	s.Recall.SetEmbedder(embed, "test-embed")
	remember := func(content string) *memory.Memory {
		res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content}, "user:u1")
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	// Day 0: history, turns and jobs that will all be old by the end.
	kept := remember("Kept forever because it is live")
	forgotten := remember("Forgotten and then purged")
	shared := remember("Shared text in two guilds")
	if _, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Shared text in two guilds"}, "user:u1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Recall.FlushVectors(ctx); err != nil { // stored while the memories are live
		t.Fatal(err)
	}
	for range 5 {
		if _, err := s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: memory.RoleUser, Content: "old turn"}); err != nil {
			t.Fatal(err)
		}
	}
	mustEnqueue(t, s, "k", "done-old", memory.EnqueueOptions{})
	j := mustLease(t, s, "w")
	if err := s.Jobs.Complete(ctx, j.ID, "w"); err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, s, "k", "dead-old", memory.EnqueueOptions{MaxAttempts: 1})
	j = mustLease(t, s, "w")
	if _, err := s.Jobs.Fail(ctx, j.ID, "w", errors.New("x"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memories.Forget(ctx, g, []int64{forgotten.ID, shared.ID}, "user:u1", ""); err != nil {
		t.Fatal(err)
	}

	t.Run("NothingYoungIsTouched", func(t *testing.T) {
		clock.Advance(2 * 24 * time.Hour)
		res, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{})
		if err != nil || res != (memory.RetentionResult{}) {
			t.Fatalf("retention on young data: %+v %v", res, err)
		}
	})
	// A save a near-duplicate answer held, never chosen: it expires within minutes.
	hold := func(content string) string {
		t.Helper()
		token, _, err := s.Confirmations.HoldWrite(ctx, memory.HeldWrite{Memory: memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
			Content: content}}, "user:u1")
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	stale := hold("A save nobody chose for")
	clock.Advance(29 * 24 * time.Hour) // day 31: past the recover window and the transcript, done and dead job limits
	mustEnqueue(t, s, "k", "done-new", memory.EnqueueOptions{})
	j = mustLease(t, s, "w")
	if err := s.Jobs.Complete(ctx, j.ID, "w"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: memory.RoleUser, Content: "new turn"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{Batch: 2}) // small batches exercise the loop
	if err != nil {
		t.Fatal(err)
	}
	want := memory.RetentionResult{Embeddings: 1, Tombstones: 2, DoneJobs: 1, DeadJobs: 1, Transcripts: 5, Confirmations: 1}
	if res != want {
		t.Fatalf("retention %+v, want %+v", res, want)
	}
	if _, err := s.Confirmations.HeldWrite(ctx, g, stale, "user:u1"); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Errorf("the expired held save after retention: %v, want it gone", err)
	}
	fresh := hold("A save waiting for its choice")
	if res, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{}); err != nil || res.Confirmations != 0 {
		t.Errorf("retention with a save waiting: %+v %v", res, err)
	}
	if _, err := s.Confirmations.HeldWrite(ctx, g, fresh, "user:u1"); err != nil {
		t.Errorf("the waiting held save after retention: %v", err)
	}
	if _, err := s.Memories.Recover(ctx, g, forgotten.ID, 0, "user:u1"); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Fatalf("recover after purge: %v, want not found", err)
	}
	evs, err := s.Memories.History(ctx, g, forgotten.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Action != memory.ActionPurge || last.Actor != memory.ActorRetention || last.OldContent != "" || last.NewContent != "" {
		t.Fatalf("purge row %+v", last)
	}
	if _, err := s.Memories.Get(ctx, g, kept.ID); err != nil {
		t.Fatalf("live memory purged: %v", err)
	}
	st, _ := s.Health.Stats(ctx, "")
	if st.Embeddings != 2 {
		t.Fatalf("%d embeddings left, want the live memory's and the one g2 still uses", st.Embeddings)
	}
	if st.Turns != 1 || st.Jobs["done"] != 1 || st.Jobs["dead"] != 0 {
		t.Fatalf("stats after retention %+v", st)
	}

	t.Run("HistoryAfterHalfAYear", func(t *testing.T) {
		clock.Advance(150 * 24 * time.Hour) // day 181
		res, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{})
		if err != nil {
			t.Fatal(err)
		}
		if res.History == 0 {
			t.Fatalf("retention %+v: old history kept", res)
		}
		if evs, err := s.Memories.History(ctx, g, forgotten.ID); err != nil || len(evs) != 1 || evs[0].Action != memory.ActionPurge {
			t.Fatalf("history of the purged memory %+v %v, want only its (younger) purge row", evs, err)
		}
	})
}

// TestRetentionArchivesPastMemories: with ArchivePast set, a memory whose day passed longer
// ago than that is archived (a history row signed by retention, undoable), out of default
// search; a memory still upcoming, one naming no day and a pinned one stay; without
// ArchivePast nothing is archived.
func TestRetentionArchivesPastMemories(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	remember := func(content string, pinned bool) *memory.Memory {
		t.Helper()
		res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content, Pinned: pinned}, "user:u1")
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	raid := remember("The raid is tomorrow night at nine", false)
	pinned := remember("The launch party is tomorrow evening", true)
	timeless := remember("Raids need six players", false)
	clock.Advance(10 * 24 * time.Hour)
	later := remember("The next raid is tomorrow at eight", false)
	if res, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{}); err != nil || res.Archived != 0 {
		t.Fatalf("retention without ArchivePast archived %d (%v)", res.Archived, err)
	}
	res, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{ArchivePast: 7 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.Archived != 1 {
		t.Fatalf("archived %d, want only the raid", res.Archived)
	}
	for _, c := range []struct {
		m    *memory.Memory
		want memory.State
	}{{raid, memory.StateArchived}, {pinned, memory.StateActive}, {timeless, memory.StateActive}, {later, memory.StateActive}} {
		got, err := s.Memories.Get(ctx, g, c.m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != c.want {
			t.Errorf("%q is %q, want %q", got.Content, got.State, c.want)
		}
	}
	hits, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "raid tomorrow night nine", Owners: []memory.Owner{g}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Memory.ID == raid.ID {
			t.Fatal("an archived memory is still in default search")
		}
	}
	undone, err := s.Memories.Undo(ctx, g, raid.ID, 0, "user:u1")
	if err != nil {
		t.Fatal(err)
	}
	if undone.Change.Actor != ltm.ActorRetention || undone.Memory.State != memory.StateActive {
		t.Fatalf("undo of %+v left %q", undone.Change, undone.Memory.State)
	}
	// Taken back out of the archive, it is not archived again at the next run.
	if res, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{ArchivePast: 7 * 24 * time.Hour}); err != nil || res.Archived != 0 {
		t.Fatalf("the next run archived %d (%v)", res.Archived, err)
	}
}
