package chat_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/contextbuild"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
	"github.com/sashabaranov/go-openai"
)

// start is an arbitrary fixed instant so failures print stable times.
var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// env is one engine wired to real parts: a SQLite store, a short-term store, and the real
// llm client talking HTTP to the fake OpenAI server.
type env struct {
	t      testing.TB
	store  *ltm.Store
	short  *stm.Store
	srv    *fakeopenai.Server
	model  *llm.Client
	clock  *testkit.Clock
	engine *chat.Engine
	n      int
}

func newEnv(t testing.TB, cfg chat.Config) *env {
	t.Helper()
	e := &env{t: t, store: testkit.MustOpenStore(t), srv: fakeopenai.New(t), clock: testkit.NewClock(start)}
	e.store.Now = e.clock.Now
	var err error
	if e.short, err = stm.New(stm.Options{Now: e.clock.Now}); err != nil {
		t.Fatal(err)
	}
	e.model, err = llm.New(llm.Config{BaseURL: e.srv.URL(), APIKey: fakeopenai.APIKey, ChatModel: "test-model",
		MaxRetries: 2, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Retries happen at once: tests check that they happen, not how long they wait.
	e.model.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	e.model.Jitter = func(time.Duration) time.Duration { return 0 }
	// Invariant 2 of the architecture, checked on every model call of every test.
	e.srv.OnRequest(func(r *http.Request) {
		if e.store.InWriteTx() {
			t.Errorf("model called inside a write transaction (%s)", r.URL.Path)
		}
	})
	cfg.Now = e.clock.Now
	if e.engine, err = chat.New(cfg, chat.Deps{Memories: e.store.Memories, Duplicates: e.store.Duplicates, Recall: e.store.Recall, Transcript: e.store.Transcripts, Settings: e.store.Settings, ShortTerm: e.short, Model: e.model}); err != nil {
		t.Fatal(err)
	}
	return e
}

// guild and dm build requests from Aiko (user 111) in guild g1 channel c1, or in a DM.
func (e *env) guild(content string) chat.Request {
	e.n++
	return chat.Request{GuildID: "g1", ChannelID: "c1", UserID: "111", UserName: "Aiko", MessageID: fmt.Sprintf("m%d", e.n), Content: content}
}

func (e *env) dm(content string) chat.Request {
	e.n++
	return chat.Request{ChannelID: "dm1", UserID: "111", UserName: "Aiko", MessageID: fmt.Sprintf("m%d", e.n), Content: content}
}

func (e *env) turn(req chat.Request) chat.Reply {
	e.t.Helper()
	reply, err := e.engine.Turn(context.Background(), req)
	if err != nil {
		e.t.Fatalf("Turn(%q): %v", req.Content, err)
	}
	return reply
}

func (e *env) selfTeaching(guildID string, on bool) {
	e.t.Helper()
	if err := e.store.Settings.SaveGuildSettings(context.Background(), memory.GuildSettings{GuildID: guildID, SelfTeaching: on}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) remember(m memory.Memory) *memory.Memory {
	e.t.Helper()
	return testkit.MustRemember(e.t, e.store, m)
}

// lastChat returns the last chat request the fake received.
func (e *env) lastChat() openai.ChatCompletionRequest {
	e.t.Helper()
	reqs := e.srv.ChatRequests()
	if len(reqs) == 0 {
		e.t.Fatal("no chat request was made")
	}
	return reqs[len(reqs)-1]
}

func systemText(req openai.ChatCompletionRequest) string {
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleSystem {
			return m.Content
		}
	}
	return ""
}

func allText(req openai.ChatCompletionRequest) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

func toolNames(req openai.ChatCompletionRequest) []string {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Function.Name)
	}
	return names
}

// toolResults returns the tool-role messages of a request, in order.
func toolResults(req openai.ChatCompletionRequest) []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m)
		}
	}
	return out
}

func countTurns(t testing.TB, s *ltm.Store, userID string) int {
	t.Helper()
	n, err := s.Transcripts.CountTurns(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func call(name, args string) fakeopenai.Call { return fakeopenai.Call{Name: name, Arguments: args} }

// 1. "remember that I prefer green tea" → a personal memory with provenance, a notice, and
// the memory in the next turn's prompt as [id:N] data.
func TestRememberThenRecall(t *testing.T) {
	ctx := context.Background()
	for _, where := range []string{"Guild", "DM"} {
		t.Run(where, func(t *testing.T) {
			e := newEnv(t, chat.Config{})
			e.selfTeaching("g1", true)
			req := e.guild("remember that I prefer green tea")
			if where == "DM" {
				req = e.dm("remember that I prefer green tea")
			}
			e.srv.Script(
				fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"Aiko prefers green tea","memory_scope":"target_user"}`)),
				fakeopenai.Text("Got it, I'll remember that you prefer green tea."),
			)
			reply := e.turn(req)
			if reply.Text != "Got it, I'll remember that you prefer green tea." {
				t.Fatalf("reply = %q", reply.Text)
			}
			if len(reply.Notices) != 1 {
				t.Fatalf("notices = %+v", reply.Notices)
			}
			n := reply.Notices[0]
			if n.Action != tools.NoticeSaved || n.Scope != memory.ScopePersonal || n.Content != "Aiko prefers green tea" {
				t.Fatalf("notice = %+v", n)
			}
			if want := fmt.Sprintf("📌 Remembered (personal) #%d: Aiko prefers green tea", n.MemoryID); n.String() != want {
				t.Errorf("notice text = %q, want %q", n.String(), want)
			}
			m, err := e.store.Memories.Get(ctx, memory.PersonalOwner("111"), n.MemoryID)
			if err != nil {
				t.Fatal(err)
			}
			wantProv := memory.Provenance{AuthorID: "111", Author: "Aiko", ChannelID: req.ChannelID, MessageID: req.MessageID}
			if m.Provenance != wantProv || m.Source != memory.SourceTool || m.GuildID != req.GuildID {
				t.Fatalf("memory = %+v", m)
			}

			e.srv.Script(fakeopenai.Text("Green tea, as always."))
			next := e.guild("which tea should I order today?")
			if where == "DM" {
				next = e.dm("which tea should I order today?")
			}
			e.turn(next)
			sys := systemText(e.lastChat())
			if want := fmt.Sprintf("[id:%d]", m.ID); !strings.Contains(sys, want) || !strings.Contains(sys, "Aiko prefers green tea") {
				t.Fatalf("next prompt lacks %s: %s", want, sys)
			}
		})
	}
}

// 2. With the intent gate fired, no short-term tool and no nudge; a forced call is
// rejected.
func TestIntentGate(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.selfTeaching("g1", true)

	e.srv.Script(fakeopenai.Text("Hi!"))
	e.turn(e.guild("hello there, how are you?"))
	plain := e.lastChat()
	if !slices.Contains(toolNames(plain), tools.NameUpdateSTM) || !strings.Contains(allText(plain), tools.NameUpdateSTM) {
		t.Fatalf("without intent the STM tool and nudge should be there: tools %v", toolNames(plain))
	}

	e.srv.Script(
		fakeopenai.ToolCalls(call(tools.NameUpdateSTM, `{"summary":"Aiko wants the raid date kept."}`)),
		fakeopenai.Text("Noted."),
	)
	reply := e.turn(e.guild("Remember that the raid is on Friday"))
	reqs := e.srv.ChatRequests()
	first, second := reqs[len(reqs)-2], reqs[len(reqs)-1]
	if slices.Contains(toolNames(first), tools.NameUpdateSTM) {
		t.Fatalf("STM tool offered despite the intent gate: %v", toolNames(first))
	}
	if strings.Contains(allText(first), tools.NameUpdateSTM) {
		t.Fatalf("STM nudge present despite the intent gate:\n%s", allText(first))
	}
	results := toolResults(second)
	if len(results) != 1 || !strings.Contains(results[0].Content, `"ok":false`) || !strings.Contains(results[0].Content, tools.NameCreateLTM) {
		t.Fatalf("forced STM call result = %+v", results)
	}
	if s := e.short.Context(stm.ChannelKey("g1", "c1")).Summary; s != "" {
		t.Fatalf("summary written despite the gate: %q", s)
	}
	if reply.Text != "Noted." {
		t.Errorf("reply = %q", reply.Text)
	}
}

// 3a. Privacy partial: personal memories are not injected, a personal write is refused
// and the refusal reaches the model.
func TestPrivacyPartial(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	e.selfTeaching("g1", true)
	e.remember(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g1", Content: "Aiko prefers green tea"})
	if err := e.store.Settings.SetPrivacy(ctx, "111", memory.PrivacyPartial); err != nil {
		t.Fatal(err)
	}
	e.srv.Script(
		fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"Aiko likes oolong tea","memory_scope":"target_user"}`)),
		fakeopenai.Text("Sorry, your privacy setting doesn't let me save personal memories."),
	)
	reply := e.turn(e.guild("remember that I like oolong tea"))
	reqs := e.srv.ChatRequests()
	if strings.Contains(allText(reqs[0]), "prefers green tea") {
		t.Fatalf("partial user's personal memory injected:\n%s", allText(reqs[0]))
	}
	results := toolResults(reqs[1])
	if len(results) != 1 || !strings.Contains(results[0].Content, "Refused") || !strings.Contains(results[0].Content, "partial") {
		t.Fatalf("refusal did not reach the model: %+v", results)
	}
	if len(reply.Notices) != 0 {
		t.Fatalf("notices = %+v", reply.Notices)
	}
	_, n, err := e.store.Memories.List(ctx, memory.PersonalOwner("111"), memory.ListOptions{})
	if err != nil || n != 1 {
		t.Fatalf("personal memories = %d (%v), want only the seeded one", n, err)
	}
	// Passive capture still happens at partial; only full stops it.
	if _, ok := e.short.Get(stm.UserKey("g1", "c1", "111")); !ok {
		t.Error("partial user's turn was not captured in short-term memory")
	}
}

// 3b. Privacy full: the message is ignored and nothing is captured.
func TestPrivacyFull(t *testing.T) {
	ctx := context.Background()
	for _, where := range []string{"Guild", "DM"} {
		t.Run(where, func(t *testing.T) {
			e := newEnv(t, chat.Config{})
			if err := e.store.Settings.SetPrivacy(ctx, "111", memory.PrivacyFull); err != nil {
				t.Fatal(err)
			}
			req := e.guild("remember that I prefer green tea")
			if where == "DM" {
				req = e.dm("remember that I prefer green tea")
			}
			reply := e.turn(req)
			if !reply.Ignored || reply.Text != "" {
				t.Fatalf("reply = %+v, want ignored", reply)
			}
			if n := e.srv.ChatCount(); n != 0 {
				t.Errorf("%d model calls for an ignored message", n)
			}
			if n := countTurns(t, e.store, "111"); n != 0 {
				t.Errorf("%d transcript rows for a full-privacy user", n)
			}
			for _, k := range []stm.Key{stm.UserKey(req.GuildID, req.ChannelID, "111"), stm.ChannelKey(req.GuildID, req.ChannelID)} {
				if _, ok := e.short.Get(k); ok {
					t.Errorf("short-term entry %v captured", k)
				}
			}
		})
	}
}

// 4. Self-teaching decides whether the long-term write tools are offered.
func TestSelfTeaching(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *env)
		req   func(e *env) chat.Request
		want  []string
	}{
		{"GuildDefaultOff", func(*env) {}, func(e *env) chat.Request { return e.guild("remember that I like tea") },
			[]string{tools.NameSearch}},
		{"GuildOff", func(e *env) { e.selfTeaching("g1", false) }, func(e *env) chat.Request { return e.guild("hi, how are you?") },
			[]string{tools.NameUpdateSTM, tools.NameSearch}},
		{"GuildOn", func(e *env) { e.selfTeaching("g1", true) }, func(e *env) chat.Request { return e.guild("hi, how are you?") },
			[]string{tools.NameCreateLTM, tools.NameUpdateLTM, tools.NameUpdateSTM, tools.NameSearch}},
		{"DMOnByDefault", func(*env) {}, func(e *env) chat.Request { return e.dm("hi, how are you?") },
			[]string{tools.NameCreateLTM, tools.NameUpdateLTM, tools.NameUpdateSTM, tools.NameSearch}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, chat.Config{})
			tt.setup(e)
			e.turn(tt.req(e))
			if got := toolNames(e.lastChat()); !slices.Equal(got, tt.want) {
				t.Fatalf("tools = %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("ForcedCreateRejected", func(t *testing.T) {
		e := newEnv(t, chat.Config{})
		e.srv.Script(fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"The raid is on Friday","memory_scope":"server_wide"}`)),
			fakeopenai.Text("Saving memories is off here."))
		reply := e.turn(e.guild("remember that the raid is on Friday"))
		if res := toolResults(e.lastChat()); len(res) != 1 || !strings.Contains(res[0].Content, "/kioku config") {
			t.Fatalf("tool results = %+v", res)
		}
		if len(reply.Notices) != 0 {
			t.Fatalf("notices = %+v", reply.Notices)
		}
		if _, n, _ := e.store.Memories.List(context.Background(), memory.ServerOwner("g1"), memory.ListOptions{}); n != 0 {
			t.Fatalf("%d server memories written with self-teaching off", n)
		}
		if !strings.Contains(systemText(e.srv.ChatRequests()[0]), "/kioku config") {
			t.Errorf("the prompt does not explain that saving is off")
		}
	})
}

// 5. Broken tool calls and ids from other scopes: the turn completes and nothing outside
// the caller's scope changes.
func TestBrokenToolCalls(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	e.selfTeaching("g1", true)
	otherGuild := e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Guild two meets on Mondays"})
	otherUser := e.remember(memory.Memory{Scope: memory.ScopePersonal, UserID: "222", GuildID: "g1", Content: "Ben plays chess"})
	e.srv.Script(
		fakeopenai.ToolCalls(
			call(tools.NameCreateLTM, `{"memory_content": "tea", "memory_scope":`),
			call("format_hard_drive", `{}`),
			call(tools.NameUpdateLTM, fmt.Sprintf(`{"memory_id":%d,"memory_content":"Guild two meets never"}`, otherGuild.ID)),
			call(tools.NameUpdateLTM, fmt.Sprintf(`{"memory_id":%d,"memory_content":""}`, otherUser.ID)),
			call(tools.NameUpdateLTM, `{"memory_id":"seven"}`),
		),
		fakeopenai.Text("I couldn't do any of that."),
	)
	reply := e.turn(e.guild("please fix everything"))
	if reply.Text != "I couldn't do any of that." || reply.ModelUnavailable || len(reply.Notices) != 0 {
		t.Fatalf("reply = %+v", reply)
	}
	results := toolResults(e.lastChat())
	if len(results) != 5 {
		t.Fatalf("%d tool results, want 5", len(results))
	}
	for i, want := range []string{"not valid JSON", "no tool called", "no memory", "no memory", "whole number"} {
		if !strings.Contains(results[i].Content, want) || !strings.Contains(results[i].Content, `"ok":false`) {
			t.Errorf("result %d = %s, want an error mentioning %q", i, results[i].Content, want)
		}
	}
	for _, m := range []*memory.Memory{otherGuild, otherUser} {
		got, err := e.store.Memories.Get(ctx, m.Owner(), m.ID)
		if err != nil || got.Version != 1 || got.Content != m.Content {
			t.Errorf("memory #%d changed: %+v (%v)", m.ID, got, err)
		}
	}
	if reply.Usage.ToolCalls != 5 || reply.Usage.ToolErrors != 5 {
		t.Errorf("usage = %+v", reply.Usage)
	}
}

// 6a. A 500 is retried and answered.
func TestModelRetried(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.srv.FailNext(http.StatusInternalServerError, 1)
	e.srv.Script(fakeopenai.Text("Hello Aiko!"))
	reply := e.turn(e.dm("hello"))
	if reply.Text != "Hello Aiko!" || reply.ModelUnavailable {
		t.Fatalf("reply = %+v", reply)
	}
	if n := e.srv.ChatCount(); n != 2 {
		t.Fatalf("%d chat requests, want 2 (a failure and its retry)", n)
	}
	if n := countTurns(t, e.store, "111"); n != 2 {
		t.Fatalf("%d transcript rows, want the user's turn and the reply", n)
	}
}

// 6b. The model is down: a friendly reply, and the user's turn is in the transcript.
func TestModelDown(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	e.srv.Down()
	reply := e.turn(e.guild("what did we decide about the raid?"))
	if !reply.ModelUnavailable || !strings.Contains(reply.Text, "saved") || reply.Canned != chat.CannedModelDown {
		t.Fatalf("reply = %+v", reply)
	}
	if n := e.srv.ChatCount(); n != 3 {
		t.Errorf("%d chat requests, want 3 (first try and two retries)", n)
	}
	turns, err := e.store.Transcripts.RecentTurns(ctx, "g1", "c1", "111", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 1 || turns[0].Role != memory.RoleUser || turns[0].Content != "what did we decide about the raid?" {
		t.Fatalf("transcript = %+v, want only the user's turn", turns)
	}

	// When the model is back, the lost turn is part of the history.
	e.srv.Up()
	e.srv.Script(fakeopenai.Text("Friday."))
	e.turn(e.guild("hello again"))
	if !strings.Contains(allText(e.lastChat()), "what did we decide about the raid?") {
		t.Fatalf("the turn from the outage is missing from history:\n%s", allText(e.lastChat()))
	}
}

// 7. A 200-turn history is cut oldest-first inside the budget.
func TestLongHistoryCut(t *testing.T) {
	ctx := context.Background()
	cfg := chat.Config{ContextWindow: 8192, MaxOutputTokens: 512, HistoryTurns: 200}
	e := newEnv(t, cfg)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 20)
	for i := range 200 {
		t0 := memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "111", AuthorName: "Aiko", Role: memory.RoleUser,
			Content: fmt.Sprintf("turn-%03d %s", i, filler), CreatedAt: start.Add(time.Duration(i-300) * time.Minute)}
		if i%2 == 1 {
			t0.Role, t0.AuthorName = memory.RoleAssistant, "kioku"
		}
		if _, err := e.store.Transcripts.AppendTurn(ctx, t0); err != nil {
			t.Fatal(err)
		}
	}
	reply := e.turn(e.guild("and what about the newest thing?"))
	req := e.lastChat()
	budget := contextbuild.Budget(cfg.ContextWindow, cfg.MaxOutputTokens)
	tokens := 0
	for _, m := range req.Messages {
		tokens += contextbuild.EstimateTokens(m.Content) + contextbuild.MessageOverheadTokens
	}
	if tokens > budget || reply.Usage.ContextTokens > budget {
		t.Fatalf("prompt is %d tokens (reported %d), budget %d", tokens, reply.Usage.ContextTokens, budget)
	}
	if reply.Usage.DroppedTurns == 0 {
		t.Fatal("nothing was dropped from a history far over the budget")
	}
	var kept []int
	for _, m := range req.Messages {
		if i := strings.Index(m.Content, "turn-"); i >= 0 {
			var n int
			fmt.Sscanf(m.Content[i:], "turn-%03d", &n)
			kept = append(kept, n)
		}
	}
	if len(kept) == 0 || kept[len(kept)-1] != 199 {
		t.Fatalf("kept turns %v, want the newest ones ending at 199", kept)
	}
	for i := 1; i < len(kept); i++ {
		if kept[i] != kept[i-1]+1 {
			t.Fatalf("kept turns %v are not the newest contiguous run", kept)
		}
	}
	if got := len(kept) + reply.Usage.DroppedTurns; got != 200 {
		t.Errorf("kept %d + dropped %d != 200", len(kept), reply.Usage.DroppedTurns)
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != openai.ChatMessageRoleUser || !strings.Contains(last.Content, "and what about the newest thing?") {
		t.Fatalf("last message = %+v, want the newest user turn", last)
	}
}

// No model call happens inside a write transaction: newEnv's hook checks every request;
// this test makes sure a turn that writes memory, transcript and history runs through it.
func TestNoModelCallInWriteTx(t *testing.T) {
	e := newEnv(t, chat.Config{})
	var checked int
	var mu sync.Mutex
	e.srv.OnRequest(func(*http.Request) {
		mu.Lock()
		defer mu.Unlock()
		checked++
		if e.store.InWriteTx() {
			t.Errorf("model called inside a write transaction")
		}
	})
	e.srv.Script(
		fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"Aiko prefers green tea","memory_scope":"target_user"}`)),
		fakeopenai.ToolCalls(call(tools.NameUpdateSTM, `{"summary":"Tea talk."}`), call(tools.NameSearch, `{"query":"tea"}`)),
		fakeopenai.Text("Done."),
	)
	e.turn(e.dm("I prefer green tea, keep that in mind"))
	mu.Lock()
	defer mu.Unlock()
	if checked != 3 {
		t.Fatalf("hook saw %d requests, want 3", checked)
	}
}

// A credential in create_long_term_memory is refused with a clear error and not stored.
func TestSecretRefused(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.srv.Script(
		fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"Aiko's GitHub token is ghp_abcdefghijklmnopqrstuvwxyz0123456789","memory_scope":"target_user"}`)),
		fakeopenai.Text("I won't store tokens."),
	)
	reply := e.turn(e.dm("remember my token ghp_abcdefghijklmnopqrstuvwxyz0123456789"))
	res := toolResults(e.lastChat())
	if len(res) != 1 || !strings.Contains(res[0].Content, "looks like a secret") || !strings.Contains(res[0].Content, "GitHub token") {
		t.Fatalf("tool result = %+v", res)
	}
	if len(reply.Notices) != 0 {
		t.Fatalf("notices = %+v", reply.Notices)
	}
	if _, n, _ := e.store.Memories.List(context.Background(), memory.PersonalOwner("111"), memory.ListOptions{}); n != 0 {
		t.Fatalf("%d memories stored", n)
	}
	// The transcript, the prompt and short-term memory keep the words but not the token.
	turns, _ := e.store.Transcripts.RecentTurns(context.Background(), "", "dm1", "111", 5)
	if strings.Contains(turns[0].Content, "ghp_") {
		t.Fatalf("transcript kept the token: %q", turns[0].Content)
	}
	if p := allText(e.srv.ChatRequests()[0]); strings.Contains(p, "ghp_abc") || !strings.Contains(p, "[redacted GitHub token]") {
		t.Fatalf("prompt = %s", p)
	}
	if got, _ := e.short.Get(stm.UserKey("", "dm1", "111")); strings.Contains(got.Messages[0].Content, "ghp_") {
		t.Fatalf("short-term memory kept the token: %q", got.Messages[0].Content)
	}
}

// The tool loop stops after four rounds with a sensible reply.
func TestToolLoopStops(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.srv.Default(func(openai.ChatCompletionRequest) fakeopenai.Response {
		return fakeopenai.ToolCalls(call(tools.NameSearch, `{"query":"tea"}`))
	})
	reply := e.turn(e.dm("what do you know about tea?"))
	if n := e.srv.ChatCount(); n != tools.MaxRounds {
		t.Fatalf("%d model calls, want %d", n, tools.MaxRounds)
	}
	if reply.Text == "" || reply.ModelUnavailable || !strings.Contains(reply.Text, "ask again") || reply.Canned != chat.CannedExhausted {
		t.Fatalf("reply = %+v", reply)
	}
	if n := countTurns(t, e.store, "111"); n != 2 {
		t.Fatalf("%d transcript rows, want the question and the reply", n)
	}
}

// Updates and deletions made by the model come back as notices.
func TestUpdateAndForgetNotices(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	e.selfTeaching("g1", true)
	raid := e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The raid is on Friday",
		Provenance: memory.Provenance{AuthorID: "111"}})
	tea := e.remember(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g1", Content: "Aiko likes black tea"})
	e.srv.Script(
		fakeopenai.ToolCalls(
			call(tools.NameUpdateLTM, fmt.Sprintf(`{"memory_id":%d,"memory_content":"The raid is on Saturday"}`, raid.ID)),
			call(tools.NameUpdateLTM, fmt.Sprintf(`{"memory_id":%d,"memory_content":""}`, tea.ID)),
		),
		fakeopenai.Text("Updated the raid day and forgot the tea."),
	)
	reply := e.turn(e.guild("the raid moved to Saturday, and forget the black tea thing"))
	var got []string
	for _, n := range reply.Notices {
		got = append(got, n.String())
	}
	want := []string{fmt.Sprintf("✏️ Updated #%d: The raid is on Saturday", raid.ID), fmt.Sprintf("🗑️ Forgot #%d: Aiko likes black tea", tea.ID)}
	if !slices.Equal(got, want) {
		t.Fatalf("notices = %q, want %q", got, want)
	}
	if _, err := e.store.Memories.Get(ctx, memory.PersonalOwner("111"), tea.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Fatalf("forgotten memory still live: %v", err)
	}
}

// Whose personal memories reach a guild prompt (SPEC §2 scopes), and that server memory
// stays in its guild.
func TestScopesInPrompt(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	e.selfTeaching("g1", true)
	mk := func(m memory.Memory) { e.remember(m) }
	mk(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Guild one drinks tea on Fridays"})
	mk(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Pinned rule: be kind", Pinned: true})
	mk(memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Guild two drinks tea too"})
	mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g1", Content: "Aiko tea from guild one"})
	mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g2", Content: "Aiko tea from guild two"})
	mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", Content: "Aiko tea from a DM"})
	mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "222", GuildID: "g1", Content: "Ben tea from guild one"})
	mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "222", GuildID: "g2", Content: "Ben tea from guild two"})
	mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "333", GuildID: "g1", Content: "Cleo tea, partial"})
	mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "444", GuildID: "g1", Content: "Dan tea, spoke long ago"})
	mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "555", GuildID: "g1", Content: "Eve tea, never spoke"})
	if err := e.store.Settings.SetPrivacy(ctx, "333", memory.PrivacyPartial); err != nil {
		t.Fatal(err)
	}
	say := func(user, name string, ago time.Duration) {
		if _, err := e.store.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: user, AuthorName: name,
			Role: memory.RoleUser, Content: "hi from " + name, CreatedAt: start.Add(-ago)}); err != nil {
			t.Fatal(err)
		}
	}
	say("444", "Dan", 3*time.Hour)
	say("222", "Ben", 10*time.Minute)
	say("333", "Cleo", 5*time.Minute)

	check := func(t *testing.T, prompt string, want, not []string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(prompt, w) {
				t.Errorf("prompt lacks %q", w)
			}
		}
		for _, n := range not {
			if strings.Contains(prompt, n) {
				t.Errorf("prompt has %q", n)
			}
		}
		if t.Failed() {
			t.Logf("prompt:\n%s", prompt)
		}
	}

	t.Run("Guild", func(t *testing.T) {
		e.turn(e.guild("tea"))
		check(t, systemText(e.lastChat()),
			[]string{"Guild one drinks tea", "Pinned rule: be kind", "Aiko tea from guild one", "Ben tea from guild one", `"Ben" = 222`},
			[]string{"Guild two", "guild two", "Aiko tea from a DM", "Cleo tea", "Dan tea", "Eve tea"})
	})
	t.Run("GuildCrossServer", func(t *testing.T) {
		if err := e.store.Settings.SetCrossServer(ctx, "222", true); err != nil {
			t.Fatal(err)
		}
		defer e.store.Settings.SetCrossServer(ctx, "222", false)
		e.turn(e.guild("tea"))
		check(t, systemText(e.lastChat()),
			[]string{"Ben tea from guild two", "Aiko tea from guild one"},
			[]string{"Aiko tea from guild two", "Guild two"})
	})
	t.Run("DM", func(t *testing.T) {
		e.turn(e.dm("tea"))
		check(t, systemText(e.lastChat()),
			[]string{"Aiko tea from guild one", "Aiko tea from guild two", "Aiko tea from a DM"},
			[]string{"Guild one drinks", "Pinned rule", "Ben tea", "Cleo tea"})
	})
}

// A user over the rate limit gets a polite reply, and nothing of the message is kept.
func TestRateLimit(t *testing.T) {
	e := newEnv(t, chat.Config{TurnsPerMinute: 2})
	for range 2 {
		if r := e.turn(e.dm("hello")); r.RateLimited {
			t.Fatal("rate limited within the limit")
		}
	}
	r := e.turn(e.dm("hello again"))
	if !r.RateLimited || !strings.Contains(r.Text, "wait about 30 seconds") {
		t.Fatalf("reply = %+v", r)
	}
	if n := e.srv.ChatCount(); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
	if n := countTurns(t, e.store, "111"); n != 4 {
		t.Errorf("%d transcript rows, want 4 (two exchanges)", n)
	}
	// Other users have their own budget.
	other := e.dm("hi")
	other.UserID, other.ChannelID = "222", "dm2"
	if r := e.turn(other); r.RateLimited {
		t.Fatal("another user was rate limited")
	}
	e.clock.Advance(30 * time.Second)
	if r := e.turn(e.dm("and now?")); r.RateLimited {
		t.Fatal("still rate limited after the bucket refilled")
	}
}

// Passive capture puts both sides of a turn into short-term memory, and a model-written
// summary replaces the crude messages in the next prompt.
func TestShortTermCapture(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.srv.Script(fakeopenai.Text("Nice to meet you."))
	e.turn(e.guild("hi, I'm new here"))
	for _, k := range []stm.Key{stm.UserKey("g1", "c1", "111"), stm.ChannelKey("g1", "c1")} {
		got, ok := e.short.Get(k)
		if !ok || len(got.Messages) != 2 || got.Messages[0].Content != "hi, I'm new here" || got.Messages[1].Content != "Nice to meet you." {
			t.Fatalf("entry %v = %+v", k, got)
		}
	}
	e.srv.Script(fakeopenai.ToolCalls(call(tools.NameUpdateSTM, `{"summary":"Aiko is new and introduced herself."}`)), fakeopenai.Text("Welcome!"))
	e.turn(e.guild("what's this server about?"))
	e.srv.Script(fakeopenai.Text("ok"))
	e.turn(e.guild("thanks"))
	if sys := systemText(e.lastChat()); !strings.Contains(sys, "Aiko is new and introduced herself.") {
		t.Fatalf("summary missing from the prompt:\n%s", sys)
	}
}

func TestIgnoredEmptyMessage(t *testing.T) {
	e := newEnv(t, chat.Config{})
	if r := e.turn(e.dm("   \n ")); !r.Ignored {
		t.Fatalf("reply = %+v", r)
	}
	if e.srv.ChatCount() != 0 || countTurns(t, e.store, "111") != 0 {
		t.Fatal("an empty message was processed")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	e := newEnv(t, chat.Config{})
	deps := chat.Deps{Memories: e.store.Memories, Duplicates: e.store.Duplicates, Recall: e.store.Recall, Transcript: e.store.Transcripts, Settings: e.store.Settings, ShortTerm: e.short, Model: e.model}
	for name, cfg := range map[string]chat.Config{
		"ErrNoRoomForPrompt": {ContextWindow: 1000, MaxOutputTokens: 1000},
		"ErrNegative":        {TurnsPerMinute: -1},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := chat.New(cfg, deps); err == nil {
				t.Fatal("New succeeded")
			}
		})
	}
	if _, err := chat.New(chat.Config{}, chat.Deps{Memories: e.store.Memories, Duplicates: e.store.Duplicates, Recall: e.store.Recall, Transcript: e.store.Transcripts, Settings: e.store.Settings, ShortTerm: e.short}); err == nil {
		t.Fatal("New succeeded without a model")
	}
}

// Turns of different users and channels run concurrently (run with -race).
func TestConcurrentTurns(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.srv.OnRequest(nil) // concurrent turns legitimately write while another waits for the model
	e.srv.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		if len(toolResults(req)) == 0 {
			return fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"likes concurrency","memory_scope":"target_user"}`))
		}
		return fakeopenai.Text("ok")
	})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			req := chat.Request{ChannelID: fmt.Sprintf("dm%d", i), UserID: fmt.Sprintf("u%d", i), UserName: "user", Content: "remember that I like concurrency"}
			r, err := e.engine.Turn(context.Background(), req)
			if err != nil || r.Text != "ok" || len(r.Notices) != 1 {
				t.Errorf("user %d: %+v, %v", i, r, err)
			}
		})
	}
	wg.Wait()
}

// Pinned server memories are always in the prompt; they are cached per guild, and the
// cache follows every change at once (TestPinnedCacheServesUnchanged shows it caches), is
// dropped after the model changes server memory, on Invalidate, and after the TTL.
func TestPinnedMemories(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.selfTeaching("g1", true)
	pin := func(content string) {
		e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content, Pinned: true})
	}
	prompt := func() string {
		e.turn(e.guild("hello"))
		return systemText(e.lastChat())
	}
	pin("Rule one: be kind")
	if p := prompt(); !strings.Contains(p, "Rule one") {
		t.Fatalf("pinned memory missing from an unrelated turn:\n%s", p)
	}

	pin("Rule two: no spoilers")
	if p := prompt(); !strings.Contains(p, "Rule two") {
		t.Fatal("a new pinned memory was not seen by the next turn")
	}
	e.engine.Invalidate("g1")
	if p := prompt(); !strings.Contains(p, "Rule two") {
		t.Fatal("Invalidate did not drop the cache")
	}

	pin("Rule three: have fun")
	e.srv.Script(fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"The raid is on Friday","memory_scope":"server_wide"}`)),
		fakeopenai.Text("Saved."))
	e.turn(e.guild("remember that the raid is on Friday"))
	if p := prompt(); !strings.Contains(p, "Rule three") {
		t.Fatal("the cache survived a server memory write by the model")
	}

	pin("Rule four: sleep")
	e.clock.Advance(chat.DefaultPinnedTTL)
	if p := prompt(); !strings.Contains(p, "Rule four") {
		t.Fatal("the cache outlived its TTL")
	}
}

func TestREPL(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.srv.Script(
		fakeopenai.Text("Hi Aiko!"),
		fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"Aiko likes tea","memory_scope":"target_user"}`)),
		fakeopenai.Text("I'll remember that."),
	)
	in := strings.NewReader("hello\n\n   \nremember that I like tea\n/quit\nnot read\n")
	var out strings.Builder
	if err := chat.REPL(context.Background(), e.engine, in, &out, chat.Request{UserID: "111", UserName: "Aiko"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a direct message", "kioku: Hi Aiko!", "kioku: I'll remember that.", "📌 Remembered (personal) #1: Aiko likes tea"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if n := countTurns(t, e.store, "111"); n != 4 {
		t.Errorf("%d transcript rows, want 4 (the line after /quit is not read)", n)
	}
	turns, _ := e.store.Transcripts.RecentTurns(context.Background(), "", "dm-111", "111", 10)
	if len(turns) != 4 || turns[0].MessageID == "" || turns[0].MessageID == turns[2].MessageID {
		t.Errorf("REPL turns = %+v, want DM channel dm-111 with distinct message ids", turns)
	}

	t.Run("GuildAndCancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		defer pw.Close()
		done := make(chan error, 1)
		var out strings.Builder
		go func() {
			done <- chat.REPL(ctx, e.engine, pr, &syncWriter{w: &out}, chat.Request{GuildID: "g1", UserID: "111"}, nil)
		}()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("REPL = %v, want context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("REPL did not end when its context was cancelled")
		}
	})

	t.Run("Commands", func(t *testing.T) {
		before := e.srv.ChatCount()
		var got []string
		cmd := func(_ context.Context, line string, out io.Writer) {
			got = append(got, line)
			fmt.Fprintln(out, "listed")
		}
		var out strings.Builder
		in := strings.NewReader("/list type:fact\n  /show 1  \n/quit\n/list\n")
		if err := chat.REPL(context.Background(), e.engine, in, &out, chat.Request{UserID: "111"}, cmd); err != nil {
			t.Fatal(err)
		}
		if want := []string{"/list type:fact", "/show 1"}; !slices.Equal(got, want) {
			t.Errorf("commands got %q, want %q (trimmed, and nothing after /quit)", got, want)
		}
		if !strings.Contains(out.String(), "Type /help for commands") || strings.Count(out.String(), "listed") != 2 {
			t.Errorf("output:\n%s", out.String())
		}
		if n := e.srv.ChatCount() - before; n != 0 {
			t.Errorf("%d model calls for commands, want none", n)
		}
	})

	t.Run("ErrNoUser", func(t *testing.T) {
		if err := chat.REPL(context.Background(), e.engine, strings.NewReader(""), io.Discard, chat.Request{}, nil); err == nil {
			t.Fatal("REPL started without a user")
		}
	})
}

// syncWriter lets a test read what a goroutine writes.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestRecallCountsAccess: the memories a turn recalls into its prompt are used to answer
// someone, so they are counted as accessed and their importance decay starts again from the
// base; a memory the turn did not recall keeps decaying.
func TestRecallCountsAccess(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	hit := e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The ferry leaves at noon", Importance: 0.8})
	miss := e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The bakery opens at six", Importance: 0.8})
	e.clock.Advance(20 * 24 * time.Hour)

	e.srv.Script(fakeopenai.Text("At noon."))
	e.turn(e.guild("when does the ferry leave?"))
	if sys := systemText(e.lastChat()); !strings.Contains(sys, fmt.Sprintf("[id:%d]", hit.ID)) {
		t.Fatalf("the prompt lacks the ferry memory #%d:\n%s", hit.ID, sys)
	}
	if err := e.store.Recall.FlushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	got, err := e.store.Memories.Get(ctx, memory.ServerOwner("g1"), hit.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessCount != 1 || !got.AccessedAt.Equal(now) || got.EffectiveImportance(now) != 0.8 {
		t.Fatalf("recalled memory: count %d, last access %v, effective importance %v; want 1, %v, 0.8",
			got.AccessCount, got.AccessedAt, got.EffectiveImportance(now), now)
	}
	other, err := e.store.Memories.Get(ctx, memory.ServerOwner("g1"), miss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if other.AccessCount != 0 || other.EffectiveImportance(now) >= 0.8 {
		t.Fatalf("memory the turn did not recall: count %d, effective importance %v; want 0 and decayed",
			other.AccessCount, other.EffectiveImportance(now))
	}
}

// A channel that does not learn: the member is answered and the turn is kept for replies,
// but extraction never reads it, and the model is offered no tool that saves a memory, even
// with self-teaching on; a forced save is refused with what the member can do instead.
func TestNoLearningChannel(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	e.selfTeaching("g1", true)
	e.srv.Script(fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"Aiko hates her job","memory_scope":"target_user"}`)),
		fakeopenai.Text("I can't save things here."))
	req := e.guild("remember that I hate my job")
	req.NoLearning = true
	reply := e.turn(req)
	if reply.Text != "I can't save things here." || len(reply.Notices) != 0 {
		t.Fatalf("reply %q with notices %+v", reply.Text, reply.Notices)
	}
	first := e.srv.ChatRequests()[0]
	if got, want := toolNames(first), []string{tools.NameSearch}; !slices.Equal(got, want) {
		t.Errorf("tools offered = %v, want %v", got, want)
	}
	if !strings.Contains(systemText(first), "does not learn") || !strings.Contains(systemText(first), "/memory add") {
		t.Errorf("the prompt does not say that this channel does not learn")
	}
	if res := toolResults(e.lastChat()); len(res) != 1 || !strings.Contains(res[0].Content, "/memory add") {
		t.Fatalf("tool results = %+v, want the refusal naming /memory add", res)
	}
	if _, n, _ := e.store.Memories.List(ctx, memory.PersonalOwner("111"), memory.ListOptions{}); n != 0 {
		t.Fatalf("%d personal memories written where the channel does not learn", n)
	}
	turns, err := e.store.Transcripts.RecentTurns(ctx, "g1", "c1", "111", 10)
	if err != nil || len(turns) != 2 || !turns[0].NoLearning || !turns[1].NoLearning {
		t.Fatalf("stored turns %+v, %v: want the message and the reply, both marked", turns, err)
	}
	if after, err := e.store.Transcripts.TurnsAfter(ctx, "g1", "c1", 0, 10); err != nil || len(after) != 0 {
		t.Errorf("extraction reads %d turns, %v; want none", len(after), err)
	}
}
