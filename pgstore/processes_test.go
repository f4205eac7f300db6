package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/pgstore"
	"github.com/kioku-bot/kioku/pgstore/pgtest"
)

// openShared opens n stores on one fresh schema, each with its own connection pool, as n
// bot processes sharing a database would.
func openShared(t *testing.T, n int) []*pgstore.Store {
	t.Helper()
	cfg := pgtest.Schema(t)
	out := make([]*pgstore.Store, n)
	for i := range out {
		s, err := pgstore.OpenConfig(t.Context(), cfg.Copy())
		if err != nil {
			t.Fatalf("open store %d: %v", i, err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out
}

// TestPostgresJobsAcrossProcesses: workers of two stores (two processes' pools) leasing
// from one queue never get the same job, and every job is completed exactly once.
func TestPostgresJobsAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	const jobs, workersPerStore = 60, 3
	for i := range jobs {
		if _, _, err := stores[i%2].Jobs.Enqueue(t.Context(), "extract", fmt.Sprint(i), map[string]int{"n": i}, memory.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu     sync.Mutex
		leased = map[int64]string{}
		wg     sync.WaitGroup
	)
	for si, s := range stores {
		for w := range workersPerStore {
			wg.Go(func() {
				owner := fmt.Sprintf("p%d-w%d", si, w)
				for {
					j, err := s.Jobs.Lease(context.Background(), owner, []string{"extract"}, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if j == nil {
						return
					}
					mu.Lock()
					if prev, dup := leased[j.ID]; dup {
						t.Errorf("job %d leased by %s and %s", j.ID, prev, owner)
					}
					leased[j.ID] = owner
					mu.Unlock()
					if err := s.Jobs.Complete(context.Background(), j.ID, owner); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if len(leased) != jobs {
		t.Fatalf("%d jobs leased, want %d", len(leased), jobs)
	}
	st, err := stores[0].Jobs.JobStats(t.Context())
	if err != nil || st.Done != jobs || st.Queued != 0 || st.Leased != 0 {
		t.Fatalf("stats after the run: %+v %v, want %d done", st, err, jobs)
	}
}

// TestPostgresDedupAcrossProcesses: the same memory written at once through two stores is
// one memory, and the same job enqueued at once is one job.
func TestPostgresDedupAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	const rounds = 20
	for i := range rounds {
		var (
			wg      sync.WaitGroup
			ids     [2]int64
			jobIDs  [2]int64
			created [2]bool
		)
		for si, s := range stores {
			wg.Go(func() {
				res, err := s.Memories.Remember(context.Background(), memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
					Content: fmt.Sprintf("The raid %d is on Friday", i)}, memory.ActorCLI)
				if err != nil {
					t.Error(err)
					return
				}
				ids[si], created[si] = res.Memory.ID, res.Created
				jobIDs[si], _, err = s.Jobs.Enqueue(context.Background(), "extract", fmt.Sprint("g1/", i), nil, memory.EnqueueOptions{})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if ids[0] != ids[1] || created[0] == created[1] {
			t.Fatalf("round %d: memories %v created %v, want one memory created once", i, ids, created)
		}
		if jobIDs[0] != jobIDs[1] {
			t.Fatalf("round %d: jobs %v, want one", i, jobIDs)
		}
	}
	if n, err := stores[1].Memories.LiveCount(t.Context(), memory.ServerOwner("g1")); err != nil || n != rounds {
		t.Fatalf("%d live memories (%v), want %d", n, err, rounds)
	}
}
