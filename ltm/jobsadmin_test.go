package ltm_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// jobIDs returns the ids of jobs, in order.
func jobIDs(jobs []*memory.Job) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// enqueueIn queues an extraction job for a channel of guild ("" for a DM).
func enqueueIn(t *testing.T, s *ltm.Store, guild, channel string) int64 {
	t.Helper()
	id, _, err := s.Jobs.Enqueue(t.Context(), "extract", guild+"/"+channel,
		map[string]any{"guild_id": guild, "channel_id": channel, "checkpoint": map[string]string{"facts": "private words"}},
		memory.EnqueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestFindCountPurgeJobs: the operator's job queries select by state, guild (matched in
// the query on the payload's guild, so DM jobs never match a guild) and age; a purge
// deletes only finished jobs, refuses to run without states, and leaves the rest alone.
func TestFindCountPurgeJobs(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	doneG1 := enqueueIn(t, s, "g1", "c1")
	deadG2 := enqueueIn(t, s, "g2", "c2")
	dm := enqueueIn(t, s, "", "d1")
	// Finish the first two: done for g1, dead for g2.
	for _, want := range []int64{doneG1, deadG2} {
		j := mustLease(t, s, "w")
		if j.ID != want {
			t.Fatalf("leased %d, want %d", j.ID, want)
		}
		if want == doneG1 {
			if err := s.Jobs.Complete(ctx, j.ID, "w"); err != nil {
				t.Fatal(err)
			}
		} else if err := s.Jobs.Bury(ctx, j.ID, "w", errors.New("model rejected the request")); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(40 * 24 * time.Hour)
	runningG1 := enqueueIn(t, s, "g1", "c3")
	deadG1 := enqueueIn(t, s, "g1", "c4")
	for {
		j, err := s.Jobs.Lease(ctx, "w2", nil, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if j.ID == deadG1 {
			if err := s.Jobs.Bury(ctx, j.ID, "w2", errors.New("bad payload")); err != nil {
				t.Fatal(err)
			}
			break
		}
		// Leave the others running.
	}

	find := func(f memory.JobFilter) []int64 {
		t.Helper()
		jobs, err := s.Jobs.FindJobs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return jobIDs(jobs)
	}
	for name, c := range map[string]struct {
		f    memory.JobFilter
		want []int64
	}{
		"All":           {memory.JobFilter{}, []int64{deadG1, runningG1, dm, deadG2, doneG1}},
		"Guild":         {memory.JobFilter{GuildID: "g1"}, []int64{deadG1, runningG1, doneG1}},
		"GuildAndState": {memory.JobFilter{GuildID: "g1", States: []string{memory.JobDead}}, []int64{deadG1}},
		"Running":       {memory.JobFilter{States: []string{memory.JobLeased}}, []int64{runningG1, dm}},
		"Finished":      {memory.JobFilter{States: []string{memory.JobDone, memory.JobDead}}, []int64{deadG1, deadG2, doneG1}},
		"OlderThan":     {memory.JobFilter{States: []string{memory.JobDead}, UpdatedBefore: clock.Now().Add(-30 * 24 * time.Hour)}, []int64{deadG2}},
		"Limit":         {memory.JobFilter{Limit: 2}, []int64{deadG1, runningG1}},
		"UnknownGuild":  {memory.JobFilter{GuildID: "g3"}, []int64{}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := find(c.f); !slices.Equal(got, c.want) {
				t.Errorf("FindJobs(%+v) = %v, want %v", c.f, got, c.want)
			}
			n, err := s.Jobs.CountJobs(ctx, memory.JobFilter{States: c.f.States, GuildID: c.f.GuildID, UpdatedBefore: c.f.UpdatedBefore})
			if err != nil {
				t.Fatal(err)
			}
			if c.f.Limit == 0 && n != len(c.want) {
				t.Errorf("CountJobs = %d, want %d", n, len(c.want))
			}
		})
	}
	if _, err := s.Jobs.FindJobs(ctx, memory.JobFilter{States: []string{"stuck"}}); memory.ErrorCode(err) != memory.EINVALID {
		t.Errorf("unknown state: %v, want EINVALID", err)
	}

	t.Run("PurgeRefusesUnfinished", func(t *testing.T) {
		for _, f := range []memory.JobFilter{{}, {States: []string{memory.JobLeased}}, {States: []string{memory.JobDead, memory.JobQueued}}} {
			if n, err := s.Jobs.PurgeJobs(ctx, f); memory.ErrorCode(err) != memory.EINVALID || n != 0 {
				t.Errorf("PurgeJobs(%+v) = %d, %v, want EINVALID", f, n, err)
			}
		}
		if got := find(memory.JobFilter{}); len(got) != 5 {
			t.Errorf("a refused purge deleted jobs: %v left", got)
		}
	})
	t.Run("PurgeOldDead", func(t *testing.T) {
		n, err := s.Jobs.PurgeJobs(ctx, memory.JobFilter{States: []string{memory.JobDead}, UpdatedBefore: clock.Now().Add(-30 * 24 * time.Hour)})
		if err != nil || n != 1 {
			t.Fatalf("purge of old dead jobs = %d, %v, want 1", n, err)
		}
		if got := find(memory.JobFilter{}); !slices.Equal(got, []int64{deadG1, runningG1, dm, doneG1}) {
			t.Errorf("after the purge: %v", got)
		}
	})
	t.Run("PurgeGuildDone", func(t *testing.T) {
		n, err := s.Jobs.PurgeJobs(ctx, memory.JobFilter{States: []string{memory.JobDone}, GuildID: "g1"})
		if err != nil || n != 1 {
			t.Fatalf("purge of g1's done jobs = %d, %v, want 1", n, err)
		}
		if _, err := s.Jobs.GetJob(ctx, doneG1); memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Errorf("purged job still there: %v", err)
		}
	})
}

// TestRequeueRefusesLiveJobsInWords: the refusal names the job's state as people say it.
func TestRequeueRefusesLiveJobsInWords(t *testing.T) {
	s, _ := jobStore(t)
	id := enqueueIn(t, s, "g1", "c1")
	err := s.Jobs.Requeue(t.Context(), id)
	if memory.ErrorCode(err) != memory.ECONFLICT || memory.ErrorMessage(err) != "Job #1 is waiting to run, not dead; only dead jobs can be requeued." {
		t.Fatalf("requeue of a queued job: %v", err)
	}
	mustLease(t, s, "w")
	if err := s.Jobs.Requeue(t.Context(), id); memory.ErrorMessage(err) != "Job #1 is running, not dead; only dead jobs can be requeued." {
		t.Fatalf("requeue of a running job: %v", err)
	}
}
