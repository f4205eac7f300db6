package postgres_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
)

// TestPostgresNoModelCallInWriteTx is chat's TestNoModelCallInWriteTx on PostgreSQL, with
// the vector leg on: a turn that writes a memory, the transcript and history and searches
// sends each of its model and embedding requests while no write transaction of the store
// is open (ARCHITECTURE invariant 2).
func TestPostgresNoModelCallInWriteTx(t *testing.T) {
	s := pgtest.Open(t)
	srv := fakeopenai.New(t)
	model, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: fakeopenai.APIKey, ChatModel: "test-model",
		EmbedModel: "embed-model", MaxRetries: 1, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.Recall.SetEmbedder(model.Embed, "embed-model")
	var mu sync.Mutex
	var checked int
	srv.OnRequest(func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		checked++
		if s.InWriteTx() {
			t.Errorf("%s called inside a write transaction", r.URL.Path)
		}
	})
	short, err := stm.New(stm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := chat.New(chat.Config{}, chat.Deps{Memories: s.Memories, Duplicates: s.Duplicates, Recall: s.Recall, Transcript: s.Transcripts,
		Settings: s.Settings, ShortTerm: short, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	srv.Script(
		fakeopenai.ToolCalls(fakeopenai.Call{Name: tools.NameCreateLTM, Arguments: `{"memory_content":"Aiko prefers green tea","memory_scope":"target_user"}`}),
		fakeopenai.ToolCalls(fakeopenai.Call{Name: tools.NameUpdateSTM, Arguments: `{"summary":"Tea talk."}`},
			fakeopenai.Call{Name: tools.NameSearch, Arguments: `{"query":"tea"}`}),
		fakeopenai.Text("Done."),
	)
	if _, err := engine.Turn(context.Background(), chat.Request{ChannelID: "dm1", UserID: "111", UserName: "Aiko",
		MessageID: "m1", Content: "I prefer green tea, keep that in mind"}); err != nil {
		t.Fatal(err)
	}
	if _, n, err := s.Memories.List(context.Background(), memory.PersonalOwner("111"), memory.ListOptions{}); err != nil || n != 1 {
		t.Fatalf("the turn stored %d memories (%v), want 1", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if checked < 4 || srv.EmbeddingCount() == 0 {
		t.Fatalf("the hook saw %d requests, %d of them embeddings; the turn must make 3 chat calls and embed", checked, srv.EmbeddingCount())
	}
}
