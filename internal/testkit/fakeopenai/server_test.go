package fakeopenai_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

func newClient(s *fakeopenai.Server) *openai.Client {
	return openai.NewClientWithConfig(s.ClientConfig())
}

func chatRequest(content string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    "test-chat",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: content}},
	}
}

func statusOf(t *testing.T, err error) int {
	t.Helper()
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	t.Fatalf("error %v carries no HTTP status", err)
	return 0
}

func TestURL(t *testing.T) {
	s := fakeopenai.New(t)
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || !strings.HasSuffix(s.URL(), "/v1") {
		t.Fatalf("URL() = %q, want a loopback URL ending in /v1", s.URL())
	}
}

func TestChat(t *testing.T) {
	ctx := context.Background()

	t.Run("Text", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Script(fakeopenai.Text("hello there"))
		resp, err := newClient(s).CreateChatCompletion(ctx, chatRequest("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != "hello there" {
			t.Errorf("content = %q, want %q", got, "hello there")
		}
		if resp.Choices[0].Message.Role != openai.ChatMessageRoleAssistant {
			t.Errorf("role = %q, want assistant", resp.Choices[0].Message.Role)
		}
		if resp.Choices[0].FinishReason != openai.FinishReasonStop {
			t.Errorf("finish reason = %q, want stop", resp.Choices[0].FinishReason)
		}
		if resp.Model != "test-chat" {
			t.Errorf("model = %q, want the requested model echoed", resp.Model)
		}
		if resp.Usage.PromptTokens <= 0 || resp.Usage.CompletionTokens <= 0 ||
			resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
			t.Errorf("usage = %+v, want positive, consistent counts", resp.Usage)
		}
		if s.Remaining() != 0 {
			t.Errorf("Remaining() = %d, want 0", s.Remaining())
		}
	})

	t.Run("DefaultReplyWhenScriptEmpty", func(t *testing.T) {
		s := fakeopenai.New(t)
		resp, err := newClient(s).CreateChatCompletion(ctx, chatRequest("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != fakeopenai.DefaultReply {
			t.Errorf("content = %q, want %q", got, fakeopenai.DefaultReply)
		}
	})

	t.Run("CustomDefault", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
			return fakeopenai.Text("echo: " + req.Messages[len(req.Messages)-1].Content)
		})
		s.Script(fakeopenai.Text("scripted"))
		c := newClient(s)
		for _, want := range []string{"scripted", "echo: two", "echo: two"} {
			resp, err := c.CreateChatCompletion(ctx, chatRequest("two"))
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Choices[0].Message.Content; got != want {
				t.Errorf("content = %q, want %q", got, want)
			}
		}
		s.Default(nil)
		resp, err := c.CreateChatCompletion(ctx, chatRequest("three"))
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != fakeopenai.DefaultReply {
			t.Errorf("after Default(nil) content = %q, want %q", got, fakeopenai.DefaultReply)
		}
	})

	t.Run("ToolCalls", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Script(fakeopenai.ToolCalls(
			fakeopenai.Call{Name: "search_memories", Arguments: `{"query":"coffee"}`},
			fakeopenai.Call{ID: "call_fixed", Name: "update_short_term_memory", Arguments: `{"summary":`},
		))
		resp, err := newClient(s).CreateChatCompletion(ctx, chatRequest("what do I drink?"))
		if err != nil {
			t.Fatal(err)
		}
		choice := resp.Choices[0]
		if choice.FinishReason != openai.FinishReasonToolCalls {
			t.Errorf("finish reason = %q, want tool_calls", choice.FinishReason)
		}
		calls := choice.Message.ToolCalls
		if len(calls) != 2 {
			t.Fatalf("got %d tool calls, want 2", len(calls))
		}
		if calls[0].ID == "" || calls[0].Type != openai.ToolTypeFunction ||
			calls[0].Function.Name != "search_memories" || calls[0].Function.Arguments != `{"query":"coffee"}` {
			t.Errorf("first call = %+v", calls[0])
		}
		// Malformed arguments are passed through verbatim so tests can
		// exercise validation.
		if calls[1].ID != "call_fixed" || calls[1].Function.Arguments != `{"summary":` {
			t.Errorf("second call = %+v", calls[1])
		}
	})

	t.Run("GeneratedCallIDsAreUnique", func(t *testing.T) {
		s := fakeopenai.New(t)
		call := fakeopenai.Call{Name: "f", Arguments: `{}`}
		s.Script(fakeopenai.ToolCalls(call, call), fakeopenai.ToolCalls(call))
		c := newClient(s)
		seen := map[string]bool{}
		for range 2 {
			resp, err := c.CreateChatCompletion(ctx, chatRequest("x"))
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range resp.Choices[0].Message.ToolCalls {
				if seen[tc.ID] {
					t.Errorf("duplicate tool call id %q", tc.ID)
				}
				seen[tc.ID] = true
			}
		}
	})

	t.Run("Handler", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Script(fakeopenai.Handle(func(req openai.ChatCompletionRequest) fakeopenai.Response {
			if len(req.Tools) == 0 {
				return fakeopenai.Fail(http.StatusBadRequest)
			}
			return fakeopenai.Text("tool " + req.Tools[0].Function.Name)
		}))
		req := chatRequest("x")
		req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: "search_memories", Parameters: json.RawMessage(`{"type":"object"}`),
		}}}
		resp, err := newClient(s).CreateChatCompletion(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != "tool search_memories" {
			t.Errorf("content = %q", got)
		}
	})

	t.Run("WithUsage", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Script(fakeopenai.Text("x").WithUsage(11, 7))
		resp, err := newClient(s).CreateChatCompletion(ctx, chatRequest("x"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage.PromptTokens != 11 || resp.Usage.CompletionTokens != 7 || resp.Usage.TotalTokens != 18 {
			t.Errorf("usage = %+v, want 11/7/18", resp.Usage)
		}
	})
}

func TestChatFailures(t *testing.T) {
	ctx := context.Background()

	t.Run("ScriptedStatus", func(t *testing.T) {
		for _, status := range []int{http.StatusInternalServerError, http.StatusTooManyRequests, http.StatusBadRequest} {
			s := fakeopenai.New(t)
			s.Script(fakeopenai.Fail(status))
			_, err := newClient(s).CreateChatCompletion(ctx, chatRequest("x"))
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("status %d: err = %v, want *openai.APIError", status, err)
			}
			if apiErr.HTTPStatusCode != status || apiErr.Message == "" {
				t.Errorf("status %d: got %+v", status, apiErr)
			}
		}
	})

	t.Run("NonJSONBodyIsRequestError", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Script(fakeopenai.FailWith(http.StatusBadGateway, "<html>bad gateway</html>"))
		_, err := newClient(s).CreateChatCompletion(ctx, chatRequest("x"))
		var reqErr *openai.RequestError
		if !errors.As(err, &reqErr) || reqErr.HTTPStatusCode != http.StatusBadGateway {
			t.Fatalf("err = %v, want *openai.RequestError with 502", err)
		}
	})

	t.Run("FailNextKeepsScript", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Script(fakeopenai.Text("after failures"))
		s.FailNext(http.StatusServiceUnavailable, 2)
		c := newClient(s)
		for range 2 {
			_, err := c.CreateChatCompletion(ctx, chatRequest("x"))
			if got := statusOf(t, err); got != http.StatusServiceUnavailable {
				t.Fatalf("status = %d, want 503", got)
			}
		}
		resp, err := c.CreateChatCompletion(ctx, chatRequest("x"))
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != "after failures" {
			t.Errorf("content = %q", got)
		}
		if got := len(s.ChatRequests()); got != 3 {
			t.Errorf("recorded %d chat requests, want 3 (failures included)", got)
		}
	})

	t.Run("DownAndUp", func(t *testing.T) {
		s := fakeopenai.New(t)
		c := newClient(s)
		s.Down()
		_, err := c.CreateChatCompletion(ctx, chatRequest("x"))
		if got := statusOf(t, err); got != http.StatusServiceUnavailable {
			t.Fatalf("chat while down: status %d, want 503", got)
		}
		_, err = c.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: []string{"x"}, Model: "e"})
		if got := statusOf(t, err); got != http.StatusServiceUnavailable {
			t.Fatalf("embeddings while down: status %d, want 503", got)
		}
		s.Up()
		if _, err := c.CreateChatCompletion(ctx, chatRequest("x")); err != nil {
			t.Fatalf("chat after Up: %v", err)
		}
		if got := s.ChatCount(); got != 2 {
			t.Errorf("ChatCount() = %d, want 2 (outage requests are recorded)", got)
		}
	})

	t.Run("Hang", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Script(fakeopenai.Hang())
		ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := newClient(s).CreateChatCompletion(ctx, chatRequest("x"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	})

	t.Run("HangReleasedOnClose", func(t *testing.T) {
		// A hanging handler must not block the server's cleanup; the inner
		// test's cleanup would deadlock if it did.
		done := make(chan struct{})
		t.Run("inner", func(t *testing.T) {
			s := fakeopenai.New(t)
			s.Script(fakeopenai.Hang())
			reached := make(chan struct{})
			s.OnRequest(func(*http.Request) { close(reached) })
			go func() {
				defer close(done)
				newClient(s).CreateChatCompletion(context.Background(), chatRequest("x"))
			}()
			<-reached
		})
		<-done
	})

	t.Run("Drop", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Script(fakeopenai.Drop())
		_, err := newClient(s).CreateChatCompletion(ctx, chatRequest("x"))
		if err == nil {
			t.Fatal("want a transport error from a dropped connection")
		}
		var apiErr *openai.APIError
		var reqErr *openai.RequestError
		if errors.As(err, &apiErr) || errors.As(err, &reqErr) {
			t.Fatalf("err = %v, want a transport error, not an HTTP one", err)
		}
		if got := s.Requests()[0].Status; got != 0 {
			t.Errorf("recorded status = %d, want 0 for a dropped connection", got)
		}
	})
}

func TestRequestValidation(t *testing.T) {
	ctx := context.Background()

	t.Run("MissingAuthorization", func(t *testing.T) {
		s := fakeopenai.New(t)
		cfg := openai.DefaultConfig("")
		cfg.BaseURL = s.URL()
		_, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(ctx, chatRequest("x"))
		if got := statusOf(t, err); got != http.StatusUnauthorized {
			t.Fatalf("status = %d, want 401", got)
		}

		s.RequireAuth(false)
		if _, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(ctx, chatRequest("x")); err != nil {
			t.Fatalf("with auth not required: %v", err)
		}
		if h := s.Requests()[1].Header.Get("Authorization"); h != "" {
			t.Errorf("Authorization = %q, want none from a keyless client", h)
		}
	})

	t.Run("AuthorizationRecorded", func(t *testing.T) {
		s := fakeopenai.New(t)
		if _, err := newClient(s).CreateChatCompletion(ctx, chatRequest("x")); err != nil {
			t.Fatal(err)
		}
		if got := s.Requests()[0].Header.Get("Authorization"); got != "Bearer "+fakeopenai.APIKey {
			t.Errorf("Authorization = %q", got)
		}
	})

	tests := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		want        int
	}{
		{"MalformedChatBody", http.MethodPost, fakeopenai.ChatPath, "application/json", `{"model":`, http.StatusBadRequest},
		{"MissingModel", http.MethodPost, fakeopenai.ChatPath, "application/json", `{"messages":[{"role":"user","content":"x"}]}`, http.StatusBadRequest},
		{"NoMessages", http.MethodPost, fakeopenai.ChatPath, "application/json", `{"model":"m","messages":[]}`, http.StatusBadRequest},
		{"StreamingUnsupported", http.MethodPost, fakeopenai.ChatPath, "application/json", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, http.StatusBadRequest},
		{"MalformedEmbeddingBody", http.MethodPost, fakeopenai.EmbeddingsPath, "application/json", `[`, http.StatusBadRequest},
		{"TokenInputUnsupported", http.MethodPost, fakeopenai.EmbeddingsPath, "application/json", `{"model":"e","input":[[1,2]]}`, http.StatusBadRequest},
		{"EmptyEmbeddingInput", http.MethodPost, fakeopenai.EmbeddingsPath, "application/json", `{"model":"e","input":[]}`, http.StatusBadRequest},
		{"WrongContentType", http.MethodPost, fakeopenai.ChatPath, "text/plain", `{}`, http.StatusBadRequest},
		{"WrongMethod", http.MethodGet, fakeopenai.ChatPath, "", ``, http.StatusMethodNotAllowed},
		{"UnknownPath", http.MethodPost, "/v1/completions", "application/json", `{}`, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fakeopenai.New(t)
			req, err := http.NewRequestWithContext(ctx, tt.method, strings.TrimSuffix(s.URL(), "/v1")+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+fakeopenai.APIKey)
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.want)
			}
			var body openai.ErrorResponse
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Error == nil || body.Error.Message == "" {
				t.Errorf("body is not an OpenAI-style error: %+v, %v", body, err)
			}
			if got := s.Requests()[0].Status; got != tt.want {
				t.Errorf("recorded status = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEmbeddings(t *testing.T) {
	ctx := context.Background()

	t.Run("DeterministicUnitVectors", func(t *testing.T) {
		s := fakeopenai.New(t)
		texts := []string{"Alice likes green tea", "", "!!!", "覚えておいて"}
		resp, err := newClient(s).CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: texts, Model: "test-embed"})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Data) != len(texts) {
			t.Fatalf("got %d embeddings, want %d", len(resp.Data), len(texts))
		}
		for i, d := range resp.Data {
			if d.Index != i {
				t.Errorf("data[%d].Index = %d", i, d.Index)
			}
			if len(d.Embedding) != fakeopenai.DefaultDims {
				t.Errorf("data[%d] has %d dims, want %d", i, len(d.Embedding), fakeopenai.DefaultDims)
			}
			if n := norm(d.Embedding); math.Abs(n-1) > 1e-5 {
				t.Errorf("data[%d] norm = %v, want 1", i, n)
			}
			if cos(d.Embedding, s.Embed(texts[i])) < 0.99999 {
				t.Errorf("data[%d] differs from Embed(%q)", i, texts[i])
			}
		}
		if resp.Usage.PromptTokens <= 0 {
			t.Errorf("usage = %+v, want prompt tokens", resp.Usage)
		}
	})

	t.Run("SharedWordsRankHigher", func(t *testing.T) {
		query := fakeopenai.EmbedText("what tea does Alice like", 0)
		related := fakeopenai.EmbedText("Alice likes green tea in the morning", 0)
		unrelated := fakeopenai.EmbedText("the server meets on Fridays for board games", 0)
		if cr, cu := cos(query, related), cos(query, unrelated); cr <= cu {
			t.Errorf("cos(related) = %v <= cos(unrelated) = %v", cr, cu)
		}
		jaQuery := fakeopenai.EmbedText("好きなお茶は何", 0)
		jaRelated := fakeopenai.EmbedText("アリスは緑のお茶が好き", 0)
		jaUnrelated := fakeopenai.EmbedText("金曜日にボードゲーム", 0)
		if cr, cu := cos(jaQuery, jaRelated), cos(jaQuery, jaUnrelated); cr <= cu {
			t.Errorf("Japanese: cos(related) = %v <= cos(unrelated) = %v", cr, cu)
		}
	})

	t.Run("CaseAndPunctuationInsensitive", func(t *testing.T) {
		a := fakeopenai.EmbedText("Green TEA!", 64)
		b := fakeopenai.EmbedText("green tea", 64)
		if cos(a, b) < 0.99999 {
			t.Errorf("cos = %v, want identical vectors", cos(a, b))
		}
	})

	t.Run("Dimensions", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.SetDims(32)
		c := newClient(s)
		resp, err := c.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: []string{"x"}, Model: "e"})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(resp.Data[0].Embedding); got != 32 || len(s.Embed("x")) != 32 {
			t.Errorf("dims = %d, want 32 after SetDims", got)
		}
		resp, err = c.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: []string{"x"}, Model: "e", Dimensions: 8})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(resp.Data[0].Embedding); got != 8 {
			t.Errorf("dims = %d, want the requested 8", got)
		}
	})

	t.Run("Base64", func(t *testing.T) {
		s := fakeopenai.New(t)
		resp, err := newClient(s).CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
			Input: []string{"green tea"}, Model: "e", EncodingFormat: openai.EmbeddingEncodingFormatBase64,
		})
		if err != nil {
			t.Fatal(err)
		}
		if cos(resp.Data[0].Embedding, s.Embed("green tea")) < 0.99999 {
			t.Error("base64 embedding differs from the float one")
		}
	})

	t.Run("SingleStringInput", func(t *testing.T) {
		s := fakeopenai.New(t)
		resp, err := newClient(s).CreateEmbeddings(ctx, openai.EmbeddingRequest{Input: "green tea", Model: "e"})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Data) != 1 {
			t.Fatalf("got %d embeddings, want 1", len(resp.Data))
		}
		if got := s.EmbeddingRequests()[0].Input; len(got) != 1 || got[0] != "green tea" {
			t.Errorf("recorded input = %q", got)
		}
	})

	t.Run("FailEmbeddings", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.FailEmbeddings(http.StatusTooManyRequests, 1)
		c := newClient(s)
		req := openai.EmbeddingRequestStrings{Input: []string{"x"}, Model: "e"}
		_, err := c.CreateEmbeddings(ctx, req)
		if got := statusOf(t, err); got != http.StatusTooManyRequests {
			t.Fatalf("status = %d, want 429", got)
		}
		if _, err := c.CreateEmbeddings(ctx, req); err != nil {
			t.Fatalf("second call: %v", err)
		}
		if got := s.EmbeddingCount(); got != 2 {
			t.Errorf("EmbeddingCount() = %d, want 2", got)
		}
		if got := s.ChatCount(); got != 0 {
			t.Errorf("ChatCount() = %d, want 0", got)
		}
	})
}

func TestRecording(t *testing.T) {
	ctx := context.Background()

	t.Run("OnRequestRunsBeforeAnswer", func(t *testing.T) {
		s := fakeopenai.New(t)
		var answered atomic.Bool
		var calls atomic.Int32
		s.OnRequest(func(r *http.Request) {
			calls.Add(1)
			if answered.Load() {
				t.Error("hook ran after the answer")
			}
			// The hook may use the server without deadlocking.
			if len(s.Requests()) == 0 {
				t.Error("request not recorded before the hook")
			}
			if r.URL.Path != fakeopenai.ChatPath {
				t.Errorf("hook path = %q", r.URL.Path)
			}
			var req openai.ChatCompletionRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "test-chat" {
				t.Errorf("hook couldn't read the body: %v", err)
			}
		})
		if _, err := newClient(s).CreateChatCompletion(ctx, chatRequest("x")); err != nil {
			t.Fatal(err)
		}
		answered.Store(true)
		s.OnRequest(nil)
		if _, err := newClient(s).CreateChatCompletion(ctx, chatRequest("x")); err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 1 {
			t.Errorf("hook ran %d times, want 1", calls.Load())
		}
	})

	t.Run("Requests", func(t *testing.T) {
		s := fakeopenai.New(t)
		c := newClient(s)
		if _, err := c.CreateChatCompletion(ctx, chatRequest("first")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: []string{"a", "b"}, Model: "e"}); err != nil {
			t.Fatal(err)
		}
		reqs := s.Requests()
		if len(reqs) != 2 {
			t.Fatalf("got %d requests, want 2", len(reqs))
		}
		if reqs[0].Path != fakeopenai.ChatPath || reqs[0].Method != http.MethodPost || reqs[0].Chat == nil ||
			reqs[0].Chat.Messages[0].Content != "first" || reqs[0].Status != http.StatusOK {
			t.Errorf("first request = %+v", reqs[0])
		}
		if reqs[1].Path != fakeopenai.EmbeddingsPath || reqs[1].Embedding == nil ||
			len(reqs[1].Embedding.Input) != 2 || reqs[1].Status != http.StatusOK {
			t.Errorf("second request = %+v", reqs[1])
		}
		s.ResetRequests()
		if len(s.Requests()) != 0 || s.ChatCount() != 0 {
			t.Error("ResetRequests kept records")
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		s := fakeopenai.New(t)
		s.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
			return fakeopenai.Text(req.Messages[0].Content)
		})
		c := newClient(s)
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				if i%2 == 0 {
					if _, err := c.CreateChatCompletion(ctx, chatRequest("x")); err != nil {
						t.Error(err)
					}
				} else {
					if _, err := c.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: []string{"x"}, Model: "e"}); err != nil {
						t.Error(err)
					}
				}
				s.Requests()
			})
		}
		wg.Wait()
		if s.ChatCount() != 8 || s.EmbeddingCount() != 8 {
			t.Errorf("counts = %d chat, %d embeddings, want 8 each", s.ChatCount(), s.EmbeddingCount())
		}
	})
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func cos(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot / (norm(a) * norm(b))
}
