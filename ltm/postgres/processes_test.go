package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
)

// openShared opens n stores on one fresh schema, each with its own connection pool, as n
// bot processes sharing a database would.
func openShared(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	cfg := pgtest.Schema(t)
	out := make([]*postgres.Store, n)
	for i := range out {
		s, err := postgres.OpenConfig(t.Context(), cfg.Copy())
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

// TestPostgresForgetMeAcrossProcesses: forget-me confirmed through one store is honoured by
// the other at once: her memories are gone from its reads and search, and the job its
// worker was running with her words loses its lease.
func TestPostgresForgetMeAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	a, b := stores[0], stores[1]
	ctx := t.Context()
	const alice = "100000000000000001"
	mine, err := b.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopePersonal, UserID: alice, Content: "My locker code is quokka"}, memory.UserActor(alice))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Jobs.Enqueue(ctx, "extract", "g/c1", map[string]any{"guild_id": "g", "channel_id": "c1"}, memory.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	job, err := b.Jobs.Lease(ctx, "p1-w1", nil, time.Minute)
	if err != nil || job == nil {
		t.Fatalf("lease: %v %v", job, err)
	}
	preview, err := a.Confirmations.PreviewForgetMe(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Confirmations.ConfirmForgetMe(ctx, alice, preview.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Memories.Get(ctx, memory.PersonalOwner(alice), mine.Memory.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Errorf("the other store still reads her memory: %v", err)
	}
	res, err := b.Recall.Search(ctx, memory.SearchQuery{Text: "locker code quokka", Owners: []memory.Owner{memory.PersonalOwner(alice)}, KeywordOnly: true})
	if err != nil || len(res) != 0 {
		t.Errorf("the other store still finds her memory: %v %v", res, err)
	}
	checkpoint := map[string]any{"guild_id": "g", "channel_id": "c1", "checkpoint": map[string]any{"facts": []string{"her locker code is quokka"}}}
	if err := b.Jobs.Heartbeat(ctx, job.ID, "p1-w1", time.Minute, checkpoint); !errors.Is(err, memory.ErrLeaseLost) {
		t.Errorf("the other store's running job kept its lease through forget-me: %v", err)
	}
}
