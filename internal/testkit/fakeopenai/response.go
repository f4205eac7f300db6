package fakeopenai

import (
	"github.com/sashabaranov/go-openai"
)

// DefaultReply is what the fake answers when its script is empty and no
// Default handler was set: a fixed, recognisable text so a test that forgot
// to script a turn still gets a well-formed completion instead of a hang.
const DefaultReply = "ok"

// Response is one scripted answer of /v1/chat/completions.
//
// The zero value is a successful reply with empty content. Build values with
// Text, ToolCalls, Fail, FailWith, Handle, Hang or Drop rather than by hand;
// the fields are exported so a test can combine them (content and tool calls
// in one assistant message, a custom usage or finish reason).
type Response struct {
	// Content is the assistant message text.
	Content string
	// ToolCalls become the assistant message's tool_calls, in order. When
	// non-empty the finish reason defaults to "tool_calls", as with the real
	// API.
	ToolCalls []Call
	// FinishReason overrides the finish reason ("stop" or "tool_calls" when
	// empty), e.g. "length" to exercise truncated-output handling.
	FinishReason openai.FinishReason
	// Usage overrides the token usage reported with the reply. When nil the
	// fake estimates it (about four characters a token) so usage accounting
	// always sees non-zero numbers.
	Usage *openai.Usage

	// Status, when it is neither 0 nor 200, makes the fake answer with that
	// HTTP status and Body instead of a completion.
	Status int
	// Body is the error body sent with Status. When empty the fake sends an
	// OpenAI-style error object, which go-openai decodes into *openai.APIError;
	// a non-JSON body makes go-openai return *openai.RequestError instead.
	Body string

	// Handler, when set, is called with the decoded request and its result is
	// used instead; the other fields are ignored. It runs without the
	// server's lock held, so it may call the server's methods.
	Handler func(req openai.ChatCompletionRequest) Response

	// Hang makes the fake hold the request open, writing nothing, until the
	// client gives up (its context ends) or the server closes. Tests use it
	// for per-call timeouts without sleeping for real durations.
	Hang bool
	// Drop makes the fake close the connection without answering, the way
	// a crashed proxy or a reset network path looks to the client.
	Drop bool
}

// Call is one tool call in a scripted reply.
type Call struct {
	// ID is the tool call id the model would send; the fake generates a
	// unique "call_N" when it is empty, because the tool loop must echo ids
	// back in tool-role messages.
	ID string
	// Name is the function name.
	Name string
	// Arguments is the raw JSON arguments string, sent verbatim so tests can
	// also script malformed or schema-violating arguments.
	Arguments string
}

// Text is a plain assistant reply.
func Text(content string) Response {
	return Response{Content: content}
}

// ToolCalls is an assistant reply that asks for one or more tool calls.
func ToolCalls(calls ...Call) Response {
	return Response{ToolCalls: calls}
}

// Fail is an HTTP error with an OpenAI-style error body, e.g. 500 or 429.
func Fail(status int) Response {
	return Response{Status: status}
}

// FailWith is an HTTP error with a custom body, for providers whose error
// bodies are not OpenAI-shaped (an HTML page from a proxy, plain text).
func FailWith(status int, body string) Response {
	return Response{Status: status, Body: body}
}

// Handle computes the reply from the request, for assertions on what the
// client sent or replies that depend on the prompt.
func Handle(fn func(req openai.ChatCompletionRequest) Response) Response {
	return Response{Handler: fn}
}

// Hang holds the request until the client gives up; see Response.Hang.
func Hang() Response {
	return Response{Hang: true}
}

// Drop closes the connection without answering; see Response.Drop.
func Drop() Response {
	return Response{Drop: true}
}

// WithUsage returns a copy of r that reports the given token usage instead of
// the fake's estimate, for tests of usage accounting with exact numbers.
func (r Response) WithUsage(promptTokens, completionTokens int) Response {
	r.Usage = &openai.Usage{
		PromptTokens:     promptTokens,
		CompletionTokens: completionTokens,
		TotalTokens:      promptTokens + completionTokens,
	}
	return r
}

// failed reports whether r is an HTTP error rather than a completion.
func (r Response) failed() bool {
	return r.Status != 0 && r.Status != 200
}
