package bot_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
)

// lockedBuffer collects log output from concurrent handlers.
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

// TestDebugLogHoldsNoMessageContent: with every log at debug level, a Discord message
// carrying credentials goes through the real chat engine and the real model client, and
// no log line holds the message's words, its secrets least of all.
func TestDebugLogHoldsNoMessageContent(t *testing.T) {
	// Made-up credentials, and a word only the message contains.
	secrets := []string{"hunter2hunter2", "MIIEFAKEprivateBODYline0001", "FAKEbearer0123456789abcdefXYZ", "flamingo"}
	content := "my flamingo config: DB_PASSWORD=hunter2hunter2\n-----BEGIN PRIVATE KEY-----\nMIIEFAKEprivateBODYline0001\n" +
		"-----END PRIVATE KEY-----\nAuthorization: Bearer FAKEbearer0123456789abcdefXYZ"

	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ai := fakeopenai.New(t)
	ai.Script(fakeopenai.Text("Noted, without the secrets."))
	store := testkit.MustOpenStore(t)
	tb := newTestBotOn(t, store, func(cfg *bot.Config) {
		model, err := llm.New(llm.Config{BaseURL: ai.URL(), APIKey: fakeopenai.APIKey, ChatModel: "test-model", Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		engine, err := chat.New(chat.Config{Logger: log}, chat.Deps{Memories: store.Memories, Duplicates: store.Duplicates, Recall: store.Recall, Transcript: store.Transcripts, Settings: store.Settings, ShortTerm: cfg.STM, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Turner, cfg.Logger = engine, log
	})
	alice := tb.fake.NewUser("alice")
	tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.DMMessage("700", alice, content)})

	if sent := tb.fake.Messages("700"); len(sent) != 1 || !strings.Contains(sent[0].Content, "Noted") {
		t.Fatalf("sent %+v", sent)
	}
	out := logs.String()
	if !strings.Contains(out, "turn started") || !strings.Contains(out, "level=DEBUG") {
		t.Fatalf("the turn was not logged at debug level:\n%s", out)
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("log holds %q:\n%s", s, out)
		}
	}
}
