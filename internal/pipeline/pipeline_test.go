package pipeline_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kioku-bot/kioku/intent"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
)

const (
	calm     = "hello there, how is everyone doing today"
	decisive = "We decided to raid on Fridays from now on"
)

func TestTriggerSanity(t *testing.T) {
	if intent.HighSignal(calm) || !intent.HighSignal(decisive) {
		t.Fatal("the trigger tests assume calm is not high-signal and decisive is")
	}
}

func TestTriggers(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	job := func(channel string) *memory.Job {
		t.Helper()
		for _, j := range e.jobs() {
			if j.DedupKey == "g1/"+channel && (j.State == memory.JobQueued || j.State == memory.JobLeased) {
				return j
			}
		}
		return nil
	}

	t.Run("IdleTimerAndDebounce", func(t *testing.T) {
		e.say("g1", "c1", "u1", "Alice", calm)
		j := job("c1")
		if j == nil || !j.RunAfter.Equal(epoch.Add(pipeline.DefaultIdleAfter)) {
			t.Fatalf("job after a calm turn: %+v, want one due after %v idle", j, pipeline.DefaultIdleAfter)
		}
		e.clock.Advance(5 * time.Minute)
		e.say("g1", "c1", "u2", "Bob", calm)
		if j := job("c1"); !j.RunAfter.Equal(e.clock.Now().Add(pipeline.DefaultIdleAfter)) {
			t.Fatalf("a new turn did not restart the idle timer: run_after %v", j.RunAfter)
		}
		if r := e.tick(); r.Done != 0 {
			t.Fatalf("ran a job before the channel was idle: %+v", r)
		}
		e.clock.Advance(pipeline.DefaultIdleAfter)
		if r := e.tick(); r.Done != 1 {
			t.Fatalf("idle channel not extracted: %+v", r)
		}
	})
	t.Run("HighSignalRunsNow", func(t *testing.T) {
		e.say("g1", "c2", "u1", "Alice", calm)
		e.say("g1", "c2", "u1", "Alice", decisive)
		if j := job("c2"); !j.RunAfter.Equal(e.clock.Now()) {
			t.Fatalf("high-signal turn: run_after %v, want now", j.RunAfter)
		}
		e.say("g1", "c2", "u1", "Alice", calm)
		if j := job("c2"); !j.RunAfter.Equal(e.clock.Now()) {
			t.Fatalf("a later calm turn delayed a due job to %v", j.RunAfter)
		}
	})
	t.Run("BatchOfNTurnsRunsNow", func(t *testing.T) {
		for i := 1; i <= pipeline.DefaultBatchTurns; i++ {
			e.say("g1", "c3", "u1", "Alice", calm)
			e.reply("g1", "c3", "u1", "noted")
			due := job("c3").RunAfter.Equal(e.clock.Now())
			if due != (i == pipeline.DefaultBatchTurns) {
				t.Fatalf("after %d user turns: due now = %v", i, due)
			}
		}
	})
	t.Run("NothingForBotTurnsFullPrivacyOrPipelineOff", func(t *testing.T) {
		e.reply("g1", "c4", "u1", "an answer from the bot")
		if err := e.store.Settings.SetPrivacy(ctx, "u9", memory.PrivacyFull); err != nil {
			t.Fatal(err)
		}
		e.say("g1", "c5", "u9", "Zed", decisive)
		if err := e.store.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: "g2", PipelineMode: memory.PipelineOff}); err != nil {
			t.Fatal(err)
		}
		e.say("g2", "c6", "u1", "Alice", decisive)
		for _, j := range e.jobs() {
			if slices.Contains([]string{"g1/c4", "g1/c5", "g2/c6"}, j.DedupKey) {
				t.Errorf("job %s scheduled", j.DedupKey)
			}
		}
	})
}

func TestExtractionEndToEnd(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	alice := e.say("g1", "c1", "u1", "Alice", "I prefer green tea over coffee")
	e.reply("g1", "c1", "u1", "Green tea it is.")
	e.say("g1", "c1", "u2", "Bob", "The raid is on Friday evenings")
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick: %+v\n%s", r, e.logs)
	}
	if ex, dec := e.chatCalls(); ex != 1 || dec != 0 {
		t.Fatalf("model calls: %d extractions, %d decisions; want 1 and none (no candidates → ADD without a call)", ex, dec)
	}
	req := e.fake.ChatRequests()[0]
	if req.Model != "pipeline-model" {
		t.Errorf("model %q, want the pipeline model", req.Model)
	}
	conv := req.Messages[1].Content
	for _, want := range []string{`{"n":1,"speaker_id":"u1","speaker":"Alice","text":"I prefer green tea over coffee"}`,
		`{"n":2,"speaker_id":"","speaker":"kioku (bot)","bot":true,"text":"Green tea it is."}`,
		`{"n":3,"speaker_id":"u2","speaker":"Bob","text":"The raid is on Friday evenings"}`} {
		if !strings.Contains(conv, want) {
			t.Errorf("extraction prompt lacks %q:\n%s", want, conv)
		}
	}
	personal := e.memories(memory.PersonalOwner("u1"))
	if len(personal) != 1 {
		t.Fatalf("personal memories of u1: %v", personal)
	}
	m := personal[0]
	want := memory.Provenance{AuthorID: "u1", Author: "Alice", ChannelID: "c1", MessageID: alice.MessageID}
	if m.Content != "Alice prefer green tea over coffee" || m.GuildID != "g1" || m.Source != memory.SourcePipeline || m.Provenance != want || m.SubjectID != "u1" {
		t.Errorf("personal memory %+v", m)
	}
	if got := e.contents(memory.ServerOwner("g1")); !slices.Equal(got, []string{"The raid is on Friday evenings"}) {
		t.Errorf("server memories %q", got)
	}
	if cur, _ := e.store.Transcripts.ExtractionCursor(ctx, "g1", "c1"); cur != 3 {
		t.Errorf("cursor %d, want 3 (every turn read)", cur)
	}
	if st := e.stats(); st.Depth() != 0 || st.Done != 1 {
		t.Errorf("queue %+v", st)
	}
	evs := e.history(memory.ServerOwner("g1"))
	var meta map[string]any
	if len(evs) != 1 || json.Unmarshal(evs[0].Metadata, &meta) != nil || meta["job"] == nil || meta["fact"] != 1.0 {
		t.Errorf("history %+v", evs)
	}
	t.Run("ReplayOfTheSameTurnsDoesNothing", func(t *testing.T) {
		if _, _, err := e.store.Jobs.Enqueue(ctx, pipeline.KindExtract, "g1/c1", map[string]string{"guild_id": "g1", "channel_id": "c1"}, memory.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
		before := len(e.fake.ChatRequests())
		if r := e.tick(); r.Done != 1 {
			t.Fatalf("tick %+v", r)
		}
		if len(e.fake.ChatRequests()) != before || len(e.memories(memory.ServerOwner("g1"))) != 1 {
			t.Fatal("a job over already-extracted turns called the model or wrote memories")
		}
	})
}

// seedModes prepares a guild with memories the default brain will update, delete and
// leave alone, and the turns that make it do so.
func seedModes(t *testing.T, e *env, mode memory.PipelineMode) (editable, doomed, pinned *memory.Memory) {
	t.Helper()
	ctx := t.Context()
	if err := e.store.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: "g1", PipelineMode: mode}); err != nil {
		t.Fatal(err)
	}
	remember := func(content string, pin bool) *memory.Memory {
		res, err := e.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content, Pinned: pin}, "user:admin")
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	editable = remember("Raid night is Tuesday", false)
	doomed = remember("The guild bank is open to everyone", false)
	pinned = remember("Server rules are posted in the welcome channel", true)
	// Alice and Bob may edit server memory, so full mode applies their updates and deletes.
	e.sayAsEditor("g1", "c1", "u1", "Alice", "Raid night is Wednesday instead")
	e.sayAsEditor("g1", "c1", "u1", "Alice", "The guild bank is no longer open to everyone")
	e.sayAsEditor("g1", "c1", "u2", "Bob", "Movie night happens on Saturdays")
	e.sayAsEditor("g1", "c1", "u2", "Bob", "Server rules are no longer posted in the welcome channel")
	e.sayAsEditor("g1", "c1", "u2", "Bob", decisive)
	return editable, doomed, pinned
}

func TestModes(t *testing.T) {
	g := memory.ServerOwner("g1")
	t.Run("Full", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{})
		ctx := t.Context()
		editable, doomed, pinned := seedModes(t, e, memory.PipelineFull)
		if r := e.tick(); r.Done != 1 {
			t.Fatalf("tick %+v\n%s", r, e.logs)
		}
		got := e.contents(g)
		slices.Sort(got)
		want := []string{"Movie night happens on Saturdays", "Raid night is Wednesday instead", "Server rules are posted in the welcome channel", decisive}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("memories (-want +got):\n%s", diff)
		}
		hist, err := e.store.Memories.History(ctx, g, editable.ID)
		if err != nil {
			t.Fatal(err)
		}
		upd := hist[len(hist)-1]
		if upd.Action != memory.ActionUpdate || upd.OldContent != "Raid night is Tuesday" || upd.Actor != memory.ActorPipeline || upd.Reason == "" {
			t.Fatalf("update history %+v", upd)
		}
		if hist, _ := e.store.Memories.History(ctx, g, doomed.ID); hist[len(hist)-1].Action != memory.ActionDelete {
			t.Fatalf("delete history %+v", hist)
		}
		if hist, _ := e.store.Memories.History(ctx, g, pinned.ID); hist[len(hist)-1].Action != memory.ActionBlock {
			t.Fatalf("pinned memory history %+v, want the delete blocked", hist)
		}
		if m, err := e.store.Memories.Revert(ctx, g, editable.ID, upd.ID, "user:admin"); err != nil || m.Content != "Raid night is Tuesday" {
			t.Fatalf("revert of the pipeline's update: %+v %v", m, err)
		}
		if m, err := e.store.Memories.Recover(ctx, g, doomed.ID, 0, "user:admin"); err != nil || m.Content != "The guild bank is open to everyone" {
			t.Fatalf("recover of the pipeline's delete: %+v %v", m, err)
		}
	})
	t.Run("Controlled", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{})
		seedModes(t, e, memory.PipelineControlled)
		e.tick()
		got := e.contents(g)
		slices.Sort(got)
		want := []string{"Movie night happens on Saturdays", "Raid night is Tuesday", "Server rules are posted in the welcome channel",
			"The guild bank is open to everyone", decisive}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("memories (-want +got):\n%s", diff)
		}
		acts := e.actions(g)[3:] // after the three seeds
		if n := count(acts, memory.ActionBlock); n != 3 {
			t.Errorf("history %v: %d blocked, want the update and both deletes", acts, n)
		}
		if n := count(acts, memory.ActionCreate); n != 2 {
			t.Errorf("history %v: %d created, want 2", acts, n)
		}
	})
	t.Run("Shadow", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{})
		seedModes(t, e, memory.PipelineShadow)
		before := e.memories(g)
		e.tick()
		if diff := cmp.Diff(before, e.memories(g)); diff != "" {
			t.Fatalf("shadow mode changed memories:\n%s", diff)
		}
		acts := e.actions(g)[3:]
		if len(acts) != 5 || count(acts, memory.ActionShadow) != 5 {
			t.Fatalf("shadow history %v, want five shadow rows", acts)
		}
	})
	t.Run("OperatorFrozen", func(t *testing.T) {
		flags := pipeline.DefaultFlags()
		flags.AutonomousFrozen = true
		e := newEnv(t, pipeline.Config{Flags: &flags})
		seedModes(t, e, memory.PipelineFull)
		before := e.memories(g)
		e.tick()
		if diff := cmp.Diff(before, e.memories(g)); diff != "" {
			t.Fatalf("frozen pipeline changed memories:\n%s", diff)
		}
		if acts := e.actions(g)[3:]; count(acts, memory.ActionBlock) != 5 {
			t.Fatalf("frozen history %v, want five blocked rows", acts)
		}
	})
	t.Run("Off", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{})
		seedModes(t, e, memory.PipelineOff)
		if st := e.stats(); st.Depth() != 0 {
			t.Fatalf("pipeline off scheduled jobs: %+v", st)
		}
		// A job queued before the switch only moves the cursor.
		if _, _, err := e.store.Jobs.Enqueue(t.Context(), pipeline.KindExtract, "g1/c1", map[string]string{"guild_id": "g1", "channel_id": "c1"}, memory.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
		e.tick()
		if n := len(e.fake.ChatRequests()); n != 0 {
			t.Fatalf("pipeline off made %d model calls", n)
		}
		if b, _ := e.store.Transcripts.ExtractionBacklog(t.Context(), "g1", "c1"); b.Turns != 0 {
			t.Fatalf("backlog %+v, want the turns skipped", b)
		}
	})
}

func count[T comparable](xs []T, x T) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

func TestControlledWriteGates(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	likes, err := e.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Alice likes jazz music"}, "user:u1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raid night is Tuesday"}, "user:u1"); err != nil {
		t.Fatal(err)
	}
	e.fake.Script(
		extraction(
			fact{Content: "Bob might like sushi, maybe", Confidence: 0.5, Scope: "server", Evidence: []int{2}},                             // 0: fact confidence gate
			fact{Content: "raid night is tuesday.", Confidence: 0.9, Scope: "server", Evidence: []int{2}},                                  // 1: hash dedup, no decision
			fact{Content: "Raid night could be Thursday", Confidence: 0.9, Scope: "server", Evidence: []int{2}},                            // 2: decision confidence gate
			fact{Content: "Raid night is on Wednesday now", Confidence: 0.9, Scope: "server", Evidence: []int{2}},                          // 3: hallucinated id
			fact{Content: "Raid night is really Tuesday", Confidence: 0.9, Scope: "server", Evidence: []int{2}},                            // 4: empty reason
			fact{Content: "Alice does not like jazz music", Confidence: 0.9, Scope: "server", Evidence: []int{1}},                          // 5: contradiction
			fact{Content: "Alice likes jazz music very much", Confidence: 0.9, Scope: "server", Evidence: []int{1}},                        // 6: NONE
			fact{Content: "Someone we never heard of likes tea", Confidence: 0.9, Scope: "personal", SubjectID: "Zed", Evidence: []int{1}}, // 7: unknown subject
		),
		decision("ADD", 0, "", 0.6, "maybe"),
		decision("UPDATE", 999, "Raid night is on Wednesday now", 0.9, "moved"),
		decision("ADD", 0, "", 0.9, ""),
		decision("ADD", 0, "", 0.9, "new"),
		decision("NONE", likes.Memory.ID, "", 0.9, "already known"),
	)
	e.say("g1", "c1", "u1", "Alice", "some conversation")
	e.say("g1", "c1", "u2", "Bob", decisive)
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	if e.fake.Remaining() != 0 {
		t.Fatalf("%d scripted replies unused: a gate called or skipped the model wrongly", e.fake.Remaining())
	}
	if ex, dec := e.chatCalls(); ex != 1 || dec != 5 {
		t.Fatalf("%d extractions, %d decisions; want 1 and 5 (no decision for gated, duplicate or unattributed facts)", ex, dec)
	}
	type row struct {
		Fact   int
		Action memory.Action
	}
	var rows []row
	var review []memory.HistoryEvent
	for _, ev := range e.history(g)[2:] {
		if ev.Action == memory.ActionReview {
			review = append(review, ev)
			continue
		}
		var meta struct{ Fact int }
		if err := json.Unmarshal(ev.Metadata, &meta); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row{meta.Fact, ev.Action})
	}
	want := []row{{0, memory.ActionSkip}, {1, memory.ActionDedup}, {2, memory.ActionSkip}, {3, memory.ActionSkip},
		{4, memory.ActionSkip}, {5, memory.ActionCreate}, {6, memory.ActionSkip}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Fatalf("one history row per proposal (-want +got):\n%s", diff)
	}
	if len(review) != 2 || review[0].MemoryID != likes.Memory.ID {
		t.Fatalf("contradiction review rows %+v, want one on #%d and one on the new memory", review, likes.Memory.ID)
	}
	if got := e.contents(g); len(got) != 3 {
		t.Fatalf("memories %q, want the two seeds and the contradicting fact (flagged, not blocked)", got)
	}
	if !strings.Contains(e.logs.String(), "subject is none of the people who spoke") {
		t.Error("the unattributable fact was not logged")
	}
}

func TestPrivacyInsideThePipeline(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	for user, level := range map[string]memory.Privacy{"u2": memory.PrivacyPartial, "u3": memory.PrivacyFull} {
		if err := e.store.Settings.SetPrivacy(ctx, user, level); err != nil {
			t.Fatal(err)
		}
	}
	// The chat turn never stores a full-privacy user's words; make sure the pipeline
	// ignores them even if some were stored before the switch.
	if _, err := e.store.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u3", AuthorName: "Carol",
		Role: memory.RoleUser, Content: "CAROLSECRET I prefer to stay invisible"}); err != nil {
		t.Fatal(err)
	}
	e.say("g1", "c1", "u2", "Bob", "I prefer window seats on trains")
	e.say("g1", "c1", "u2", "Bob", "The team meeting is on Mondays")
	e.say("g1", "c1", "u1", "Alice", "I prefer aisle seats on planes")
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	for _, r := range e.fake.ChatRequests() {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "CAROLSECRET") {
			t.Fatal("a full-privacy user's words reached the model")
		}
	}
	if got := e.memories(memory.PersonalOwner("u2")); len(got) != 0 {
		t.Fatalf("personal memories written for a partial-privacy user: %v", got)
	}
	blocked := e.history(memory.PersonalOwner("u2"))
	if len(blocked) != 1 || blocked[0].Action != memory.ActionBlock || blocked[0].NewContent != "" || blocked[0].Reason != "privacy: partial" {
		t.Fatalf("partial user's history %+v, want one blocked row without content", blocked)
	}
	if got := e.contents(memory.ServerOwner("g1")); !slices.Equal(got, []string{"The team meeting is on Mondays"}) {
		t.Fatalf("server memories %q: a partial user's server facts are still kept", got)
	}
	if got := e.contents(memory.PersonalOwner("u1")); !slices.Equal(got, []string{"Alice prefer aisle seats on planes"}) {
		t.Fatalf("Alice's memories %q", got)
	}
	if got := e.memories(memory.PersonalOwner("u3")); len(got) != 0 {
		t.Fatalf("full user memories %v", got)
	}
	t.Run("DirectMessagesArePersonal", func(t *testing.T) {
		e.say("", "dm1", "u1", "Alice", "Raid night is on Friday for me, remember that")
		e.tick()
		var dm *memory.Memory
		for _, m := range e.memories(memory.PersonalOwner("u1")) {
			if strings.HasPrefix(m.Content, "Raid night") {
				dm = m
			}
		}
		if dm == nil || dm.GuildID != "" {
			t.Fatalf("DM fact: %+v, want a personal memory with no origin guild", dm)
		}
	})
}

func TestProviderDownRetryDeadRequeue(t *testing.T) {
	e := newEnv(t, pipeline.Config{MaxAttempts: 3})
	ctx := t.Context()
	e.say("g1", "c1", "u1", "Alice", decisive)
	e.fake.Down()
	j := e.jobs()[0]
	for attempt := 1; attempt <= 3; attempt++ {
		r := e.tick()
		got, err := e.store.Jobs.GetJob(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Attempts != attempt || !strings.Contains(got.LastError, "503") {
			t.Fatalf("attempt %d: %+v", attempt, got)
		}
		if attempt < 3 {
			wait := pipeline.DefaultBackoffBase << (attempt - 1)
			if r.Retried != 1 || got.State != memory.JobQueued || !got.RunAfter.Equal(e.clock.Now().Add(wait)) {
				t.Fatalf("attempt %d: %+v, job %+v; want a retry after %v", attempt, r, got, wait)
			}
			if r := e.tick(); r != (pipeline.TickResult{}) {
				t.Fatalf("ran during backoff: %+v", r)
			}
			e.clock.Advance(wait)
			continue
		}
		if r.Dead != 1 || got.State != memory.JobDead {
			t.Fatalf("last attempt: %+v, job %+v; want dead", r, got)
		}
	}
	if n := e.fake.ChatCount(); n != 3*2 {
		t.Errorf("%d provider calls, want 3 attempts × (1 + 1 client retry)", n)
	}
	st, err := e.p.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Jobs.Dead != 1 || len(st.DeadJobs) != 1 || len(st.Problems()) == 0 {
		t.Fatalf("status %+v", st)
	}
	e.fake.Up()
	if err := e.store.Jobs.Requeue(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("after requeue: %+v\n%s", r, e.logs)
	}
	if got := e.contents(memory.ServerOwner("g1")); !slices.Equal(got, []string{decisive}) {
		t.Fatalf("memories %q", got)
	}
}

func TestStaleLeaseIsReaped(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	e.say("g1", "c1", "u1", "Alice", decisive)
	// A worker takes the job and dies.
	if j, err := e.store.Jobs.Lease(ctx, "crashed-worker", nil, pipeline.DefaultLeaseFor); err != nil || j == nil {
		t.Fatalf("lease: %v %v", j, err)
	}
	if r := e.tick(); r.Done != 0 {
		t.Fatalf("a leased job ran twice: %+v", r)
	}
	if err := e.p.RunTask(ctx, pipeline.TaskReap); err != nil {
		t.Fatal(err)
	}
	if st := e.stats(); st.Leased != 1 {
		t.Fatalf("reaped a live lease: %+v", st)
	}
	e.clock.Advance(pipeline.DefaultLeaseFor + time.Second)
	if err := e.p.RunTask(ctx, pipeline.TaskReap); err != nil {
		t.Fatal(err)
	}
	runs, _ := e.store.Jobs.TaskRuns(ctx)
	if len(runs) != 1 || runs[0].Detail != "requeued=1 dead=0" || runs[0].Runs != 2 {
		t.Fatalf("reap runs %+v", runs)
	}
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("reaped job did not run: %+v", r)
	}
	if got := e.contents(memory.ServerOwner("g1")); len(got) != 1 {
		t.Fatalf("memories %q", got)
	}
}

func TestFollowUpForTurnsDuringAJob(t *testing.T) {
	var e *env
	first := true
	e = newEnv(t, pipeline.Config{BeforeCommit: func(_ context.Context, _ *memory.Job) error {
		if first {
			first = false
			// A turn arrives while the job runs: OnTurn cannot touch the leased job.
			e.clock.Advance(time.Second)
			e.say("g1", "c1", "u2", "Bob", "Movie night happens on Saturdays")
		}
		return nil
	}})
	e.say("g1", "c1", "u1", "Alice", decisive)
	if r := e.tick(); r.Done != 1 {
		// The follow-up waits for the idle timer, so only the first job runs now.
		t.Fatalf("tick %+v", r)
	}
	st := e.stats()
	if st.Queued != 1 {
		t.Fatalf("queue %+v: the turn that arrived during the job has no follow-up", st)
	}
	e.clock.Advance(pipeline.DefaultIdleAfter)
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("follow-up: %+v", r)
	}
	reqs := e.fake.ChatRequests()
	last := reqs[len(reqs)-1].Messages[1].Content
	if strings.Contains(last, "raid") || !strings.Contains(last, "Movie night") {
		t.Fatalf("the follow-up re-read extracted turns or missed the new one:\n%s", last)
	}
	if got := e.contents(memory.ServerOwner("g1")); len(got) != 2 {
		t.Fatalf("memories %q", got)
	}
}

func TestInputIsTruncated(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	for i := range 10 {
		// ~1900 characters per turn, sharing no word with the others, so the decision
		// stage finds no candidates and the test stays about the input limit.
		e.say("g1", "c1", "u1", "Alice", strings.Repeat(string(rune('a'+i)), 1900))
	}
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v", r)
	}
	conv := e.fake.ChatRequests()[0].Messages[1].Content
	if len(conv) > pipeline.MaxInputChars+200 {
		t.Fatalf("extraction input is %d characters, over the %d limit", len(conv), pipeline.MaxInputChars)
	}
	cur, _ := e.store.Transcripts.ExtractionCursor(t.Context(), "g1", "c1")
	if cur < 1 || cur >= 10 {
		t.Fatalf("cursor %d: want a prefix of the ten turns", cur)
	}
	e.clock.Advance(pipeline.DefaultIdleAfter)
	for range 3 {
		e.tick()
	}
	if b, _ := e.store.Transcripts.ExtractionBacklog(t.Context(), "g1", "c1"); b.Turns != 0 {
		t.Fatalf("backlog %+v after follow-ups", b)
	}
	if got := e.memories(memory.ServerOwner("g1")); len(got) != 10 {
		t.Fatalf("%d memories, want one per turn", len(got))
	}
}

func TestSweep(t *testing.T) {
	e := newEnv(t, pipeline.Config{MaxAttempts: 1})
	ctx := t.Context()
	// Turns stored, but the process died before OnTurn scheduled them.
	if _, err := e.store.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: memory.RoleUser, Content: decisive}); err != nil {
		t.Fatal(err)
	}
	n, err := e.p.Sweep(ctx)
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if n, _ := e.p.Sweep(ctx); n != 0 {
		t.Fatalf("second sweep created %d jobs", n)
	}
	t.Run("LeavesDeadChannelsAlone", func(t *testing.T) {
		e.fake.Down()
		if r := e.tick(); r.Dead != 1 {
			t.Fatalf("tick %+v", r)
		}
		e.fake.Up()
		if n, _ := e.p.Sweep(ctx); n != 0 {
			t.Fatalf("sweep resurrected a dead job's channel: %d", n)
		}
		e.clock.Advance(time.Minute)
		if _, err := e.store.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: memory.RoleUser, Content: calm}); err != nil {
			t.Fatal(err)
		}
		if n, _ := e.p.Sweep(ctx); n != 1 {
			t.Fatalf("sweep ignored new turns after a dead job: %d", n)
		}
	})
}
