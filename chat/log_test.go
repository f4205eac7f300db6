package chat_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/tools"
)

// lockedBuffer is a log destination safe for the turn's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTurnLogLinesCarryEachIDOnce: the turn's logger carries the request's ids from its
// start, and the tools log through it without adding them again, so every line has each
// of guild_id, channel_id, user_id and message_id exactly once.
func TestTurnLogLinesCarryEachIDOnce(t *testing.T) {
	var out lockedBuffer
	e := newEnv(t, chat.Config{Logger: slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	e.selfTeaching("g1", true)
	e.srv.Script(
		fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"Aiko prefers green tea","memory_scope":"target_user"}`)),
		fakeopenai.Text("Got it."),
	)
	e.turn(e.guild("remember that I prefer green tea"))

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var toolLines int
	for _, line := range lines {
		keys := topLevelKeys(t, line)
		for _, id := range []string{"guild_id", "channel_id", "user_id", "message_id"} {
			if keys[id] != 1 {
				t.Errorf("%s appears %d times in %s", id, keys[id], line)
			}
		}
		if strings.Contains(line, "memory saved by model") {
			toolLines++
		}
	}
	if toolLines != 1 {
		t.Errorf("%d tool log lines, want 1 (the saved memory); log:\n%s", toolLines, out.String())
	}
}

// topLevelKeys counts the keys of one JSON log line, duplicates included (decoding into a
// map would merge them).
func topLevelKeys(t *testing.T, line string) map[string]int {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("log line %q is not a JSON object", line)
	}
	keys := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys[tok.(string)]++
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil && err != io.EOF {
			t.Fatal(err)
		}
	}
	return keys
}
