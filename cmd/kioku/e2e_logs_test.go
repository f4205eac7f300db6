package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// TestRunLogsNoContent: at debug level, a chat turn with tool calls and a pipeline run
// over a malformed extraction log ids, counts and outcomes, never what was said or
// written: each marker below is in a message, a memory, a tag, a search query, a name the
// model chose, or a field of the extraction that triggers a warning, and none reaches the
// log.
func TestRunLogsNoContent(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "full", "KIOKU_LOG_LEVEL": "debug"})
	alice := h.fake.NewUser("alice")
	markers := []string{"mkmessage", "mkfact", "mktype", "mkscope", "mkentity", "mkquery", "mksearchtag",
		"mksaved", "mktool", "mkreply", "mkaction", "mkrelation", "mkbadfield"}
	extraction, _ := json.Marshal(map[string]any{
		"facts": []any{
			map[string]any{"content": "Alice mkfact prefers raids on Fridays", "type": "mktype", "confidence": 0.9,
				"scope": "mkscope", "subject": alice.ID, "evidence": []string{"mkbadfield"}},
			"mkbadfield is not an object",
			map[string]any{"content": 7, "type": "fact"},
		},
		"entities": []any{map[string]any{"source": "mkentity", "relationship": "mkrelation", "target": "Fridays"}},
	})
	h.ai.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		switch {
		case len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You extract"):
			return fakeopenai.Text(string(extraction))
		case len(req.Tools) == 0: // a decision: an action the parser does not know
			return fakeopenai.Text(`{"action":"mkaction","target_id":1,"confidence":0.9,"reason":"mkaction"}`)
		case req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool:
			return fakeopenai.Text("Noted, mkreply.")
		}
		return fakeopenai.ToolCalls(
			fakeopenai.Call{Name: tools.NameSearch, Arguments: `{"query":"mkquery raids","tags":["mksearchtag"]}`},
			fakeopenai.Call{Name: tools.NameCreateLTM, Arguments: `{"memory_content":"Alice mksaved likes green tea","memory_scope":"target_user"}`},
			fakeopenai.Call{Name: tools.NameCreateLTM, Arguments: `{"memory_content":"password=mksaved0123 for the raid bank","memory_scope":"server_wide"}`},
			fakeopenai.Call{Name: "mktool", Arguments: `{"mkbadfield":1}`},
		)
	})
	if got := h.chat(h.fake.DMMessage("200000000000000041", alice, "We decided mkmessage: raids on Fridays from now on")); !strings.Contains(got.Content, "mkreply") {
		t.Fatalf("DM reply %q", got.Content)
	}

	store, err := sqlite.Open(context.Background(), h.db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	waitFor(t, h, "the pipeline to finish its job", func() bool {
		ms, _, err := store.Memories.List(context.Background(), memory.PersonalOwner(alice.ID), memory.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(ms) >= 1 && strings.Contains(h.stderr.String(), "pipeline job done")
	})
	logs := strings.ToLower(h.stderr.String())
	for _, want := range []string{"level=debug", "extraction warning", "tool call refused", "pipeline job done"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log has no %q line: the scenario did not run as meant\n%s", want, logs)
		}
	}
	for _, m := range markers {
		if strings.Contains(logs, m) {
			t.Errorf("the log carries content (%q):\n%s", m, logs)
		}
	}
}
