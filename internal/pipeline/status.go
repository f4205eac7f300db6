package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Status is a snapshot of the pipeline for `kioku doctor` and /kioku status.
type Status struct {
	Jobs memory.JobStats `json:"jobs"`
	// DeadJobs are the newest dead-lettered jobs (at most 5), with their last error.
	DeadJobs []*memory.Job `json:"dead_jobs,omitempty"`
	// Runs are the latest run of each scheduled task, whichever process ran it.
	Runs []memory.TaskRun `json:"runs"`
	// Budget is the model budget of this process; nil when read from another process
	// (doctor), which cannot see the running bot's window.
	Budget *Budget `json:"budget,omitempty"`
	// Running is true when the scheduler of this process is started.
	Running bool      `json:"running"`
	At      time.Time `json:"at"`
}

// Budget is the cost guard's state.
type Budget struct {
	Used  int `json:"used"`  // model calls in the last hour
	Limit int `json:"limit"` // <= 0: unlimited
}

// ReadStatus reads what the ledger says about the pipeline at time at, for processes that
// do not run it (`kioku doctor`).
func ReadStatus(ctx context.Context, ledger Ledger, at time.Time) (Status, error) {
	st := Status{At: at}
	var err error
	if st.Jobs, err = ledger.JobStats(ctx); err != nil {
		return st, err
	}
	if st.Jobs.Dead > 0 {
		if st.DeadJobs, err = ledger.ListJobs(ctx, memory.JobDead, 5); err != nil {
			return st, err
		}
	}
	if st.Runs, err = ledger.TaskRuns(ctx); err != nil {
		return st, err
	}
	return st, nil
}

// Status is ReadStatus plus this process's budget and scheduler state.
func (p *scheduler) Status(ctx context.Context) (Status, error) {
	st, err := ReadStatus(ctx, p.ledger, p.now())
	if err != nil {
		return st, err
	}
	st.Budget = &Budget{Used: p.guard.Used(), Limit: p.guard.Limit()}
	p.mu.Lock()
	st.Running = p.running
	p.mu.Unlock()
	return st, nil
}

// Problems lists what an operator should look at: dead jobs, stale leases, failing
// tasks, a backlog nobody works on. Empty means healthy.
func (st Status) Problems() []string {
	var out []string
	if st.Jobs.Dead > 0 {
		out = append(out, fmt.Sprintf("%d dead jobs (last error: %s); once the cause is fixed, requeue them: %s",
			st.Jobs.Dead, st.lastDeadError(), st.requeueCommand()))
	}
	if st.Jobs.Stale > 0 {
		out = append(out, fmt.Sprintf("%d jobs with expired leases waiting for the reaper", st.Jobs.Stale))
	}
	for _, r := range st.Runs {
		if !r.OK {
			out = append(out, fmt.Sprintf("task %s failed at %s: %s", r.Name, r.FinishedAt.Format(time.RFC3339), r.Error))
		}
	}
	if !st.Jobs.OldestReady.IsZero() && st.At.Sub(st.Jobs.OldestReady) > time.Hour {
		out = append(out, fmt.Sprintf("a due job has waited %s (is the worker running, or the budget spent?)",
			st.At.Sub(st.Jobs.OldestReady).Round(time.Minute)))
	}
	return out
}

// requeueCommand is the operator command that gives the dead jobs another run: with their
// ids when DeadJobs holds them all, else the listing that shows them.
func (st Status) requeueCommand() string {
	if len(st.DeadJobs) == 0 || len(st.DeadJobs) < st.Jobs.Dead {
		return "kioku jobs list --state dead, then kioku jobs requeue ID..."
	}
	ids := make([]string, len(st.DeadJobs))
	for i, j := range st.DeadJobs {
		ids[i] = strconv.FormatInt(j.ID, 10)
	}
	return "kioku jobs requeue " + strings.Join(ids, " ")
}

func (st Status) lastDeadError() string {
	if len(st.DeadJobs) == 0 || st.DeadJobs[0].LastError == "" {
		return "see the logs"
	}
	return st.DeadJobs[0].LastError
}

// Summary is one line for status displays: queue depth, dead jobs, budget and last runs.
func (st Status) Summary() string {
	parts := []string{fmt.Sprintf("%d queued (%d due), %d running, %d dead", st.Jobs.Queued, st.Jobs.Ready, st.Jobs.Leased, st.Jobs.Dead)}
	if st.Budget != nil && st.Budget.Limit > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d model calls this hour", st.Budget.Used, st.Budget.Limit))
	}
	for _, r := range st.Runs {
		state := "ok"
		if !r.OK {
			state = "failed"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s ago", r.Name, state, st.At.Sub(r.FinishedAt).Round(time.Second)))
	}
	return strings.Join(parts, "; ")
}
