package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/intent"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/memory"
)

// openBackend opens the database at db as the subcommands do, whichever engine it is, and
// closes it when the test ends.
func openBackend(t *testing.T, db string) *backend {
	t.Helper()
	cfg, err := LoadConfig(only("KIOKU_DB", db))
	if err != nil {
		t.Fatal(err)
	}
	app := &App{Stdout: io.Discard, Stderr: io.Discard, config: cfg, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	store, err := app.openStore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// isExtraction tells the pipeline's extraction requests from chat turns.
func isExtraction(req openai.ChatCompletionRequest) bool {
	return len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You extract")
}

// isDecision tells the pipeline's decision requests (a new fact against existing memories)
// from chat turns.
func isDecision(req openai.ChatCompletionRequest) bool {
	return len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You maintain the long-term memory")
}

// learningModel answers extraction requests with one personal fact about subject, decisions
// with ADD, and every other request with reply, as a model that noticed a remark would.
func learningModel(ai *fakeopenai.Server, subject, fact, reply string) {
	ai.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		switch {
		case isExtraction(req):
			b, _ := json.Marshal(map[string]any{"facts": []map[string]any{
				{"content": fact, "type": "fact", "confidence": 0.9, "scope": "personal", "subject": subject}}})
			return fakeopenai.Text(string(b))
		case isDecision(req):
			return fakeopenai.Text(`{"action":"ADD","target_id":0,"content":"","confidence":0.9,"reason":"new information"}`)
		}
		return fakeopenai.Text(reply)
	})
}

// TestChatLearnsWhatIsSaidInPassing: `kioku chat` runs the background pipeline as `kioku
// run` does. A remark made in passing (no memory request, not even high-signal language)
// is learned when the member leaves: the conversation's extraction is made due and run
// before the process exits, and the new memory is listed. The log stays out of the
// conversation: nothing below warn reaches the terminal.
func TestChatLearnsWhatIsSaidInPassing(t *testing.T) {
	const remark = "By the way, I moved to Osaka last spring."
	if intent.HighSignal(remark) {
		t.Fatalf("%q is high-signal; a passing remark must not be", remark)
	}
	ai := fakeopenai.New(t)
	learningModel(ai, "kai", "Kai moved to Osaka last spring", "Osaka, nice!")
	db := filepath.Join(t.TempDir(), "k.db")
	env := map[string]string{"KIOKU_DB": db, "KIOKU_LLM_BASE_URL": ai.URL(), "KIOKU_LLM_API_KEY": fakeopenai.APIKey}
	code, out, stderr := runApp(t, env, remark+"\n/quit\n", "chat", "--user", "kai")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mustContain(t, "chat", out, "Type /help for commands, /quit to leave.", "kioku: Osaka, nice!",
		"Learning from this conversation before leaving", "Learned in this conversation", "📌 #1 (personal): Kai moved to Osaka last spring")
	if stderr != "" {
		t.Errorf("chat logged to the terminal below warn:\n%s", stderr)
	}
	extractions := 0
	for _, r := range ai.ChatRequests() {
		if isExtraction(r) {
			extractions++
		}
	}
	if extractions != 1 {
		t.Errorf("%d extraction requests, want 1", extractions)
	}
	store := openBackend(t, db)
	mems, _, err := store.Memories.List(context.Background(), memory.PersonalOwner("kai"), memory.ListOptions{})
	if err != nil || len(mems) != 1 || mems[0].Source != memory.SourcePipeline {
		t.Fatalf("kai's memories %+v (%v), want the one the pipeline learned", mems, err)
	}
	st, err := store.Jobs.JobStats(context.Background())
	if err != nil || st.Queued != 0 || st.Leased != 0 {
		t.Errorf("queue after leaving: %+v (%v), want nothing left", st, err)
	}
}

// TestChatMemoryCommands: the REPL's / commands show and change the member's memory through
// the store, without a model call: list, search, show, history, forget and undo, forget by
// words with its confirmation, and the errors for what is not a command or not theirs.
func TestChatMemoryCommands(t *testing.T) {
	ai := fakeopenai.New(t)
	db := filepath.Join(t.TempDir(), "k.db")
	env := map[string]string{"KIOKU_DB": db, "KIOKU_LLM_BASE_URL": ai.URL(), "KIOKU_LLM_API_KEY": fakeopenai.APIKey, "KIOKU_PIPELINE_MODE": "off"}
	for _, add := range [][]string{
		{"memories", "add", "--user", "kai", "--type", "preference", "Kai prefers green tea"},
		{"memories", "add", "--user", "kai", "Kai's cat is called Mochi"},
		{"memories", "add", "--user", "someone-else", "Someone else likes green tea too"},
		{"memories", "add", "--guild", "g1", "The raid is on Fridays"},
	} {
		if code, _, stderr := runApp(t, env, "", add...); code != 0 {
			t.Fatalf("%v: exit %d: %s", add, code, stderr)
		}
	}
	script := strings.Join([]string{
		"/help", "/list", "/list type:preference", "/search green tea", "/show 1", "/forget 2", "/undo 2", "/history 2",
		"/forget green tea", "/forget confirm", "/list", "/show 3", "/list scope:server", "/frobnicate", "/quit",
	}, "\n") + "\n"
	code, out, stderr := runApp(t, env, script, "chat", "--user", "kai")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := ai.ChatCount(); n != 0 {
		t.Errorf("%d model calls; the commands need none", n)
	}
	mustContain(t, "chat commands", out,
		"/search WORDS [type:T] [tag:X]", // /help
		"Kai prefers green tea", "Kai's cat is called Mochi", "Page 1 of 1, 2 memories in your personal memory.",
		"Page 1 of 1, 1 memory in your personal memory.", // type:preference
		"#1 in your personal memory, version 1", "type preference", "learned in a DM", "v1 create",
		"🗑️ Forgot #2: Kai's cat is called Mochi", "↩️ Undid the forget of #2: recovered, now version 3",
		"recover", // history
		"Nothing is forgotten yet. To forget this memory, type /forget confirm before",
		"🗑️ Forgot #1.",
		"Page 1 of 1, 1 memory in your personal memory.",
		"[error] There is no memory #3 in your personal memory.",
		"[error] There is no server memory in a DM",
		"There is no command /frobnicate",
	)
	// Nothing was said, only commands: there is nothing to learn on leaving.
	mustNotContain(t, "chat commands", out, "Someone else likes green tea", "The raid is on Fridays", "Learning from this conversation")

	// In a guild, the server's memory is the default scope and scope:personal is the member's.
	code, out, stderr = runApp(t, env, "/list\n/list scope:personal\n/quit\n", "chat", "--user", "kai", "--guild", "g1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mustContain(t, "chat in a guild", out, "The raid is on Fridays", "1 memory in this server's memory", "Kai's cat is called Mochi")
}

// TestChatLogFile: --log sends the whole log, at KIOKU_LOG_LEVEL, to a file instead of the
// terminal.
func TestChatLogFile(t *testing.T) {
	ai := fakeopenai.New(t)
	ai.Default(func(openai.ChatCompletionRequest) fakeopenai.Response { return fakeopenai.Text("Hello!") })
	dir := t.TempDir()
	logFile := filepath.Join(dir, "chat.log")
	env := map[string]string{"KIOKU_DB": filepath.Join(dir, "k.db"), "KIOKU_LLM_BASE_URL": ai.URL(), "KIOKU_LLM_API_KEY": fakeopenai.APIKey,
		"KIOKU_LOG_LEVEL": "debug", "KIOKU_PIPELINE_MODE": "off"}
	code, out, stderr := runApp(t, env, "hi\n/quit\n", "chat", "--log", logFile)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	mustContain(t, "chat", out, "kioku: Hello!")
	// With the pipeline off there is nothing to learn on leaving.
	mustNotContain(t, "chat", out, "level=", "Learning from this conversation")
	body, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`level=(DEBUG|INFO)`).Match(body) {
		t.Errorf("the log file holds no debug or info line:\n%s", body)
	}
}

// TestChatCtrlC: Ctrl-C (the context ending) leaves the chat cleanly, exit 0, without the
// learning that /quit does; what was said stays queued for later.
func TestChatCtrlC(t *testing.T) {
	ai := fakeopenai.New(t)
	learningModel(ai, "kai", "Kai moved to Osaka last spring", "Osaka, nice!")
	db := filepath.Join(t.TempDir(), "k.db")
	env := map[string]string{"KIOKU_DB": db, "KIOKU_LLM_BASE_URL": ai.URL(), "KIOKU_LLM_API_KEY": fakeopenai.APIKey}
	in, typed := io.Pipe()
	var out syncBuffer
	app := &App{Stdin: in, Stdout: &out, Stderr: io.Discard, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- app.Main(ctx, []string{"chat", "--user", "kai"}) }()
	if _, err := io.WriteString(typed, "By the way, I moved to Osaka last spring.\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "Osaka, nice!") {
		if time.Now().After(deadline) {
			t.Fatalf("no reply after 30 s:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("Ctrl-C: exit %d, want 0\n%s", code, out.String())
	}
	typed.Close()
	mustNotContain(t, "chat after Ctrl-C", out.String(), "Learning from this conversation")
}
