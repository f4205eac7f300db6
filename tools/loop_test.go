package tools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/tools"
	"github.com/sashabaranov/go-openai"
)

// newModel returns a real llm client against a fresh fake server, with retries that do
// not wait.
func newModel(t *testing.T) (*llm.Client, *fakeopenai.Server) {
	t.Helper()
	srv := fakeopenai.New(t)
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: fakeopenai.APIKey, ChatModel: "test-model", MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.Sleep = func(context.Context, time.Duration) error { return nil }
	return c, srv
}

func baseRequest() openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are kioku."},
		{Role: openai.ChatMessageRoleUser, Content: "remember that the raid is on Friday and that I like tea"},
	}}
}

func TestRun(t *testing.T) {
	ctx := context.Background()

	t.Run("SeveralCallsInOneResponse", func(t *testing.T) {
		f := newFixture(t)
		model, srv := newModel(t)
		srv.Script(
			fakeopenai.ToolCalls(
				fakeopenai.Call{ID: "a", Name: tools.NameCreateLTM, Arguments: `{"memory_content":"The raid is on Friday","memory_scope":"server_wide"}`},
				fakeopenai.Call{ID: "b", Name: tools.NameCreateLTM, Arguments: `{"memory_content":"Aiko likes tea","memory_scope":"target_user"}`},
				fakeopenai.Call{ID: "c", Name: "no_such_tool", Arguments: `{}`},
			),
			fakeopenai.Text("Saved both!"),
		)
		tb := f.box(guildConv())
		res, err := tools.Run(ctx, model, baseRequest(), tb, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "Saved both!" || res.Rounds != 2 || res.ToolCalls != 3 || res.ToolErrors != 1 || res.Exhausted {
			t.Fatalf("result = %+v", res)
		}
		if n := tb.Notices(); len(n) != 2 {
			t.Fatalf("notices = %+v", n)
		}
		reqs := srv.ChatRequests()
		second := reqs[1].Messages
		// system, user, assistant(tool calls), three tool results.
		if len(second) != 6 || len(second[2].ToolCalls) != 3 {
			t.Fatalf("second request messages = %+v", second)
		}
		for i, id := range []string{"a", "b", "c"} {
			m := second[3+i]
			if m.Role != openai.ChatMessageRoleTool || m.ToolCallID != id {
				t.Errorf("tool result %d = %+v, want a tool message for %s", i, m, id)
			}
		}
		if !strings.Contains(second[5].Content, "no tool called") {
			t.Errorf("unknown-tool result = %q", second[5].Content)
		}
		if len(reqs[0].Tools) != 4 || reqs[0].ToolChoice != nil {
			t.Errorf("first request tools = %d, tool_choice = %v", len(reqs[0].Tools), reqs[0].ToolChoice)
		}
	})

	t.Run("StopsAfterMaxRounds", func(t *testing.T) {
		f := newFixture(t)
		model, srv := newModel(t)
		search := fakeopenai.Call{Name: tools.NameSearch, Arguments: `{"query":"tea"}`}
		srv.Default(func(openai.ChatCompletionRequest) fakeopenai.Response { return fakeopenai.ToolCalls(search) })
		tb := f.box(guildConv())
		res, err := tools.Run(ctx, model, baseRequest(), tb, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rounds != tools.MaxRounds || !res.Exhausted || res.ToolCalls != tools.MaxRounds-1 {
			t.Fatalf("result = %+v", res)
		}
		reqs := srv.ChatRequests()
		if len(reqs) != tools.MaxRounds {
			t.Fatalf("%d model calls, want %d", len(reqs), tools.MaxRounds)
		}
		if reqs[len(reqs)-1].ToolChoice != "none" {
			t.Errorf("last round tool_choice = %v, want none", reqs[len(reqs)-1].ToolChoice)
		}
		// Ids the provider left out are generated so results can refer to them.
		for _, m := range reqs[1].Messages {
			if m.Role == openai.ChatMessageRoleTool && m.ToolCallID == "" {
				t.Errorf("tool result without a call id: %+v", m)
			}
		}
	})

	t.Run("FewerRoundsRequested", func(t *testing.T) {
		f := newFixture(t)
		model, srv := newModel(t)
		srv.Default(func(openai.ChatCompletionRequest) fakeopenai.Response {
			return fakeopenai.Response{Content: "thinking", ToolCalls: []fakeopenai.Call{{Name: tools.NameSearch, Arguments: `{"query":"tea"}`}}}
		})
		res, err := tools.Run(ctx, model, baseRequest(), f.box(guildConv()), 2)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rounds != 2 || !res.Exhausted || res.Text != "thinking" {
			t.Fatalf("result = %+v", res)
		}
	})

	t.Run("TooManyCallsAnsweredEach", func(t *testing.T) {
		f := newFixture(t)
		model, srv := newModel(t)
		var calls []fakeopenai.Call
		for range tools.MaxCallsPerRound + 2 {
			calls = append(calls, fakeopenai.Call{Name: tools.NameSearch, Arguments: `{"query":"tea"}`})
		}
		srv.Script(fakeopenai.ToolCalls(calls...), fakeopenai.Text("done"))
		res, err := tools.Run(ctx, model, baseRequest(), f.box(guildConv()), 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.ToolCalls != len(calls) || res.ToolErrors != 2 {
			t.Fatalf("result = %+v", res)
		}
	})

	t.Run("ModelErrorKeepsNotices", func(t *testing.T) {
		f := newFixture(t)
		model, srv := newModel(t)
		srv.Script(fakeopenai.ToolCalls(fakeopenai.Call{Name: tools.NameCreateLTM, Arguments: `{"memory_content":"The raid is on Friday","memory_scope":"server_wide"}`}),
			fakeopenai.Fail(http.StatusBadRequest))
		tb := f.box(guildConv())
		_, err := tools.Run(ctx, model, baseRequest(), tb, 0)
		if err == nil {
			t.Fatal("Run succeeded after a failed model call")
		}
		if len(tb.Notices()) != 1 {
			t.Fatalf("notices = %+v", tb.Notices())
		}
	})

	t.Run("ToolResultsAreJSON", func(t *testing.T) {
		f := newFixture(t)
		model, srv := newModel(t)
		srv.Script(fakeopenai.ToolCalls(fakeopenai.Call{Name: tools.NameCreateLTM, Arguments: `{"memory_content": oops}`}), fakeopenai.Text("sorry"))
		if _, err := tools.Run(ctx, model, baseRequest(), f.box(guildConv()), 0); err != nil {
			t.Fatal(err)
		}
		msgs := srv.ChatRequests()[1].Messages
		var r struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(msgs[len(msgs)-1].Content), &r); err != nil || r.OK || !strings.Contains(r.Error, "not valid JSON") {
			t.Fatalf("tool result = %q (%v)", msgs[len(msgs)-1].Content, err)
		}
		assertNoMemories(t, f.store, "g1", "111")
	})
}
