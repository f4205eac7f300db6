package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// retentionSide is one store as the retention comparison drives it: the same calls on
// SQLite's and PostgreSQL's aggregates.
type retentionSide struct {
	name     string
	clock    *testkit.Clock
	memories interface {
		Remember(ctx context.Context, m memory.Memory, actor memory.Actor) (memory.WriteResult, error)
		Forget(ctx context.Context, owner memory.Owner, ids []int64, actor memory.Actor, reason string) ([]*memory.Memory, error)
		History(ctx context.Context, owner memory.Owner, id int64) ([]memory.HistoryEvent, error)
		FenceForgotten(ctx context.Context, userID string) error
	}
	turns interface {
		AppendTurn(ctx context.Context, t memory.Turn) (int64, error)
	}
	jobs interface {
		Enqueue(ctx context.Context, kind, dedupKey string, payload any, opt memory.EnqueueOptions) (int64, bool, error)
		Lease(ctx context.Context, owner string, kinds []string, leaseFor time.Duration) (*memory.Job, error)
		Complete(ctx context.Context, id int64, owner string) error
		Fail(ctx context.Context, id int64, owner string, cause error, retryIn time.Duration) (bool, error)
	}
	maintenance interface {
		Retention(ctx context.Context, pol memory.RetentionPolicy) (memory.RetentionResult, error)
	}
	health interface {
		Counts(ctx context.Context, scopeKey string) (maintenance.Stats, error)
	}
}

func sqliteSide(t *testing.T, start time.Time) retentionSide {
	s := testkit.MustOpenStore(t)
	clock := testkit.NewClock(start)
	s.Now = clock.Now
	return retentionSide{"SQLite", clock, s.Memories, s.Transcripts, s.Jobs, s.Maintenance, s.Health}
}

func postgresSide(t *testing.T, start time.Time) retentionSide {
	s := pgtest.Open(t)
	clock := testkit.NewClock(start)
	s.Now = clock.Now
	return retentionSide{"PostgreSQL", clock, s.Memories, s.Transcripts, s.Jobs, s.Maintenance, s.Health}
}

// TestPostgresRetentionMatchesSQLite seeds both stores with the same memories, history,
// transcripts, jobs and forget fences through the same calls at the same clock, runs
// retention on both at two later moments, and compares what each purged and what each
// keeps: PostgreSQL's retention deletes exactly what SQLite's does.
func TestPostgresRetentionMatchesSQLite(t *testing.T) {
	pgtest.URL(t) // one skip line without a database, before SQLite is opened
	ctx := context.Background()
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	sides := []retentionSide{sqliteSide(t, start), postgresSide(t, start)}
	forgottenEarly := map[string]int64{}
	for _, s := range sides {
		forgottenEarly[s.name] = seedRetention(t, s)
	}
	run := func(after time.Duration) []memory.RetentionResult {
		t.Helper()
		var out []memory.RetentionResult
		for _, s := range sides {
			s.clock.Advance(after)
			res, err := s.maintenance.Retention(ctx, memory.RetentionPolicy{Batch: 2})
			if err != nil {
				t.Fatalf("%s retention: %v", s.name, err)
			}
			out = append(out, res)
		}
		return out
	}
	compare := func(when string, res []memory.RetentionResult) {
		t.Helper()
		if diff := cmp.Diff(res[0], res[1]); diff != "" {
			t.Errorf("%s: retention purged differently (-SQLite +PostgreSQL):\n%s", when, diff)
		}
		var counts []maintenance.Stats
		for _, s := range sides {
			st, err := s.health.Counts(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			st.DBBytes, st.Migrations, st.Embeddings = 0, 0, 0 // the engines' own
			counts = append(counts, st)
		}
		if diff := cmp.Diff(counts[0], counts[1]); diff != "" {
			t.Errorf("%s: the stores keep different rows (-SQLite +PostgreSQL):\n%s", when, diff)
		}
	}

	// Day 40: the memories forgotten on day 0 are past the 30-day recover window, the one
	// forgotten on day 20 is not; the day-0 turns, both done jobs (kept 14 days), the dead
	// job (kept 30) and the fence (kept a day) have outlived their keeping.
	first := run(20 * 24 * time.Hour) // the seed ends on day 20
	compare("day 40", first)
	want := memory.RetentionResult{Tombstones: 2, Transcripts: 3, DoneJobs: 2, DeadJobs: 1, Fences: 1}
	got := first[1]
	got.GraphLinks, got.Entities = 0, 0
	if got != want {
		t.Errorf("day 40: PostgreSQL purged %+v, want %+v (graph aside)", first[1], want)
	}
	if first[1].GraphLinks == 0 || first[1].Entities == 0 {
		t.Errorf("day 40: purged %d graph links and %d entities; the purged memories named people", first[1].GraphLinks, first[1].Entities)
	}
	for _, s := range sides {
		hist, err := s.memories.History(ctx, memory.ServerOwner("g1"), forgottenEarly[s.name])
		if err != nil {
			t.Fatal(err)
		}
		last := hist[len(hist)-1]
		if last.Action != memory.ActionPurge || last.Actor != memory.ActorRetention {
			t.Errorf("%s: the purged memory's last history is %s by %s, want a purge by retention", s.name, last.Action, last.Actor)
		}
		for _, ev := range hist {
			if ev.OldContent != "" || ev.NewContent != "" || ev.Reason != "" && ev.Action != memory.ActionPurge {
				t.Errorf("%s: history of a purged memory keeps its text: %+v", s.name, ev)
			}
		}
	}

	// 200 days on: history past 180 days goes, and the memory forgotten on day 20.
	second := run(160 * 24 * time.Hour)
	compare("day 200", second)
	if second[1].History == 0 || second[1].Tombstones != 1 {
		t.Errorf("day 200: PostgreSQL purged %+v; want the old history and the last tombstone", second[1])
	}
	again := run(0)
	compare("again", again)
	if again[1] != (memory.RetentionResult{}) {
		t.Errorf("a second run at once purged %+v, want nothing", again[1])
	}
}

// seedRetention writes the same rows into one store: five server memories (three
// forgotten: two at once, one on day 20), turns on day 0 and day 20, a done and a dead job
// on day 0 and a done one on day 20, a forget fence on day 0, leaving the clock on day 20.
// It returns the id of a memory forgotten on day 0.
func seedRetention(t *testing.T, s retentionSide) int64 {
	t.Helper()
	ctx := context.Background()
	owner := memory.ServerOwner("g1")
	var ids []int64
	for _, content := range []string{
		"Alice Tanaka runs the Kyoto meetup", "Bob Suzuki moved the raid to Friday", "Carol Ito hosts movie night",
		"The server rules are pinned in #welcome", "Backups run every night at three",
	} {
		res, err := s.memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content,
			Provenance: memory.Provenance{AuthorID: "u1", Author: "Alice", ChannelID: "c1"}}, "test")
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		ids = append(ids, res.Memory.ID)
	}
	if _, err := s.memories.Forget(ctx, owner, ids[:2], "user:u1", "no longer true"); err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	turn := func(content string) {
		if _, err := s.turns.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: memory.RoleUser,
			Content: content, MessageID: content}); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	for _, c := range []string{"hello", "who runs the meetup?", "thanks"} {
		turn(c)
	}
	finish := func(key string, fail bool) {
		id, _, err := s.jobs.Enqueue(ctx, "extract", key, map[string]string{"guild_id": "g1"}, memory.EnqueueOptions{MaxAttempts: 1})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		job, err := s.jobs.Lease(ctx, "w1", []string{"extract"}, time.Minute)
		if err != nil || job == nil || job.ID != id {
			t.Fatalf("%s: lease = %+v, %v; want job %d", s.name, job, err, id)
		}
		if fail {
			_, err = s.jobs.Fail(ctx, id, "w1", errors.New("model refused"), time.Minute)
		} else {
			err = s.jobs.Complete(ctx, id, "w1")
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	finish("c1", false)
	finish("c2", true)
	if err := s.memories.FenceForgotten(ctx, "u9"); err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}

	s.clock.Advance(20 * 24 * time.Hour)
	if _, err := s.memories.Forget(ctx, owner, ids[2:3], "user:u1", ""); err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	turn("day twenty")
	finish("c3", false)
	return ids[0]
}

// TestPostgresRetentionAcrossProcesses: two processes running retention at once purge each
// expired tombstone once between them, without waiting on each other's rows or failing.
func TestPostgresRetentionAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	stores := openShared(t, 2)
	clock := testkit.NewClock(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	for _, s := range stores {
		s.Now = clock.Now
	}
	const n = 40
	var ids []int64
	for i := range n {
		res, err := stores[0].Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
			Content: fmt.Sprintf("Old notice %d", i)}, "test")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Memory.ID)
	}
	if _, err := stores[0].Memories.Forget(ctx, memory.ServerOwner("g1"), ids, "user:u1", ""); err != nil {
		t.Fatal(err)
	}
	clock.Advance(stores[0].RecoverWindow + time.Hour)
	results := make([]memory.RetentionResult, len(stores))
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() { results[i], errs[i] = s.Maintenance.Retention(ctx, memory.RetentionPolicy{Batch: 3}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("retention in process %d: %v", i, err)
		}
	}
	// A run that found its batch short because the other held those rows stops early; the
	// next run takes the rest. Together, and after one more, every tombstone goes once.
	rest, err := stores[0].Maintenance.Retention(ctx, memory.RetentionPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if got := results[0].Tombstones + results[1].Tombstones + rest.Tombstones; got != n {
		t.Fatalf("purged %d + %d + %d tombstones, want %d in all", results[0].Tombstones, results[1].Tombstones, rest.Tombstones, n)
	}
	var purges int
	if err := stores[0].Pool().QueryRow(ctx, `SELECT count(*) FROM memory_history WHERE action = 'purge'`).Scan(&purges); err != nil {
		t.Fatal(err)
	}
	if purges != n {
		t.Fatalf("%d purge rows in history, want one per tombstone (%d)", purges, n)
	}
}
