package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// MaxRounds is the default and largest number of model calls in one turn's tool loop
// (SPEC §3 step 5): enough to save a memory, look something up and still answer, few
// enough that a model stuck calling tools cannot hold a turn or burn budget for long.
const MaxRounds = 4

// MaxCallsPerRound bounds the tool calls run from one model response. The model must get
// a result for every call it made, so the rest are answered with an error, not dropped.
const MaxCallsPerRound = 8

// Model completes chat requests; *llm.Client satisfies it.
type Model interface {
	Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// Result is what a tool loop produced.
type Result struct {
	// Text is the model's answer: the content of its last response, or of the last
	// response that had any when the last one was only tool calls. It may be empty.
	Text string
	// Rounds is the number of model calls made.
	Rounds int
	// ToolCalls counts the tool calls run; ToolErrors those whose result was an error.
	ToolCalls  int
	ToolErrors int
	// Exhausted is set when the model still asked for tools in the last round, which
	// offers none, so the loop ended without the model choosing to answer.
	Exhausted bool
	// Usage sums the token usage the provider reported over all rounds.
	Usage openai.Usage
	// Messages is the conversation as last sent, plus the final answer: the request's
	// messages followed by every assistant tool-call message and tool result.
	Messages []openai.ChatCompletionMessage
}

// ErrNoChoices is returned when the provider answers without any choice, which
// OpenAI-compatible servers do on some content filters and internal errors.
var ErrNoChoices = errors.New("model returned no choices")

// Run sends req to model with the toolbox's tools and runs the tools it calls, round
// after round, until the model answers without calling a tool or maxRounds model calls
// were made (maxRounds <= 0 or > MaxRounds means MaxRounds). The last allowed round sets
// tool_choice "none" so the model answers in words; if it calls tools anyway they are not
// run and Exhausted is set. Several tool calls in one response are run in order, and each
// gets its own result message. A failed model call ends the loop with the error and the
// partial Result (the toolbox keeps the notices of what was already done).
func Run(ctx context.Context, model Model, req openai.ChatCompletionRequest, tb *Toolbox, maxRounds int) (Result, error) {
	if maxRounds <= 0 || maxRounds > MaxRounds {
		maxRounds = MaxRounds
	}
	defs := tb.Definitions()
	msgs := append([]openai.ChatCompletionMessage(nil), req.Messages...)
	var res Result
	for round := 1; round <= maxRounds; round++ {
		last := round == maxRounds
		r := req
		r.Messages = msgs
		r.Tools = defs
		r.ToolChoice = nil
		if last && len(defs) > 0 {
			r.ToolChoice = "none"
		}
		resp, err := model.Complete(ctx, r)
		res.Rounds = round
		res.Messages = msgs
		if err != nil {
			return res, fmt.Errorf("couldn't complete round %d: %w", round, err)
		}
		res.Usage.PromptTokens += resp.Usage.PromptTokens
		res.Usage.CompletionTokens += resp.Usage.CompletionTokens
		res.Usage.TotalTokens += resp.Usage.TotalTokens
		if len(resp.Choices) == 0 {
			return res, fmt.Errorf("couldn't complete round %d: %w", round, ErrNoChoices)
		}
		msg := resp.Choices[0].Message
		if text := strings.TrimSpace(msg.Content); text != "" {
			res.Text = text
		}
		if len(msg.ToolCalls) == 0 {
			res.Messages = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: msg.Content})
			return res, nil
		}
		if last {
			res.Exhausted = true
			tb.log.WarnContext(ctx, "tool loop exhausted", slog.Int("rounds", round), slog.Int("tool_calls", len(msg.ToolCalls)))
			return res, nil
		}
		calls := normalizeCalls(msg.ToolCalls, round)
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: msg.Content, ToolCalls: echoed(calls)})
		for i, call := range calls {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("couldn't finish tool calls: %w", err)
			}
			var content string
			var callErr error
			if i >= MaxCallsPerRound {
				content = encode(map[string]any{"ok": false, "error": fmt.Sprintf("Too many tool calls in one response; only the first %d were run. Call this one again if it is still needed.", MaxCallsPerRound)})
				callErr = errors.New("too many tool calls")
			} else {
				content, callErr = tb.Call(ctx, call.Function.Name, call.Function.Arguments)
			}
			res.ToolCalls++
			if callErr != nil {
				res.ToolErrors++
			}
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: content, ToolCallID: call.ID})
		}
		res.Messages = msgs
	}
	return res, nil
}

// normalizeCalls fills in what some OpenAI-compatible servers leave out: a call id (the
// tool result must echo one) and the type.
func normalizeCalls(calls []openai.ToolCall, round int) []openai.ToolCall {
	out := make([]openai.ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_r%d_%d", round, i+1)
		}
		if c.Type == "" {
			c.Type = openai.ToolTypeFunction
		}
		c.Index = nil
		out[i] = c
	}
	return out
}

// echoed returns the calls as the next round sends them back to the model: arguments over
// MaxArgumentBytes, which the tools refuse unread, are replaced by "{}" so a model that
// emitted megabytes does not have them resent, and paid for, in every later round.
func echoed(calls []openai.ToolCall) []openai.ToolCall {
	var out []openai.ToolCall
	for i, c := range calls {
		if len(c.Function.Arguments) > MaxArgumentBytes {
			if out == nil {
				out = slices.Clone(calls)
			}
			out[i].Function.Arguments = "{}"
		}
	}
	if out == nil {
		return calls
	}
	return out
}
