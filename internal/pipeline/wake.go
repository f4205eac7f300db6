package pipeline

import (
	"context"
	"errors"

	"github.com/robfig/cron/v3"
)

// errNothingDue is the work task's answer when its read-only look at the queue found no
// due job: the poll did nothing, so it is neither logged nor recorded as a run.
var errNothingDue = errors.New("no job is due")

// notify wakes the started worker to look for due jobs now. It never blocks: one pending
// signal covers any number of enqueues, because a Tick runs every due job.
func (c *core) notify() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// wakeLoop runs the work task each time notify signals, until ctx ends. It is the fast
// path beside the slow cron poll: a job this process enqueues due now starts at once. The
// two may overlap; Tick's lock runs them one after another, and a signal that arrives
// during a run stays pending, so an enqueue is never missed.
func (p *scheduler) wakeLoop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	// Recovered like the cron tasks: a panic in a run is logged, not fatal.
	job := cron.NewChain(cron.Recover(cronLogger{p.log})).Then(cron.FuncJob(func() {
		p.runTask(ctx, TaskWork, p.taskFunc(TaskWork))
	}))
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
			if ctx.Err() != nil {
				return
			}
			job.Run()
		}
	}
}
