package ltm_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// TestLeaseExclusiveAcrossStores opens two stores on one database file, as two sharded
// `kioku run` processes do, and has both lease at once: every job is leased by exactly one
// of them, and a single job raced for by both goes to one only.
func TestLeaseExclusiveAcrossStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	open := func() *ltm.Store {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	stores := []*ltm.Store{open(), open()}

	t.Run("OneJob", func(t *testing.T) {
		for round := range 20 {
			id := mustEnqueue(t, stores[round%2], "extract", fmt.Sprintf("one/%d", round), memory.EnqueueOptions{})
			got := make([]*memory.Job, len(stores))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, s := range stores {
				wg.Go(func() {
					<-start
					j, err := s.Jobs.Lease(t.Context(), fmt.Sprintf("p%d-r%d", i, round), []string{"extract"}, time.Minute)
					if err != nil {
						t.Errorf("store %d: %v", i, err)
					}
					got[i] = j
				})
			}
			close(start)
			wg.Wait()
			winners := 0
			for _, j := range got {
				if j != nil {
					winners++
					if j.ID != id {
						t.Errorf("round %d: leased job %d, want %d", round, j.ID, id)
					}
				}
			}
			if winners != 1 {
				t.Fatalf("round %d: job %d leased by %d stores, want exactly 1", round, id, winners)
			}
			// Done, so the next round's job is the only one queued.
			for i, j := range got {
				if j != nil {
					if err := stores[i].Jobs.Complete(t.Context(), j.ID, j.LeaseOwner); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	})

	t.Run("ManyJobs", func(t *testing.T) {
		const n = 60
		for k := range n {
			mustEnqueue(t, stores[k%2], "embed", fmt.Sprintf("many/%d", k), memory.EnqueueOptions{})
		}
		var mu sync.Mutex
		leasedBy := map[int64][]int{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, s := range stores {
			for w := range 3 {
				wg.Go(func() {
					<-start
					for c := 0; ; c++ {
						j, err := s.Jobs.Lease(t.Context(), fmt.Sprintf("p%d-w%d-%d", i, w, c), []string{"embed"}, time.Minute)
						if err != nil {
							t.Errorf("store %d: %v", i, err)
							return
						}
						if j == nil {
							return
						}
						mu.Lock()
						leasedBy[j.ID] = append(leasedBy[j.ID], i)
						mu.Unlock()
					}
				})
			}
		}
		close(start)
		wg.Wait()
		if len(leasedBy) != n {
			t.Errorf("%d distinct jobs leased, want %d", len(leasedBy), n)
		}
		perStore := map[int]int{}
		for id, by := range leasedBy {
			if len(by) != 1 {
				t.Errorf("job %d leased %d times (stores %v), want once", id, len(by), by)
			}
			perStore[by[0]]++
		}
		t.Logf("jobs leased per store: %v", perStore)
	})
}

// TestOpenConcurrently starts four stores on one new database file at the same moment, as two
// shard processes started together do: both apply (or find applied) every migration, and
// neither fails on the other's tables.
func TestOpenConcurrently(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("kioku-%d.db", round))
		var wg sync.WaitGroup
		start := make(chan struct{})
		stores := make([]*ltm.Store, 4)
		for i := range stores {
			wg.Go(func() {
				<-start
				s, err := sqlite.Open(t.Context(), path)
				if err != nil {
					t.Errorf("round %d, store %d: %v", round, i, err)
					return
				}
				stores[i] = s
			})
		}
		close(start)
		wg.Wait()
		for _, s := range stores {
			if s != nil {
				if err := s.Close(); err != nil {
					t.Error(err)
				}
			}
		}
		if t.Failed() {
			return
		}
	}
}
