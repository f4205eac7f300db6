package ltm_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

func addProposal(owner memory.Owner, content string, meta map[string]any) memory.Proposal {
	return memory.Proposal{Action: memory.ProposeAdd, Owner: owner, Memory: memory.Memory{Content: content, Confidence: 0.9},
		Reason: "new", Metadata: meta}
}

func mustApply(t *testing.T, s *ltm.Store, b memory.PipelineBatch) []memory.ProposalOutcome {
	t.Helper()
	out, err := s.Facts.ApplyPipelineBatch(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(b.Proposals) {
		t.Fatalf("%d outcomes for %d proposals", len(out), len(b.Proposals))
	}
	return out
}

func scopeHistory(t *testing.T, s *ltm.Store, owner memory.Owner) []memory.HistoryEvent {
	t.Helper()
	evs, err := s.Memories.ScopeHistory(t.Context(), owner, 500)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestApplyPipelineBatchActions(t *testing.T) {
	s := testkit.MustOpenStore(t)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	pinned := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The server rules are pinned", Pinned: true})
	editable := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raid night is Tuesday"})
	doomed := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The guild bank is open to all"})
	other := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Another guild's memory"})

	out := mustApply(t, s, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorFrom: 0, CursorTo: 7, Proposals: []memory.Proposal{
		addProposal(g, "Movie night is on Saturdays", map[string]any{"job": 1, "fact": 0}),
		addProposal(g, "raid night is tuesday.", nil),
		{Action: memory.ProposeUpdate, Owner: g, TargetID: editable.ID, Memory: memory.Memory{Content: "Raid night moved to Wednesday"}, Reason: "moved", Metadata: map[string]any{"fact": 2}, MayEditServer: true},
		{Action: memory.ProposeDelete, Owner: g, TargetID: doomed.ID, Reason: "bank closed", MayEditServer: true},
		{Action: memory.ProposeUpdate, Owner: g, TargetID: pinned.ID, Memory: memory.Memory{Content: "The rules changed somehow"}, Reason: "x"},
		{Action: memory.ProposeDelete, Owner: g, TargetID: other.ID, Reason: "another scope"},
		{Action: memory.ProposeNone, Owner: g, TargetID: editable.ID, Memory: memory.Memory{Content: "Raid night is Wednesday"}, Reason: "known"},
		{Action: memory.ProposeAdd, Owner: g, Memory: memory.Memory{Content: "Shadowed fact about the raid"}, Record: memory.ActionShadow, Reason: "shadow"},
	}})
	want := []memory.Action{memory.ActionCreate, memory.ActionDedup, memory.ActionUpdate, memory.ActionDelete,
		memory.ActionBlock, memory.ActionSkip, memory.ActionSkip, memory.ActionShadow}
	for i, o := range out {
		if o.Action != want[i] {
			t.Errorf("proposal %d: %s (%s), want %s", i, o.Action, o.Note, want[i])
		}
	}
	if out[1].MemoryID != editable.ID {
		t.Errorf("dedup points at #%d, want #%d", out[1].MemoryID, editable.ID)
	}
	if out[5].MemoryID != 0 {
		t.Errorf("a row of g1 points at g2's memory #%d", out[5].MemoryID)
	}
	if m, err := s.Memories.Get(ctx, memory.ServerOwner("g2"), other.ID); err != nil || m.Deleted() {
		t.Fatalf("another guild's memory was touched: %v %v", m, err)
	}
	if m, _ := s.Memories.Get(ctx, g, pinned.ID); m.Content != "The server rules are pinned" {
		t.Fatalf("pinned memory changed: %q", m.Content)
	}
	created, err := s.Memories.Get(ctx, g, out[0].MemoryID)
	if err != nil || created.Source != memory.SourcePipeline {
		t.Fatalf("created memory %+v %v", created, err)
	}
	if cur, _ := s.Transcripts.ExtractionCursor(ctx, "g1", "c1"); cur != 7 {
		t.Fatalf("cursor %d, want 7", cur)
	}

	t.Run("HistoryCarriesJobAndFact", func(t *testing.T) {
		evs, err := s.Memories.History(ctx, g, out[0].MemoryID)
		if err != nil || len(evs) != 1 {
			t.Fatalf("history %v %v", evs, err)
		}
		var meta map[string]any
		if err := json.Unmarshal(evs[0].Metadata, &meta); err != nil || meta["job"] != 1.0 || meta["fact"] != 0.0 {
			t.Fatalf("create metadata %s", evs[0].Metadata)
		}
		if evs[0].Actor != memory.ActorPipeline {
			t.Fatalf("actor %q", evs[0].Actor)
		}
	})
	t.Run("UpdateIsVersionedAndRevertible", func(t *testing.T) {
		evs, err := s.Memories.History(ctx, g, editable.ID)
		if err != nil {
			t.Fatal(err)
		}
		var upd *memory.HistoryEvent
		for i := range evs {
			if evs[i].Action == memory.ActionUpdate {
				upd = &evs[i]
			}
		}
		if upd == nil || upd.OldContent != "Raid night is Tuesday" || upd.NewContent != "Raid night moved to Wednesday" || upd.Version != 2 {
			t.Fatalf("update history %+v", upd)
		}
		m, err := s.Memories.Revert(ctx, g, editable.ID, upd.ID, "user:1")
		if err != nil || m.Content != "Raid night is Tuesday" || m.Version != 3 {
			t.Fatalf("revert: %+v %v", m, err)
		}
	})
	t.Run("DeleteIsRecoverable", func(t *testing.T) {
		m, err := s.Memories.Recover(ctx, g, doomed.ID, 0, "user:1")
		if err != nil || m.Content != "The guild bank is open to all" {
			t.Fatalf("recover: %+v %v", m, err)
		}
	})
}

func TestApplyPipelineBatchIsAllOrNothing(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	id := mustEnqueue(t, s, "extract", "g1/c1", memory.EnqueueOptions{})
	j := mustLease(t, s, "w1")
	batch := memory.PipelineBatch{JobID: id, LeaseOwner: "w1", GuildID: "g1", ChannelID: "c1", CursorFrom: 0, CursorTo: 3,
		Proposals: []memory.Proposal{addProposal(g, "The first fact of the batch", nil)}}

	t.Run("CursorMoved", func(t *testing.T) {
		b := batch
		b.CursorFrom = 1
		if _, err := s.Facts.ApplyPipelineBatch(ctx, b); !errors.Is(err, memory.ErrCursorMoved) {
			t.Fatalf("err %v, want ErrCursorMoved", err)
		}
	})
	t.Run("LeaseLost", func(t *testing.T) {
		b := batch
		b.LeaseOwner = "someone-else"
		if _, err := s.Facts.ApplyPipelineBatch(ctx, b); !errors.Is(err, memory.ErrLeaseLost) {
			t.Fatalf("err %v, want ErrLeaseLost", err)
		}
	})
	if _, n, _ := s.Memories.List(ctx, g, memory.ListOptions{}); n != 0 {
		t.Fatalf("a refused batch wrote %d memories", n)
	}
	if evs := scopeHistory(t, s, g); len(evs) != 0 {
		t.Fatalf("a refused batch wrote history: %+v", evs)
	}
	out := mustApply(t, s, batch)
	if out[0].Action != memory.ActionCreate {
		t.Fatalf("outcome %+v", out[0])
	}
	if got := mustJob(t, s, j.ID); got.State != memory.JobDone {
		t.Fatalf("job state %s, want done in the same transaction", got.State)
	}
	t.Run("ReplayAfterCommitIsRefused", func(t *testing.T) {
		clock.Advance(time.Hour)
		b := batch
		b.LeaseOwner = ""
		if _, err := s.Facts.ApplyPipelineBatch(ctx, b); !errors.Is(err, memory.ErrCursorMoved) {
			t.Fatalf("replay: %v, want ErrCursorMoved", err)
		}
		if _, n, _ := s.Memories.List(ctx, g, memory.ListOptions{}); n != 1 {
			t.Fatalf("%d memories after a replay, want 1", n)
		}
	})
}

func TestApplyPipelineBatchPrivacyAndReview(t *testing.T) {
	s := testkit.MustOpenStore(t)
	ctx := t.Context()
	u := memory.PersonalOwner("u1")
	old := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", GuildID: "g1", Content: "Alice likes jazz music a lot"})
	out := mustApply(t, s, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorTo: 2, Proposals: []memory.Proposal{
		{Action: memory.ProposeAdd, Owner: memory.PersonalOwner("u2"), Memory: memory.Memory{Content: "Bob's secret hobby is knitting"},
			Record: memory.ActionBlock, Redact: true, Reason: "privacy: partial"},
		{Action: memory.ProposeAdd, Owner: u, Memory: memory.Memory{Content: "Alice does not like jazz music", GuildID: "g1"},
			Reason: "new", Contradicts: []int64{old.ID}},
	}})
	blocked := scopeHistory(t, s, memory.PersonalOwner("u2"))
	if len(blocked) != 1 || blocked[0].NewContent != "" || blocked[0].OldContent != "" || blocked[0].Action != memory.ActionBlock {
		t.Fatalf("redacted row %+v", blocked)
	}
	if _, n, _ := s.Memories.List(ctx, memory.PersonalOwner("u2"), memory.ListOptions{}); n != 0 {
		t.Fatal("a blocked proposal wrote a memory")
	}
	for _, id := range []int64{old.ID, out[1].MemoryID} {
		evs, err := s.Memories.History(ctx, u, id)
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		if last.Action != memory.ActionReview {
			t.Fatalf("memory #%d: last history %s, want review_needed", id, last.Action)
		}
	}
}

func TestExtractionBacklog(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	for i, role := range []string{memory.RoleUser, memory.RoleAssistant, memory.RoleUser} {
		clock.Advance(time.Minute)
		if _, err := s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: role, Content: "turn"}); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	if _, err := s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c2", UserID: "u1", Role: memory.RoleUser, Content: "x"}); err != nil {
		t.Fatal(err)
	}
	b, err := s.Transcripts.ExtractionBacklog(ctx, "g1", "c1")
	if err != nil || b.Turns != 3 || b.UserTurns != 2 || !b.LastAt.Equal(jobsEpoch.Add(3*time.Minute)) {
		t.Fatalf("backlog %+v %v", b, err)
	}
	chans, err := s.Transcripts.ChannelsWithBacklog(ctx, jobsEpoch, 10)
	if err != nil || len(chans) != 2 {
		t.Fatalf("channels %+v %v", chans, err)
	}
	mustApply(t, s, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorTo: 2})
	if b, _ := s.Transcripts.ExtractionBacklog(ctx, "g1", "c1"); b.Cursor != 2 || b.Turns != 1 || b.UserTurns != 1 {
		t.Fatalf("backlog after cursor 2: %+v", b)
	}
	mustApply(t, s, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorFrom: 2, CursorTo: 3})
	chans, _ = s.Transcripts.ChannelsWithBacklog(ctx, jobsEpoch, 10)
	if len(chans) != 1 || chans[0].ChannelID != "c2" {
		t.Fatalf("channels after extraction %+v", chans)
	}
}

func TestTaskRuns(t *testing.T) {
	s, clock := jobStore(t)
	ctx := t.Context()
	if err := s.Jobs.RecordRun(ctx, memory.TaskRun{Name: "work", StartedAt: clock.Now(), FinishedAt: clock.Now(), OK: true, Detail: "done=1"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if err := s.Jobs.RecordRun(ctx, memory.TaskRun{Name: "work", StartedAt: clock.Now(), FinishedAt: clock.Now(), Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Jobs.TaskRuns(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	r := runs[0]
	if r.OK || r.Error != "boom" || r.Runs != 2 || r.Failures != 1 || !r.StartedAt.Equal(clock.Now()) {
		t.Fatalf("run %+v", r)
	}
}

// An UPDATE writes words said in the batch's channel into the memory: from then on the
// memory is used only where that channel's words may be (SPEC §2 channel-aware memory), or
// a private channel's conversation would reach the public channel the memory came from.
func TestApplyPipelineUpdateMovesChannel(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	g := memory.ServerOwner("g1")
	public := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
		Content: "Raid night is Tuesday", Provenance: memory.Provenance{ChannelID: "public"}})
	out := mustApply(t, s, memory.PipelineBatch{GuildID: "g1", ChannelID: "private", CursorFrom: 0, CursorTo: 1, Proposals: []memory.Proposal{
		{Action: memory.ProposeUpdate, Owner: g, TargetID: public.ID, Memory: memory.Memory{Content: "Raid night is Tuesday, mods bring the keys"},
			Reason: "refined", MayEditServer: true},
	}})
	if out[0].Action != memory.ActionUpdate {
		t.Fatalf("outcome = %+v, want an update", out[0])
	}
	m, err := s.Memories.Get(ctx, g, public.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Provenance.ChannelID != "private" {
		t.Fatalf("updated from channel private, the memory still originates in %q", m.Provenance.ChannelID)
	}
}
