package storetest

import (
	"context"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// ReviewQueue lists what waits for a person and settles it.
type ReviewQueue interface {
	Queue(ctx context.Context, owner memory.Owner, aud *memory.Audience, limit, offset int) ([]memory.ReviewItem, int, error)
	Resolve(ctx context.Context, owner memory.Owner, ref string, choice memory.ReviewChoice, text string, actor memory.Actor, aud *memory.Audience) ([]*memory.Memory, error)
}

func reviewOf(t *testing.T, s Stores) ReviewQueue {
	t.Helper()
	q, ok := s.Review.(ReviewQueue)
	if !ok {
		t.Fatal("the store has no review queue (Queue, Resolve)")
	}
	return q
}

// queueRefs lists the refs and kinds of owner's queue under aud.
func queueOf(t *testing.T, q ReviewQueue, owner memory.Owner, aud *memory.Audience) map[memory.ReviewKind]memory.ReviewItem {
	t.Helper()
	items, total, err := q.Queue(t.Context(), owner, aud, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != len(items) {
		t.Fatalf("queue total %d, %d items", total, len(items))
	}
	out := map[memory.ReviewKind]memory.ReviewItem{}
	for _, it := range items {
		if _, dup := out[it.Kind]; dup {
			t.Fatalf("two %s items: %+v", it.Kind, items)
		}
		out[it.Kind] = it
	}
	return out
}

// testReviewQueue: a disputed pair, a pair the contradiction screen flagged on both memories
// and a change the pipeline could not make wait as one item each, in their scope only, and
// only for an audience that may see all they show; keep, replace, merge and forget settle
// them through the versioned write path, and a settled or hidden item is not found.
func testReviewQueue(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	f := factsOf(t, s)
	rq := reviewOf(t, s)
	ls := lifecycleOf(t, s)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	lobby := &memory.Audience{Channels: map[string]bool{"lobby": true}}
	inChannel := func(ch, content string) *memory.Memory {
		m := server("g1", content)
		m.Provenance.ChannelID = ch
		return mustRemember(t, s, m)
	}
	mika := inChannel("lobby", "The raid leader is Mika")
	ren := inChannel("lobby", "The raid leader is Ren")
	if _, err := ls.Dispute(ctx, g, mika.ID, ren.ID, "pipeline", "two leaders"); err != nil {
		t.Fatal(err)
	}
	jazz := inChannel("lobby", "The guild likes jazz music a lot")
	treasurer := inChannel("lobby", "The treasurer is Kenji")
	secretA := inChannel("staff", "The staff key is under the mat")
	secretB := inChannel("staff", "The staff key is in the drawer")
	if _, err := ls.Dispute(ctx, g, secretA.ID, secretB.ID, "pipeline", "two places"); err != nil {
		t.Fatal(err)
	}
	out := mustApply(t, f, memory.PipelineBatch{GuildID: "g1", ChannelID: "lobby", Proposals: []memory.Proposal{
		{Action: memory.ProposeAdd, Owner: g, Memory: memory.Memory{Content: "The guild does not like jazz music", Provenance: memory.Provenance{ChannelID: "lobby"}},
			Reason: "new", Contradicts: []int64{jazz.ID}},
		{Action: memory.ProposeUpdate, Owner: g, TargetID: treasurer.ID, Memory: memory.Memory{Content: "The treasurer is Aiko"}, Reason: "changed"},
	}})
	if out[1].Action != memory.ActionReview {
		t.Fatalf("the update without the right was %s", out[1].Action)
	}

	queue := queueOf(t, rq, g, lobby)
	if len(queue) != 3 {
		t.Fatalf("the lobby's queue holds %v, want a disputed pair, a conflict and a proposal", queue)
	}
	if d := queue[memory.ReviewDisputed]; d.Memory.ID != mika.ID || d.Other == nil || d.Other.ID != ren.ID {
		t.Errorf("disputed item %+v", d)
	}
	if c := queue[memory.ReviewConflict]; c.Memory.ID != jazz.ID || c.Other == nil || c.Other.ID != out[0].MemoryID {
		t.Errorf("conflict item %+v", c)
	}
	if p := queue[memory.ReviewProposal]; p.Memory.ID != treasurer.ID || p.Proposed != "The treasurer is Aiko" {
		t.Errorf("proposal item %+v", p)
	}
	// Without an audience (the operator) the staff pair waits too.
	if items, total, err := rq.Queue(ctx, g, nil, 50, 0); err != nil || total != 4 {
		t.Errorf("the whole queue holds %d items (%+v, %v), want 4", total, items, err)
	}
	if items, _, _ := rq.Queue(ctx, memory.PersonalOwner("u1"), nil, 50, 0); len(items) != 0 {
		t.Errorf("a member's queue shows the server's items: %+v", items)
	}
	// The staff pair is not there for the lobby, and cannot be settled from it.
	_, err := rq.Resolve(ctx, g, "d"+itoa(secretA.ID), memory.ReviewKeep, "", "u1", lobby)
	wantCode(t, err, memory.ENOTFOUND)

	// Keep both: the dispute ends.
	if _, err := rq.Resolve(ctx, g, queue[memory.ReviewDisputed].Ref, memory.ReviewKeep, "", "u1", lobby); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{mika.ID, ren.ID} {
		if m, _ := s.Memories.Get(ctx, g, id); m.State != memory.StateActive {
			t.Errorf("#%d is %q after keep", id, m.State)
		}
	}
	// Replace: the newer statement supersedes the older.
	if _, err := rq.Resolve(ctx, g, queue[memory.ReviewConflict].Ref, memory.ReviewReplace, "", "u1", lobby); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Memories.Get(ctx, g, jazz.ID); m.State != memory.StateSuperseded || m.StateRef != out[0].MemoryID {
		t.Errorf("after replace #%d is %q by #%d", jazz.ID, m.State, m.StateRef)
	}
	// Merge: the proposal's target takes the confirmed text, in its history as the member's edit.
	if _, err := rq.Resolve(ctx, g, queue[memory.ReviewProposal].Ref, memory.ReviewMerge, "The treasurer is Aiko since March", "u1", lobby); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Memories.Get(ctx, g, treasurer.ID); m.Content != "The treasurer is Aiko since March" {
		t.Errorf("after merge: %q", m.Content)
	}
	if hist, _ := s.Memories.History(ctx, g, treasurer.ID); hist[len(hist)-1].Actor != "u1" {
		t.Errorf("the merge is recorded as %+v", hist[len(hist)-1])
	}
	if left := queueOf(t, rq, g, lobby); len(left) != 0 {
		t.Errorf("settled items still wait: %+v", left)
	}
	_, err = rq.Resolve(ctx, g, queue[memory.ReviewProposal].Ref, memory.ReviewKeep, "", "u1", lobby)
	wantCode(t, err, memory.ENOTFOUND)
	_, err = rq.Resolve(ctx, g, "d"+itoa(secretA.ID), "shrug", "", "u1", nil)
	wantCode(t, err, memory.EINVALID)
	// Forget: the newer of the staff pair goes, the older is active again.
	if _, err := rq.Resolve(ctx, g, "d"+itoa(secretA.ID), memory.ReviewForget, "", "u1", nil); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Memories.Get(ctx, g, secretA.ID); m.State != memory.StateActive {
		t.Errorf("the older of a pair is %q after forgetting the newer", m.State)
	}
	if _, err := s.Memories.Get(ctx, g, secretB.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Errorf("the newer of a pair is still live: %v", err)
	}
}
