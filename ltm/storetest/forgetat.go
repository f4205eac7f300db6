package storetest

import (
	"errors"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// testForgetAt: a forget of memories each at the version a person saw forgets them all,
// audited; when any changed since (an edit) or went (a forget), it forgets none, and says
// the memory changed since.
func testForgetAt(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	save := func(content string) *memory.Memory {
		return mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content})
	}
	a, b, c := save("The raid starts at nine"), save("The wiki lives on the forum"), save("Bring snacks on Friday")
	actor := memory.UserActor("u1")

	edited := "The raid starts at ten"
	if _, err := s.Memories.Modify(ctx, owner, b.ID, memory.Change{Content: &edited}, actor); err != nil {
		t.Fatal(err)
	}
	_, err := s.Memories.ForgetAt(ctx, owner, map[int64]int{a.ID: a.Version, b.ID: b.Version}, actor, "bulk")
	if !errors.Is(err, memory.ErrChangedSince) || memory.ErrorCode(err) != memory.ECONFLICT {
		t.Fatalf("forget at a stale version: %v; want ECONFLICT with ErrChangedSince", err)
	}
	if got, err := s.Memories.Get(ctx, owner, a.ID); err != nil || got.Deleted() {
		t.Fatalf("#%d was forgotten though the batch was refused: %+v %v", a.ID, got, err)
	}

	if _, err := s.Memories.Forget(ctx, owner, []int64{c.ID}, actor, "one"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Memories.ForgetAt(ctx, owner, map[int64]int{a.ID: a.Version, c.ID: c.Version}, actor, "bulk")
	if memory.ErrorCode(err) == "" {
		t.Fatal("a forget including a memory already forgotten succeeded")
	}

	done, err := s.Memories.ForgetAt(ctx, owner, map[int64]int{a.ID: a.Version}, actor, "bulk")
	if err != nil || len(done) != 1 || !done[0].Deleted() || done[0].Version != a.Version+1 {
		t.Fatalf("forget at the current version: %+v %v", done, err)
	}
	hist, err := s.Memories.History(ctx, owner, a.ID)
	if err != nil || len(hist) == 0 || hist[len(hist)-1].Action != memory.ActionDelete || hist[len(hist)-1].Actor != actor {
		t.Errorf("history of #%d: %+v %v", a.ID, hist, err)
	}
	_, err = s.Memories.ForgetAt(ctx, owner, nil, actor, "bulk")
	wantCode(t, err, memory.EINVALID)
}
