package ltm_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// embedClient is the real llm client on the fake provider, without retries so that each
// embedding call is one request.
func embedClient(t *testing.T, fake *fakeopenai.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: fakeopenai.APIKey, ChatModel: "chat",
		EmbedModel: "embed-model", MaxRetries: llm.NoRetries})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// trackStore is a store with a hand-driven clock that embeds through the fake provider.
func trackStore(t *testing.T, path string) (*ltm.Store, *fakeopenai.Server, *testkit.Clock) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	clock := testkit.NewClock(time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC))
	s.Now = clock.Now
	fake := fakeopenai.New(t)
	s.Recall.SetEmbedder(embedClient(t, fake).Embed, "embed-model")
	return s, fake, clock
}

func mustTrack(t *testing.T, s *ltm.Store, opt memory.EmbedTrackOptions) memory.EmbedTrackResult {
	t.Helper()
	res, err := s.Recall.TrackEmbeddings(t.Context(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustCoverage(t *testing.T, s *ltm.Store) memory.EmbedCoverage {
	t.Helper()
	c, err := s.Recall.EmbeddingCoverage(t.Context(), "embed-model")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func embeddingRows(t *testing.T, s *ltm.Store) int {
	t.Helper()
	st, err := s.Health.Counts(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	return st.Embeddings
}

// TestTrackEmbeddingsLoadsCachedVectors: a new process loads no vectors at start, not even
// on the tracker's first run; a scope's first use loads its cached vectors without asking
// the provider; later runs load into resident scopes only what another process wrote since.
func TestTrackEmbeddingsLoadsCachedVectors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	s, _, _ := trackStore(t, path)
	for _, c := range []string{"Tea is served at four", "The printer is on floor two", "Backups run on Sunday"} {
		testkit.MustRemember(t, s, server("g1", c))
	}
	if err := s.Recall.FlushVectors(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c := mustCoverage(t, s); c.Embedded != 3 {
		t.Fatalf("coverage %+v after writes with the provider up", c)
	}

	// A second store on the same file is a new process: its index starts empty.
	s2, fake, _ := trackStore(t, path)
	if n := s2.Recall.EmbedStatus().Vectors; n != 0 {
		t.Fatalf("a fresh process has %d vectors before the first run", n)
	}
	if res := mustTrack(t, s2, memory.EmbedTrackOptions{}); res != (memory.EmbedTrackResult{}) {
		t.Fatalf("first run %+v, want nothing to do and nothing loaded", res)
	}
	if n := s2.Recall.EmbedStatus().Vectors; n != 0 {
		t.Fatalf("the first run loaded %d vectors, want them left for the scope's first use", n)
	}
	if err := s2.Recall.WarmVectors(t.Context(), memory.ServerOwner("g1")); err != nil {
		t.Fatal(err)
	}
	if n := s2.Recall.EmbedStatus().Vectors; n != 3 || fake.EmbeddingCount() != 0 {
		t.Fatalf("%d vectors in the index, %d embedding requests", n, fake.EmbeddingCount())
	}
	if res := mustTrack(t, s2, memory.EmbedTrackOptions{}); res != (memory.EmbedTrackResult{}) {
		t.Fatalf("second run %+v, want nothing to do", res)
	}

	// Another process (the CLI) writes and edits memories with their vectors: the next
	// run puts those into this process's index without asking the provider again.
	added := testkit.MustRemember(t, s, server("g1", "Parking passes are at the front desk"))
	edited := "Tea is served at five"
	ms, _, err := s.Memories.List(t.Context(), memory.ServerOwner("g1"), memory.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tea *memory.Memory
	for _, m := range ms {
		if m.Content == "Tea is served at four" {
			tea = m
		}
	}
	if _, err := s.Memories.Modify(t.Context(), memory.ServerOwner("g1"), tea.ID, memory.Change{Content: &edited}, "user:u1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Recall.FlushVectors(t.Context()); err != nil { // as the other process does shortly after, or on exit
		t.Fatal(err)
	}
	if res := mustTrack(t, s2, memory.EmbedTrackOptions{}); res != (memory.EmbedTrackResult{Loaded: 2}) {
		t.Fatalf("run after another process wrote: %+v, want its two vectors loaded", res)
	}
	if fake.EmbeddingCount() != 0 {
		t.Fatalf("%d embedding requests for vectors the database had", fake.EmbeddingCount())
	}
	for id, text := range map[int64]string{added.ID: added.Content, tea.ID: edited} {
		res, err := s2.Recall.Search(t.Context(), memory.SearchQuery{Text: text, Owners: []memory.Owner{memory.ServerOwner("g1")}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || res[0].Memory.ID != id || res[0].Vector < 0.99 {
			t.Fatalf("search %q in the first process: %+v, want memory %d by its vector", text, res, id)
		}
	}
}

// TestTrackEmbeddingsRaces: a memory forgotten or edited while its batch is at the provider
// leaves no vector of its old words, in the table or the index.
func TestTrackEmbeddingsRaces(t *testing.T) {
	t.Run("ForgottenDuringTheCall", func(t *testing.T) {
		s, fake, clock := trackStore(t, filepath.Join(t.TempDir(), "kioku.db"))
		fake.Down()
		gone := testkit.MustRemember(t, s, server("g1", "The vault code is on the sticky note"))
		kept := testkit.MustRemember(t, s, server("g1", "Lunch is at noon on Fridays"))
		fake.Up()
		clock.Advance(time.Minute)
		if err := s.Recall.WarmVectors(t.Context(), memory.ServerOwner("g1")); err != nil {
			t.Fatal(err)
		}
		var once atomic.Bool
		fake.OnRequest(func(*http.Request) {
			if once.CompareAndSwap(false, true) {
				if _, err := s.Memories.Forget(t.Context(), memory.ServerOwner("g1"), []int64{gone.ID}, "user:u1", ""); err != nil {
					t.Error(err)
				}
			}
		})
		res := mustTrack(t, s, memory.EmbedTrackOptions{})
		if res.Embedded != 1 || res.Missing != 0 || res.Skipped != "" {
			t.Fatalf("run %+v, want the live memory embedded and nothing missing", res)
		}
		if c := mustCoverage(t, s); c.Live != 1 || c.Embedded != 1 {
			t.Fatalf("coverage %+v", c)
		}
		if n := embeddingRows(t, s); n != 1 {
			t.Fatalf("%d embedding rows, want only the live memory's (the forgotten one's was dropped)", n)
		}
		if n := s.Recall.EmbedStatus().Vectors; n != 1 {
			t.Fatalf("%d vectors in the index, want only memory %d's", n, kept.ID)
		}
	})
	t.Run("EditedDuringTheCall", func(t *testing.T) {
		s, fake, clock := trackStore(t, filepath.Join(t.TempDir(), "kioku.db"))
		fake.Down()
		m := testkit.MustRemember(t, s, server("g1", "The old meeting room is B12"))
		fake.Up()
		clock.Advance(time.Minute)
		edited := "The standup moved to room C7"
		var once atomic.Bool
		fake.OnRequest(func(*http.Request) {
			if once.CompareAndSwap(false, true) {
				// The edit's own write path embeds the new words (a request of its own).
				if _, err := s.Memories.Modify(t.Context(), memory.ServerOwner("g1"), m.ID, memory.Change{Content: &edited}, "user:u1"); err != nil {
					t.Error(err)
				}
			}
		})
		res := mustTrack(t, s, memory.EmbedTrackOptions{})
		if res.Embedded != 0 || res.Missing != 0 || res.Calls != 1 {
			t.Fatalf("run %+v, want the stale batch dropped and nothing missing", res)
		}
		if err := s.Recall.FlushVectors(t.Context()); err != nil { // the edit's vector
			t.Fatal(err)
		}
		if n := embeddingRows(t, s); n != 1 {
			t.Fatalf("%d embedding rows, want only the edited content's", n)
		}
		res2, err := s.Recall.Search(t.Context(), memory.SearchQuery{Text: edited, Owners: []memory.Owner{memory.ServerOwner("g1")}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res2) != 1 || res2[0].Vector < 0.99 {
			t.Fatalf("search of the edited words: %+v, want the memory by its new vector", res2)
		}
	})
}

// TestTrackEmbeddingsTimeout: a provider that does not answer within the call timeout skips
// the run and marks the provider down; nothing is stored.
func TestTrackEmbeddingsTimeout(t *testing.T) {
	s, fake, clock := trackStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	fake.Down()
	testkit.MustRemember(t, s, server("g1", "Deploys freeze on Thursdays"))
	fake.Up()
	clock.Advance(time.Minute)
	release := make(chan struct{})
	fake.OnRequest(func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	res := mustTrack(t, s, memory.EmbedTrackOptions{CallTimeout: 50 * time.Millisecond})
	close(release)
	if !strings.Contains(res.Skipped, "no answer within 50ms") || res.Calls != 1 || res.Missing != 1 {
		t.Fatalf("run %+v, want skipped for the timeout with the memory still missing", res)
	}
	if !s.Recall.EmbedStatus().Down || embeddingRows(t, s) != 0 {
		t.Fatalf("after a timeout: status %+v, %d embedding rows", s.Recall.EmbedStatus(), embeddingRows(t, s))
	}
}
