package pipeline_test

import (
	"context"
	"database/sql"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// countingQueue is the real job queue with a count of the worker's looks (HasDue, a read)
// and lease attempts (Lease, a write transaction even when it finds nothing).
type countingQueue struct {
	*ltm.Jobs
	checks, leases atomic.Int32
}

func (q *countingQueue) HasDue(ctx context.Context, kinds []string) (bool, error) {
	q.checks.Add(1)
	return q.Jobs.HasDue(ctx, kinds)
}

func (q *countingQueue) Lease(ctx context.Context, owner string, kinds []string, leaseFor time.Duration) (*memory.Job, error) {
	q.leases.Add(1)
	return q.Jobs.Lease(ctx, owner, kinds, leaseFor)
}

// countingLedger is the real ledger with a count of recorded task runs (each a write).
type countingLedger struct {
	*ltm.Jobs
	records atomic.Int32
}

func (l *countingLedger) RecordRun(ctx context.Context, r memory.TaskRun) error {
	l.records.Add(1)
	return l.Jobs.RecordRun(ctx, r)
}

// newCountingEnv is newEnv with the pipeline rebuilt over a counting queue and ledger.
func newCountingEnv(t *testing.T, cfg pipeline.Config) (*env, *countingQueue, *countingLedger) {
	t.Helper()
	e := newEnv(t, cfg)
	q, l := &countingQueue{Jobs: e.store.Jobs}, &countingLedger{Jobs: e.store.Jobs}
	deps := storeDeps(e.store, e.client)
	deps.Jobs, deps.Ledger = q, l
	p, err := pipeline.New(e.p.Config(), deps)
	if err != nil {
		t.Fatal(err)
	}
	e.p = p
	return e, q, l
}

// dataVersion reads SQLite's data_version on its own connection: it changes whenever
// another connection has committed a change to the file.
type dataVersion struct{ db *sql.DB }

func openDataVersion(t *testing.T, path string) dataVersion {
	t.Helper()
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // data_version is per connection
	t.Cleanup(func() { db.Close() })
	return dataVersion{db}
}

func (d dataVersion) read(t *testing.T) int64 {
	t.Helper()
	var v int64
	if err := d.db.QueryRow(`PRAGMA data_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// waitUntil polls cond (state, not time) until it holds, failing after a generous bound.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIdleWorkerOnlyReads: polls of an idle queue, and of a queue whose only job is not
// due yet, look with a read and stop there: no lease attempt, no recorded run, nothing
// committed to the database. Once the job is due the next poll leases and runs it.
func TestIdleWorkerOnlyReads(t *testing.T) {
	e, q, l := newCountingEnv(t, pipeline.Config{})
	ctx := t.Context()
	dv := openDataVersion(t, e.store.Path())
	poll := func() {
		t.Helper()
		if err := e.p.RunTask(ctx, pipeline.TaskWork); err != nil {
			t.Fatal(err)
		}
	}

	before := dv.read(t)
	for range 3 {
		poll()
	}
	if q.checks.Load() != 3 || q.leases.Load() != 0 || l.records.Load() != 0 {
		t.Fatalf("3 idle polls: %d checks, %d lease attempts, %d recorded runs; want 3, 0, 0",
			q.checks.Load(), q.leases.Load(), l.records.Load())
	}
	if after := dv.read(t); after != before {
		t.Fatalf("idle polls committed to the database (data_version %d → %d)", before, after)
	}

	e.say("g1", "c1", "u1", "Alice", calm) // queued for when the channel goes quiet
	before = dv.read(t)
	for range 3 {
		poll()
	}
	if q.leases.Load() != 0 || l.records.Load() != 0 || dv.read(t) != before {
		t.Fatalf("polls before the job is due: %d lease attempts, %d recorded runs; want none", q.leases.Load(), l.records.Load())
	}

	e.clock.Advance(pipeline.DefaultIdleAfter)
	poll()
	if q.leases.Load() == 0 || l.records.Load() != 1 {
		t.Fatalf("poll of a due job: %d lease attempts, %d recorded runs; want a lease and one run", q.leases.Load(), l.records.Load())
	}
	if st := e.stats(); st.Done != 1 || st.Queued != 0 {
		t.Fatalf("jobs %+v, want the due job done", st)
	}
}

// TestEnqueueWakesTheWorker: with a poll an hour apart, a job this process enqueues (a
// decisive turn, due now) is still run at once: the enqueue wakes the worker.
func TestEnqueueWakesTheWorker(t *testing.T) {
	hour := "@every 1h"
	e, q, _ := newCountingEnv(t, pipeline.Config{WorkSchedule: hour, ReapSchedule: hour, SweepSchedule: hour, RetentionSchedule: hour})
	if err := e.p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.p.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	// The look Start takes at once has found nothing; the next poll is an hour away.
	waitUntil(t, "the worker's first look at the queue", func() bool { return q.checks.Load() >= 1 })

	e.say("g1", "c1", "u1", "Alice", decisive)
	waitUntil(t, "the woken worker to run the job", func() bool { return e.stats().Done == 1 })
	if got := e.contents(memory.ServerOwner("g1")); len(got) != 1 {
		t.Fatalf("server memories %q, want the extracted decision", got)
	}
}

// TestPollFindsJobsOfOtherProcesses: a job another process queued on the same database
// (here a second store and pipeline, as `kioku chat` would) does not wake this worker,
// but its next poll sees it through the read pool and runs it.
func TestPollFindsJobsOfOtherProcesses(t *testing.T) {
	e, q, _ := newCountingEnv(t, pipeline.Config{})
	ctx := t.Context()
	if err := e.p.RunTask(ctx, pipeline.TaskWork); err != nil { // the read pool has looked once already
		t.Fatal(err)
	}

	other, err := sqlite.Open(ctx, e.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.Now = e.clock.Now
	chatSide, err := pipeline.New(pipeline.Config{}, storeDeps(other, e.client))
	if err != nil {
		t.Fatal(err)
	}
	turn := memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", AuthorName: "Alice", Role: memory.RoleUser,
		MessageID: "m1", Content: decisive}
	if turn.ID, err = other.Transcripts.AppendTurn(ctx, turn); err != nil {
		t.Fatal(err)
	}
	if err := chatSide.OnTurn(ctx, turn, true); err != nil {
		t.Fatal(err)
	}
	if st := e.stats(); st.Ready != 1 {
		t.Fatalf("jobs %+v, want one due job queued by the other store", st)
	}

	checks := q.checks.Load()
	if err := e.p.RunTask(ctx, pipeline.TaskWork); err != nil {
		t.Fatal(err)
	}
	if q.checks.Load() != checks+1 || q.leases.Load() == 0 {
		t.Fatalf("the poll made %d checks and %d lease attempts, want one check and a lease", q.checks.Load()-checks, q.leases.Load())
	}
	if st := e.stats(); st.Done != 1 || st.Queued != 0 {
		t.Fatalf("jobs %+v, want the other process's job done", st)
	}
}

// TestBotReplyAfterAJobWaitsForTheNextTurn: a woken worker often takes a member's turn
// before the bot's reply to it is stored. That reply alone schedules no job (not after the
// job, not in the sweep): it waits, and the next member's turn is extracted with it as
// context.
func TestBotReplyAfterAJobWaitsForTheNextTurn(t *testing.T) {
	var e *env
	replied := false
	e = newEnv(t, pipeline.Config{BeforeCommit: func(ctx context.Context, job *memory.Job) error {
		if !replied { // the chat turn stores its reply while the job runs
			replied = true
			e.reply("g1", "c1", "u1", "Noted, Fridays it is.")
		}
		return nil
	}})
	e.say("g1", "c1", "u1", "Alice", decisive)
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick: %+v", r)
	}
	if n, err := e.p.Sweep(t.Context()); err != nil || n != 0 {
		t.Fatalf("sweep scheduled %d jobs (%v), want none for a reply alone", n, err)
	}
	if st := e.stats(); st.Queued != 0 {
		t.Fatalf("jobs %+v: the bot's reply alone queued a job", st)
	}

	e.say("g1", "c1", "u2", "Bob", "The raid starts at nine")
	e.clock.Advance(pipeline.DefaultIdleAfter)
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick after the next turn: %+v", r)
	}
	var extractions []string
	for _, r := range e.fake.ChatRequests() {
		if isExtraction(r) {
			extractions = append(extractions, r.Messages[len(r.Messages)-1].Content)
		}
	}
	if len(extractions) != 2 || !strings.Contains(extractions[1], `"bot":true,"text":"Noted, Fridays it is."`) ||
		!strings.Contains(extractions[1], "The raid starts at nine") {
		t.Fatalf("extractions %q, want the second to show the bot's reply as context of Bob's turn", extractions)
	}
}
