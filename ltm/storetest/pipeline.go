package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// FactStore applies the background pipeline's decisions: a job's proposals, the channel's
// extraction cursor and the job's completion in one transaction.
type FactStore interface {
	ApplyPipelineBatch(ctx context.Context, b memory.PipelineBatch) ([]memory.ProposalOutcome, error)
	PrefetchEmbeddings(ctx context.Context, texts []string) error
}

// factsOf returns the store's pipeline writer, or skips the case for a store without one.
func factsOf(t *testing.T, s Stores) FactStore {
	t.Helper()
	if s.Facts == nil {
		t.Skip("the store has no pipeline writer")
	}
	return s.Facts
}

func addProposal(owner memory.Owner, content string, meta map[string]any) memory.Proposal {
	return memory.Proposal{Action: memory.ProposeAdd, Owner: owner, Memory: memory.Memory{Content: content, Confidence: 0.9},
		Reason: "new", Metadata: meta}
}

func mustApply(t *testing.T, f FactStore, b memory.PipelineBatch) []memory.ProposalOutcome {
	t.Helper()
	out, err := f.ApplyPipelineBatch(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(b.Proposals) {
		t.Fatalf("%d outcomes for %d proposals", len(out), len(b.Proposals))
	}
	return out
}

// testPipelineActions: each kind of proposal ends as the rules say (create, dedup, update,
// delete, pinned blocked, another scope's target skipped without pointing at it, another
// origin's target skipped, a server edit without the right sent to review, none, shadow),
// through the versioned write paths, with the job's metadata in history.
func testPipelineActions(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	f := factsOf(t, s)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	pinned := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The server rules are pinned", Pinned: true})
	editable := mustRemember(t, s, server("g1", "Raid night is Tuesday"))
	doomed := mustRemember(t, s, server("g1", "The guild bank is open to all"))
	guarded := mustRemember(t, s, server("g1", "The treasurer is Kenji"))
	other := mustRemember(t, s, server("g2", "Another guild's memory"))
	dmOrigin := mustRemember(t, s, personal("u1", "", "Alice keeps a diary in DMs"))

	out := mustApply(t, f, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorFrom: 0, CursorTo: 7, Proposals: []memory.Proposal{
		addProposal(g, "Movie night is on Saturdays", map[string]any{"job": 1, "fact": 0}),
		addProposal(g, "raid night is tuesday.", nil),
		{Action: memory.ProposeUpdate, Owner: g, TargetID: editable.ID, Memory: memory.Memory{Content: "Raid night moved to Wednesday"},
			Reason: "moved", Metadata: map[string]any{"fact": 2}, MayEditServer: true},
		{Action: memory.ProposeDelete, Owner: g, TargetID: doomed.ID, Reason: "bank closed", MayEditServer: true},
		{Action: memory.ProposeUpdate, Owner: g, TargetID: pinned.ID, Memory: memory.Memory{Content: "The rules changed somehow"}, Reason: "x"},
		{Action: memory.ProposeDelete, Owner: g, TargetID: other.ID, Reason: "another scope"},
		{Action: memory.ProposeNone, Owner: g, TargetID: editable.ID, Memory: memory.Memory{Content: "Raid night is Wednesday"}, Reason: "known"},
		{Action: memory.ProposeAdd, Owner: g, Memory: memory.Memory{Content: "Shadowed fact about the raid"}, Record: memory.ActionShadow, Reason: "shadow"},
		{Action: memory.ProposeDelete, Owner: memory.PersonalOwner("u1"), TargetID: dmOrigin.ID, Reason: "said elsewhere"},
		{Action: memory.ProposeUpdate, Owner: g, TargetID: guarded.ID, Memory: memory.Memory{Content: "The treasurer is Aiko"}, Reason: "no right"},
	}})
	want := []memory.Action{memory.ActionCreate, memory.ActionDedup, memory.ActionUpdate, memory.ActionDelete,
		memory.ActionBlock, memory.ActionSkip, memory.ActionSkip, memory.ActionShadow, memory.ActionSkip, memory.ActionReview}
	for i, o := range out {
		if o.Action != want[i] {
			t.Errorf("proposal %d: %s (%s), want %s", i, o.Action, o.Note, want[i])
		}
	}
	if out[1].MemoryID != editable.ID {
		t.Errorf("dedup points at #%d, want #%d", out[1].MemoryID, editable.ID)
	}
	if out[5].MemoryID != 0 || out[8].MemoryID != 0 {
		t.Errorf("a refused row points at a memory it may not name: #%d, #%d", out[5].MemoryID, out[8].MemoryID)
	}
	if out[9].Note != ltm.NoteNeedsEditor {
		t.Errorf("a server edit without the right: note %q, want %q", out[9].Note, ltm.NoteNeedsEditor)
	}
	for owner, id := range map[memory.Owner]int64{memory.ServerOwner("g2"): other.ID, memory.PersonalOwner("u1"): dmOrigin.ID} {
		if !isLive(t, s, owner, id) {
			t.Errorf("memory #%d of another origin was forgotten", id)
		}
	}
	for id, content := range map[int64]string{pinned.ID: pinned.Content, guarded.ID: guarded.Content} {
		if m, err := s.Memories.Get(ctx, g, id); err != nil || m.Content != content {
			t.Errorf("memory #%d changed: %+v %v", id, m, err)
		}
	}
	created, err := s.Memories.Get(ctx, g, out[0].MemoryID)
	if err != nil || created.Source != memory.SourcePipeline || created.Content != "Movie night is on Saturdays" {
		t.Fatalf("created memory %+v %v", created, err)
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
		if evs[0].Actor != memory.ActorPipeline || evs[0].Action != memory.ActionCreate {
			t.Fatalf("create row %+v", evs[0])
		}
	})
	t.Run("UpdateIsVersioned", func(t *testing.T) {
		m, err := s.Memories.Get(ctx, g, editable.ID)
		if err != nil || m.Content != "Raid night moved to Wednesday" || m.Version != 2 {
			t.Fatalf("updated memory %+v %v", m, err)
		}
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
		if upd == nil || upd.OldContent != "Raid night is Tuesday" || upd.NewContent != m.Content || upd.Version != 2 ||
			upd.Actor != memory.ActorPipeline {
			t.Fatalf("update history %+v", upd)
		}
		var meta map[string]any
		if err := json.Unmarshal(upd.Metadata, &meta); err != nil || meta["fact"] != 2.0 {
			t.Fatalf("update metadata %s", upd.Metadata)
		}
	})
	t.Run("DeleteIsRecoverable", func(t *testing.T) {
		m, err := s.Memories.Recover(ctx, g, doomed.ID, 0, "user:1")
		if err != nil || m.Content != "The guild bank is open to all" {
			t.Fatalf("recover: %+v %v", m, err)
		}
	})
	t.Run("RefusedRowsQuoteNothingOfOtherScopes", func(t *testing.T) {
		for _, ev := range scopeHistoryOf(t, s, g) {
			if ev.OldContent == other.Content || ev.OldContent == dmOrigin.Content || ev.MemoryID == other.ID || ev.MemoryID == dmOrigin.ID {
				t.Fatalf("a row of g1 names a memory of another origin: %+v", ev)
			}
		}
	})
}

// testPipelineAllOrNothing: a batch whose lease was lost, or whose channel cursor moved,
// writes nothing (no memory, no history, no cursor); the batch that applies moves the
// cursor and completes its job in the same transaction, and replaying it is refused.
func testPipelineAllOrNothing(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	f := factsOf(t, s)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	id := mustEnqueue(t, s, "extract", "g1/c1", memory.EnqueueOptions{})
	mustLease(t, s, "w1")
	batch := memory.PipelineBatch{JobID: id, LeaseOwner: "w1", GuildID: "g1", ChannelID: "c1", CursorFrom: 0, CursorTo: 3,
		Proposals: []memory.Proposal{addProposal(g, "The first fact of the batch", nil)}}

	t.Run("CursorMoved", func(t *testing.T) {
		b := batch
		b.CursorFrom = 1
		if _, err := f.ApplyPipelineBatch(ctx, b); !errors.Is(err, memory.ErrCursorMoved) {
			t.Fatalf("err %v, want ErrCursorMoved", err)
		}
	})
	t.Run("LeaseLost", func(t *testing.T) {
		b := batch
		b.LeaseOwner = "someone-else"
		if _, err := f.ApplyPipelineBatch(ctx, b); !errors.Is(err, memory.ErrLeaseLost) {
			t.Fatalf("err %v, want ErrLeaseLost", err)
		}
	})
	if ids := listIDs(t, s, g, memory.ListOptions{}); len(ids) != 0 {
		t.Fatalf("a refused batch wrote memories %v", ids)
	}
	if evs := scopeHistoryOf(t, s, g); len(evs) != 0 {
		t.Fatalf("a refused batch wrote history: %+v", evs)
	}
	if got := mustJob(t, s, id); got.State != memory.JobLeased {
		t.Fatalf("a refused batch left its job %s, want leased", got.State)
	}
	out := mustApply(t, f, batch)
	if out[0].Action != memory.ActionCreate {
		t.Fatalf("outcome %+v", out[0])
	}
	if got := mustJob(t, s, id); got.State != memory.JobDone {
		t.Fatalf("job state %s, want done in the same transaction", got.State)
	}
	t.Run("ReplayIsRefused", func(t *testing.T) {
		b := batch
		b.LeaseOwner = ""
		if _, err := f.ApplyPipelineBatch(ctx, b); !errors.Is(err, memory.ErrCursorMoved) {
			t.Fatalf("replay: %v, want ErrCursorMoved", err)
		}
		if ids := listIDs(t, s, g, memory.ListOptions{}); len(ids) != 1 {
			t.Fatalf("memories after a replay %v, want 1", ids)
		}
	})
	t.Run("NextBatchStartsAtTheCursor", func(t *testing.T) {
		next := mustApply(t, f, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorFrom: 3, CursorTo: 5,
			Proposals: []memory.Proposal{addProposal(g, "The second fact of the channel", nil)}})
		if next[0].Action != memory.ActionCreate {
			t.Fatalf("outcome %+v", next[0])
		}
		// Another channel's cursor is its own.
		mustApply(t, f, memory.PipelineBatch{GuildID: "g1", ChannelID: "c2", CursorFrom: 0, CursorTo: 1})
	})
}

// testPipelineEvidenceAndReview: a created memory is linked to the messages it was learned
// from (deleting the only one forgets it); a redacted proposal's row holds no words; a
// contradiction flags both memories for review; a proposal about a member forgotten after
// the job started writes nothing.
func testPipelineEvidenceAndReview(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	f := factsOf(t, s)
	ctx := t.Context()
	u := memory.PersonalOwner("u1")
	old := mustRemember(t, s, personal("u1", "g1", "Alice likes jazz music a lot"))
	learned := addProposal(memory.ServerOwner("g1"), "The guild picnic is in May", nil)
	learned.Evidence = []memory.MessageRef{{MessageID: "m-picnic", AuthorID: "u1"}}
	out := mustApply(t, f, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorTo: 2, Proposals: []memory.Proposal{
		{Action: memory.ProposeAdd, Owner: memory.PersonalOwner("u2"), Memory: memory.Memory{Content: "Bob's secret hobby is knitting"},
			Record: memory.ActionBlock, Redact: true, Reason: "privacy: partial"},
		{Action: memory.ProposeAdd, Owner: u, Memory: memory.Memory{Content: "Alice does not like jazz music", GuildID: "g1"},
			Reason: "new", Contradicts: []int64{old.ID}},
		learned,
	}})
	t.Run("RedactedRowHoldsNoWords", func(t *testing.T) {
		blocked := scopeHistoryOf(t, s, memory.PersonalOwner("u2"))
		if len(blocked) != 1 || blocked[0].NewContent != "" || blocked[0].OldContent != "" || blocked[0].Action != memory.ActionBlock {
			t.Fatalf("redacted row %+v", blocked)
		}
		if ids := listIDs(t, s, memory.PersonalOwner("u2"), memory.ListOptions{}); len(ids) != 0 {
			t.Fatal("a blocked proposal wrote a memory")
		}
	})
	t.Run("ContradictionFlagsBoth", func(t *testing.T) {
		for _, id := range []int64{old.ID, out[1].MemoryID} {
			evs, err := s.Memories.History(ctx, u, id)
			if err != nil {
				t.Fatal(err)
			}
			if last := evs[len(evs)-1]; last.Action != memory.ActionReview {
				t.Fatalf("memory #%d: last history %s, want review_needed", id, last.Action)
			}
		}
	})
	t.Run("EvidenceLinksTheMessage", func(t *testing.T) {
		res, err := s.Transcripts.DeleteMessages(ctx, "g1", "c1", []string{"m-picnic"})
		if err != nil || len(res.Forgotten) != 1 || res.Forgotten[0].ID != out[2].MemoryID {
			t.Fatalf("deleting the only source = %+v %v, want #%d forgotten", res, err, out[2].MemoryID)
		}
	})
	t.Run("FencedMemberWritesNothing", func(t *testing.T) {
		started := s.Clock.Now()
		mustRemember(t, s, personal("u3", "", "Carol keeps bees"))
		preview, err := s.ForgetMe.PreviewForgetMe(ctx, "u3")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ForgetMe.ConfirmForgetMe(ctx, "u3", preview.Token); err != nil {
			t.Fatal(err)
		}
		about := addProposal(memory.ServerOwner("g1"), "Carol brings honey to the meetups", nil)
		about.Memory.SubjectID = "u3"
		got := mustApply(t, f, memory.PipelineBatch{GuildID: "g1", ChannelID: "c9", CursorTo: 1, StartedAt: started,
			Proposals: []memory.Proposal{about, addProposal(memory.ServerOwner("g1"), "The meetup is on Thursday", nil)}})
		if got[0].Action != memory.ActionBlock || got[0].Note != ltm.NoteFenced || got[1].Action != memory.ActionCreate {
			t.Fatalf("outcomes %+v, want the fenced proposal blocked and the other created", got)
		}
		for _, ev := range scopeHistoryOf(t, s, memory.ServerOwner("g1")) {
			if ev.NewContent == about.Memory.Content {
				t.Fatalf("a fenced proposal left a history row: %+v", ev)
			}
		}
	})
	if err := f.PrefetchEmbeddings(ctx, []string{"anything"}); err != nil {
		t.Fatalf("prefetch without an embedder: %v", err)
	}
}

func scopeHistoryOf(t *testing.T, s Stores, owner memory.Owner) []memory.HistoryEvent {
	t.Helper()
	evs, err := s.Memories.ScopeHistory(t.Context(), owner, 500)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// testPipelineForgetMe: what the pipeline wrote about a member (her own facts, a server
// fact learned only from her message, a proposal about her kept as a shadow row, one sent
// to review) is gone after her forget-me, from every read and (for a store that has files)
// from the bytes of its files; a fact learned from another member stays.
func testPipelineForgetMe(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	f := factsOf(t, s)
	ctx := t.Context()
	const alice, bob, guild = "100000000000000001", "200000000000000002", "300000000000000003"
	aliceMe, srv := memory.PersonalOwner(alice), memory.ServerOwner(guild)
	secret := map[string]string{
		"pipeline-own":    "lemurfalcon8846",
		"pipeline-server": "mongoosetapir1175",
		"pipeline-shadow": "ocelotpuffin9962",
		"pipeline-review": "quetzalbison5527",
		"proposal-words":  "narwhalheron3319",
		"contradicted-by": "pangolinkoala7043",
	}
	survivor := map[string]string{"bob-fact": "survivormarmot2468"}
	reviewed := mustRemember(t, s, server(guild, "The treasurer is Kenji"))
	venue := mustRemember(t, s, server(guild, "The venue is the old library"))
	raid := mustRemember(t, s, server(guild, "The raid is on Friday night"))
	fromAlice := []memory.MessageRef{{MessageID: "m-alice-1", AuthorID: alice}}
	out := mustApply(t, f, memory.PipelineBatch{GuildID: guild, ChannelID: "c1", CursorTo: 3, Proposals: []memory.Proposal{
		{Action: memory.ProposeAdd, Owner: aliceMe, Memory: memory.Memory{Content: "Alice keeps " + secret["pipeline-own"]},
			Evidence: fromAlice},
		{Action: memory.ProposeAdd, Owner: srv, Memory: memory.Memory{Content: "The release is named " + secret["pipeline-server"]},
			Evidence: fromAlice},
		{Action: memory.ProposeAdd, Owner: srv, Record: memory.ActionShadow,
			Memory: memory.Memory{SubjectID: alice, Content: "Alice dislikes " + secret["pipeline-shadow"]}},
		{Action: memory.ProposeUpdate, Owner: srv, TargetID: reviewed.ID, Evidence: fromAlice,
			Memory: memory.Memory{SubjectID: alice, Content: "Alice is the treasurer, says " + secret["pipeline-review"]}},
		{Action: memory.ProposeAdd, Owner: srv, Memory: memory.Memory{Content: "Bob hosts " + survivor["bob-fact"]},
			Evidence: []memory.MessageRef{{MessageID: "m-bob-1", AuthorID: bob}}},
		// Alice's words about no one in particular, for a memory she may not change: the
		// review row on the venue quotes them.
		{Action: memory.ProposeUpdate, Owner: srv, TargetID: venue.ID, Evidence: fromAlice,
			Memory: memory.Memory{Content: "The venue moved to " + secret["proposal-words"]}},
		// A memory of Alice's words that contradicts one that stays: the raid's review row
		// quotes it.
		{Action: memory.ProposeAdd, Owner: srv, Evidence: fromAlice, Contradicts: []int64{raid.ID},
			Memory: memory.Memory{Content: "The raid is not on Friday night " + secret["contradicted-by"]}},
	}})
	want := []memory.Action{memory.ActionCreate, memory.ActionCreate, memory.ActionShadow, memory.ActionReview, memory.ActionCreate,
		memory.ActionReview, memory.ActionCreate}
	for i, o := range out {
		if o.Action != want[i] {
			t.Fatalf("proposal %d: %s (%s), want %s", i, o.Action, o.Note, want[i])
		}
	}
	preview, err := s.ForgetMe.PreviewForgetMe(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ForgetMe.ConfirmForgetMe(ctx, alice, preview.Token); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		owner memory.Owner
		id    int64
	}{{aliceMe, out[0].MemoryID}, {srv, out[1].MemoryID}} {
		_, err := s.Memories.Get(ctx, r.owner, r.id)
		wantCode(t, err, memory.ENOTFOUND)
	}
	for _, owner := range []memory.Owner{aliceMe, srv} {
		for _, ev := range scopeHistoryOf(t, s, owner) {
			for place, word := range secret {
				if strings.Contains(ev.OldContent+ev.NewContent+ev.Reason+string(ev.Metadata), word) {
					t.Errorf("%s: a history row of %s holds %q: %+v", place, owner.Key(), word, ev)
				}
			}
		}
	}
	if !isLive(t, s, srv, out[4].MemoryID) || !isLive(t, s, srv, reviewed.ID) || !isLive(t, s, srv, venue.ID) || !isLive(t, s, srv, raid.ID) {
		t.Error("a fact learned from another member, or the memory under review, was erased")
	}
	if s.Raw != nil {
		t.Run("NoBytesLeft", func(t *testing.T) { scanFiles(t, s.Raw, secret, survivor) })
	}
}
