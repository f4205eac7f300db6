package bot_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/memory"
)

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestInteractionTimeout: a command whose work hangs is cut off by the
// per-interaction context and the caller is told, in the deferred response
// it already saw, instead of "thinking…" forever. The import download stands
// in for any slow call: it blocks until its context ends, so the test waits
// for the timeout itself and asserts nothing about durations.
func TestInteractionTimeout(t *testing.T) {
	tb := newTestBot(t, func(c *bot.Config) {
		c.CommandTimeout = 200 * time.Millisecond
		c.HTTPClient = &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})}
	})
	alice := tb.fake.NewUser("alice")
	att := tb.fake.AddAttachment("900", "export.json", "application/json",
		[]byte(`{"format":"kioku.memories.v1","memories":[{"content":"a fact that never arrives"}]}`))
	data := discordgo.ApplicationCommandInteractionData{Name: "memory",
		Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "import", Type: discordgo.ApplicationCommandOptionSubCommand,
			Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "file", Type: discordgo.ApplicationCommandOptionAttachment, Value: att.ID}}}},
		Resolved: &discordgo.ApplicationCommandInteractionDataResolved{Attachments: map[string]*discordgo.MessageAttachment{att.ID: att}}}
	i := tb.fake.SlashCommand("", "900", alice, 0, data)
	msg, ephemeral := tb.interact(t, i)

	resps := tb.fake.InteractionResponses()
	if len(resps) != 1 || resps[0].Type != discordgo.InteractionResponseDeferredChannelMessageWithSource {
		t.Fatalf("responses = %+v, want one deferral before the slow work", resps)
	}
	if !ephemeral {
		t.Error("the deferral is not ephemeral")
	}
	if !strings.Contains(msg.Content, "took too long") {
		t.Errorf("answer = %q, want a timeout message", msg.Content)
	}
	if st := tb.bot.Stats(); st.InteractionErrors != 1 {
		t.Errorf("interaction errors = %d, want 1", st.InteractionErrors)
	}
	mems, _, err := tb.store.Memories.List(context.Background(), memory.PersonalOwner(alice.ID), memory.ListOptions{})
	if err != nil || len(mems) != 0 {
		t.Errorf("a timed-out import wrote %d memories (%v)", len(mems), err)
	}
}

func TestUnknownCommandIsAnswered(t *testing.T) {
	tb := newTestBot(t)
	alice := tb.fake.NewUser("alice")
	for name, i := range map[string]*discordgo.Interaction{
		"Command": tb.fake.SlashCommand("", "901", alice, 0, discordgo.ApplicationCommandInteractionData{Name: "remind"}),
		"Button":  tb.fake.ComponentClick("", "901", alice, 0, "poll:vote:3", nil),
	} {
		t.Run(name, func(t *testing.T) {
			msg, ephemeral := tb.interact(t, i)
			if !ephemeral || !strings.Contains(msg.Content, "don't know that command") {
				t.Errorf("answer = %q (ephemeral %v), want an ephemeral explanation", msg.Content, ephemeral)
			}
		})
	}
}

// blockingTurner blocks every turn until its context ends, like a model
// call that never returns.
type blockingTurner struct {
	started chan struct{}
	ended   chan error
}

func (bt *blockingTurner) Turn(ctx context.Context, _ chat.Request) (chat.Reply, error) {
	close(bt.started)
	<-ctx.Done()
	bt.ended <- ctx.Err()
	return chat.Reply{}, ctx.Err()
}

// TestShutdownCancelsOverrunningTurns: when the shutdown bound passes,
// in-flight turns are cancelled through their context (so the process can
// exit and close the database) and Shutdown reports it. The bound is a
// context already cancelled, so nothing depends on timing.
func TestShutdownCancelsOverrunningTurns(t *testing.T) {
	bt := &blockingTurner{started: make(chan struct{}), ended: make(chan error, 1)}
	tb := newTestBot(t, func(c *bot.Config) { c.Turner = bt })
	alice := tb.fake.NewUser("alice")
	turnDone := make(chan struct{})
	go func() {
		defer close(turnDone)
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.DMMessage("902", alice, "a question")})
	}()
	<-bt.started

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := tb.bot.Shutdown(ctx)
	if err == nil || !strings.Contains(err.Error(), "in-flight work") {
		t.Errorf("Shutdown = %v, want an error about cancelled in-flight work", err)
	}
	// The turn sends on ended before it returns and releases the shutdown
	// wait, so a Shutdown that waited finds the value already there.
	select {
	case got := <-bt.ended:
		if got == nil {
			t.Error("the turn's context was not cancelled")
		}
	default:
		t.Error("Shutdown returned while the turn was still running")
	}
	<-turnDone
}
