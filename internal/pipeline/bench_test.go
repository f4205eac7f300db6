package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// benchPipeline is a pipeline on a real store and the fake model, for benchmarks.
func benchPipeline(b *testing.B) (*pipeline.Pipeline, *ltm.Store) {
	b.Helper()
	store := testkit.MustOpenStore(b)
	fake := fakeopenai.New(b)
	fake.Default(defaultBrain)
	client, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: fakeopenai.APIKey, ChatModel: "chat-model", PipelineModel: "pipeline-model"})
	if err != nil {
		b.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{CallsPerHour: 1 << 30, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, storeDeps(store, client))
	if err != nil {
		b.Fatal(err)
	}
	return p, store
}

// BenchmarkOnTurn measures what the turn hook adds to every chat turn: reading the
// guild's and the speaker's settings and the channel's backlog, and enqueueing or
// re-timing the channel's job. "append" is the raw-first write the turn makes anyway, for
// comparison; "append+hook" is both. Turns rotate over 50 channels.
func BenchmarkOnTurn(b *testing.B) {
	for _, withHook := range []bool{false, true} {
		name := "append"
		if withHook {
			name = "append+hook"
		}
		b.Run(name, func(b *testing.B) {
			p, store := benchPipeline(b)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				t := memory.Turn{GuildID: "g1", ChannelID: fmt.Sprintf("c%d", i%50), UserID: fmt.Sprintf("u%d", i%7),
					AuthorName: "someone", Role: memory.RoleUser, Content: "we were talking about the raid schedule", CreatedAt: time.Now()}
				i++
				id, err := store.Transcripts.AppendTurn(ctx, t)
				if err != nil {
					b.Fatal(err)
				}
				if withHook {
					t.ID = id
					if err := p.OnTurn(ctx, t, false); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkExtractionJob measures one extraction job end to end without model latency:
// eight turns of one channel, an extraction call and one decision call per fact to the
// fake model on loopback, candidate recall and the one write transaction. Each iteration
// runs in a channel of its own, so the number of memories grows as it would over time.
func BenchmarkExtractionJob(b *testing.B) {
	p, store := benchPipeline(b)
	ctx := context.Background()
	lines := []string{
		"The raid is on Friday evenings", "I prefer green tea over coffee", "The guild bank opens at noon",
		"I play a healer most nights", "Movie night is on Saturdays", "ok", "sounds good", "see you then",
	}
	b.ReportAllocs()
	ch := 0
	for b.Loop() {
		b.StopTimer()
		channel := fmt.Sprintf("c%d", ch)
		ch++
		for j, text := range lines {
			t := memory.Turn{GuildID: "g1", ChannelID: channel, UserID: fmt.Sprintf("%d", 100+j%3), AuthorName: fmt.Sprintf("user%d", j%3),
				Role: memory.RoleUser, Content: fmt.Sprintf("%s (%d)", text, ch), CreatedAt: time.Now()}
			id, err := store.Transcripts.AppendTurn(ctx, t)
			if err != nil {
				b.Fatal(err)
			}
			t.ID = id
			if err := p.OnTurn(ctx, t, true); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		res, err := p.Tick(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if res.Done != 1 {
			b.Fatalf("tick %+v, want one job done", res)
		}
	}
}
