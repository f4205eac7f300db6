package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// CheckUpgraded901f6da checks a store opened on the database that kioku at commit 901f6da
// wrote (ltm/sqlite/testdata/upgrade/901f6da.sql and its PostgreSQL twin; the commit
// predates release tags): the upgrade kept every memory, edit, forget, setting, turn and
// job, and the memories are found as before; with st.Repairs, the repairs that follow an
// upgrade store the dates the old memories name. Each engine's test loads its dump into a
// fresh database, opens it with this binary (which applies the migrations written since)
// and calls this.
func CheckUpgraded901f6da(t *testing.T, st Stores) {
	t.Helper()
	ctx := context.Background()
	server, personal := memory.ServerOwner("g1"), memory.PersonalOwner("u1")
	contents := func(owner memory.Owner) []string {
		t.Helper()
		mems, _, err := st.Memories.List(ctx, owner, memory.ListOptions{Limit: 50})
		if err != nil {
			t.Fatalf("list %s: %v", owner.Key(), err)
		}
		var out []string
		for _, m := range mems {
			if m.State != memory.StateActive {
				// Every memory stored before lifecycle states existed was active, and the
				// migration's defaults say so without a backfill.
				t.Errorf("memory #%d is %q after the upgrade, want active", m.ID, m.State)
			}
			out = append(out, m.Content)
		}
		slices.Sort(out)
		return out
	}
	if got, want := contents(server), []string{"Board game night is at Kenji's place", "The raid starts at 20:30 on Fridays",
		"東京タワーで月曜日に集合"}; !slices.Equal(got, want) {
		t.Errorf("server memories after the upgrade: %q, want %q", got, want)
	}
	if got, want := contents(personal), []string{"Aiko is learning Rust", "Aiko prefers tea over coffee"}; !slices.Equal(got, want) {
		t.Errorf("personal memories after the upgrade: %q, want %q", got, want)
	}

	edited, err := st.Memories.Get(ctx, server, 1)
	if err != nil || edited.Version != 2 || edited.Provenance.Author != "Aiko" || !slices.Equal(edited.Tags, []string{"events"}) {
		t.Fatalf("memory 1 after the upgrade: %+v, %v; want version 2 by Aiko tagged events", edited, err)
	}
	hist, err := st.Memories.History(ctx, server, 1)
	if err != nil {
		t.Fatal(err)
	}
	var olds []string
	for _, ev := range hist {
		olds = append(olds, ev.OldContent)
	}
	if len(hist) != 2 || !slices.Contains(olds, "The raid starts at 21:00 on Fridays") {
		t.Errorf("history of memory 1: %d events with old texts %q, want the creation and the edit from 21:00", len(hist), olds)
	}

	// The forget of 901f6da is still a tombstone that can be recovered.
	if _, err := st.Memories.Get(ctx, server, 4); err == nil {
		t.Error("memory 4, forgotten before the upgrade, is readable after it")
	}
	if m, err := st.Memories.Recover(ctx, server, 4, 0, memory.UserActor("u1")); err != nil || m.Content != "The guild bank password is kept by the officers" {
		t.Errorf("recover memory 4: %+v, %v", m, err)
	}

	for q, want := range map[string]int64{"when does the raid start": 1, "東京タワー": 3, "board game night": 2} {
		res, err := st.Recall.Search(ctx, memory.SearchQuery{Text: q, Owners: []memory.Owner{server}, Limit: 5})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		if len(res) == 0 || res[0].Memory.ID != want {
			t.Errorf("search %q after the upgrade: %d results, want memory %d first", q, len(res), want)
		}
	}

	if us, err := st.Settings.UserSettings(ctx, "u2"); err != nil || us.Privacy != memory.PrivacyFull {
		t.Errorf("member u2's settings after the upgrade: %+v, %v; want full privacy", us, err)
	}
	if turns, err := st.Transcripts.RecentTurns(ctx, "g1", "c1", "u1", 10); err != nil || len(turns) != 2 {
		t.Errorf("turns after the upgrade: %d, %v; want 2", len(turns), err)
	}
	// Every turn stored before learning could be switched off was said where kioku learned.
	if turns, err := st.Transcripts.TurnsAfter(ctx, "g1", "c1", 0, 10); err != nil || len(turns) != 2 {
		t.Errorf("turns extraction reads after the upgrade: %d, %v; want both", len(turns), err)
	}
	job, err := st.Jobs.Lease(ctx, "upgrade-check", []string{"extract"}, time.Minute)
	if err != nil || job == nil || job.DedupKey != "g1/c1" {
		t.Errorf("the queued job after the upgrade: %+v, %v; want extract g1/c1", job, err)
	}

	// The upgrade's repairs give the memories written then the dates their words name:
	// "meet at Tokyo Tower on Monday", said on Saturday 28 November 2026, is the 30th.
	if st.Repairs == nil {
		return
	}
	rep, err := st.Repairs.RunRepairsWith(ctx, ltm.RepairOptions{})
	if err != nil || !slices.Contains(rep.Finished, ltm.RepairRefersTo) || !slices.Contains(rep.Finished, ltm.RepairComentions) {
		t.Fatalf("repairs after the upgrade: %+v, %v; want %s and %s finished", rep, err, ltm.RepairRefersTo, ltm.RepairComentions)
	}
	// They count the words of the memories written then, as a write would have.
	if check, ok := st.Repairs.(WordCompanyCheck); !ok {
		t.Error("the store's Repairs cannot check the word company (CheckWordCompany)")
	} else if err := check.FlushWordCompany(ctx); err != nil {
		t.Fatal(err)
	} else if wc, err := check.CheckWordCompany(ctx); err != nil || wc.Drift != 0 || wc.Memories == 0 {
		t.Errorf("the word company after the upgrade's repairs: %+v, %v; want the live memories counted, no drift", wc, err)
	}
	for id, want := range map[int64][2]time.Time{3: day(2026, time.November, 30), 1: {}} {
		m, err := st.Memories.Get(ctx, server, id)
		if err != nil {
			t.Fatal(err)
		}
		if !sameSpan(spanOf(m), want) {
			t.Errorf("memory %d (%q) refers to %v after the upgrade's repairs, want %v", id, m.Content, spanOf(m), want)
		}
	}
}
