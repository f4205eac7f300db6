package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// day is the span of the UTC day y-m-d.
func day(y int, m time.Month, d int) [2]time.Time {
	from := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return [2]time.Time{from, from.AddDate(0, 0, 1)}
}

// spanOf is the span a memory names, as a pair for comparisons.
func spanOf(m *memory.Memory) [2]time.Time { return [2]time.Time{m.RefersTo, m.RefersToEnd} }

func sameSpan(a, b [2]time.Time) bool { return a[0].Equal(b[0]) && a[1].Equal(b[1]) }

// testRefersTo: every write that sets a memory's words stores the span of time they name,
// resolved against when the memory was said: a remember, a remember in a place, an edit
// (against the creation time, not the edit's), a pipeline ADD and UPDATE; words naming no
// date, or an ambiguous one, store none. Reads return it.
func testRefersTo(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	// The clock starts on Sunday 1 March 2026 at noon.
	played := mustRemember(t, s, server("g1", "We played Catan yesterday"))
	plain := mustRemember(t, s, server("g1", "Aiko prefers green tea"))
	early := mustRemember(t, s, server("g1", "The meetup is on 7/3")) // 7 March or 3 July?
	placed, err := s.Memories.RememberAs(ctx, memory.WriteContext{WriterID: "u1", GuildID: "g1", ChannelID: "c1"},
		server("g1", "我々は3月10日に集まる"), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    *memory.Memory
		want [2]time.Time
	}{
		{"Yesterday", played, day(2026, time.February, 28)},
		{"NoDate", plain, [2]time.Time{}},
		{"Ambiguous", early, [2]time.Time{}},
		{"InAPlace", placed.Memory, day(2026, time.March, 10)},
	} {
		if got := spanOf(c.m); !sameSpan(got, c.want) {
			t.Errorf("%s: %q refers to %v, want %v", c.name, c.m.Content, got, c.want)
		}
		read, err := s.Memories.Get(ctx, owner, c.m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !sameSpan(spanOf(read), c.want) {
			t.Errorf("%s: read back as %v, want %v", c.name, spanOf(read), c.want)
		}
	}

	// Ten days on, an edit is read against the day the memory was said.
	s.Clock.Advance(10 * 24 * time.Hour)
	text := "Aiko switched to green tea two days ago"
	edited, err := s.Memories.Modify(ctx, owner, plain.ID, memory.Change{Content: &text}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if want := day(2026, time.February, 27); !sameSpan(spanOf(edited), want) {
		t.Errorf("edited %q refers to %v, want %v (two days before it was first said)", text, spanOf(edited), want)
	}
	text = "We played Catan"
	edited, err = s.Memories.Modify(ctx, owner, played.ID, memory.Change{Content: &text}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := spanOf(edited); !got[0].IsZero() || !got[1].IsZero() {
		t.Errorf("an edit that drops the date still refers to %v", got)
	}
	listed := listIDs(t, s, owner, memory.ListOptions{})
	if !slices.Contains(listed, plain.ID) {
		t.Fatalf("list %v misses #%d", listed, plain.ID)
	}

	if s.Facts == nil {
		return
	}
	// The pipeline adds what was said on Saturday 7 March, then rewrites it.
	said := time.Date(2026, 3, 7, 18, 0, 0, 0, time.UTC)
	add := addProposal(owner, "The raid moved to next Friday", nil)
	add.Memory.CreatedAt = said
	out := mustApply(t, s.Facts, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorTo: 1, Proposals: []memory.Proposal{add}})
	if out[0].Action != memory.ActionCreate {
		t.Fatalf("pipeline add: %+v", out[0])
	}
	if want := day(2026, time.March, 13); !sameSpan(spanOf(out[0].Memory), want) {
		t.Errorf("pipeline add refers to %v, want %v", spanOf(out[0].Memory), want)
	}
	out = mustApply(t, s.Facts, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorFrom: 1, CursorTo: 2,
		Proposals: []memory.Proposal{{Action: memory.ProposeUpdate, Owner: owner, TargetID: out[0].MemoryID, MayEditServer: true,
			Reason: "moved again", Memory: memory.Memory{Content: "The raid moved to next Saturday"}}}})
	if out[0].Action != memory.ActionUpdate {
		t.Fatalf("pipeline update: %+v", out[0])
	}
	if want := day(2026, time.March, 14); !sameSpan(spanOf(out[0].Memory), want) {
		t.Errorf("pipeline update refers to %v, want %v", spanOf(out[0].Memory), want)
	}
}

// testRefersToRecall: a question about a day finds the memory that names that day ahead of
// a stronger match said elsewhen, though the memory was said a week before the day: "the
// raid moved to next Friday", said on Saturday 7 March, answers "what happens at the raid
// on 13 March?" asked on the 20th.
func testRefersToRecall(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.Stages == nil {
		t.Skip("the store's ranking stages are not reachable")
	}
	s.Stages.DateSpans = true
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	at := func(content string, when time.Time) *memory.Memory {
		t.Helper()
		m := server("g1", content)
		m.CreatedAt = when
		return mustRemember(t, s, m)
	}
	moved := at("the raid moved to next Friday", time.Date(2026, 3, 7, 18, 0, 0, 0, time.UTC))
	stronger := at("raid night: the raid boss dropped a raid mount", time.Date(2026, 3, 2, 21, 0, 0, 0, time.UTC))
	// Words no question shares, so that "raid" is a word worth something to the ranking.
	for i, filler := range []string{"Aiko prefers green tea", "Kenji hosts board game night", "Backups run nightly",
		"The bot answers in Japanese", "Mika is learning Rust", "Ren rides a red bicycle"} {
		at(filler, time.Date(2026, 3, 1+i, 10, 0, 0, 0, time.UTC))
	}
	if moved.RefersTo.IsZero() {
		t.Fatalf("%q names no span", moved.Content)
	}
	asked := time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC)
	search := func(text string) []int64 {
		t.Helper()
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: text, Owners: []memory.Owner{owner}, KeywordOnly: true,
			Limit: 5, AskedAt: asked})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, len(res))
		for i, r := range res {
			ids[i] = r.Memory.ID
		}
		return ids
	}
	if got := search("what happens at the raid?"); len(got) < 2 || got[0] != stronger.ID {
		t.Fatalf("without a date the stronger match should lead: %v (stronger #%d)", got, stronger.ID)
	}
	if got := search("what happens at the raid on 13 March?"); len(got) < 2 || got[0] != moved.ID {
		t.Errorf("asked about 13 March: %v, want #%d (said on 7 March about the 13th) first", got, moved.ID)
	}
}

// testRefersToBackfill: memories written before the span was stored get it from a
// resumable backfill: interrupted after its first batch it has filled that batch only, and
// run again it resumes after its saved cursor, fills the rest (forgotten memories too) and
// finishes; a finished backfill does nothing.
func testRefersToBackfill(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.Repairs == nil || s.Exec == nil {
		t.Skip("the store has no repairs")
	}
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	mems := backfillMemories(t, s, "We played Catan yesterday", "Aiko prefers green tea", "The raid is on 5 March",
		"I finished the book two days ago", "Kenji hosted game night last Saturday")
	for _, stmt := range []string{
		// What a database an older version wrote looks like after the migration.
		`UPDATE memories SET refers_to = NULL, refers_to_end = NULL`,
		`UPDATE store_repairs SET cursor = 0, done_at = NULL WHERE name = '` + ltm.RepairRefersTo + `'`,
	} {
		if err := s.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	filled := func() []bool {
		t.Helper()
		out := make([]bool, len(mems))
		for i, m := range mems {
			got, err := s.Memories.Get(ctx, owner, m.ID)
			if memory.ErrorCode(err) == memory.ENOTFOUND {
				got, err = recoverAndRead(ctx, s, owner, m.ID)
			}
			if err != nil {
				t.Fatal(err)
			}
			out[i] = !got.RefersTo.IsZero()
		}
		return out
	}

	rep := interruptAndResume(t, s, 1, nil)
	// The first batch filled "yesterday"; the rest filled the other three dates.
	if rep.RefersTo != 3 || !slices.Contains(rep.Finished, ltm.RepairRefersTo) {
		t.Errorf("resumed backfill report %+v, want 3 memories filled and %s finished", rep, ltm.RepairRefersTo)
	}
	if got, want := filled(), []bool{true, false, true, true, true}; !slices.Equal(got, want) {
		t.Errorf("memories with a span after the backfill: %v, want %v", got, want)
	}
	for i, m := range mems {
		got, err := s.Memories.Get(ctx, owner, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !sameSpan(spanOf(got), spanOf(m)) {
			t.Errorf("%q backfilled as %v, written as %v", m.Content, spanOf(got), spanOf(mems[i]))
		}
	}
	if rep, err := s.Repairs.RunRepairsWith(ctx, ltm.RepairOptions{}); err != nil || !rep.Empty() {
		t.Errorf("a finished backfill ran again: %+v, %v", rep, err)
	}
}

// recoverAndRead brings back a forgotten memory and reads it.
// backfillMemories finishes the repairs a new store starts with, then remembers contents
// in server g1 and forgets the last one: the memories a backfill test rewrites as an older
// version left them.
func backfillMemories(t *testing.T, s Stores, contents ...string) []*memory.Memory {
	t.Helper()
	if _, err := s.Repairs.RunRepairsWith(t.Context(), ltm.RepairOptions{}); err != nil {
		t.Fatal(err)
	}
	mems := make([]*memory.Memory, len(contents))
	for i, c := range contents {
		mems[i] = mustRemember(t, s, server("g1", c))
	}
	mustForget(t, s, memory.ServerOwner("g1"), mems[len(mems)-1].ID)
	return mems
}

// interruptAndResume runs the repairs in batches of batch, stops them after their first
// batch, calls between (if any), runs them again and returns that run's report, failing the
// test unless the second run resumed after the cursor the first one saved.
func interruptAndResume(t *testing.T, s Stores, batch int, between func()) maintenance.RepairReport {
	t.Helper()
	ctx := t.Context()
	stopped, cancel := context.WithCancel(ctx)
	var stoppedAt int64
	if _, err := s.Repairs.RunRepairsWith(stopped, ltm.RepairOptions{Batch: batch, AfterBatch: func(_ string, cursor int64) {
		stoppedAt = cursor
		cancel()
	}}); err == nil {
		t.Fatal("an interrupted backfill reported no error")
	}
	if between != nil {
		between()
	}
	var first int64 = -1
	rep, err := s.Repairs.RunRepairsWith(ctx, ltm.RepairOptions{Batch: batch, AfterBatch: func(_ string, cursor int64) {
		if first < 0 {
			first = cursor
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if first <= stoppedAt {
		t.Errorf("the resumed backfill's first batch ended at %d, not after the saved cursor %d: it restarted", first, stoppedAt)
	}
	return rep
}

func recoverAndRead(ctx context.Context, s Stores, owner memory.Owner, id int64) (*memory.Memory, error) {
	if _, err := s.Memories.Recover(ctx, owner, id, 0, "test"); err != nil {
		return nil, err
	}
	return s.Memories.Get(ctx, owner, id)
}

// testTimingList: a listing by timing keeps the memories whose span is still to come
// (soonest first) or has ended (latest first) at the time asked, never one that names no
// time, and refuses an unknown timing.
func testTimingList(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	// The clock starts on Sunday 1 March 2026 at noon.
	yesterday := mustRemember(t, s, server("g1", "We played Catan yesterday"))
	nextWeek := mustRemember(t, s, server("g1", "The meetup is next week"))
	tomorrow := mustRemember(t, s, server("g1", "The raid is tomorrow"))
	mustRemember(t, s, server("g1", "Aiko prefers green tea"))
	list := func(timing memory.Timing, now time.Time) []int64 {
		t.Helper()
		mems, total, err := s.Memories.List(ctx, owner, memory.ListOptions{Timing: timing, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if total != len(mems) {
			t.Errorf("%s: total %d for %d listed", timing, total, len(mems))
		}
		ids := make([]int64, len(mems))
		for i, m := range mems {
			ids[i] = m.ID
		}
		return ids
	}
	now := Epoch
	if got, want := list(memory.TimingUpcoming, now), []int64{tomorrow.ID, nextWeek.ID}; !slices.Equal(got, want) {
		t.Errorf("upcoming on 1 March: %v, want %v", got, want)
	}
	if got, want := list(memory.TimingPast, now), []int64{yesterday.ID}; !slices.Equal(got, want) {
		t.Errorf("past on 1 March: %v, want %v", got, want)
	}
	// Three days on, the raid has passed too, and is the latest past one.
	later := now.AddDate(0, 0, 3)
	if got, want := list(memory.TimingPast, later), []int64{tomorrow.ID, yesterday.ID}; !slices.Equal(got, want) {
		t.Errorf("past on 4 March: %v, want %v", got, want)
	}
	if _, _, err := s.Memories.List(ctx, owner, memory.ListOptions{Timing: "someday"}); memory.ErrorCode(err) != memory.EINVALID {
		t.Errorf("an unknown timing: %v, want EINVALID", err)
	}
}
