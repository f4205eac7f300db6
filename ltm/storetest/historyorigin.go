package storetest

import (
	"fmt"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// testHistoryOrigins: every history row records where each of its texts was said, apart
// for the old and new side: a creation and a forget and recover the memory's channel; a
// pipeline update from another channel the old and the new channel of the move, and the
// undo that moves it back the reverse; a proposal the batch's channel for its words and
// the target's for what the target said; a "may contradict" row each memory's own; a
// pipeline deletion the channel it was decided in. A member who can view only the memory's
// channel sees those rows' texts only where every origin is theirs to read.
func testHistoryOrigins(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	f := factsOf(t, s)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	general, mods := &memory.Origin{GuildID: "g1", ChannelID: "general"}, &memory.Origin{GuildID: "g1", ChannelID: "mods"}
	inChannel := func(channel, content string) memory.Memory {
		m := server("g1", content)
		m.Provenance.ChannelID = channel
		return m
	}
	raid := mustRemember(t, s, inChannel("general", "Raid night is Tuesday"))
	bans := mustRemember(t, s, inChannel("mods", "The ban list lives in the mod wiki"))
	doomed := mustRemember(t, s, inChannel("general", "The guild bank is open to all"))

	cursors := map[string]int64{}
	batch := func(channel string, proposals ...memory.Proposal) []memory.ProposalOutcome {
		t.Helper()
		from := cursors[channel]
		cursors[channel] = from + 1
		return mustApply(t, f, memory.PipelineBatch{GuildID: "g1", ChannelID: channel, CursorFrom: from, CursorTo: from + 1,
			Proposals: proposals})
	}
	batch("mods", memory.Proposal{Action: memory.ProposeUpdate, Owner: g, TargetID: raid.ID, MayEditServer: true,
		Memory: memory.Memory{Content: "Raid night moved to Thursday for the mods"}, Reason: "the mods said so"})
	if _, err := s.Memories.Undo(ctx, g, raid.ID, 0, "user:1"); err != nil {
		t.Fatalf("undo of the move: %v", err)
	}
	batch("mods", memory.Proposal{Action: memory.ProposeUpdate, Owner: g, TargetID: raid.ID, Record: memory.ActionShadow,
		Memory: memory.Memory{Content: "Raid night is secretly cancelled"}, Reason: "shadow"})
	added := batch("general", memory.Proposal{Action: memory.ProposeAdd, Owner: g, Reason: "new",
		Memory:      memory.Memory{Content: "Bans are listed in the pinned post", Provenance: memory.Provenance{ChannelID: "general"}},
		Contradicts: []int64{bans.ID}})
	batch("mods", memory.Proposal{Action: memory.ProposeDelete, Owner: g, TargetID: doomed.ID, MayEditServer: true,
		Reason: "the mods closed the bank"})
	if _, err := s.Memories.Forget(ctx, g, []int64{raid.ID}, "user:1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memories.Recover(ctx, g, raid.ID, 0, "user:1"); err != nil {
		t.Fatal(err)
	}

	type want struct {
		action   memory.Action
		old, new *memory.Origin
		shown    bool // to a member who can view #general only
	}
	check := func(id int64, wants []want) {
		t.Helper()
		evs, err := s.Memories.History(ctx, g, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != len(wants) {
			t.Fatalf("memory #%d has %d history rows, want %d: %+v", id, len(evs), len(wants), evs)
		}
		member := &memory.Audience{Channels: map[string]bool{"general": true}}
		for i, w := range wants {
			ev := evs[i]
			if ev.Action != w.action || origin(ev.OldOrigin) != origin(w.old) || origin(ev.NewOrigin) != origin(w.new) {
				t.Errorf("memory #%d row %d: %s old %s new %s, want %s old %s new %s", id, i, ev.Action,
					origin(ev.OldOrigin), origin(ev.NewOrigin), w.action, origin(w.old), origin(w.new))
			}
			shown, withheld := ev.ShownTo(member)
			if withheld == w.shown {
				t.Errorf("memory #%d row %d (%s): withheld %v from a #general member, want %v", id, i, ev.Action, withheld, !w.shown)
			}
			if withheld && (shown.OldContent != "" || shown.NewContent != "" || shown.Reason != "" || shown.Version != ev.Version) {
				t.Errorf("memory #%d row %d: a withheld row keeps text: %+v", id, i, shown)
			}
			if operator, hidden := ev.ShownTo(nil); hidden || operator.NewContent != ev.NewContent {
				t.Errorf("memory #%d row %d: the operator's view withholds text", id, i)
			}
		}
	}
	check(raid.ID, []want{
		{memory.ActionCreate, nil, general, true},
		{memory.ActionUpdate, general, mods, false}, // the pipeline moved it to #mods
		{memory.ActionUpdate, mods, general, false}, // the undo moved it back
		{memory.ActionShadow, general, mods, false}, // a proposal's words from #mods
		{memory.ActionDelete, general, nil, true},
		{memory.ActionRecover, nil, general, true},
	})
	check(bans.ID, []want{
		{memory.ActionCreate, nil, mods, false},
		{memory.ActionReview, mods, general, false},
	})
	check(added[0].MemoryID, []want{
		{memory.ActionCreate, nil, general, true},
		{memory.ActionReview, general, mods, false}, // quotes the #mods memory
	})
	check(doomed.ID, []want{
		{memory.ActionCreate, nil, general, true},
		{memory.ActionDelete, general, mods, false}, // decided, and its reason said, in #mods
	})
}

func origin(o *memory.Origin) string {
	if o == nil {
		return "unknown"
	}
	return fmt.Sprintf("%s/%s", o.GuildID, o.ChannelID)
}
