package chat_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
	"github.com/sashabaranov/go-openai"
)

// The credentials of the message below, every part of which must stay out of the model's
// input, the database, short-term memory, notices, the reply and the logs. All made up.
var pastedSecrets = []string{
	"hunter2hunter2",                           // DB_PASSWORD=…
	"b3BlbnNzaC1rZXktdjEAAAAFAKEbodyLINEone",   // private key body, first line
	"AAAAC3NzaC1lZDI1NTE5FAKEbodyLINEtwo0000",  // private key body, second line
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", // AWS secret access key
	"FAKEbearer0123456789abcdefXYZ",            // Authorization: Bearer …
}

const pastedMessage = "please remember our staging setup: DB_PASSWORD=hunter2hunter2 and the deploy key\n" +
	"-----BEGIN OPENSSH PRIVATE KEY-----\n" +
	"b3BlbnNzaC1rZXktdjEAAAAFAKEbodyLINEone\n" +
	"AAAAC3NzaC1lZDI1NTE5FAKEbodyLINEtwo0000\n" +
	"-----END OPENSSH PRIVATE KEY-----\n" +
	"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n" +
	"and the API wants Authorization: Bearer FAKEbearer0123456789abcdefXYZ"

// syncBuffer is a log destination safe for the engine's concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// assertNoSecret fails when text holds any part of the pasted credentials.
func assertNoSecret(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range pastedSecrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds %q:\n%s", where, s, text)
		}
	}
}

// TestTurnRedactsCredentials: a credential in a message is redacted once, at the start
// of the turn, so neither the chat model, the transcript, the pipeline's hook, short-term
// memory, the tool result, a notice, the reply nor a debug log line ever holds it, and
// the database files do not either.
func TestTurnRedactsCredentials(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.selfTeaching("g1", true)
	logs := &syncBuffer{}
	var hooked []memory.Turn
	engine, err := chat.New(chat.Config{Now: e.clock.Now, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))},
		chat.Deps{Memories: e.store.Memories, Duplicates: e.store.Duplicates, Recall: e.store.Recall, Transcript: e.store.Transcripts, Settings: e.store.Settings, ShortTerm: e.short, Model: e.model, OnTurn: func(_ context.Context, turn memory.Turn, _ bool) error {
			hooked = append(hooked, turn)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	// The model tries to save the password anyway, and then repeats it in its answer.
	e.srv.Script(
		fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"The staging database uses DB_PASSWORD=hunter2hunter2","memory_scope":"server_wide"}`)),
		fakeopenai.Text("I can't keep DB_PASSWORD=hunter2hunter2, but I noted the rest."),
	)
	reply, err := engine.Turn(context.Background(), e.guild(pastedMessage))
	if err != nil {
		t.Fatal(err)
	}

	// What the model received: the user's words, redacted, in every request; the tool
	// result refuses without quoting the credential. (The model's own tool call comes
	// back to it in the second request; that is its words, not the user's.)
	reqs := e.srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d chat requests, want 2", len(reqs))
	}
	for i, req := range reqs {
		for _, m := range req.Messages {
			if m.Role != openai.ChatMessageRoleAssistant {
				assertNoSecret(t, fmt.Sprintf("chat request %d (%s)", i+1, m.Role), m.Content)
			}
		}
	}
	prompt := allText(reqs[0])
	for _, want := range []string{"DB_PASSWORD=[redacted password]", "[redacted private key]", "[redacted AWS secret access key]", "Bearer [redacted bearer token]", "staging setup"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "PRIVATE KEY") {
		t.Errorf("prompt kept the key block's header or footer:\n%s", prompt)
	}
	for _, r := range e.srv.Requests() {
		if r.Embedding != nil {
			assertNoSecret(t, "embedding request", string(r.Body))
		}
	}
	res := toolResults(reqs[1])
	if len(res) != 1 || !strings.Contains(res[0].Content, "looks like a secret") {
		t.Fatalf("tool result = %+v", res)
	}
	assertNoSecret(t, "tool result", res[0].Content)

	// What the user sees: no notice, no echo.
	if len(reply.Notices) != 0 {
		t.Errorf("notices = %+v", reply.Notices)
	}
	assertNoSecret(t, "reply", reply.Text)
	if !strings.Contains(reply.Text, "[redacted password]") {
		t.Errorf("reply = %q", reply.Text)
	}

	// What was kept: transcript rows, the turn the pipeline is told about, short-term
	// memory, and no memory at all.
	turns, err := e.store.Transcripts.RecentTurns(context.Background(), "g1", "c1", "111", 10)
	if err != nil || len(turns) != 2 {
		t.Fatalf("transcript = %+v, %v", turns, err)
	}
	for _, turn := range turns {
		assertNoSecret(t, "transcript row", turn.Content)
	}
	if len(hooked) != 1 {
		t.Fatalf("hook called %d times", len(hooked))
	}
	assertNoSecret(t, "pipeline hook turn", hooked[0].Content)
	for _, k := range []stm.Key{stm.UserKey("g1", "c1", "111"), stm.ChannelKey("g1", "c1")} {
		entry, ok := e.short.Get(k)
		if !ok || len(entry.Messages) != 2 {
			t.Fatalf("short-term entry %s = %+v", k, entry)
		}
		for _, m := range entry.Messages {
			assertNoSecret(t, "short-term memory "+k.String(), m.Content)
		}
	}
	if _, n, _ := e.store.Memories.List(context.Background(), memory.ServerOwner("g1"), memory.ListOptions{}); n != 0 {
		t.Errorf("%d server memories stored", n)
	}
	for _, path := range []string{e.store.Path(), e.store.Path() + "-wal"} {
		raw, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		assertNoSecret(t, path, string(raw))
	}

	// What was logged, at debug level.
	if !strings.Contains(logs.String(), "chat turn") {
		t.Fatalf("no turn was logged:\n%s", logs)
	}
	assertNoSecret(t, "log", logs.String())
}
