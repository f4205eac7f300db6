package memory

import (
	"encoding/json"
	"errors"
	"time"
)

// Job states of memory_jobs.
const (
	JobQueued = "queued" // waiting for run_after
	JobLeased = "leased" // a worker holds it until leased_until
	JobDone   = "done"   // finished; purged by retention
	JobDead   = "dead"   // gave up after max attempts; kept for inspection and Requeue
)

// DefaultMaxAttempts is how many failed runs a job gets before it is dead-lettered: enough
// to ride out a provider outage of an hour or so with exponential backoff, few enough that a
// poisoned job stops costing model calls within the hour.
const DefaultMaxAttempts = 5

// ErrLeaseLost is returned when a worker acts on a job it no longer holds: its lease
// expired and the reaper gave the job to someone else, or the job finished meanwhile. The
// worker must drop whatever it computed; the job's current holder redoes it.
var ErrLeaseLost = errors.New("job lease lost")

// Job is one memory_jobs row.
type Job struct {
	ID          int64           `json:"id"`
	Kind        string          `json:"kind"`
	DedupKey    string          `json:"dedup_key"`
	Payload     json.RawMessage `json:"payload"`
	State       string          `json:"state"`
	Attempts    int             `json:"attempts"` // failed runs so far
	MaxAttempts int             `json:"max_attempts"`
	RunAfter    time.Time       `json:"run_after"`
	LeaseOwner  string          `json:"lease_owner,omitempty"`
	LeasedUntil time.Time       `json:"leased_until,omitzero"`
	LastError   string          `json:"last_error,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// EnqueueOptions tunes Enqueue.
type EnqueueOptions struct {
	// RunAfter is the earliest time the job may run; zero means now.
	RunAfter time.Time
	// MaxAttempts is the number of failed runs before the job is dead; default
	// DefaultMaxAttempts.
	MaxAttempts int
	// Debounce makes a repeated enqueue move a waiting job to RunAfter even when that is
	// later (an idle timer restarted by new activity). A job that is already due is never
	// pushed back. Without Debounce the sooner time wins.
	Debounce bool
}

// JobFilter selects jobs for the operator's listings and purges.
type JobFilter struct {
	// States are the stored states to include (JobQueued, JobLeased, JobDone, JobDead);
	// every state when empty.
	States []string
	// GuildID, when set, keeps only the jobs of that server: the guild their payload names.
	// Jobs of DM conversations name no guild, so they never match.
	GuildID string
	// UpdatedBefore, when set, keeps only jobs last changed before it; for done and dead
	// jobs that is when they finished.
	UpdatedBefore time.Time
	// Limit caps a listing, newest first: at most 500, which is also the default.
	Limit int
}

// ReapResult counts what ReapStale did.
type ReapResult struct {
	Requeued int `json:"requeued"`
	Dead     int `json:"dead"`
}

// JobStats summarises the queue.
type JobStats struct {
	Queued int `json:"queued"`
	// Ready counts queued jobs that are due now (the rest wait for backoff or an idle timer).
	Ready  int `json:"ready"`
	Leased int `json:"leased"`
	// Stale counts leased jobs whose lease expired and that the reaper has not seen yet.
	Stale int `json:"stale"`
	Done  int `json:"done"`
	Dead  int `json:"dead"`
	// OldestReady is the run_after of the longest-waiting due job; zero when none is due.
	// A growing age means the worker is not keeping up or is not running.
	OldestReady time.Time `json:"oldest_ready,omitzero"`
}

// Depth is the number of jobs not finished yet.
func (st JobStats) Depth() int { return st.Queued + st.Leased }

// TaskRun is the latest run of one scheduled pipeline task.
type TaskRun struct {
	Name       string    `json:"name"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	OK         bool      `json:"ok"`
	Error      string    `json:"error,omitempty"`
	Detail     string    `json:"detail,omitempty"`
	Runs       int       `json:"runs"`     // since the database was created
	Failures   int       `json:"failures"` // of those runs
}
