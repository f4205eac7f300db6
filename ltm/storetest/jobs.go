package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

func mustEnqueue(t *testing.T, s Stores, kind, key string, opt memory.EnqueueOptions) int64 {
	t.Helper()
	id, _, err := s.Jobs.Enqueue(t.Context(), kind, key, map[string]string{"guild_id": "g1", "channel_id": key}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustLease(t *testing.T, s Stores, owner string) *memory.Job {
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

func mustJob(t *testing.T, s Stores, id int64) *memory.Job {
	t.Helper()
	j, err := s.Jobs.GetJob(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// testJobs: enqueue deduplicates by kind and key, a lease belongs to one owner, failures
// back off until the job is dead, stale leases are reaped, dead jobs can be requeued.
func testJobs(t *testing.T, open func(*testing.T) Stores) {
	t.Run("EnqueueDedupByKindAndKey", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		a, created, err := s.Jobs.Enqueue(ctx, "extract", "g/c1", nil, memory.EnqueueOptions{})
		if err != nil || !created {
			t.Fatalf("first enqueue: id %d created %v err %v", a, created, err)
		}
		b, created, err := s.Jobs.Enqueue(ctx, "extract", "g/c1", nil, memory.EnqueueOptions{})
		if err != nil || created || b != a {
			t.Fatalf("second enqueue: id %d (first %d) created %v err %v", b, a, created, err)
		}
		c := mustEnqueue(t, s, "extract", "g/c2", memory.EnqueueOptions{})
		d := mustEnqueue(t, s, "other", "g/c1", memory.EnqueueOptions{})
		if c == a || d == a || c == d {
			t.Fatalf("ids %d %d %d should differ", a, c, d)
		}
		mustLease(t, s, "w1")
		again, created, err := s.Jobs.Enqueue(ctx, "extract", "g/c1", nil, memory.EnqueueOptions{})
		if err != nil || created || again != a {
			t.Fatalf("enqueue while leased: id %d created %v err %v; want %d, false", again, created, err, a)
		}
		if err := s.Jobs.Complete(ctx, a, "w1"); err != nil {
			t.Fatal(err)
		}
		next, created, err := s.Jobs.Enqueue(ctx, "extract", "g/c1", nil, memory.EnqueueOptions{})
		if err != nil || !created || next == a {
			t.Fatalf("enqueue after done: id %d created %v err %v, want a new job", next, created, err)
		}
	})
	t.Run("EnqueueTiming", func(t *testing.T) {
		s := open(t)
		now := s.Clock.Now()
		id := mustEnqueue(t, s, "k", "sooner", memory.EnqueueOptions{RunAfter: now.Add(10 * time.Minute)})
		mustEnqueue(t, s, "k", "sooner", memory.EnqueueOptions{RunAfter: now.Add(20 * time.Minute)})
		if got := mustJob(t, s, id).RunAfter; !got.Equal(now.Add(10 * time.Minute)) {
			t.Fatalf("run after %v, want the sooner +10m", got)
		}
		deb := mustEnqueue(t, s, "k", "debounce", memory.EnqueueOptions{RunAfter: now.Add(10 * time.Minute), Debounce: true})
		s.Clock.Advance(5 * time.Minute)
		mustEnqueue(t, s, "k", "debounce", memory.EnqueueOptions{RunAfter: s.Clock.Now().Add(10 * time.Minute), Debounce: true})
		if got := mustJob(t, s, deb).RunAfter; !got.Equal(now.Add(15 * time.Minute)) {
			t.Fatalf("debounced run after %v, want pushed to +15m", got)
		}
		if j, err := s.Jobs.Lease(t.Context(), "w", nil, time.Minute); err != nil || j != nil {
			t.Fatalf("leased a job not due yet: %+v %v", j, err)
		}
		s.Clock.Advance(5 * time.Minute)
		if j := mustLease(t, s, "w"); j.ID != id {
			t.Fatalf("leased %d, want the due job %d", j.ID, id)
		}
	})
	t.Run("HasDueSeesOnlyDueJobsOfItsKinds", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		hasDue := func(kinds ...string) bool {
			t.Helper()
			due, err := s.Jobs.HasDue(ctx, kinds)
			if err != nil {
				t.Fatal(err)
			}
			return due
		}
		if hasDue() {
			t.Fatal("an empty queue has a due job")
		}
		mustEnqueue(t, s, "a", "later", memory.EnqueueOptions{RunAfter: s.Clock.Now().Add(time.Minute)})
		if hasDue() {
			t.Fatal("a job due in a minute counts as due now")
		}
		s.Clock.Advance(time.Minute)
		if !hasDue() || !hasDue("a") || hasDue("b") {
			t.Fatalf("due now: any %v, a %v, b %v; want true, true, false", hasDue(), hasDue("a"), hasDue("b"))
		}
		mustLease(t, s, "w")
		if hasDue() {
			t.Fatal("a leased job still counts as due")
		}
	})
	t.Run("LeaseIsExclusive", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		a := mustEnqueue(t, s, "a", "1", memory.EnqueueOptions{})
		b := mustEnqueue(t, s, "b", "1", memory.EnqueueOptions{})
		j, err := s.Jobs.Lease(ctx, "w1", []string{"b"}, time.Minute)
		if err != nil || j == nil || j.ID != b {
			t.Fatalf("lease of kind b: %+v %v, want job %d", j, err, b)
		}
		if j.State != memory.JobLeased || j.LeaseOwner != "w1" || !j.LeasedUntil.Equal(s.Clock.Now().Add(time.Minute)) {
			t.Fatalf("leased job %+v", j)
		}
		if j := mustLease(t, s, "w2"); j.ID != a {
			t.Fatalf("w2 leased %d, want %d", j.ID, a)
		}
		if j, _ := s.Jobs.Lease(ctx, "w3", nil, time.Minute); j != nil {
			t.Fatalf("a leased job was leased again: %+v", j)
		}
		for name, err := range map[string]error{
			"Complete":  s.Jobs.Complete(ctx, b, "w2"),
			"Fail":      func() error { _, err := s.Jobs.Fail(ctx, b, "w2", errors.New("x"), 0); return err }(),
			"Bury":      s.Jobs.Bury(ctx, b, "w2", errors.New("x")),
			"Postpone":  s.Jobs.Postpone(ctx, b, "w2", time.Time{}, nil),
			"Heartbeat": s.Jobs.Heartbeat(ctx, b, "w2", time.Minute, nil),
		} {
			if !errors.Is(err, memory.ErrLeaseLost) {
				t.Errorf("%s by another owner: %v, want ErrLeaseLost", name, err)
			}
		}
		if got := mustJob(t, s, b); got.State != memory.JobLeased || got.LeaseOwner != "w1" || got.Attempts != 0 {
			t.Fatalf("job changed by a non-owner: %+v", got)
		}
	})
	t.Run("ConcurrentWorkersNeverShareAJob", func(t *testing.T) {
		s := open(t)
		const jobs, workers = 20, 4
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
					j, err := s.Jobs.Lease(t.Context(), owner, nil, time.Minute)
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
	t.Run("CompleteKeepsOnlyIDs", func(t *testing.T) {
		s := open(t)
		id, _, err := s.Jobs.Enqueue(t.Context(), "extract", "k", checkpoint("g1", "Alice likes tea"), memory.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		j := mustLease(t, s, "w")
		if err := s.Jobs.Complete(t.Context(), j.ID, "w"); err != nil {
			t.Fatal(err)
		}
		got := mustJob(t, s, id)
		if keys := payloadKeys(t, got); got.State != memory.JobDone || len(keys) != 2 || !keys["guild_id"] || !keys["channel_id"] {
			t.Fatalf("done job: state %s payload %s, want done with only its ids", got.State, got.Payload)
		}
	})
	t.Run("FailBacksOffUntilDead", func(t *testing.T) {
		s := open(t)
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
				if dead || got.State != memory.JobQueued || !got.RunAfter.Equal(s.Clock.Now().Add(time.Duration(attempt)*time.Minute)) {
					t.Fatalf("after failure %d: dead %v, %+v", attempt, dead, got)
				}
				if j, _ := s.Jobs.Lease(ctx, "early", nil, time.Minute); j != nil {
					t.Fatal("leased during backoff")
				}
				s.Clock.Advance(time.Duration(attempt) * time.Minute)
				continue
			}
			if !dead || got.State != memory.JobDead {
				t.Fatalf("after the last attempt: dead %v, state %s", dead, got.State)
			}
		}
		s.Clock.Advance(time.Hour)
		if j, _ := s.Jobs.Lease(ctx, "w", nil, time.Minute); j != nil {
			t.Fatal("a dead job was leased")
		}
		if st, err := s.Jobs.JobStats(ctx); err != nil || st.Dead != 1 || st.Depth() != 0 {
			t.Fatalf("stats %+v %v", st, err)
		}
	})
	t.Run("PostponeKeepsTheAttempt", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
		mustLease(t, s, "w")
		later := s.Clock.Now().Add(time.Hour)
		if err := s.Jobs.Postpone(ctx, id, "w", later, map[string]bool{"checkpoint": true}); err != nil {
			t.Fatal(err)
		}
		got := mustJob(t, s, id)
		if got.State != memory.JobQueued || got.Attempts != 0 || !got.RunAfter.Equal(later) || string(got.Payload) != `{"checkpoint":true}` {
			t.Fatalf("postponed job %+v", got)
		}
		if j, _ := s.Jobs.Lease(ctx, "w", nil, time.Minute); j != nil {
			t.Fatal("leased a postponed job before its time")
		}
		s.Clock.Advance(time.Hour)
		j := mustLease(t, s, "w2")
		if err := s.Jobs.Bury(ctx, j.ID, "w2", errors.New("bad payload")); err != nil {
			t.Fatal(err)
		}
		if got := mustJob(t, s, id); got.State != memory.JobDead || got.Attempts != 1 || got.LastError != "bad payload" {
			t.Fatalf("buried job %+v", got)
		}
	})
	t.Run("HeartbeatKeepsTheLease", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
		j := mustLease(t, s, "w")
		s.Clock.Advance(50 * time.Second)
		if err := s.Jobs.Heartbeat(ctx, j.ID, "w", time.Minute, map[string]int{"step": 2}); err != nil {
			t.Fatal(err)
		}
		s.Clock.Advance(50 * time.Second)
		if res, err := s.Jobs.ReapStale(ctx); err != nil || res.Requeued != 0 {
			t.Fatalf("reaped a job whose lease was renewed: %+v %v", res, err)
		}
		if got := mustJob(t, s, j.ID); string(got.Payload) != `{"step":2}` || got.State != memory.JobLeased {
			t.Fatalf("heartbeat job %+v", got)
		}
	})
	t.Run("ReapRequeuesStaleLeasesAsAnAttempt", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{MaxAttempts: 2})
		mustLease(t, s, "crashed")
		if res, err := s.Jobs.ReapStale(ctx); err != nil || res != (memory.ReapResult{}) {
			t.Fatalf("reaped a live lease: %+v %v", res, err)
		}
		s.Clock.Advance(2 * time.Minute)
		if st, _ := s.Jobs.JobStats(ctx); st.Stale != 1 {
			t.Fatalf("stale = %d, want 1", st.Stale)
		}
		if res, err := s.Jobs.ReapStale(ctx); err != nil || res != (memory.ReapResult{Requeued: 1}) {
			t.Fatalf("reap: %+v %v", res, err)
		}
		got := mustJob(t, s, id)
		if got.State != memory.JobQueued || got.Attempts != 1 || got.LeaseOwner != "" || got.LastError == "" {
			t.Fatalf("reaped job %+v", got)
		}
		if err := s.Jobs.Complete(ctx, id, "crashed"); !errors.Is(err, memory.ErrLeaseLost) {
			t.Fatalf("the crashed worker completed a reaped job: %v", err)
		}
		mustLease(t, s, "crashing-again")
		s.Clock.Advance(2 * time.Minute)
		if res, err := s.Jobs.ReapStale(ctx); err != nil || res != (memory.ReapResult{Dead: 1}) {
			t.Fatalf("second reap: %+v %v, want the job dead after its 2 attempts", res, err)
		}
		if got := mustJob(t, s, id); got.State != memory.JobDead || got.Attempts != 2 {
			t.Fatalf("job that crashed its worker twice: %+v", got)
		}
	})
	t.Run("RequeueOfDeadJobs", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		id := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{MaxAttempts: 1})
		j := mustLease(t, s, "w")
		if err := s.Jobs.Requeue(ctx, id); memory.ErrorCode(err) != memory.ECONFLICT {
			t.Fatalf("requeue of a leased job: %v, want conflict", err)
		}
		if dead, err := s.Jobs.Fail(ctx, j.ID, "w", errors.New("boom"), 0); err != nil || !dead {
			t.Fatalf("fail: dead %v err %v", dead, err)
		}
		if err := s.Jobs.Requeue(ctx, id+1000); memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Fatalf("requeue of a missing job: %v, want not found", err)
		}
		other := mustEnqueue(t, s, "k", "a", memory.EnqueueOptions{})
		if err := s.Jobs.Requeue(ctx, id); memory.ErrorCode(err) != memory.ECONFLICT {
			t.Fatalf("requeue next to a live duplicate: %v, want conflict", err)
		}
		if o := mustLease(t, s, "w2"); o.ID != other {
			t.Fatalf("leased %d, want %d", o.ID, other)
		}
		if err := s.Jobs.Complete(ctx, other, "w2"); err != nil {
			t.Fatal(err)
		}
		if err := s.Jobs.Requeue(ctx, id); err != nil {
			t.Fatal(err)
		}
		if got := mustJob(t, s, id); got.State != memory.JobQueued || got.Attempts != 0 {
			t.Fatalf("requeued job %+v", got)
		}
		if j := mustLease(t, s, "w3"); j.ID != id {
			t.Fatalf("leased %d, want the requeued %d", j.ID, id)
		}
	})
	t.Run("Stats", func(t *testing.T) {
		s := open(t)
		start := s.Clock.Now()
		mustEnqueue(t, s, "k", "leased", memory.EnqueueOptions{})
		mustLease(t, s, "w")
		mustEnqueue(t, s, "k", "due1", memory.EnqueueOptions{})
		s.Clock.Advance(time.Minute)
		mustEnqueue(t, s, "k", "due2", memory.EnqueueOptions{})
		mustEnqueue(t, s, "k", "later", memory.EnqueueOptions{RunAfter: s.Clock.Now().Add(time.Hour)})
		st, err := s.Jobs.JobStats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if want := (memory.JobStats{Queued: 3, Ready: 2, Leased: 1, OldestReady: start}); !st.OldestReady.Equal(start) ||
			st.Queued != want.Queued || st.Ready != want.Ready || st.Leased != want.Leased || st.Done != 0 || st.Dead != 0 || st.Stale != 0 {
			t.Fatalf("stats %+v, want %+v", st, want)
		}
	})
}

// testJobQueries: the operator's queries select jobs by state, by the guild their payload
// names and by age, and a purge deletes only finished jobs.
func testJobQueries(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	enqueue := func(guild, channel string) int64 {
		t.Helper()
		id, _, err := s.Jobs.Enqueue(ctx, "extract", guild+"/"+channel, map[string]string{"guild_id": guild, "channel_id": channel},
			memory.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	done := enqueue("g1", "c1")
	if j := mustLease(t, s, "w"); j.ID != done {
		t.Fatalf("leased %d, want %d", j.ID, done)
	}
	if err := s.Jobs.Complete(ctx, done, "w"); err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(time.Hour)
	queued, other, dm := enqueue("g1", "c2"), enqueue("g2", "c3"), enqueue("", "d4")
	find := func(f memory.JobFilter) []int64 {
		t.Helper()
		jobs, err := s.Jobs.FindJobs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		return ids
	}
	if got := find(memory.JobFilter{GuildID: "g1"}); !slices.Equal(got, []int64{queued, done}) {
		t.Errorf("jobs of g1 = %v, want %v newest first", got, []int64{queued, done})
	}
	if got := find(memory.JobFilter{States: []string{memory.JobQueued}}); !slices.Equal(got, []int64{dm, other, queued}) {
		t.Errorf("queued jobs = %v", got)
	}
	if got := find(memory.JobFilter{UpdatedBefore: s.Clock.Now().Add(-time.Minute)}); !slices.Equal(got, []int64{done}) {
		t.Errorf("jobs older than a minute = %v, want %v", got, []int64{done})
	}
	if n, err := s.Jobs.CountJobs(ctx, memory.JobFilter{GuildID: "g2"}); err != nil || n != 1 {
		t.Errorf("count of g2's jobs = %d, %v", n, err)
	}
	_, err := s.Jobs.PurgeJobs(ctx, memory.JobFilter{States: []string{memory.JobQueued}})
	wantCode(t, err, memory.EINVALID)
	_, err = s.Jobs.PurgeJobs(ctx, memory.JobFilter{})
	wantCode(t, err, memory.EINVALID)
	if n, err := s.Jobs.PurgeJobs(ctx, memory.JobFilter{States: []string{memory.JobDone, memory.JobDead}}); err != nil || n != 1 {
		t.Fatalf("purge of finished jobs = %d, %v, want 1", n, err)
	}
	if got := find(memory.JobFilter{}); !slices.Equal(got, []int64{dm, other, queued}) {
		t.Errorf("after the purge: %v", got)
	}
}
