package pipeline

// JobOutcome is how one run of a job ended, as reported to Config.OnJobOutcome.
type JobOutcome string

// The outcomes of a job run.
const (
	// JobCompleted: the run committed its batch and completed the job.
	JobCompleted JobOutcome = "completed"
	// JobFailed: the run failed and the job waits to be retried with backoff.
	JobFailed JobOutcome = "failed"
	// JobDead: the run failed on the job's last attempt; it is dead-lettered.
	JobDead JobOutcome = "dead"
	// JobBuried: the job can never run (a bad payload); it is dead-lettered at once.
	JobBuried JobOutcome = "buried"
	// JobPostponed: the job went back to the queue without spending an attempt (model
	// budget spent, shutdown, or another run moved the channel's cursor).
	JobPostponed JobOutcome = "postponed"
	// JobLost: the run's lease was taken over meanwhile; the new holder redoes the work.
	JobLost JobOutcome = "lost"
)

// JobOutcomes lists every JobOutcome, so that a counter can start each at zero.
var JobOutcomes = []JobOutcome{JobCompleted, JobFailed, JobDead, JobBuried, JobPostponed, JobLost}

// report tells Config.OnJobOutcome how a job run ended.
func (c *core) report(o JobOutcome) {
	if c.cfg.OnJobOutcome != nil {
		c.cfg.OnJobOutcome(o)
	}
}
