package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// LifecycleStore gives memories their stored lifecycle states: superseded by a newer memory,
// disputed with another, archived, or active again.
type LifecycleStore interface {
	Supersede(ctx context.Context, owner memory.Owner, old, newer int64, actor memory.Actor, reason string) (*memory.Memory, error)
	Dispute(ctx context.Context, owner memory.Owner, a, b int64, actor memory.Actor, reason string) ([]*memory.Memory, error)
	SetState(ctx context.Context, owner memory.Owner, id int64, state memory.State, actor memory.Actor, reason string) (*memory.Memory, error)
}

func lifecycleOf(t *testing.T, s Stores) LifecycleStore {
	t.Helper()
	if s.Review == nil {
		t.Fatal("the store has no lifecycle states (Stores.Review)")
	}
	return s.Review
}

// found reports whether a search of text in owner's scope (including the given shelved
// states) returns memory id.
func found(t *testing.T, s Stores, owner memory.Owner, text string, id int64, include ...memory.State) bool {
	t.Helper()
	res, err := s.Recall.Search(t.Context(), memory.SearchQuery{Text: text, Owners: []memory.Owner{owner}, Include: include})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(res, func(r memory.SearchResult) bool { return r.Memory.ID == id })
}

// listed is the ids a listing of owner's scope in lifecycle l returns.
func listed(t *testing.T, s Stores, owner memory.Owner, l memory.Lifecycle) []int64 {
	t.Helper()
	ms, _, err := s.Memories.List(t.Context(), owner, memory.ListOptions{Lifecycle: l})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	slices.Sort(ids)
	return ids
}

// testLifecycle: a superseded memory names the memory that replaced it, records the change
// in history with its actor, leaves default search and listing (Include and the lifecycle
// filter bring it back) and comes back with an undo; a disputed pair names each other, stays
// in search, and keeping one ends the dispute of both; an archived memory leaves search
// until it is made active again; past and active are derived from the words' span.
func testLifecycle(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ls := lifecycleOf(t, s)
	ctx := t.Context()
	g1 := memory.ServerOwner("g1")
	old := mustRemember(t, s, server("g1", "Kate lives in Osaka near the river"))
	newer := mustRemember(t, s, server("g1", "Kate moved to Tokyo last spring"))

	sup, err := ls.Supersede(ctx, g1, old.ID, newer.ID, "pipeline", "Kate moved")
	if err != nil {
		t.Fatal(err)
	}
	if sup.State != memory.StateSuperseded || sup.StateRef != newer.ID || sup.LifecycleAt(s.Clock.Now()) != memory.LifecycleSuperseded {
		t.Fatalf("superseded memory reads %q by #%d, want superseded by #%d", sup.State, sup.StateRef, newer.ID)
	}
	if read, _ := s.Memories.Get(ctx, g1, old.ID); read.State != memory.StateSuperseded || read.StateRef != newer.ID {
		t.Fatalf("read back as %q by #%d", read.State, read.StateRef)
	}
	hist, err := s.Memories.History(ctx, g1, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := hist[len(hist)-1]
	var meta struct {
		State []memory.State `json:"state"`
	}
	_ = json.Unmarshal(last.Metadata, &meta)
	if last.Actor != "pipeline" || last.Reason != "Kate moved" || !slices.Equal(meta.State, []memory.State{"", memory.StateSuperseded}) {
		t.Fatalf("history records %+v (state %v), want the pipeline's supersession", last, meta.State)
	}
	if found(t, s, g1, "Kate Osaka river", old.ID) {
		t.Error("default search returned a superseded memory")
	}
	if !found(t, s, g1, "Kate Osaka river", old.ID, memory.StateSuperseded) {
		t.Error("a search including superseded memories missed it")
	}
	if slices.Contains(listed(t, s, g1, ""), old.ID) || !slices.Equal(listed(t, s, g1, memory.LifecycleSuperseded), []int64{old.ID}) {
		t.Errorf("listing: default %v, superseded %v", listed(t, s, g1, ""), listed(t, s, g1, memory.LifecycleSuperseded))
	}
	undone, err := s.Memories.Undo(ctx, g1, old.ID, 0, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if undone.Memory.State != memory.StateActive || undone.Memory.StateRef != 0 || !found(t, s, g1, "Kate Osaka river", old.ID) {
		t.Fatalf("undo left %q by #%d", undone.Memory.State, undone.Memory.StateRef)
	}

	// Dispute: both marked, both still used; keeping one settles both.
	pair, err := ls.Dispute(ctx, g1, old.ID, newer.ID, "pipeline", "unclear which holds")
	if err != nil {
		t.Fatal(err)
	}
	if pair[0].State != memory.StateDisputed || pair[0].StateRef != newer.ID || pair[1].StateRef != old.ID {
		t.Fatalf("dispute left %+v / %+v", pair[0], pair[1])
	}
	if !found(t, s, g1, "Kate Osaka river", old.ID) || !slices.Equal(listed(t, s, g1, memory.LifecycleDisputed), []int64{old.ID, newer.ID}) {
		t.Error("disputed memories must stay in search and list as disputed")
	}
	if _, err := ls.SetState(ctx, g1, newer.ID, memory.StateActive, "u1", "kept"); err != nil {
		t.Fatal(err)
	}
	if got := listed(t, s, g1, memory.LifecycleDisputed); len(got) != 0 {
		t.Errorf("keeping one of the pair left %v disputed", got)
	}

	// Archive and back.
	if _, err := ls.SetState(ctx, g1, old.ID, memory.StateArchived, "u1", ""); err != nil {
		t.Fatal(err)
	}
	if found(t, s, g1, "Kate Osaka river", old.ID) || !found(t, s, g1, "Kate Osaka river", old.ID, memory.StateArchived) {
		t.Error("an archived memory must leave default search and come back with include")
	}
	if _, err := ls.SetState(ctx, g1, old.ID, memory.StateActive, "u1", ""); err != nil {
		t.Fatal(err)
	}
	if !found(t, s, g1, "Kate Osaka river", old.ID) {
		t.Error("a memory taken out of the archive must be found again")
	}

	// Past and active come from the span: the clock starts on Sunday 1 March 2026.
	plan := mustRemember(t, s, server("g1", "The raid is tomorrow evening"))
	if !slices.Contains(listed(t, s, g1, memory.LifecycleActive), plan.ID) || slices.Contains(listed(t, s, g1, memory.LifecyclePast), plan.ID) {
		t.Error("an upcoming plan must list as active")
	}
	s.Clock.Advance(72 * 3600e9)
	if !slices.Equal(listed(t, s, g1, memory.LifecyclePast), []int64{plan.ID}) {
		t.Errorf("past lists %v, want the plan #%d", listed(t, s, g1, memory.LifecyclePast), plan.ID)
	}
}

// testLifecycleVisibility: a memory is superseded or disputed only through a live memory of
// its own scope whose every reader may see it: not by one from a channel its readers may not
// see, not across scopes, not by itself; a state without a memory to name names none.
func testLifecycleVisibility(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ls := lifecycleOf(t, s)
	ctx := t.Context()
	g1 := memory.ServerOwner("g1")
	w := func(ch string) memory.WriteContext {
		return memory.WriteContext{WriterID: "u1", GuildID: "g1", ChannelID: ch}
	}
	remember := func(ch, content string) *memory.Memory {
		t.Helper()
		m := server("g1", content)
		m.Provenance.ChannelID = ch
		res, err := s.Memories.RememberAs(ctx, w(ch), m, "u1")
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	public := remember("lobby", "The guild bank is open to everyone")
	staff := remember("staff", "The guild bank is closed to new members")
	anywhere := mustRemember(t, s, server("g1", "The guild bank opens on weekends"))
	mine := mustRemember(t, s, personal("u1", "g1", "My bank pin reminder is the cat's birthday"))

	// Staff's words may not tell the lobby that its memory was replaced.
	_, err := ls.Supersede(ctx, g1, public.ID, staff.ID, "pipeline", "")
	wantCode(t, err, memory.EFORBIDDEN)
	_, err = ls.Dispute(ctx, g1, public.ID, staff.ID, "pipeline", "")
	wantCode(t, err, memory.EFORBIDDEN)
	// A memory every reader of the new one may see can be replaced by it.
	if _, err := ls.Supersede(ctx, g1, anywhere.ID, staff.ID, "pipeline", ""); err != nil {
		t.Fatalf("a memory learned in no channel is seen by every reader of a staff memory: %v", err)
	}
	_, err = ls.Supersede(ctx, g1, public.ID, mine.ID, "pipeline", "")
	wantCode(t, err, memory.ENOTFOUND)
	_, err = ls.Supersede(ctx, g1, public.ID, public.ID, "pipeline", "")
	wantCode(t, err, memory.EINVALID)
	_, err = ls.SetState(ctx, g1, public.ID, memory.StateSuperseded, "u1", "")
	wantCode(t, err, memory.EINVALID)
	_, err = ls.SetState(ctx, g1, public.ID, "gone", "u1", "")
	wantCode(t, err, memory.EINVALID)
	if read, _ := s.Memories.Get(ctx, g1, public.ID); read.State != memory.StateActive || read.Version != public.Version {
		t.Fatalf("refused changes changed #%d: %+v", public.ID, read)
	}
}

// testPipelineReplace: the pipeline's SUPERSEDE keeps the fact as a new memory and marks the
// target superseded by it; DISPUTE marks both disputed with each other; a pinned target is
// blocked, a server target without the right goes to review, a target another guild holds
// is skipped without being named, and a fact whose readers may not all see the target is
// kept while the target stays as it was and the proposal waits for review.
func testPipelineReplace(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	f := factsOf(t, s)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	inChannel := func(ch, content string) memory.Memory {
		m := server("g1", content)
		m.Provenance.ChannelID = ch
		return m
	}
	home := mustRemember(t, s, inChannel("", "Katherine's home is Osaka"))
	leader := mustRemember(t, s, inChannel("", "The raid leader is Mika"))
	rules := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The rules are pinned", Pinned: true})
	guarded := mustRemember(t, s, inChannel("", "The treasurer is Kenji"))
	staff := mustRemember(t, s, inChannel("staff", "The bank password rotates on Mondays"))
	elsewhere := mustRemember(t, s, server("g2", "Another guild's plan"))
	replace := func(action memory.ProposalAction, target int64, content string, editor bool) memory.Proposal {
		return memory.Proposal{Action: action, Owner: g, TargetID: target, Reason: "changed", MayEditServer: editor,
			Memory: memory.Memory{Content: content, Confidence: 0.9, Provenance: memory.Provenance{ChannelID: "c1"}}}
	}
	out := mustApply(t, f, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", Proposals: []memory.Proposal{
		replace(memory.ProposeSupersede, home.ID, "Kate relocated to Tokyo", true),
		replace(memory.ProposeDispute, leader.ID, "The raid leader is Ren", true),
		replace(memory.ProposeSupersede, rules.ID, "The rules changed entirely", true),
		replace(memory.ProposeSupersede, guarded.ID, "The treasurer is Aiko", false),
		replace(memory.ProposeSupersede, staff.ID, "The bank password rotates on Fridays", true),
		replace(memory.ProposeSupersede, elsewhere.ID, "The plan moved", true),
	}})
	want := []memory.Action{memory.ActionCreate, memory.ActionCreate, memory.ActionBlock, memory.ActionReview, memory.ActionCreate, memory.ActionSkip}
	for i, o := range out {
		if o.Action != want[i] {
			t.Errorf("proposal %d: %s (%s), want %s", i, o.Action, o.Note, want[i])
		}
	}
	get := func(owner memory.Owner, id int64) *memory.Memory {
		t.Helper()
		m, err := s.Memories.Get(ctx, owner, id)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := get(g, home.ID); m.State != memory.StateSuperseded || m.StateRef != out[0].MemoryID {
		t.Errorf("superseded target: %q by #%d, want by #%d", m.State, m.StateRef, out[0].MemoryID)
	}
	if m := get(g, out[1].MemoryID); m.State != memory.StateDisputed || m.StateRef != leader.ID {
		t.Errorf("disputing memory: %q with #%d", m.State, m.StateRef)
	}
	if m := get(g, leader.ID); m.State != memory.StateDisputed || m.StateRef != out[1].MemoryID {
		t.Errorf("disputed target: %q with #%d", m.State, m.StateRef)
	}
	for _, m := range []*memory.Memory{rules, guarded, staff} {
		if got := get(g, m.ID); got.State != memory.StateActive || got.Version != m.Version {
			t.Errorf("#%d changed: %+v", m.ID, got)
		}
	}
	if m := get(g, out[4].MemoryID); m.Content != "The bank password rotates on Fridays" || m.State != memory.StateActive {
		t.Errorf("the fact said where the target is hidden: %+v", m)
	}
	if got := get(memory.ServerOwner("g2"), elsewhere.ID); got.Version != elsewhere.Version {
		t.Error("another guild's memory changed")
	}
}
