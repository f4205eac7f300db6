package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/memory"
)

// TestChatAndRunShareTheJobQueue: `kioku chat` and `kioku run` on one database each run the
// bot's core, pipeline worker included, and the durable job queue's leases make each job
// run in exactly one of them. Two cores over two stores opened on one database, as two
// processes have, work one queue of extraction jobs at once: every conversation is
// extracted once, learned once, and every job ends done.
func TestChatAndRunShareTheJobQueue(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		testSharedJobQueue(t, filepath.Join(t.TempDir(), "k.db"))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		testSharedJobQueue(t, testPostgresURL(t))
	})
}

func testSharedJobQueue(t *testing.T, db string) {
	ctx := context.Background()
	const conversations = 24
	marker := regexp.MustCompile(`marker-(\d+)`)
	var mu sync.Mutex
	extracted := map[string]int{} // marker → extraction requests naming it
	ai := fakeopenai.New(t)
	ai.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		if !isExtraction(req) {
			return fakeopenai.Text(`{"action":"ADD","target_id":0,"content":"","confidence":0.9,"reason":"new"}`)
		}
		var text strings.Builder
		for _, m := range req.Messages[1:] {
			text.WriteString(m.Content)
		}
		n := marker.FindStringSubmatch(text.String())
		if n == nil {
			return fakeopenai.Text(`{"facts":[]}`)
		}
		mu.Lock()
		extracted[n[1]]++
		mu.Unlock()
		b, _ := json.Marshal(map[string]any{"facts": []map[string]any{{"content": "User " + n[1] + " lives in city " + n[1],
			"type": "fact", "confidence": 0.9, "scope": "personal", "subject": "u" + n[1]}}})
		return fakeopenai.Text(string(b))
	})
	env := map[string]string{"KIOKU_DB": db, "KIOKU_LLM_BASE_URL": ai.URL(), "KIOKU_LLM_API_KEY": fakeopenai.APIKey,
		"KIOKU_MAINTENANCE_MODE": "off"}
	// Two processes' worth: each its own app, store (own connections) and core.
	var cores [2]*botCore
	for i := range cores {
		cfg, err := LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			t.Fatal(err)
		}
		app := &App{Stdout: io.Discard, Stderr: io.Discard, config: cfg, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		store, err := app.openStore(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		if cores[i], err = app.newCore(store, nil); err != nil {
			t.Fatal(err)
		}
	}
	// One conversation per member in DMs, half said through each process, each queued for
	// extraction now.
	for n := range conversations {
		c := cores[n%2]
		turn := memory.Turn{ChannelID: fmt.Sprintf("dm-u%d", n), UserID: fmt.Sprintf("u%d", n), Role: memory.RoleUser,
			Content: fmt.Sprintf("marker-%d: I moved to city %d", n, n), MessageID: fmt.Sprintf("m%d", n), CreatedAt: time.Now()}
		if _, err := c.store.Transcripts.AppendTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
		if err := c.pipe.OnTurn(ctx, turn, true); err != nil {
			t.Fatal(err)
		}
	}
	// Both workers at once, until nothing is queued or running (a job put back to retry
	// would keep them busy: the bound reports it).
	deadline := time.Now().Add(time.Minute)
	var wg sync.WaitGroup
	var done [2]int
	for i, c := range cores {
		wg.Go(func() {
			for {
				res, err := c.pipe.Tick(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				done[i] += res.Done
				st, err := c.store.Jobs.JobStats(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if st.Queued == 0 && st.Leased == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Errorf("jobs still waiting after a minute: %+v", st)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("jobs done by each process: %v", done)
	if done[0]+done[1] != conversations {
		t.Errorf("the processes completed %d jobs together, want %d (one each)", done[0]+done[1], conversations)
	}
	st, err := cores[0].store.Jobs.JobStats(ctx)
	if err != nil || st.Done != conversations || st.Dead != 0 {
		t.Errorf("queue %+v (%v), want %d done and none dead", st, err, conversations)
	}
	for n := range conversations {
		if got := extracted[fmt.Sprint(n)]; got != 1 {
			t.Errorf("conversation %d was extracted %d times, want once", n, got)
		}
		mems, _, err := cores[1].store.Memories.List(ctx, memory.PersonalOwner(fmt.Sprintf("u%d", n)), memory.ListOptions{})
		if err != nil || len(mems) != 1 {
			t.Errorf("u%d holds %d memories (%v), want the one fact once", n, len(mems), err)
		}
	}
}
