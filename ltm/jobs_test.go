package ltm_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

var jobsEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func jobStore(t *testing.T) (*ltm.Store, *testkit.Clock) {
	t.Helper()
	s := testkit.MustOpenStore(t)
	clock := testkit.NewClock(jobsEpoch)
	s.Now = clock.Now
	return s, clock
}

func mustEnqueue(t *testing.T, s *ltm.Store, kind, key string, opt memory.EnqueueOptions) int64 {
	t.Helper()
	id, _, err := s.Jobs.Enqueue(t.Context(), kind, key, map[string]string{"key": key}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustLease(t *testing.T, s *ltm.Store, owner string) *memory.Job {
	t.Helper()
	j, err := s.Jobs.Lease(t.Context(), owner, nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if j == nil {
		t.Fatal("no job to lease")
	}
	return j
}

func mustJob(t *testing.T, s *ltm.Store, id int64) *memory.Job {
	t.Helper()
	j, err := s.Jobs.GetJob(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestEnqueueDedup(t *testing.T) {
	s, _ := jobStore(t)
	ctx := t.Context()
	t.Run("SameKindAndKeyIsOneJob", func(t *testing.T) {
		a, created, err := s.Jobs.Enqueue(ctx, "extract", "g/c1", nil, memory.EnqueueOptions{})
		if err != nil || !created {
			t.Fatalf("first enqueue: id %d created %v err %v", a, created, err)
		}
		b, created, err := s.Jobs.Enqueue(ctx, "extract", "g/c1", nil, memory.EnqueueOptions{})
		if err != nil || created || b != a {
			t.Fatalf("second enqueue: id %d (first %d) created %v err %v", b, a, created, err)
		}
	})
	t.Run("OtherKeyOrKindIsAnotherJob", func(t *testing.T) {
		a := mustEnqueue(t, s, "extract", "g/c2", memory.EnqueueOptions{})
		b := mustEnqueue(t, s, "extract", "g/c3", memory.EnqueueOptions{})
		c := mustEnqueue(t, s, "other", "g/c2", memory.EnqueueOptions{})
		if a == b || a == c || b == c {
			t.Fatalf("ids %d %d %d should differ", a, b, c)
		}
	})
	t.Run("LeasedDuplicateIsLeftAlone", func(t *testing.T) {
		s, _ := jobStore(t)
		id := mustEnqueue(t, s, "extract", "k", memory.EnqueueOptions{})
		mustLease(t, s, "w1")
		again, created, err := s.Jobs.Enqueue(ctx, "extract", "k", nil, memory.EnqueueOptions{})
		if err != nil || created || again != id {
			t.Fatalf("enqueue while leased: id %d created %v err %v; want %d, false", again, created, err, id)
		}
		if j := mustJob(t, s, id); j.State != memory.JobLeased {
			t.Fatalf("state %s, want leased", j.State)
		}
	})
	t.Run("DoneJobFreesTheKey", func(t *testing.T) {
		s, _ := jobStore(t)
		id := mustEnqueue(t, s, "extract", "k", memory.EnqueueOptions{})
		j := mustLease(t, s, "w1")
		if err := s.Jobs.Complete(ctx, j.ID, "w1"); err != nil {
			t.Fatal(err)
		}
		next, created, err := s.Jobs.Enqueue(ctx, "extract", "k", nil, memory.EnqueueOptions{})
		if err != nil || !created || next == id {
			t.Fatalf("enqueue after done: id %d created %v err %v", next, created, err)
		}
	})
}

func TestEnqueueTiming(t *testing.T) {
	ctx := t.Context()
	t.Run("SoonerWins", func(t *testing.T) {
		s, _ := jobStore(t)
		id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{RunAfter: jobsEpoch.Add(10 * time.Minute)})
		mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{RunAfter: jobsEpoch.Add(20 * time.Minute)})
		if got := mustJob(t, s, id).RunAfter; !got.Equal(jobsEpoch.Add(10 * time.Minute)) {
			t.Fatalf("run_after %v, want the sooner +10m", got)
		}
		mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
		if got := mustJob(t, s, id).RunAfter; !got.Equal(jobsEpoch) {
			t.Fatalf("run_after %v, want now", got)
		}
	})
	t.Run("DebounceRestartsTheTimer", func(t *testing.T) {
		s, clock := jobStore(t)
		id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{RunAfter: jobsEpoch.Add(10 * time.Minute), Debounce: true})
		clock.Advance(5 * time.Minute)
		mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{RunAfter: clock.Now().Add(10 * time.Minute), Debounce: true})
		if got := mustJob(t, s, id).RunAfter; !got.Equal(jobsEpoch.Add(15 * time.Minute)) {
			t.Fatalf("run_after %v, want pushed to +15m", got)
		}
	})
	t.Run("DebounceNeverDelaysADueJob", func(t *testing.T) {
		s, clock := jobStore(t)
		id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
		clock.Advance(time.Minute)
		mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{RunAfter: clock.Now().Add(10 * time.Minute), Debounce: true})
		if got := mustJob(t, s, id).RunAfter; !got.Equal(jobsEpoch) {
			t.Fatalf("run_after %v, want still due at %v", got, jobsEpoch)
		}
	})
	t.Run("NotLeasedBeforeRunAfter", func(t *testing.T) {
		s, clock := jobStore(t)
		mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{RunAfter: jobsEpoch.Add(time.Minute)})
		if j, err := s.Jobs.Lease(ctx, "w", nil, time.Minute); err != nil || j != nil {
			t.Fatalf("leased a job not due yet: %+v %v", j, err)
		}
		clock.Advance(time.Minute)
		mustLease(t, s, "w")
	})
}

func TestLease(t *testing.T) {
	ctx := t.Context()
	t.Run("EmptyQueue", func(t *testing.T) {
		s, _ := jobStore(t)
		if j, err := s.Jobs.Lease(ctx, "w", nil, time.Minute); err != nil || j != nil {
			t.Fatalf("lease on empty queue: %+v %v", j, err)
		}
	})
	t.Run("OldestDueFirstAndKindsFilter", func(t *testing.T) {
		s, _ := jobStore(t)
		a := mustEnqueue(t, s, "a", "1", memory.EnqueueOptions{})
		b := mustEnqueue(t, s, "b", "1", memory.EnqueueOptions{})
		j, err := s.Jobs.Lease(ctx, "w", []string{"b"}, time.Minute)
		if err != nil || j == nil || j.ID != b {
			t.Fatalf("lease kind b: %+v %v, want job %d", j, err, b)
		}
		if j.State != memory.JobLeased || j.LeaseOwner != "w" || !j.LeasedUntil.Equal(jobsEpoch.Add(time.Minute)) {
			t.Fatalf("leased job %+v", j)
		}
		if j := mustLease(t, s, "w2"); j.ID != a {
			t.Fatalf("leased %d, want %d", j.ID, a)
		}
		if j, _ := s.Jobs.Lease(ctx, "w3", nil, time.Minute); j != nil {
			t.Fatalf("a leased job was leased again: %+v", j)
		}
	})
	t.Run("ConcurrentWorkersNeverShareAJob", func(t *testing.T) {
		s, _ := jobStore(t)
		const jobs, workers = 30, 6
		for i := range jobs {
			mustEnqueue(t, s, "k", fmt.Sprint(i), memory.EnqueueOptions{})
		}
		var (
			mu   sync.Mutex
			seen = map[int64]string{}
			wg   sync.WaitGroup
		)
		for w := range workers {
			wg.Go(func() {
				owner := fmt.Sprintf("w%d", w)
				for {
					j, err := s.Jobs.Lease(ctx, owner, nil, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if j == nil {
						return
					}
					mu.Lock()
					if prev, dup := seen[j.ID]; dup {
						t.Errorf("job %d leased by %s and %s", j.ID, prev, owner)
					}
					seen[j.ID] = owner
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != jobs {
			t.Fatalf("leased %d jobs, want %d", len(seen), jobs)
		}
	})
}

func TestFailBackoffAndDeadLetter(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{MaxAttempts: 3})
	cause := errors.New("provider down")
	for attempt := 1; attempt <= 3; attempt++ {
		j := mustLease(t, s, fmt.Sprintf("w%d", attempt))
		dead, err := s.Jobs.Fail(ctx, j.ID, j.LeaseOwner, cause, time.Duration(attempt)*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		got := mustJob(t, s, id)
		if got.Attempts != attempt || got.LastError != "provider down" {
			t.Fatalf("after failure %d: attempts %d, last error %q", attempt, got.Attempts, got.LastError)
		}
		if attempt < 3 {
			if dead || got.State != memory.JobQueued || !got.RunAfter.Equal(clock.Now().Add(time.Duration(attempt)*time.Minute)) {
				t.Fatalf("after failure %d: dead %v, %+v", attempt, dead, got)
			}
			if j, _ := s.Jobs.Lease(ctx, "early", nil, time.Minute); j != nil {
				t.Fatalf("leased during backoff")
			}
			clock.Advance(time.Duration(attempt) * time.Minute)
			continue
		}
		if !dead || got.State != memory.JobDead {
			t.Fatalf("after the last attempt: dead %v, state %s", dead, got.State)
		}
	}
	clock.Advance(time.Hour)
	if j, _ := s.Jobs.Lease(ctx, "w", nil, time.Minute); j != nil {
		t.Fatal("a dead job was leased")
	}
	if st, err := s.Jobs.JobStats(ctx); err != nil || st.Dead != 1 || st.Depth() != 0 {
		t.Fatalf("stats %+v %v", st, err)
	}
}

func TestLeaseOwnership(t *testing.T) {
	s, _ := jobStore(t)
	ctx := t.Context()
	mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
	j := mustLease(t, s, "w1")
	for name, err := range map[string]error{
		"Complete":  s.Jobs.Complete(ctx, j.ID, "w2"),
		"Fail":      func() error { _, err := s.Jobs.Fail(ctx, j.ID, "w2", errors.New("x"), 0); return err }(),
		"Bury":      s.Jobs.Bury(ctx, j.ID, "w2", errors.New("x")),
		"Postpone":  s.Jobs.Postpone(ctx, j.ID, "w2", time.Time{}, nil),
		"Heartbeat": s.Jobs.Heartbeat(ctx, j.ID, "w2", time.Minute, nil),
	} {
		if !errors.Is(err, memory.ErrLeaseLost) {
			t.Errorf("%s by another owner: %v, want ErrLeaseLost", name, err)
		}
	}
	if got := mustJob(t, s, j.ID); got.State != memory.JobLeased || got.Attempts != 0 {
		t.Fatalf("job changed by a non-owner: %+v", got)
	}
}

func TestReapStale(t *testing.T) {
	ctx := t.Context()
	t.Run("ExpiredLeaseIsRequeuedAsAnAttempt", func(t *testing.T) {
		s, clock := jobStore(t)
		id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
		mustLease(t, s, "crashed")
		if res, err := s.Jobs.ReapStale(ctx); err != nil || res != (memory.ReapResult{}) {
			t.Fatalf("reaped a live lease: %+v %v", res, err)
		}
		clock.Advance(2 * time.Minute)
		if st, _ := s.Jobs.JobStats(ctx); st.Stale != 1 {
			t.Fatalf("stale = %d, want 1", st.Stale)
		}
		res, err := s.Jobs.ReapStale(ctx)
		if err != nil || res != (memory.ReapResult{Requeued: 1}) {
			t.Fatalf("reap: %+v %v", res, err)
		}
		got := mustJob(t, s, id)
		if got.State != memory.JobQueued || got.Attempts != 1 || got.LeaseOwner != "" || got.LastError == "" {
			t.Fatalf("reaped job %+v", got)
		}
		if err := s.Jobs.Complete(ctx, id, "crashed"); !errors.Is(err, memory.ErrLeaseLost) {
			t.Fatalf("the crashed worker completed a reaped job: %v", err)
		}
		if j := mustLease(t, s, "w2"); j.ID != id {
			t.Fatalf("leased %d, want %d", j.ID, id)
		}
	})
	t.Run("RespectsMaxAttempts", func(t *testing.T) {
		s, clock := jobStore(t)
		id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{MaxAttempts: 2})
		for range 2 {
			mustLease(t, s, "crashing")
			clock.Advance(2 * time.Minute)
			if _, err := s.Jobs.ReapStale(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := mustJob(t, s, id); got.State != memory.JobDead || got.Attempts != 2 {
			t.Fatalf("job that crashed its worker twice: %+v, want dead after 2 attempts", got)
		}
	})
	t.Run("HeartbeatKeepsTheLease", func(t *testing.T) {
		s, clock := jobStore(t)
		mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
		j := mustLease(t, s, "w")
		clock.Advance(50 * time.Second)
		if err := s.Jobs.Heartbeat(ctx, j.ID, "w", time.Minute, map[string]int{"step": 2}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(50 * time.Second)
		if res, _ := s.Jobs.ReapStale(ctx); res.Requeued != 0 {
			t.Fatal("reaped a job whose lease was renewed")
		}
		if got := mustJob(t, s, j.ID); string(got.Payload) != `{"step":2}` {
			t.Fatalf("checkpoint payload %s", got.Payload)
		}
	})
}

func TestPostponeAndBury(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
	j := mustLease(t, s, "w")
	if err := s.Jobs.Postpone(ctx, id, "w", clock.Now().Add(time.Hour), map[string]bool{"checkpoint": true}); err != nil {
		t.Fatal(err)
	}
	got := mustJob(t, s, id)
	if got.State != memory.JobQueued || got.Attempts != 0 || !got.RunAfter.Equal(jobsEpoch.Add(time.Hour)) ||
		string(got.Payload) != `{"checkpoint":true}` {
		t.Fatalf("postponed job %+v", got)
	}
	clock.Advance(time.Hour)
	j = mustLease(t, s, "w2")
	if err := s.Jobs.Bury(ctx, j.ID, "w2", errors.New("bad payload")); err != nil {
		t.Fatal(err)
	}
	if got := mustJob(t, s, id); got.State != memory.JobDead || got.Attempts != 1 || got.LastError != "bad payload" {
		t.Fatalf("buried job %+v", got)
	}
}

func TestRequeue(t *testing.T) {
	s, _ := jobStore(t)
	ctx := t.Context()
	id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{MaxAttempts: 1})
	j := mustLease(t, s, "w")
	t.Run("NotDead", func(t *testing.T) {
		if err := s.Jobs.Requeue(ctx, id); memory.ErrorCode(err) != memory.ECONFLICT {
			t.Fatalf("requeue of a leased job: %v, want conflict", err)
		}
	})
	if dead, err := s.Jobs.Fail(ctx, j.ID, "w", errors.New("boom"), 0); err != nil || !dead {
		t.Fatalf("fail: dead %v err %v", dead, err)
	}
	t.Run("NotFound", func(t *testing.T) {
		if err := s.Jobs.Requeue(ctx, 999); memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Fatalf("requeue of a missing job: %v", err)
		}
	})
	t.Run("ConflictWithALiveDuplicate", func(t *testing.T) {
		other := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
		if err := s.Jobs.Requeue(ctx, id); memory.ErrorCode(err) != memory.ECONFLICT {
			t.Fatalf("requeue next to a live duplicate: %v", err)
		}
		o := mustLease(t, s, "w2")
		if o.ID != other {
			t.Fatalf("leased %d, want %d", o.ID, other)
		}
		if err := s.Jobs.Complete(ctx, o.ID, "w2"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("FreshAttempts", func(t *testing.T) {
		if err := s.Jobs.Requeue(ctx, id); err != nil {
			t.Fatal(err)
		}
		got := mustJob(t, s, id)
		if got.State != memory.JobQueued || got.Attempts != 0 {
			t.Fatalf("requeued job %+v", got)
		}
		if j := mustLease(t, s, "w3"); j.ID != id {
			t.Fatalf("leased %d, want the requeued %d", j.ID, id)
		}
	})
}

func TestJobStats(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	mustEnqueue(t, s, "k", "leased", memory.EnqueueOptions{})
	mustLease(t, s, "w")
	mustEnqueue(t, s, "k", "due1", memory.EnqueueOptions{})
	clock.Advance(time.Minute)
	mustEnqueue(t, s, "k", "due2", memory.EnqueueOptions{})
	mustEnqueue(t, s, "k", "later", memory.EnqueueOptions{RunAfter: clock.Now().Add(time.Hour)})
	st, err := s.Jobs.JobStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := memory.JobStats{Queued: 3, Ready: 2, Leased: 1, OldestReady: jobsEpoch}
	if st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	if st.Depth() != 4 {
		t.Fatalf("depth %d, want 4", st.Depth())
	}
}
