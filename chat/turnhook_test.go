package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/contextbuild"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/sashabaranov/go-openai"
)

// hookCall is what the turn hook saw, plus the state of the world when it was called.
type hookCall struct {
	turn       memory.Turn
	highSignal bool
	stored     bool // the turn was already in the transcript
	modelCalls int  // chat requests the fake had received by then
	inWriteTx  bool
}

// hooked is an engine on e's parts whose OnTurn records its calls and returns fail.
type hooked struct {
	engine *chat.Engine
	logs   *bytes.Buffer
	mu     sync.Mutex
	calls  []hookCall
	fail   error
}

func newHooked(t *testing.T, e *env, cfg chat.Config) *hooked {
	t.Helper()
	h := &hooked{logs: &bytes.Buffer{}}
	hook := func(ctx context.Context, turn memory.Turn, highSignal bool) error {
		recent, err := e.store.Transcripts.RecentTurns(ctx, turn.GuildID, turn.ChannelID, turn.UserID, 5)
		if err != nil {
			t.Error(err)
		}
		c := hookCall{turn: turn, highSignal: highSignal, modelCalls: e.srv.ChatCount(), inWriteTx: e.store.InWriteTx(),
			stored: slices.ContainsFunc(recent, func(r memory.Turn) bool { return r.ID == turn.ID && r.Content == turn.Content })}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.calls = append(h.calls, c)
		return h.fail
	}
	cfg.Now = e.clock.Now
	cfg.Logger = slog.New(slog.NewTextHandler(h.logs, nil))
	var err error
	if h.engine, err = chat.New(cfg, chat.Deps{Memories: e.store.Memories, Duplicates: e.store.Duplicates, Recall: e.store.Recall, Transcript: e.store.Transcripts, Settings: e.store.Settings, ShortTerm: e.short, Model: e.model, OnTurn: hook}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *hooked) turn(t *testing.T, req chat.Request) chat.Reply {
	t.Helper()
	reply, err := h.engine.Turn(context.Background(), req)
	if err != nil {
		t.Fatalf("Turn(%q): %v", req.Content, err)
	}
	return reply
}

// TestTurnHook: the engine tells the pipeline about every stored user turn, right after
// the raw-first write and before the model, with the high-signal verdict the extraction
// trigger needs; a failing hook never costs the user their answer.
func TestTurnHook(t *testing.T) {
	t.Run("CalledAfterTheTranscriptWriteWithHighSignal", func(t *testing.T) {
		e := newEnv(t, chat.Config{})
		h := newHooked(t, e, chat.Config{})
		tests := []struct {
			req  chat.Request
			high bool
		}{
			{e.guild("hello there, how is everyone doing today"), false},
			{e.guild("We decided to raid on Fridays from now on"), true}, // decision language
			{e.guild("I prefer green tea over coffee"), true},            // preference language
			{e.guild("Remember that the raid is on Friday"), true},       // the intent gate
			{e.dm("これ覚えておいて、金曜日はレイドの日"), true},                           // the gate, in Japanese
			{e.dm("I looked at the notebook yesterday"), false},          // "note" needs a word boundary
		}
		for i, tc := range tests {
			before := e.srv.ChatCount()
			e.srv.Script(fakeopenai.Text("ok"))
			h.turn(t, tc.req)
			if len(h.calls) != i+1 {
				t.Fatalf("turn %q: %d hook calls in all, want %d", tc.req.Content, len(h.calls), i+1)
			}
			c := h.calls[i]
			want := memory.Turn{ID: c.turn.ID, GuildID: tc.req.GuildID, ChannelID: tc.req.ChannelID, UserID: "111", AuthorName: "Aiko",
				Role: memory.RoleUser, Content: tc.req.Content, MessageID: tc.req.MessageID, CreatedAt: start}
			if c.turn.ID == 0 || c.turn != want {
				t.Errorf("turn %q: hook got %+v, want %+v", tc.req.Content, c.turn, want)
			}
			if c.highSignal != tc.high {
				t.Errorf("turn %q: highSignal %v, want %v", tc.req.Content, c.highSignal, tc.high)
			}
			if !c.stored || c.modelCalls != before || c.inWriteTx {
				t.Errorf("turn %q: hook called with the turn stored %v, %d model calls made, inside a write tx %v; want stored, none, outside",
					tc.req.Content, c.stored, c.modelCalls-before, c.inWriteTx)
			}
		}
	})

	t.Run("ServerMemoryRightIsKeptWithTheTurn", func(t *testing.T) {
		e := newEnv(t, chat.Config{})
		h := newHooked(t, e, chat.Config{})
		for _, can := range []bool{true, false} {
			e.srv.Script(fakeopenai.Text("ok"))
			req := e.guild("We decided to raid on Fridays from now on")
			req.ServerEditor = can
			h.turn(t, req)
			c := h.calls[len(h.calls)-1]
			recent, err := e.store.Transcripts.RecentTurns(t.Context(), req.GuildID, req.ChannelID, req.UserID, 10)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(recent, func(r memory.Turn) bool { return r.ID == c.turn.ID })
			if c.turn.CanEditServer != can || i < 0 || recent[i].CanEditServer != can {
				t.Errorf("CanEditServer %v: the hook saw %v, the transcript holds %+v", can, c.turn.CanEditServer, recent)
			}
		}
	})

	t.Run("FailureOnlyWarns", func(t *testing.T) {
		e := newEnv(t, chat.Config{})
		h := newHooked(t, e, chat.Config{})
		h.fail = errors.New("queue unavailable")
		e.srv.Script(fakeopenai.Text("Sure thing."))
		const secret = "We decided the vault code word is pelican"
		reply := h.turn(t, e.guild(secret))
		if reply.Text != "Sure thing." || reply.ModelUnavailable {
			t.Fatalf("reply = %+v, want the normal answer despite the hook's failure", reply)
		}
		if n := countTurns(t, e.store, "111"); n != 2 {
			t.Fatalf("%d transcript rows, want the turn and the reply", n)
		}
		logs := h.logs.String()
		if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "queue unavailable") || !strings.Contains(logs, "turn_id=") {
			t.Fatalf("hook failure not logged as a warning with the turn id:\n%s", logs)
		}
		if strings.Contains(logs, "pelican") {
			t.Fatalf("message content in the logs:\n%s", logs)
		}
	})

	t.Run("CalledWhenTheModelIsDown", func(t *testing.T) {
		e := newEnv(t, chat.Config{})
		h := newHooked(t, e, chat.Config{})
		e.srv.Down()
		if r := h.turn(t, e.guild("We decided to raid on Fridays from now on")); !r.ModelUnavailable {
			t.Fatalf("reply = %+v", r)
		}
		if len(h.calls) != 1 || !h.calls[0].highSignal {
			t.Fatalf("hook calls %+v, want the stored turn scheduled even though the model failed", h.calls)
		}
	})

	t.Run("NotCalledForTurnsThatAreNotStored", func(t *testing.T) {
		e := newEnv(t, chat.Config{})
		h := newHooked(t, e, chat.Config{TurnsPerMinute: 1})
		e.srv.Script(fakeopenai.Text("ok"))
		h.turn(t, e.dm("hello"))
		if r := h.turn(t, e.dm("We decided to raid on Fridays")); !r.RateLimited {
			t.Fatalf("second turn not rate limited: %+v", r)
		}
		if r := h.turn(t, e.dm("   ")); !r.Ignored {
			t.Fatalf("empty message not ignored: %+v", r)
		}
		if err := e.store.Settings.SetPrivacy(context.Background(), "111", memory.PrivacyFull); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(2 * time.Minute) // refill the rate limit, so only privacy can stop the turn
		if r := h.turn(t, e.dm("remember that I prefer green tea")); !r.Ignored {
			t.Fatalf("full-privacy turn not ignored: %+v", r)
		}
		if len(h.calls) != 1 || h.calls[0].turn.Content != "hello" {
			t.Fatalf("hook calls %+v, want only the first, stored turn", h.calls)
		}
	})
}

// TestTurnHookSchedulesPipeline wires the real pipeline's OnTurn into the engine: a chat
// turn with decision language queues an extraction due now, a calm one waits for the
// channel to go idle, and running the due job turns the chat into a memory.
func TestTurnHookSchedulesPipeline(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	p, err := pipeline.New(pipeline.Config{}, pipeline.Deps{Jobs: e.store.Jobs, Ledger: e.store.Jobs, Transcript: e.store.Transcripts, Facts: e.store.Facts,
		Candidates: struct {
			*ltm.Recall
			*ltm.Graph
		}{e.store.Recall, e.store.Graph}, Settings: e.store.Settings, Housekeeping: struct {
			*ltm.Maintenance
			*ltm.Guilds
		}{e.store.Maintenance, e.store.Guilds}, Model: e.model, Quote: contextbuild.Quote, Now: func() time.Time { return e.store.Now() }})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := chat.New(chat.Config{Now: e.clock.Now}, chat.Deps{Memories: e.store.Memories, Duplicates: e.store.Duplicates, Recall: e.store.Recall, Transcript: e.store.Transcripts, Settings: e.store.Settings, ShortTerm: e.short, Model: e.model, OnTurn: p.OnTurn})
	if err != nil {
		t.Fatal(err)
	}
	const decisive = "We decided to raid on Fridays from now on"
	e.srv.Script(fakeopenai.Text("Noted!"), fakeopenai.Text("Hi!"))
	for _, req := range []chat.Request{e.guild(decisive), {GuildID: "g1", ChannelID: "c2", UserID: "222", UserName: "Ben", Content: "hello there"}} {
		if _, err := engine.Turn(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := e.store.Jobs.ListJobs(ctx, memory.JobQueued, 10)
	if err != nil {
		t.Fatal(err)
	}
	due := map[string]bool{}
	for _, j := range jobs {
		due[j.DedupKey] = !j.RunAfter.After(e.clock.Now())
	}
	if len(jobs) != 2 || !due["g1/c1"] || due["g1/c2"] {
		t.Fatalf("queued jobs %v (due now by channel), want g1/c1 due now and g1/c2 waiting for idle", due)
	}

	// The pipeline's extraction: the fake turns the decisive line into one server fact.
	e.srv.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		b, _ := json.Marshal(map[string]any{"facts": []map[string]any{{"content": decisive, "type": "decision", "confidence": 0.9, "scope": "server"}}})
		return fakeopenai.Text(string(b))
	})
	if r, err := p.Tick(ctx); err != nil || r.Done != 1 {
		t.Fatalf("tick %+v %v", r, err)
	}
	ms, _, err := e.store.Memories.List(ctx, memory.ServerOwner("g1"), memory.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Content != decisive || ms[0].Source != memory.SourcePipeline {
		t.Fatalf("server memories %+v, want the decision extracted by the pipeline", ms)
	}
}
