package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// sleeps records the backoff waits a client asked for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

// newClient returns a client wired to a fresh fake server whose backoff waits
// are recorded instead of slept. edit, if given, adjusts the config first.
func newClient(t *testing.T, edit func(*llm.Config)) (*llm.Client, *fakeopenai.Server, *sleeps) {
	t.Helper()
	s := fakeopenai.New(t)
	cfg := llm.Config{
		BaseURL:       s.URL(),
		APIKey:        fakeopenai.APIKey,
		ChatModel:     "chat-model",
		PipelineModel: "pipeline-model",
		EmbedModel:    "embed-model",
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sl := &sleeps{}
	c.Sleep = sl.sleep
	return c, s, sl
}

func userMessage(content string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: content}},
	}
}

func statusOf(err error) int {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode
	}
	return 0
}

func TestNew(t *testing.T) {
	t.Run("Defaults", func(t *testing.T) {
		c, err := llm.New(llm.Config{ChatModel: "m"})
		if err != nil {
			t.Fatal(err)
		}
		got := c.Config()
		if got.Timeout != llm.DefaultTimeout || got.MaxRetries != llm.DefaultMaxRetries ||
			got.MinBackoff != llm.DefaultMinBackoff || got.MaxBackoff != llm.DefaultMaxBackoff ||
			got.EmbedBatchSize != llm.DefaultEmbedBatchSize || got.PipelineModel != "m" {
			t.Errorf("Config() = %+v, want defaults filled in", got)
		}
	})

	t.Run("NoRetries", func(t *testing.T) {
		c, err := llm.New(llm.Config{MaxRetries: llm.NoRetries})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Config().MaxRetries; got != 0 {
			t.Errorf("MaxRetries = %d, want 0", got)
		}
	})

	for name, cfg := range map[string]llm.Config{
		"ErrRelativeBaseURL":    {BaseURL: "localhost:11434/v1"},
		"ErrBaseURLScheme":      {BaseURL: "ftp://example.com/v1"},
		"ErrNegativeBatchSize":  {EmbedBatchSize: -1},
		"ErrNegativeDimensions": {EmbedDimensions: -1},
		"ErrBackoffOrder":       {MinBackoff: time.Second, MaxBackoff: time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := llm.New(cfg); err == nil {
				t.Errorf("New(%+v) succeeded, want an error", cfg)
			}
		})
	}
}

func TestComplete(t *testing.T) {
	ctx := context.Background()

	t.Run("Text", func(t *testing.T) {
		c, s, _ := newClient(t, nil)
		s.Script(fakeopenai.Text("hello Alice"))
		resp, err := c.Complete(ctx, userMessage("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != "hello Alice" {
			t.Errorf("content = %q", got)
		}
		if got := s.Requests()[0].Header.Get("Authorization"); got != "Bearer "+fakeopenai.APIKey {
			t.Errorf("Authorization = %q", got)
		}
	})

	t.Run("ToolCallsRoundTrip", func(t *testing.T) {
		c, s, _ := newClient(t, nil)
		s.Script(
			fakeopenai.ToolCalls(
				fakeopenai.Call{ID: "call_a", Name: "search_memories", Arguments: `{"query":"tea"}`},
				fakeopenai.Call{ID: "call_b", Name: "create_long_term_memory", Arguments: `{"memory_content":"likes tea","memory_scope":"server_wide"}`},
			),
			fakeopenai.Text("You like green tea."),
		)
		tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name:       "search_memories",
			Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
		}}}
		req := userMessage("what do I drink?")
		req.Tools = tools

		resp, err := c.Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		msg := resp.Choices[0].Message
		if resp.Choices[0].FinishReason != openai.FinishReasonToolCalls || len(msg.ToolCalls) != 2 {
			t.Fatalf("got %+v, want two tool calls", resp.Choices[0])
		}
		if msg.ToolCalls[1].Function.Name != "create_long_term_memory" ||
			msg.ToolCalls[1].Function.Arguments != `{"memory_content":"likes tea","memory_scope":"server_wide"}` {
			t.Errorf("second call = %+v", msg.ToolCalls[1])
		}

		req.Messages = append(req.Messages, msg)
		for _, call := range msg.ToolCalls {
			req.Messages = append(req.Messages, openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: `{"ok":true}`,
			})
		}
		resp, err = c.Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != "You like green tea." {
			t.Errorf("final content = %q", got)
		}

		second := s.ChatRequests()[1]
		if len(second.Messages) != 4 || second.Messages[2].ToolCallID != "call_a" || second.Messages[3].ToolCallID != "call_b" {
			t.Errorf("tool results not sent back: %+v", second.Messages)
		}
		if len(second.Messages[1].ToolCalls) != 2 {
			t.Errorf("assistant tool calls not sent back: %+v", second.Messages[1])
		}
		if len(second.Tools) != 1 || second.Tools[0].Function.Name != "search_memories" {
			t.Errorf("tools = %+v", second.Tools)
		}
	})

	t.Run("ModelDefaulting", func(t *testing.T) {
		c, s, _ := newClient(t, nil)
		if _, err := c.Complete(ctx, userMessage("x")); err != nil {
			t.Fatal(err)
		}
		explicit := userMessage("x")
		explicit.Model = "other-model"
		if _, err := c.Complete(ctx, explicit); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CompletePipeline(ctx, userMessage("x")); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range s.ChatRequests() {
			got = append(got, r.Model)
		}
		if want := []string{"chat-model", "other-model", "pipeline-model"}; !slices.Equal(got, want) {
			t.Errorf("models = %q, want %q", got, want)
		}
	})

	t.Run("PipelineFallsBackToChatModel", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.PipelineModel = "" })
		if _, err := c.CompletePipeline(ctx, userMessage("x")); err != nil {
			t.Fatal(err)
		}
		if got := s.ChatRequests()[0].Model; got != "chat-model" {
			t.Errorf("model = %q, want chat-model", got)
		}
	})

	t.Run("ErrNoChatModel", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.ChatModel, cfg.PipelineModel = "", "" })
		_, err := c.Complete(ctx, userMessage("x"))
		if !errors.Is(err, llm.ErrNoChatModel) {
			t.Fatalf("err = %v, want ErrNoChatModel", err)
		}
		if s.ChatCount() != 0 {
			t.Errorf("sent %d requests, want none", s.ChatCount())
		}
	})

	t.Run("EmptyAPIKey", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.APIKey = "" })
		s.RequireAuth(false)
		if _, err := c.Complete(ctx, userMessage("x")); err != nil {
			t.Fatal(err)
		}
		if got := s.Requests()[0].Header.Get("Authorization"); got != "" {
			t.Errorf("Authorization = %q, want none for a keyless provider", got)
		}
	})
}

func TestRetries(t *testing.T) {
	ctx := context.Background()

	for _, tt := range []struct {
		name  string
		first fakeopenai.Response
	}{
		{"ServerErrorThenOK", fakeopenai.Fail(http.StatusInternalServerError)},
		{"RateLimitedThenOK", fakeopenai.Fail(http.StatusTooManyRequests)},
		{"BadGatewayPageThenOK", fakeopenai.FailWith(http.StatusBadGateway, "<html>502</html>")},
		{"DroppedConnectionThenOK", fakeopenai.Drop()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, s, sl := newClient(t, nil)
			s.Script(tt.first, fakeopenai.Text("answer"))
			resp, err := c.Complete(ctx, userMessage("x"))
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Choices[0].Message.Content; got != "answer" {
				t.Errorf("content = %q", got)
			}
			if s.ChatCount() != 2 || len(sl.got()) != 1 {
				t.Errorf("requests = %d, sleeps = %d; want 2 and 1", s.ChatCount(), len(sl.got()))
			}
		})
	}

	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound} {
		t.Run(fmt.Sprintf("NoRetryOn%d", status), func(t *testing.T) {
			c, s, sl := newClient(t, nil)
			s.Script(fakeopenai.Fail(status), fakeopenai.Text("never"))
			_, err := c.Complete(ctx, userMessage("x"))
			if statusOf(err) != status {
				t.Fatalf("err = %v, want status %d", err, status)
			}
			if llm.IsRetryable(err) {
				t.Error("IsRetryable = true")
			}
			if !strings.HasPrefix(err.Error(), "couldn't complete chat: ") {
				t.Errorf("err = %q, want it wrapped with context", err)
			}
			if s.ChatCount() != 1 || len(sl.got()) != 0 {
				t.Errorf("requests = %d, sleeps = %d; want 1 and 0", s.ChatCount(), len(sl.got()))
			}
		})
	}

	t.Run("GivesUpAfterMaxRetries", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.MaxRetries = 3 })
		s.FailNext(http.StatusServiceUnavailable, 100)
		_, err := c.Complete(ctx, userMessage("x"))
		if statusOf(err) != http.StatusServiceUnavailable || !llm.IsRetryable(err) {
			t.Fatalf("err = %v, want the last 503", err)
		}
		if got := s.ChatCount(); got != 4 {
			t.Errorf("requests = %d, want MaxRetries+1 = 4", got)
		}
	})

	t.Run("NoRetries", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.MaxRetries = llm.NoRetries })
		s.FailNext(http.StatusServiceUnavailable, 100)
		if _, err := c.Complete(ctx, userMessage("x")); err == nil {
			t.Fatal("want an error")
		}
		if got := s.ChatCount(); got != 1 {
			t.Errorf("requests = %d, want 1", got)
		}
	})

	t.Run("ExponentialBackoffCapped", func(t *testing.T) {
		c, s, sl := newClient(t, func(cfg *llm.Config) {
			cfg.MaxRetries = 4
			cfg.MinBackoff = 100 * time.Millisecond
			cfg.MaxBackoff = 300 * time.Millisecond
		})
		c.Jitter = func(d time.Duration) time.Duration { return d }
		s.FailNext(http.StatusInternalServerError, 100)
		if _, err := c.Complete(ctx, userMessage("x")); err == nil {
			t.Fatal("want an error")
		}
		want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}
		if got := sl.got(); !slices.Equal(got, want) {
			t.Errorf("waits = %v, want %v", got, want)
		}
	})

	t.Run("DefaultJitterWithinHalfToFull", func(t *testing.T) {
		c, _, _ := newClient(t, nil)
		d := time.Second
		for range 1000 {
			if j := c.Jitter(d); j < d/2 || j > d {
				t.Fatalf("Jitter(%v) = %v, want within [%v, %v]", d, j, d/2, d)
			}
		}
	})

	t.Run("CancelledDuringBackoff", func(t *testing.T) {
		// An hour-long backoff proves the default sleep returns on
		// cancellation; the test would hang otherwise.
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.MinBackoff, cfg.MaxBackoff = time.Hour, time.Hour })
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		orig := c.Sleep
		c.Sleep = func(ctx context.Context, d time.Duration) error {
			cancel()
			return orig(ctx, d)
		}
		s.FailNext(http.StatusInternalServerError, 100)
		_, err := c.Complete(ctx, userMessage("x"))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if got := s.ChatCount(); got != 1 {
			t.Errorf("requests = %d, want 1", got)
		}
	})

	t.Run("AlreadyCancelled", func(t *testing.T) {
		c, s, _ := newClient(t, nil)
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := c.Complete(ctx, userMessage("x")); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if got := s.ChatCount(); got != 0 {
			t.Errorf("requests = %d, want 0", got)
		}
	})

	t.Run("PerCallTimeoutRetried", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.Timeout = 20 * time.Millisecond })
		s.Script(fakeopenai.Hang(), fakeopenai.Text("second try"))
		resp, err := c.Complete(ctx, userMessage("x"))
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != "second try" {
			t.Errorf("content = %q", got)
		}
		if got := s.ChatCount(); got != 2 {
			t.Errorf("requests = %d, want 2", got)
		}
	})

	t.Run("PerCallTimeoutExhausted", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) {
			cfg.Timeout = 20 * time.Millisecond
			cfg.MaxRetries = 1
		})
		s.Default(func(openai.ChatCompletionRequest) fakeopenai.Response { return fakeopenai.Hang() })
		_, err := c.Complete(ctx, userMessage("x"))
		if !errors.Is(err, context.DeadlineExceeded) || !llm.IsRetryable(err) {
			t.Fatalf("err = %v, want a retryable deadline error", err)
		}
		if got := s.ChatCount(); got != 2 {
			t.Errorf("requests = %d, want 2", got)
		}
	})

	t.Run("CallerDeadlineNotRetried", func(t *testing.T) {
		// The caller's own deadline ending is final, unlike a per-call
		// timeout with the caller still waiting.
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.Timeout = time.Hour })
		s.Default(func(openai.ChatCompletionRequest) fakeopenai.Response { return fakeopenai.Hang() })
		ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		if _, err := c.Complete(ctx, userMessage("x")); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		if got := s.ChatCount(); got != 1 {
			t.Errorf("requests = %d, want 1", got)
		}
	})

	t.Run("EmbeddingsRetried", func(t *testing.T) {
		c, s, _ := newClient(t, nil)
		s.FailEmbeddings(http.StatusTooManyRequests, 2)
		vecs, err := c.Embed(ctx, []string{"green tea"})
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != 1 || s.EmbeddingCount() != 3 {
			t.Errorf("got %d vectors after %d requests, want 1 after 3", len(vecs), s.EmbeddingCount())
		}
	})
}

func TestEmbed(t *testing.T) {
	ctx := context.Background()

	t.Run("BatchesInOrder", func(t *testing.T) {
		c, s, _ := newClient(t, nil)
		texts := make([]string, 150)
		for i := range texts {
			texts[i] = fmt.Sprintf("memory number %d about topic %d", i, i%7)
		}
		vecs, err := c.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != len(texts) {
			t.Fatalf("got %d vectors, want %d", len(vecs), len(texts))
		}
		for i, v := range vecs {
			if !slices.Equal(v, s.Embed(texts[i])) {
				t.Fatalf("vector %d is not the embedding of text %d", i, i)
			}
		}
		var sizes []int
		for _, r := range s.EmbeddingRequests() {
			sizes = append(sizes, len(r.Input))
			if r.Model != "embed-model" {
				t.Errorf("model = %q, want embed-model", r.Model)
			}
		}
		if want := []int{64, 64, 22}; !slices.Equal(sizes, want) {
			t.Errorf("batch sizes = %v, want %v", sizes, want)
		}
	})

	t.Run("BatchSize", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.EmbedBatchSize = 2 })
		if _, err := c.Embed(ctx, []string{"a", "b", "c", "d", "e"}); err != nil {
			t.Fatal(err)
		}
		if got := s.EmbeddingCount(); got != 3 {
			t.Errorf("requests = %d, want 3", got)
		}
	})

	t.Run("FailedBatchFailsAll", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.EmbedBatchSize = 2 })
		s.FailEmbeddings(http.StatusBadRequest, 1)
		vecs, err := c.Embed(ctx, []string{"a", "b", "c"})
		if statusOf(err) != http.StatusBadRequest || vecs != nil {
			t.Fatalf("got %v, %v; want no vectors and the 400", vecs, err)
		}
		if got := s.EmbeddingCount(); got != 1 {
			t.Errorf("requests = %d, want 1", got)
		}
	})

	t.Run("ErrNoEmbedModel", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.EmbedModel = "" })
		if _, err := c.Embed(ctx, []string{"a"}); !errors.Is(err, llm.ErrNoEmbedModel) {
			t.Fatalf("err = %v, want ErrNoEmbedModel", err)
		}
		if got := s.EmbeddingCount(); got != 0 {
			t.Errorf("requests = %d, want 0", got)
		}
	})

	t.Run("NoTextsNoRequest", func(t *testing.T) {
		c, s, _ := newClient(t, nil)
		vecs, err := c.Embed(ctx, nil)
		if err != nil || len(vecs) != 0 {
			t.Fatalf("got %v, %v", vecs, err)
		}
		if got := s.EmbeddingCount(); got != 0 {
			t.Errorf("requests = %d, want 0", got)
		}
	})

	t.Run("Dimensions", func(t *testing.T) {
		c, s, _ := newClient(t, func(cfg *llm.Config) { cfg.EmbedDimensions = 16 })
		vecs, err := c.Embed(ctx, []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs[0]) != 16 || s.EmbeddingRequests()[0].Dimensions != 16 {
			t.Errorf("got %d dims, requested %d; want 16", len(vecs[0]), s.EmbeddingRequests()[0].Dimensions)
		}
	})

	t.Run("EmbedFuncSeam", func(t *testing.T) {
		c, _, _ := newClient(t, nil)
		var embed ltm.EmbedFunc = c.Embed
		vecs, err := embed(ctx, []string{"a", "b"})
		if err != nil || len(vecs) != 2 {
			t.Fatalf("got %d vectors, %v", len(vecs), err)
		}
	})
}

func TestUsage(t *testing.T) {
	ctx := context.Background()

	t.Run("Accumulates", func(t *testing.T) {
		c, s, _ := newClient(t, nil)
		s.Script(
			fakeopenai.Text("a").WithUsage(10, 5),
			fakeopenai.Fail(http.StatusInternalServerError),
			fakeopenai.Text("b").WithUsage(7, 3),
		)
		for range 2 {
			if _, err := c.Complete(ctx, userMessage("x")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Embed(ctx, []string{"green tea"}); err != nil {
			t.Fatal(err)
		}
		got := c.Usage()
		want := llm.Usage{PromptTokens: 17, CompletionTokens: 8, EmbedTokens: got.EmbedTokens, Calls: 4, Errors: 1}
		if got != want || got.EmbedTokens <= 0 {
			t.Errorf("Usage() = %+v, want %+v with embed tokens", got, want)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		c, s, _ := newClient(t, nil)
		s.Default(func(openai.ChatCompletionRequest) fakeopenai.Response {
			return fakeopenai.Text("x").WithUsage(2, 1)
		})
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if _, err := c.Complete(ctx, userMessage("x")); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got, want := c.Usage(), (llm.Usage{PromptTokens: 40, CompletionTokens: 20, Calls: 20}); got != want {
			t.Errorf("Usage() = %+v, want %+v", got, want)
		}
	})
}

// TestOnCall: every attempt is reported once it ends, with the model it asked, what it
// was for (chat, the pipeline's extraction or a purpose its context carries, embeddings),
// whether it failed, and the tokens a successful attempt reported.
func TestOnCall(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []llm.Call
	)
	c, s, _ := newClient(t, func(cfg *llm.Config) {
		cfg.OnCall = func(call llm.Call) {
			mu.Lock()
			calls = append(calls, call)
			mu.Unlock()
		}
	})
	s.Script(
		fakeopenai.Fail(http.StatusInternalServerError),
		fakeopenai.Text("a").WithUsage(10, 5),
		fakeopenai.Text("b").WithUsage(7, 3),
		fakeopenai.Text("c").WithUsage(4, 2),
	)
	ctx := context.Background()
	if _, err := c.Complete(ctx, userMessage("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompletePipeline(ctx, userMessage("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompletePipeline(memory.WithModelPurpose(ctx, memory.PurposeDecision), userMessage("x")); err != nil {
		t.Fatal(err)
	}
	// An embedding is an embedding whatever the context says.
	if _, err := c.Embed(memory.WithModelPurpose(ctx, memory.PurposeDecision), []string{"green tea"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 5 {
		t.Fatalf("%d calls reported, want 5: %+v", len(calls), calls)
	}
	embed := calls[4]
	if embed.EmbedTokens <= 0 {
		t.Errorf("embedding call reported %d tokens, want the provider's count", embed.EmbedTokens)
	}
	want := []llm.Call{
		{Model: "chat-model", Purpose: memory.PurposeChat, Failed: true},
		{Model: "chat-model", Purpose: memory.PurposeChat, PromptTokens: 10, CompletionTokens: 5},
		{Model: "pipeline-model", Purpose: memory.PurposeExtraction, PromptTokens: 7, CompletionTokens: 3},
		{Model: "pipeline-model", Purpose: memory.PurposeDecision, PromptTokens: 4, CompletionTokens: 2},
		{Model: "embed-model", Purpose: memory.PurposeEmbedding, EmbedTokens: embed.EmbedTokens},
	}
	if !slices.Equal(calls, want) {
		t.Errorf("calls reported:\n%+v\nwant:\n%+v", calls, want)
	}
}

func TestIsRetryable(t *testing.T) {
	api := func(status int) error { return &openai.APIError{HTTPStatusCode: status, Message: "m"} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"Nil", nil, false},
		{"RateLimited", api(429), true},
		{"ServerError", api(500), true},
		{"Unavailable", fmt.Errorf("couldn't complete chat: %w", api(503)), true},
		{"RequestTimeout", api(408), true},
		{"BadRequest", api(400), false},
		{"Unauthorized", api(401), false},
		{"NotFound", api(404), false},
		{"NonJSONGatewayError", &openai.RequestError{HTTPStatusCode: 502, Err: errors.New("bad json")}, true},
		{"NonJSONClientError", &openai.RequestError{HTTPStatusCode: 403, Err: errors.New("bad json")}, false},
		{"Canceled", fmt.Errorf("x: %w", context.Canceled), false},
		{"DeadlineExceeded", fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{"ConnectionRefused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"ConnectionReset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"UnexpectedEOF", io.ErrUnexpectedEOF, true},
		{"Other", errors.New("invalid character"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := llm.IsRetryable(tt.err); got != tt.want {
				t.Errorf("IsRetryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
