package ltm_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/memory"
)

// A large import whose embedding calls time out or fail must not send every guild's
// recall to keyword-only: its calls are its own, so the provider is not marked down, another
// guild's recall stays hybrid, and the imported memories are complete and wait for the
// embedding tracker for their vectors.
func TestBulkImportEmbedFailureKeepsOtherGuildsHybrid(t *testing.T) {
	cases := []struct {
		name     string
		memories int
		break_   func(fake *fakeopenai.Server, stuck chan struct{})
	}{
		// The provider accepts the import's calls and never answers: each call runs into
		// the store's embedding timeout.
		{"slow provider", memory.MaxImportMemories, func(fake *fakeopenai.Server, stuck chan struct{}) {
			fake.OnRequest(func(r *http.Request) {
				select {
				case <-stuck:
				default:
					if r.URL.Path == fakeopenai.EmbeddingsPath {
						<-r.Context().Done() // the client gave up
					}
				}
			})
		}},
		{"failing provider", 1000, func(fake *fakeopenai.Server, _ chan struct{}) {
			fake.FailEmbeddings(http.StatusInternalServerError, 1000)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, fake, _ := trackStore(t, filepath.Join(t.TempDir(), "kioku.db"))
			s.MaxServerMemories = -1
			// Short, so the slow case spends little time waiting; the test asserts no timing.
			s.EmbedTimeout = 100 * time.Millisecond
			other := memory.ServerOwner("g-other")
			ferry := memory.Memory{Scope: memory.ScopeServer, GuildID: other.GuildID, Type: memory.TypeFact,
				Content: "the ferry to the island leaves at noon"}
			if _, err := s.Memories.Remember(ctx, ferry, "test"); err != nil {
				t.Fatal(err)
			}

			f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, GuildID: "g-import"}
			for i := range tc.memories {
				f.Memories = append(f.Memories, memory.ExportMemory{Type: memory.TypeFact,
					Content: fmt.Sprintf("imported note %d about lantern festival stall %d", i, i%97)})
			}
			stuck := make(chan struct{})
			tc.break_(fake, stuck)
			res, err := s.Transfer.Import(ctx, memory.ServerOwner("g-import"), f, "cli")
			if err != nil {
				t.Fatal(err)
			}
			if res.Created != tc.memories {
				t.Fatalf("import created %d memories, want %d", res.Created, tc.memories)
			}
			st := s.Recall.EmbedStatus()
			if st.Down {
				t.Fatalf("the import's embedding failure marked the provider down for every guild: %+v", st)
			}
			if st.LastImportError == "" {
				t.Fatalf("the import's embedding failure is not reported: %+v", st)
			}

			// The provider works again for everyone else (the import's failures were its own).
			close(stuck)
			fake.FailEmbeddings(0, 0)
			before := fake.EmbeddingCount()
			got, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "when does the island ferry leave", Owners: []memory.Owner{other}, Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || got[0].Memory.Content != ferry.Content || got[0].Vector == 0 {
				t.Fatalf("another guild's recall after the import = %+v, want the ferry memory found by both legs", got)
			}
			if fake.EmbeddingCount() == before {
				t.Fatal("the other guild's query was not embedded: recall ran keyword-only")
			}

			// The imported memories wait for the tracker, which fills them in.
			tr := mustTrack(t, s, memory.EmbedTrackOptions{})
			if tr.Skipped != "" || tr.Missing != 0 || tr.Embedded == 0 {
				t.Fatalf("tracker after the import = %+v, want every imported memory embedded", tr)
			}
		})
	}
}

// A bulk write of several batches stores and indexes the vector of every memory it
// created: each batch's vectors are fetched while the next batch is written and stored with
// it, the last batch's on their own. When a batch is refused (here by the server's cap), the
// vectors of the batches already committed are still stored and indexed.
func TestRememberManyStoresEveryBatchsVectors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cap      int
		memories int
		want     int
	}{
		{"every batch written", -1, 1700, 1700},
		{"third batch refused", 1000, 1700, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fake, _ := trackStore(t, filepath.Join(t.TempDir(), "kioku.db"))
			s.MaxServerMemories = tc.cap
			var mems []memory.Memory
			for i := range tc.memories {
				mems = append(mems, memory.Memory{Scope: memory.ScopeServer, GuildID: "g-bulk", Type: memory.TypeFact,
					Content: fmt.Sprintf("bulk note %d on the harbour crane schedule %d", i, i%31)})
			}
			// The guild is resident, so the index takes the vectors as they come.
			if err := s.Recall.WarmVectors(ctx, memory.ServerOwner("g-bulk")); err != nil {
				t.Fatal(err)
			}
			_, err := s.Transfer.RememberMany(ctx, mems, "test")
			if tc.cap > 0 && memory.ErrorCode(err) != memory.ELIMIT {
				t.Fatalf("RememberMany past the cap: %v, want ELIMIT", err)
			}
			if tc.cap < 0 && err != nil {
				t.Fatal(err)
			}
			if got := embeddingRows(t, s); got != tc.want {
				t.Fatalf("%d stored vectors, want %d", got, tc.want)
			}
			if got := s.Recall.EmbedStatus().Vectors; got != tc.want {
				t.Fatalf("%d memories in the vector index, want %d", got, tc.want)
			}
			calls := fake.EmbeddingCount()
			if tr := mustTrack(t, s, memory.EmbedTrackOptions{}); tr.Missing != 0 || tr.Embedded != 0 || fake.EmbeddingCount() != calls {
				t.Fatalf("tracker after the bulk write = %+v (%d new calls), want nothing left to embed", tr, fake.EmbeddingCount()-calls)
			}
		})
	}
}
