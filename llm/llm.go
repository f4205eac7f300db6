// Package llm adapts go-openai to kioku: chat completions (with tools) and
// embeddings against any OpenAI-compatible server, with per-call timeouts,
// retries of transient failures and token usage accounting.
//
// The client deliberately knows nothing about budgets or prompts: the chat
// turn and the background pipeline own those and talk to this package through
// small seams they declare (a ChatModel interface, ltm.EmbedFunc).
package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/backoff"
	"github.com/sashabaranov/go-openai"
)

// Defaults copied into a Config's zero fields by New.
const (
	// DefaultTimeout bounds one model call. Generous, because a local model
	// on a small machine can take tens of seconds for a long prompt, yet
	// finite, so a wedged provider cannot hold a chat turn or a job forever.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxRetries is how many times a transient failure is retried
	// after the first attempt: enough to ride out a rate-limit burst or a
	// provider restart without making a user wait minutes.
	DefaultMaxRetries = 3
	// DefaultMinBackoff is the wait before the first retry.
	DefaultMinBackoff = 500 * time.Millisecond
	// DefaultMaxBackoff caps the exponential wait between retries.
	DefaultMaxBackoff = 10 * time.Second
	// DefaultEmbedBatchSize is how many texts go into one embedding request;
	// small enough for every OpenAI-compatible server's input limits (Ollama
	// and llama.cpp included), large enough to backfill quickly.
	DefaultEmbedBatchSize = 64
)

// NoRetries is a Config.MaxRetries value that disables retries, since zero
// means "use the default".
const NoRetries = -1

// ErrNoEmbedModel is returned by Embed when no embedding model is
// configured. Callers treat it as "keyword recall only", not as a failure.
var ErrNoEmbedModel = errors.New("no embedding model configured")

// ErrNoChatModel is returned by Complete when neither the request nor the
// configuration names a chat model.
var ErrNoChatModel = errors.New("no chat model configured")

// Config configures a Client. Zero values mean the documented default.
type Config struct {
	// BaseURL is the OpenAI-compatible API root, ending in /v1 (e.g.
	// http://localhost:11434/v1 for Ollama). Empty means api.openai.com.
	BaseURL string
	// APIKey is sent as a bearer token. Empty is allowed: local servers such
	// as Ollama need none, and go-openai then sends no Authorization header.
	APIKey string
	// ChatModel answers chat turns. Requests that name a model keep it.
	ChatModel string
	// PipelineModel runs background extraction and decisions; it may be a
	// cheaper model than ChatModel. Empty means ChatModel.
	PipelineModel string
	// EmbedModel computes embeddings. Empty disables embeddings
	// (ErrNoEmbedModel), which the rest of kioku degrades to keyword recall.
	EmbedModel string
	// EmbedDimensions asks the provider for vectors of this size (only some
	// models support it). Zero leaves the model's native size.
	EmbedDimensions int
	// EmbedBatchSize is the number of texts per embedding request; default
	// DefaultEmbedBatchSize.
	EmbedBatchSize int
	// Timeout bounds each attempt of a call, not the whole call with its
	// retries, so one stalled attempt can be retried; default
	// DefaultTimeout, negative for none (the caller's context only).
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt for
	// transient failures; default DefaultMaxRetries, NoRetries for none.
	MaxRetries int
	// MinBackoff and MaxBackoff bound the exponential, jittered wait between
	// retries; defaults DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// Logger receives a warning per retried attempt (never prompt content).
	// Nil discards.
	Logger *slog.Logger
	// OnCall, when set, is told about every attempt sent to the provider,
	// retries included, once it has ended: the operator's metrics count calls,
	// errors and tokens by model and purpose from it. It runs on the caller's
	// goroutine, so it must be quick and safe for concurrent use.
	OnCall func(Call)
}

// Call is one attempt sent to the provider, as reported to Config.OnCall.
type Call struct {
	// Model is the model the attempt asked.
	Model string
	// Purpose is what the call was for: memory.PurposeChat for Complete and
	// memory.PurposeExtraction for CompletePipeline unless the context was
	// marked otherwise (memory.WithModelPurpose), and memory.PurposeEmbedding
	// for Embed.
	Purpose memory.ModelPurpose
	// Failed reports an attempt that failed, retried or not.
	Failed bool
	// PromptTokens and CompletionTokens are what a successful chat attempt
	// reported; EmbedTokens what a successful embedding request reported.
	PromptTokens, CompletionTokens, EmbedTokens int
}

// Usage is the client's accumulated token usage since New.
type Usage struct {
	// PromptTokens and CompletionTokens are summed over successful chat
	// calls, as reported by the provider.
	PromptTokens     int64
	CompletionTokens int64
	// EmbedTokens is summed over successful embedding requests; it is kept
	// apart from chat tokens because it is priced very differently.
	EmbedTokens int64
	// Calls counts attempts sent to the provider (chat and embeddings),
	// retries included, because that is what providers rate-limit and bill.
	Calls int64
	// Errors counts attempts that failed, retried or not.
	Errors int64
}

// Client talks to one OpenAI-compatible provider. It is safe for concurrent
// use once configured.
type Client struct {
	api *openai.Client
	cfg Config
	log *slog.Logger

	// Sleep waits d between attempts or returns early with an error when ctx
	// ends. Tests replace it to skip real backoff; set it before first use.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter turns the exponential backoff d into the actual wait. The
	// default picks uniformly in [d/2, d] so that many clients failing
	// together do not retry in lockstep; tests replace it to make waits
	// exact. Set it before first use.
	Jitter func(d time.Duration) time.Duration

	promptTokens     atomic.Int64
	completionTokens atomic.Int64
	embedTokens      atomic.Int64
	calls            atomic.Int64
	errors           atomic.Int64
}

// New validates cfg, fills in defaults and returns a client. It makes no
// network call, so a provider that is down at start does not stop the bot.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("invalid LLM base URL %q: want an absolute http(s) URL such as http://localhost:11434/v1", cfg.BaseURL)
		}
	}
	if cfg.PipelineModel == "" {
		cfg.PipelineModel = cfg.ChatModel
	}
	if cfg.EmbedBatchSize == 0 {
		cfg.EmbedBatchSize = DefaultEmbedBatchSize
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	switch {
	case cfg.EmbedBatchSize < 0:
		return nil, fmt.Errorf("invalid LLM embed batch size %d: must be positive", cfg.EmbedBatchSize)
	case cfg.EmbedDimensions < 0:
		return nil, fmt.Errorf("invalid LLM embed dimensions %d: must not be negative", cfg.EmbedDimensions)
	case cfg.MinBackoff < 0 || cfg.MaxBackoff < cfg.MinBackoff:
		return nil, fmt.Errorf("invalid LLM backoff %v..%v: want 0 < min <= max", cfg.MinBackoff, cfg.MaxBackoff)
	}

	apiCfg := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		apiCfg.BaseURL = cfg.BaseURL
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{
		api:    openai.NewClientWithConfig(apiCfg),
		cfg:    cfg,
		log:    log,
		Sleep:  sleep,
		Jitter: backoff.EqualJitter,
	}, nil
}

// Config returns the effective configuration, defaults filled in.
func (c *Client) Config() Config {
	return c.cfg
}

// Complete runs one chat completion with the chat model (unless req names a
// model), retrying transient failures. Tool definitions and tool calls pass
// through unchanged; interpreting them is the caller's job.
func (c *Client) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return c.complete(ctx, c.cfg.ChatModel, memory.PurposeChat, req)
}

// CompletePipeline is Complete with the pipeline model, for background
// extraction and decisions, which may run on a cheaper model than chat. Its
// calls are reported as extraction unless ctx is marked with another purpose
// (memory.WithModelPurpose).
func (c *Client) CompletePipeline(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return c.complete(ctx, c.cfg.PipelineModel, memory.PurposeExtraction, req)
}

func (c *Client) complete(ctx context.Context, model string, purpose memory.ModelPurpose, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if req.Model == "" {
		req.Model = model
	}
	if req.Model == "" {
		return openai.ChatCompletionResponse{}, fmt.Errorf("couldn't complete chat: %w", ErrNoChatModel)
	}
	if p, ok := memory.ModelPurposeFrom(ctx); ok {
		purpose = p
	}
	var resp openai.ChatCompletionResponse
	err := c.retry(ctx, "chat", Call{Model: req.Model, Purpose: purpose}, func(ctx context.Context, call *Call) error {
		var err error
		resp, err = c.api.CreateChatCompletion(ctx, req)
		call.PromptTokens, call.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
		return err
	})
	if err != nil {
		return openai.ChatCompletionResponse{}, fmt.Errorf("couldn't complete chat: %w", err)
	}
	c.promptTokens.Add(int64(resp.Usage.PromptTokens))
	c.completionTokens.Add(int64(resp.Usage.CompletionTokens))
	return resp, nil
}

// Embed returns one vector per text, in order, sending EmbedBatchSize texts
// per request, each request retried on its own. It fails as a whole if any
// batch fails, so callers never store a partial, misaligned result. No texts
// means no request.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.cfg.EmbedModel == "" {
		return nil, ErrNoEmbedModel
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.cfg.EmbedBatchSize {
		end := min(start+c.cfg.EmbedBatchSize, len(texts))
		vecs, err := c.embedBatch(ctx, texts[start:end])
		if err != nil {
			return nil, fmt.Errorf("couldn't embed texts %d-%d of %d: %w", start+1, end, len(texts), err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	req := openai.EmbeddingRequestStrings{
		Input:      texts,
		Model:      openai.EmbeddingModel(c.cfg.EmbedModel),
		Dimensions: c.cfg.EmbedDimensions,
	}
	var resp openai.EmbeddingResponse
	err := c.retry(ctx, "embeddings", Call{Model: c.cfg.EmbedModel, Purpose: memory.PurposeEmbedding}, func(ctx context.Context, call *Call) error {
		var err error
		resp, err = c.api.CreateEmbeddings(ctx, req)
		call.EmbedTokens = resp.Usage.PromptTokens
		return err
	})
	if err != nil {
		return nil, err
	}
	// Providers may return data out of order; Index is authoritative.
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("provider returned %d embeddings for %d texts", len(resp.Data), len(texts))
	}
	vecs := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
			return nil, fmt.Errorf("provider returned a bad or duplicate embedding index %d", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("provider returned an empty embedding at index %d", d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	c.embedTokens.Add(int64(resp.Usage.PromptTokens))
	return vecs, nil
}

// Usage returns the usage accumulated since New.
func (c *Client) Usage() Usage {
	return Usage{
		PromptTokens:     c.promptTokens.Load(),
		CompletionTokens: c.completionTokens.Load(),
		EmbedTokens:      c.embedTokens.Load(),
		Calls:            c.calls.Load(),
		Errors:           c.errors.Load(),
	}
}

// retry runs attempt until it succeeds, fails with a non-retryable error, or
// MaxRetries retries are spent, each attempt under its own timeout. It stops
// as soon as ctx ends, even mid-backoff. call describes the attempts for
// Config.OnCall; attempt fills in the tokens its response reported.
func (c *Client) retry(ctx context.Context, op string, call Call, attempt func(ctx context.Context, call *Call) error) error {
	for n := 0; ; n++ {
		err := c.try(ctx, call, attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !IsRetryable(err) || n >= c.cfg.MaxRetries {
			return err
		}
		// The un-jittered wait before retry n+1 is MinBackoff doubled n times, capped.
		wait := c.Jitter(backoff.Exponential(c.cfg.MinBackoff, c.cfg.MaxBackoff, n))
		c.log.WarnContext(ctx, "retrying LLM call",
			slog.String("op", op), slog.Int("attempt", n+1), slog.Duration("wait", wait), slog.Any("err", err))
		if serr := c.Sleep(ctx, wait); serr != nil {
			return fmt.Errorf("%w while waiting to retry after: %v", serr, err)
		}
	}
}

// try runs one attempt under the per-call timeout, counts it and reports it
// to Config.OnCall.
func (c *Client) try(ctx context.Context, call Call, attempt func(ctx context.Context, call *Call) error) error {
	if err := ctx.Err(); err != nil {
		// Don't count, or send, a call nobody is waiting for.
		return err
	}
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	c.calls.Add(1)
	err := attempt(ctx, &call)
	if err != nil {
		c.errors.Add(1)
		// A failed attempt reports no tokens, whatever a partial response held.
		call = Call{Model: call.Model, Purpose: call.Purpose, Failed: true}
	}
	if c.cfg.OnCall != nil {
		c.cfg.OnCall(call)
	}
	return err
}

// sleep waits d or until ctx ends, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
