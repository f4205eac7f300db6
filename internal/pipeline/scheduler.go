package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/robfig/cron/v3"
)

// Names of the scheduled tasks, as they appear in logs, TaskRuns and Status.
const (
	TaskWork      = "work"      // Tick: run due jobs
	TaskReap      = "reap"      // Reap: requeue jobs whose worker died
	TaskSweep     = "sweep"     // Sweep: schedule channels whose extraction was never scheduled
	TaskRetention = "retention" // the store's retention: purge what outlived its keeping, and departed guilds
)

// NewCron returns a cron scheduler (robfig/cron) that logs through log, recovers panics
// in tasks and skips a run while the previous run of the same task is still going, so a
// slow model never stacks up ticks.
func NewCron(log *slog.Logger) *cron.Cron {
	cl := cronLogger{log}
	return cron.New(
		cron.WithLogger(cl),
		cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)),
	)
}

// cronLogger adapts slog to cron.Logger. cron's own info lines (scheduling, waking) are
// debug noise, except skipped runs, which say the worker is falling behind.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, keysAndValues ...any) {
	level := slog.LevelDebug
	if msg == "skip" {
		level = slog.LevelWarn
		msg = "skipped a scheduled run: the previous one is still running"
	}
	l.log.Log(context.Background(), level, "cron: "+msg, keysAndValues...)
}

func (l cronLogger) Error(err error, msg string, keysAndValues ...any) {
	l.log.Error("cron: "+msg, append(keysAndValues, "err", err)...)
}

// Scheduler returns the pipeline's cron scheduler with its tasks (work, reap, sweep, retention,
// and maintenance unless it is off),
// building it on first use. Start starts it; tests run an entry's WrappedJob by hand.
func (p *scheduler) Scheduler() (*cron.Cron, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.schedulerLocked()
}

func (p *scheduler) schedulerLocked() (*cron.Cron, error) {
	if p.sched != nil {
		return p.sched, nil
	}
	c := NewCron(p.log)
	tasks := []struct{ spec, name string }{
		{p.cfg.WorkSchedule, TaskWork},
		{p.cfg.ReapSchedule, TaskReap},
		{p.cfg.SweepSchedule, TaskSweep},
		{p.cfg.RetentionSchedule, TaskRetention},
	}
	if p.maint != nil {
		tasks = append(tasks, struct{ spec, name string }{p.cfg.MaintenanceSchedule, TaskMaintenance})
	}
	for _, t := range tasks {
		if _, err := c.AddJob(t.spec, p.task(t.name, p.taskFunc(t.name))); err != nil {
			return nil, fmt.Errorf("couldn't schedule pipeline task %s (%q): %w", t.name, t.spec, err)
		}
	}
	if fn := p.taskFunc(TaskEmbeddings); fn != nil { // only with an embedding model
		if _, err := c.AddJob(p.cfg.EmbedSchedule, p.task(TaskEmbeddings, fn)); err != nil {
			return nil, fmt.Errorf("couldn't schedule pipeline task %s (%q): %w", TaskEmbeddings, p.cfg.EmbedSchedule, err)
		}
	}
	p.sched = c
	return c, nil
}

// task wraps fn as a cron job that runs under the pipeline's background context, logs one
// structured line per run and records the run for doctor and /kioku status.
func (p *scheduler) task(name string, fn func(ctx context.Context) (string, error)) cron.Job {
	return cron.FuncJob(func() {
		p.mu.Lock()
		ctx := p.runCtx
		p.mu.Unlock()
		if ctx == nil {
			ctx = context.Background()
		}
		p.runTask(ctx, name, fn)
	})
}

func (p *scheduler) runTask(ctx context.Context, name string, fn func(ctx context.Context) (string, error)) {
	started := p.now()
	clock := time.Now()
	run := memory.TaskRun{Name: name, StartedAt: started}
	defer func() {
		if r := recover(); r != nil {
			run.Error = fmt.Sprintf("panic: %v", r)
			p.finishTask(run, clock)
			panic(r) // cron.Recover logs it with the stack
		}
	}()
	detail, err := fn(ctx)
	if errors.Is(err, errNothingDue) {
		return // a poll that found nothing is not a run: nothing to log or record
	}
	if err != nil && ctx.Err() != nil {
		// Cut short by a shutdown (Stop, or the caller's context), not failed: the next
		// run does the work, and an interrupted job went back to the queue. Logged, not
		// recorded as a failure nor shown as an error on the way out.
		p.log.Info("pipeline task interrupted by shutdown", slog.String("task", name), slog.Duration("took", time.Since(clock)))
		return
	}
	run.Detail, run.OK = detail, err == nil
	if err != nil {
		run.Error = err.Error()
	}
	p.finishTask(run, clock)
}

func (p *scheduler) finishTask(run memory.TaskRun, clock time.Time) {
	run.FinishedAt = p.now()
	took := time.Since(clock)
	attrs := []any{slog.String("task", run.Name), slog.String("result", run.Detail), slog.Duration("took", took)}
	if run.OK {
		p.log.Debug("pipeline task ran", attrs...)
	} else {
		p.log.Error("pipeline task failed", append(attrs, slog.String("err", run.Error))...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.ledger.RecordRun(ctx, run); err != nil {
		p.log.Warn("couldn't record pipeline task run", slog.String("task", run.Name), slog.Any("err", err))
	}
}

// taskFunc is the body of a scheduled task; it returns a one-line result for the run record.
func (p *scheduler) taskFunc(name string) func(ctx context.Context) (string, error) {
	switch name {
	case TaskEmbeddings:
		if p.embeddings != nil {
			return p.trackEmbeddings
		}
	case TaskWork:
		return func(ctx context.Context) (string, error) {
			// A read first: an idle queue must not cost a write transaction per poll.
			due, err := p.jobs.HasDue(ctx, []string{KindExtract})
			if err != nil {
				return "", err
			}
			if !due {
				return "", errNothingDue
			}
			r, err := p.work.Tick(ctx)
			return fmt.Sprintf("done=%d retried=%d dead=%d postponed=%d lost=%d budget_wait=%v",
				r.Done, r.Retried, r.Dead, r.Postponed, r.Lost, r.BudgetWait), err
		}
	case TaskReap:
		return func(ctx context.Context) (string, error) {
			r, err := p.work.Reap(ctx)
			return fmt.Sprintf("requeued=%d dead=%d", r.Requeued, r.Dead), err
		}
	case TaskSweep:
		return func(ctx context.Context) (string, error) {
			n, err := p.hook.Sweep(ctx)
			return fmt.Sprintf("scheduled=%d", n), err
		}
	case TaskRetention:
		return func(ctx context.Context) (string, error) {
			r, err := p.housekeeping.Retention(ctx, p.cfg.Retention)
			// Servers that removed the bot longer ago than their grace period lose their data.
			g, guilds, gerr := p.housekeeping.PurgeDepartedGuilds(ctx)
			return fmt.Sprintf("embeddings=%d tombstones=%d history=%d done_jobs=%d dead_jobs=%d transcripts=%d departed_guilds=%d departed_memories=%d",
				r.Embeddings, r.Tombstones, r.History, r.DoneJobs, r.DeadJobs, r.Transcripts, guilds, g.Memories), errors.Join(err, gerr)
		}
	case TaskMaintenance:
		if p.maint == nil {
			return nil
		}
		return func(ctx context.Context) (string, error) {
			r, err := p.maint.Run(ctx)
			return r.Summary(), err
		}
	}
	return nil
}

// RunTask runs one scheduled task now, outside the schedule, and records it like a
// scheduled run. `kioku run` may use it to reap stale leases at start; tests use it to
// check the run records.
func (p *scheduler) RunTask(ctx context.Context, name string) error {
	fn := p.taskFunc(name)
	if fn == nil {
		return fmt.Errorf("unknown pipeline task %q", name)
	}
	p.runTask(ctx, name, fn)
	return nil
}

// Start starts the scheduled work in the background and returns: the worker, woken at once
// by this process's enqueues and otherwise polling every 30 s (a read; it leases only when
// a job is due), the reaper every minute, the sweep every five minutes and retention every
// six hours (the defaults). Tasks run under a context derived from ctx without its
// cancellation; Stop cancels it. Starting twice is an error.
func (p *scheduler) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return errors.New("pipeline already started")
	}
	c, err := p.schedulerLocked()
	if err != nil {
		return err
	}
	p.runCtx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.running = true
	c.Start()
	p.wakeDone = make(chan struct{})
	go p.wakeLoop(p.runCtx, p.wakeDone)
	p.notify() // jobs left due by an earlier run are picked up now, not at the first poll
	p.log.Info("pipeline started", slog.String("work", p.cfg.WorkSchedule), slog.String("reap", p.cfg.ReapSchedule),
		slog.String("sweep", p.cfg.SweepSchedule), slog.String("retention", p.cfg.RetentionSchedule),
		slog.Int("calls_per_hour", p.cfg.CallsPerHour))
	return nil
}

// Stop stops scheduling, cancels running tasks (a job interrupted this way goes back to
// the queue without counting an attempt) and waits for them to return or for ctx to end.
func (p *scheduler) Stop(ctx context.Context) error {
	p.mu.Lock()
	if !p.running {
		p.mu.Unlock()
		return nil
	}
	p.running = false
	c, cancel, woken := p.sched, p.cancel, p.wakeDone
	p.mu.Unlock()
	done := c.Stop()
	cancel()
	for _, finished := range []<-chan struct{}{done.Done(), woken} {
		select {
		case <-finished:
		case <-ctx.Done():
			return fmt.Errorf("couldn't stop pipeline: %w", context.Cause(ctx))
		}
	}
	p.log.Info("pipeline stopped")
	return nil
}
