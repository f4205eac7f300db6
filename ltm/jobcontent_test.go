package ltm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// fact is a person's words as a pipeline checkpoint holds them.
const fact = "Alice is allergic to peanuts"

func checkpointPayload() map[string]any {
	return map[string]any{"guild_id": "g1", "channel_id": "c1",
		"checkpoint": map[string]any{"facts": []string{fact}}}
}

// onlyIDs reports whether a payload holds the job's ids and nothing else.
func onlyIDs(payload []byte) bool {
	var p map[string]any
	return json.Unmarshal(payload, &p) == nil && len(p) == 2 && p["guild_id"] == "g1" && p["channel_id"] == "c1"
}

func leaseWithCheckpoint(t *testing.T, s *ltm.Store, key string, opt memory.EnqueueOptions) *memory.Job {
	t.Helper()
	if _, _, err := s.Jobs.Enqueue(t.Context(), "extract", key, checkpointPayload(), opt); err != nil {
		t.Fatal(err)
	}
	j, err := s.Jobs.Lease(t.Context(), "w-"+key, nil, time.Minute)
	if err != nil || j == nil {
		t.Fatalf("lease: %v", err)
	}
	return j
}

// TestFinishedJobsKeepNoContent: a job that completes, is buried or dies keeps its ids and
// outcome, not the words its checkpoint held, and its error never quotes the payload.
func TestFinishedJobsKeepNoContent(t *testing.T) {
	ctx := t.Context()
	t.Run("Complete", func(t *testing.T) {
		s, _ := jobStore(t)
		j := leaseWithCheckpoint(t, s, "a", memory.EnqueueOptions{})
		if err := s.Jobs.Complete(ctx, j.ID, j.LeaseOwner); err != nil {
			t.Fatal(err)
		}
		if got := mustJob(t, s, j.ID); !onlyIDs(got.Payload) {
			t.Errorf("completed job payload %s, want only its ids", got.Payload)
		}
	})
	t.Run("Bury", func(t *testing.T) {
		s, _ := jobStore(t)
		j := leaseWithCheckpoint(t, s, "a", memory.EnqueueOptions{})
		// What the worker reports for a payload it cannot use: the payload itself.
		if err := s.Jobs.Bury(ctx, j.ID, j.LeaseOwner, fmt.Errorf("bad job payload: %s", j.Payload)); err != nil {
			t.Fatal(err)
		}
		got := mustJob(t, s, j.ID)
		if !onlyIDs(got.Payload) || got.LastError != "bad job payload" {
			t.Errorf("buried job: payload %s, error %q", got.Payload, got.LastError)
		}
	})
	t.Run("FailKeepsCheckpointUntilDead", func(t *testing.T) {
		s, _ := jobStore(t)
		j := leaseWithCheckpoint(t, s, "a", memory.EnqueueOptions{MaxAttempts: 2})
		if _, err := s.Jobs.Fail(ctx, j.ID, j.LeaseOwner, errors.New("provider down"), 0); err != nil {
			t.Fatal(err)
		}
		if got := mustJob(t, s, j.ID); !strings.Contains(string(got.Payload), fact) {
			t.Fatalf("a job that will retry lost its checkpoint: %s", got.Payload)
		}
		j = mustLease(t, s, "w2")
		cause := fmt.Errorf("model output unusable: {\"facts\":[%q]}", fact)
		if dead, err := s.Jobs.Fail(ctx, j.ID, j.LeaseOwner, cause, 0); err != nil || !dead {
			t.Fatalf("fail: dead %v, %v", dead, err)
		}
		got := mustJob(t, s, j.ID)
		if !onlyIDs(got.Payload) || strings.Contains(got.LastError, "peanuts") || got.LastError != "model output unusable" {
			t.Errorf("dead job: payload %s, error %q", got.Payload, got.LastError)
		}
	})
	t.Run("ReapedToDead", func(t *testing.T) {
		s, clock := jobStore(t)
		j := leaseWithCheckpoint(t, s, "a", memory.EnqueueOptions{MaxAttempts: 1})
		clock.Advance(2 * time.Minute)
		if res, err := s.Jobs.ReapStale(ctx); err != nil || res.Dead != 1 {
			t.Fatalf("reap: %+v %v", res, err)
		}
		if got := mustJob(t, s, j.ID); !onlyIDs(got.Payload) {
			t.Errorf("job dead by expired lease: payload %s", got.Payload)
		}
	})
}

// TestPrivacySwitchClearsCheckpoints: switching to partial or full privacy leaves no
// extracted facts in unfinished jobs, and a running job cannot write its checkpoint back.
func TestPrivacySwitchClearsCheckpoints(t *testing.T) {
	ctx := t.Context()
	for _, level := range []memory.Privacy{memory.PrivacyPartial, memory.PrivacyFull} {
		t.Run(string(level), func(t *testing.T) {
			s, _ := jobStore(t)
			running := leaseWithCheckpoint(t, s, "running", memory.EnqueueOptions{})
			if err := s.Jobs.Heartbeat(ctx, running.ID, running.LeaseOwner, time.Minute, checkpointPayload()); err != nil {
				t.Fatal(err)
			}
			queued, _, err := s.Jobs.Enqueue(ctx, "extract", "queued", checkpointPayload(), memory.EnqueueOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Settings.SetPrivacy(ctx, "alice", memory.PrivacyNormal); err != nil {
				t.Fatal(err)
			}
			if got := mustJob(t, s, queued); !strings.Contains(string(got.Payload), fact) {
				t.Fatal("switching to normal privacy cleared checkpoints")
			}
			if err := s.Settings.SetPrivacy(ctx, "alice", level); err != nil {
				t.Fatal(err)
			}
			for _, id := range []int64{queued, running.ID} {
				got := mustJob(t, s, id)
				if !onlyIDs(got.Payload) || got.State != memory.JobQueued || got.Attempts != 0 {
					t.Errorf("job %d after the switch: %+v", id, got)
				}
			}
			err = s.Jobs.Heartbeat(ctx, running.ID, running.LeaseOwner, time.Minute, checkpointPayload())
			if !errors.Is(err, memory.ErrLeaseLost) {
				t.Errorf("a job running during the switch could still write its checkpoint: %v", err)
			}
		})
	}
}

// TestPurgeTakesHistoryText: when retention purges a forgotten memory, its history rows
// stay as a record of what happened but without the text.
func TestPurgeTakesHistoryText(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	owner := memory.PersonalOwner("alice")
	res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopePersonal, UserID: "alice", Content: fact}, "user:alice")
	if err != nil {
		t.Fatal(err)
	}
	edited := fact + " and shellfish"
	if _, err := s.Memories.Modify(ctx, owner, res.Memory.ID, memory.Change{Content: &edited, Reason: "she told me about shellfish"}, "user:alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memories.Forget(ctx, owner, []int64{res.Memory.ID}, "user:alice", ""); err != nil {
		t.Fatal(err)
	}
	clock.Advance(s.RecoverWindow + time.Hour)
	if r, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{}); err != nil || r.Tombstones != 1 {
		t.Fatalf("retention: %+v %v", r, err)
	}
	hist, err := s.Memories.History(ctx, owner, res.Memory.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 4 || hist[3].Action != memory.ActionPurge {
		t.Fatalf("history after purge: %+v", hist)
	}
	for _, ev := range hist {
		if ev.OldContent != "" || ev.NewContent != "" || (ev.Reason != "" && ev.Action != memory.ActionPurge) {
			t.Errorf("history row %d of a purged memory keeps text: %+v", ev.ID, ev)
		}
	}
}

// TestRetentionDropsOldFences: a forget fence only needs to outlive the jobs running when
// it was set; after a day retention removes it, and with it the member's id.
func TestRetentionDropsOldFences(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	if err := s.Memories.FenceForgotten(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(23 * time.Hour)
	if r, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{}); err != nil || r.Fences != 0 {
		t.Fatalf("retention after 23 h: %+v %v", r, err)
	}
	clock.Advance(2 * time.Hour)
	if r, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{}); err != nil || r.Fences != 1 {
		t.Fatalf("retention after 25 h: %+v %v", r, err)
	}
}
