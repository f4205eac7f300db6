package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

// TestForgetWatch: a forget-me recorded by another process on the same database clears the
// member from this process's short-term memory and empties its query cache at the next look,
// others' words stay, and
// what the member says afterwards is not cleared again by later looks.
func TestForgetWatch(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kioku.db")
	open := func() *ltm.Store {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	here, other := open(), open()
	var embedCalls atomic.Int32
	here.Recall.SetEmbedder(func(_ context.Context, texts []string) ([][]float32, error) {
		embedCalls.Add(1)
		out := make([][]float32, len(texts))
		for i, text := range texts {
			out[i] = fakeopenai.EmbedText(text, 16)
		}
		return out, nil
	}, "fake-embed")
	search := func() {
		t.Helper()
		if _, err := here.Recall.Search(ctx, memory.SearchQuery{Text: "where does alice live", Owners: []memory.Owner{memory.ServerOwner("100")}}); err != nil {
			t.Fatal(err)
		}
	}
	short, err := stm.New(stm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newForgetWatch(sqliteBackend(here, path), short, slog.New(slog.DiscardHandler))
	key := stm.ChannelKey("100", "200")
	say := func(user, text string) {
		t.Helper()
		if err := short.Append(key, stm.Message{AuthorID: user, AuthorName: user, Role: stm.RoleUser, Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	channelText := func() string {
		var sb strings.Builder
		for _, m := range short.Context(key).Messages {
			sb.WriteString(m.Content + "\n")
		}
		return sb.String()
	}
	say("alice", "my address is 1 Elm Street")
	say("bob", "I like tea")

	if err := w.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "short-term memory with no forget-me", channelText(), "Elm Street", "tea")

	// Alice's search leaves its text as a key of the query-vector cache.
	search()
	cached := embedCalls.Load()
	search()
	if embedCalls.Load() != cached {
		t.Fatal("a repeated search was not answered from the query cache, so the check below proves nothing")
	}

	// The forget-me happens in the other process: only its fence reaches this one.
	if err := other.Memories.FenceForgotten(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := w.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	search()
	if embedCalls.Load() == cached {
		t.Error("the query cache still held a search made before the forget-me elsewhere")
	}
	got := channelText()
	mustNotContain(t, "short-term memory after alice's forget-me elsewhere", got, "Elm Street")
	mustContain(t, "short-term memory after alice's forget-me elsewhere", got, "tea")

	say("alice", "hello again")
	if err := w.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "short-term memory after a later look", channelText(), "hello again", "tea")
}
