package storetest

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// WriteWatcher tells whether the store holds a write transaction open right now, its own
// background bookkeeping aside (ltm.Store.InWriteTx).
type WriteWatcher interface {
	InWriteTx() bool
}

// Embedder is the recall side that takes the embedding model.
type Embedder interface {
	SetEmbedder(fn ltm.EmbedFunc, model string)
}

// testNoEmbeddingInWrite: the store calls its embedding model after its writes commit and
// before its reads, never inside a write transaction (ARCHITECTURE invariant 2), on every
// path that embeds: remember, modify, recover, undo, the pipeline's batch and prefetch, a
// query and a forget preview. The watcher is checked too: the store's clock, which its
// writes read inside their transactions, must see it report an open write.
func testNoEmbeddingInWrite(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.Writes == nil || s.Embedder == nil {
		t.Skip("the store reports no write transactions or takes no embedder")
	}
	ctx := t.Context()
	var mu sync.Mutex
	var calls int
	var inWrite []string
	s.Embedder.SetEmbedder(func(_ context.Context, texts []string) ([][]float32, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if s.Writes.InWriteTx() {
			inWrite = append(inWrite, strings.Join(texts, " | "))
		}
		return letterVectors(texts), nil
	}, "watch")
	var clockInWrite atomic.Int32
	s.Clock.OnRead(func() {
		if s.Writes.InWriteTx() {
			clockInWrite.Add(1)
		}
	})

	g := memory.ServerOwner("g1")
	raid := mustRemember(t, s, server("g1", "The raid is on Friday"))
	moved := "The raid moved to Saturday"
	if _, err := s.Memories.Modify(ctx, g, raid.ID, memory.Change{Content: &moved}, "user:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memories.Undo(ctx, g, raid.ID, 2, "user:1"); err != nil {
		t.Fatal(err)
	}
	mustForget(t, s, g, raid.ID)
	if _, err := s.Memories.Recover(ctx, g, raid.ID, 0, "user:1"); err != nil {
		t.Fatal(err)
	}
	if s.Facts != nil {
		mustApply(t, s.Facts, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorFrom: 0, CursorTo: 1,
			Proposals: []memory.Proposal{addProposal(g, "Snacks come on Thursdays", nil)}})
		if err := s.Facts.PrefetchEmbeddings(ctx, []string{"Board games on Sunday"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "when is the raid", Owners: []memory.Owner{g}, Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Confirmations.PreviewForget(ctx, g, "raid", "user:1", 5); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if calls < 4 {
		t.Fatalf("the scenario made %d embedding calls; it must embed its writes and its queries", calls)
	}
	if len(inWrite) > 0 {
		t.Errorf("%d of %d embedding calls came inside a write transaction: %q", len(inWrite), calls, inWrite)
	}
	if clockInWrite.Load() == 0 {
		t.Error("InWriteTx never reported the writes' transactions: the check above proves nothing")
	}
	if s.Writes.InWriteTx() {
		t.Error("a write transaction is still open after every call returned")
	}
}

// letterVectors embeds each text as its letter counts: distinct texts point in distinct
// directions, and no vector is zero.
func letterVectors(texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, 27)
		v[26] = 1
		for _, r := range strings.ToLower(text) {
			if r >= 'a' && r <= 'z' {
				v[r-'a']++
			}
		}
		out[i] = v
	}
	return out
}

// testRefusedWritesUnavailable: while the database refuses writes, each write fails with
// an EUNAVAILABLE error whose message names the state and carries no database wording,
// nothing stored before changes, and reads (a recall that counts access included) keep
// working; once it is writable again, the same store writes, without reopening.
func testRefusedWritesUnavailable(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.ReadOnly == nil {
		t.Skip("the store has no read-only switch")
	}
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	raid := mustRemember(t, s, server("g1", "The raid is on Friday"))
	turn := memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "1", AuthorName: "alice", Role: memory.RoleUser,
		Content: "hello there", CreatedAt: s.Clock.Now()}
	if _, err := s.Transcripts.AppendTurn(ctx, turn); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.ReadOnly(context.WithoutCancel(ctx), false) })

	_, err := s.Memories.Remember(ctx, server("g1", "Snacks are on Fridays"), "user:1")
	wantRefused(t, "remember", err)
	moved := "The raid moved to Saturday"
	_, err = s.Memories.Modify(ctx, g, raid.ID, memory.Change{Content: &moved}, "user:1")
	wantRefused(t, "modify", err)
	_, err = s.Transcripts.AppendTurn(ctx, turn)
	wantRefused(t, "append turn", err)
	_, _, err = s.Jobs.Enqueue(ctx, "extract", "c1", map[string]string{"guild_id": "g1"}, memory.EnqueueOptions{})
	wantRefused(t, "enqueue", err)
	wantRefused(t, "set privacy", s.Settings.SetCrossServer(ctx, "1", true))
	if s.Writes != nil && s.Writes.InWriteTx() {
		t.Error("a refused write left its transaction counted as open")
	}

	found, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "raid Friday", Owners: []memory.Owner{g}, KeywordOnly: true,
		CountAccess: true, Limit: 5})
	if err != nil || len(found) != 1 {
		t.Errorf("recall while read-only: %d results, %v; want the raid", len(found), err)
	}
	if turns, err := s.Transcripts.RecentTurns(ctx, "g1", "c1", "1", 10); err != nil || len(turns) != 1 {
		t.Errorf("recent turns while read-only: %d, %v; want 1", len(turns), err)
	}

	if err := s.ReadOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(time.Second)
	mustRemember(t, s, server("g1", "Snacks are on Fridays"))
	if got, err := s.Memories.Get(ctx, g, raid.ID); err != nil || got.Content != raid.Content || got.Version != raid.Version {
		t.Errorf("the memory stored before the refusal: %+v, %v; want it unchanged", got, err)
	}
	if ids := listIDs(t, s, g, memory.ListOptions{}); len(ids) != 2 {
		t.Errorf("%d memories once writable again, want 2", len(ids))
	}
	if _, err := s.Transcripts.AppendTurn(ctx, turn); err != nil {
		t.Errorf("append turn once writable again: %v", err)
	}
}

// wantRefused checks that err is EUNAVAILABLE, says the database is read-only, and keeps
// the database's own wording out of the message and in the error, for the log.
func wantRefused(t *testing.T, what string, err error) {
	t.Helper()
	if code := memory.ErrorCode(err); code != memory.EUNAVAILABLE {
		t.Errorf("%s while read-only: %v (code %q), want %q", what, err, code, memory.EUNAVAILABLE)
		return
	}
	msg := memory.ErrorMessage(err)
	if !strings.Contains(msg, "read-only") || !strings.Contains(msg, "nothing was saved") {
		t.Errorf("%s while read-only: message %q, want it to say the database is read-only and nothing was saved", what, msg)
	}
	for _, leak := range []string{"SQLITE", "sqlite", "SQLSTATE", "couldn't", "transaction", "\n"} {
		if strings.Contains(msg, leak) {
			t.Errorf("%s while read-only: message %q leaks %q", what, msg, leak)
		}
	}
	if msg == err.Error() {
		t.Errorf("%s while read-only: the error %q keeps no cause for the log", what, err)
	}
}
