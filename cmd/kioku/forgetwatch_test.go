package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/stm"
)

// TestForgetWatch: a forget-me recorded by another process on the same database clears the
// member from this process's short-term memory at the next look, others' words stay, and
// what the member says afterwards is not cleared again by later looks.
func TestForgetWatch(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kioku.db")
	open := func() *ltm.Store {
		s, err := ltm.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	here, other := open(), open()
	short, err := stm.New(stm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newForgetWatch(here, short, slog.New(slog.DiscardHandler))
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

	// The forget-me happens in the other process: only its fence reaches this one.
	if err := other.Memories.FenceForgotten(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := w.catchUp(ctx); err != nil {
		t.Fatal(err)
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
