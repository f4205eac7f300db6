package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

const jobColumns = `id, kind, dedup_key, payload, state, attempts, max_attempts, run_after, lease_owner,
	leased_until, last_error, created_at, updated_at`

func scanJob(row scanner) (*memory.Job, error) {
	var (
		j                              memory.Job
		payload                        string
		runAfter, leased, created, upd int64
	)
	if err := row.Scan(&j.ID, &j.Kind, &j.DedupKey, &payload, &j.State, &j.Attempts, &j.MaxAttempts, &runAfter,
		&j.LeaseOwner, &leased, &j.LastError, &created, &upd); err != nil {
		return nil, err
	}
	j.Payload = json.RawMessage(payload)
	j.RunAfter, j.LeasedUntil = fromMillis(runAfter), fromMillis(leased)
	j.CreatedAt, j.UpdatedAt = fromMillis(created), fromMillis(upd)
	return &j, nil
}

// Enqueue adds a job unless one of the same kind and dedup key is already queued or
// running. It returns the id of the job that will do the work and whether it was created.
// When a queued duplicate exists, its run_after moves as EnqueueOptions says and its
// payload is kept; a running duplicate is left alone (its worker re-checks for new work
// when it finishes).
func (s *Jobs) Enqueue(ctx context.Context, kind, dedupKey string, payload any, opt memory.EnqueueOptions) (int64, bool, error) {
	if kind == "" || dedupKey == "" {
		return 0, false, fmt.Errorf("couldn't enqueue job: kind and dedup key are required")
	}
	body, err := encodePayload(payload)
	if err != nil {
		return 0, false, fmt.Errorf("couldn't enqueue %s job: %w", kind, err)
	}
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = memory.DefaultMaxAttempts
	}
	var (
		id      int64
		created bool
	)
	err = s.db.withWriteTx(ctx, func(tx *txn) error {
		// Two processes enqueueing the same work must find each other's job.
		if err := s.db.eng.LockKey(ctx, tx, "job:"+kind+"\x1f"+dedupKey); err != nil {
			return err
		}
		now := s.db.nowMillis()
		runAfter := max(millis(opt.RunAfter), now) // zero or past: now
		var (
			state    string
			existing int64
		)
		err := tx.QueryRowContext(ctx, `SELECT id, state, run_after FROM memory_jobs
			WHERE kind = ? AND dedup_key = ? AND state IN ('queued', 'leased')`, kind, dedupKey).Scan(&id, &state, &existing)
		switch {
		case err == nil:
			if state != memory.JobQueued {
				return nil
			}
			next := min(existing, runAfter)
			if opt.Debounce && existing > now {
				next = runAfter
			}
			if next != existing {
				if _, err := tx.ExecContext(ctx, `UPDATE memory_jobs SET run_after = ?, updated_at = ? WHERE id = ?`,
					next, now, id); err != nil {
					return fmt.Errorf("couldn't reschedule job %d: %w", id, err)
				}
			}
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("couldn't look up %s job: %w", kind, err)
		}
		created = true
		return tx.QueryRowContext(ctx, `INSERT INTO memory_jobs (kind, dedup_key, payload, state, max_attempts,
			run_after, created_at, updated_at) VALUES (?, ?, ?, 'queued', ?, ?, ?, ?) RETURNING id`,
			kind, dedupKey, body, opt.MaxAttempts, runAfter, now, now).Scan(&id)
	})
	if err != nil {
		return 0, false, fmt.Errorf("couldn't enqueue %s job: %w", kind, err)
	}
	return id, created, nil
}

func encodePayload(payload any) (string, error) {
	switch p := payload.(type) {
	case nil:
		return "{}", nil
	case json.RawMessage:
		if len(p) == 0 {
			return "{}", nil
		}
		if !json.Valid(p) {
			return "", fmt.Errorf("payload is not valid JSON")
		}
		return string(p), nil
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("couldn't encode payload: %w", err)
	}
	return string(b), nil
}

// Lease atomically takes the oldest due queued job of one of kinds (any kind when kinds is
// empty) for owner until leaseFor from now. It returns nil without error when no job is
// due. owner must be unique per lease (a worker id plus a counter), because it is the
// token every later call on the job is checked against.
func (s *Jobs) Lease(ctx context.Context, owner string, kinds []string, leaseFor time.Duration) (*memory.Job, error) {
	if owner == "" || leaseFor <= 0 {
		return nil, fmt.Errorf("couldn't lease job: owner and a positive lease are required")
	}
	kindClause, args := kindFilter(kinds)
	var job *memory.Job
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		now := s.db.nowMillis()
		qargs := append([]any{owner, now + leaseFor.Milliseconds(), now, now}, args...)
		var err error
		job, err = scanJob(tx.QueryRowContext(ctx, `UPDATE memory_jobs SET state = 'leased', lease_owner = ?,
			leased_until = ?, updated_at = ?
			WHERE id = (SELECT id FROM memory_jobs WHERE state = 'queued' AND run_after <= ?`+kindClause+`
			            ORDER BY run_after, id LIMIT 1`+s.db.dialect.SkipLocked+`)
			RETURNING `+jobColumns, qargs...))
		if errors.Is(err, sql.ErrNoRows) {
			job = nil
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("couldn't lease job: %w", err)
	}
	return job, nil
}

// HasDue reports whether a queued job of one of kinds (any kind when kinds is empty) is due
// now. It reads on the reader pool, so a worker can look for work as often as it likes
// without taking the write lock; only a yes is worth a Lease. Jobs that other processes
// (the CLI, `kioku chat`) enqueued are seen as soon as they commit.
func (s *Jobs) HasDue(ctx context.Context, kinds []string) (bool, error) {
	kindClause, args := kindFilter(kinds)
	var one int
	err := s.db.read.QueryRowContext(ctx, `SELECT 1 FROM memory_jobs WHERE state = 'queued' AND run_after <= ?`+
		kindClause+` LIMIT 1`, append([]any{s.db.nowMillis()}, args...)...).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("couldn't look for due jobs: %w", err)
	}
	return true, nil
}

// kindFilter is the " AND kind IN (...)" clause for kinds with its arguments; empty kinds
// filter nothing.
func kindFilter(kinds []string) (string, []any) {
	if len(kinds) == 0 {
		return "", nil
	}
	args := make([]any, len(kinds))
	for i, k := range kinds {
		args[i] = k
	}
	return ` AND kind IN (` + strings.TrimSuffix(strings.Repeat("?,", len(kinds)), ",") + `)`, args
}

// holdsLease checks inside tx that owner still holds job id.
func holdsLease(ctx context.Context, tx *txn, id int64, owner string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memory_jobs WHERE id = ? AND state = 'leased'
		AND lease_owner = ?`, id, owner).Scan(&n); err != nil {
		return fmt.Errorf("couldn't check lease of job %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("job %d: %w", id, memory.ErrLeaseLost)
	}
	return nil
}

// leasedUpdate runs an UPDATE on job id guarded by owner's lease and reports ErrLeaseLost
// when the guard matched nothing.
func leasedUpdate(ctx context.Context, tx *txn, id int64, owner, set string, args ...any) error {
	res, err := tx.ExecContext(ctx, `UPDATE memory_jobs SET `+set+` WHERE id = ? AND state = 'leased' AND lease_owner = ?`,
		append(args, id, owner)...)
	if err != nil {
		return fmt.Errorf("couldn't update job %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("job %d: %w", id, memory.ErrLeaseLost)
	}
	return nil
}

// Complete marks a leased job done.
func (s *Jobs) Complete(ctx context.Context, id int64, owner string) error {
	return s.db.withWriteTx(ctx, func(tx *txn) error { return s.db.completeTx(ctx, tx, id, owner) })
}

func (s *db) completeTx(ctx context.Context, tx *txn, id int64, owner string) error {
	return leasedUpdate(ctx, tx, id, owner, `state = 'done', payload = `+s.dialect.JobIDsPayload+`, lease_owner = '', leased_until = 0,
		last_error = '', updated_at = ?`, s.nowMillis())
}

// Fail records a failed run of a leased job: attempts go up by one and the job waits
// retryIn before its next run, or becomes dead when its attempts are used up. It reports
// whether the job is now dead. A dead job keeps only its ids; the stored error says what
// kind of problem it was and never quotes the payload.
func (s *Jobs) Fail(ctx context.Context, id int64, owner string, cause error, retryIn time.Duration) (dead bool, err error) {
	err = s.db.withWriteTx(ctx, func(tx *txn) error {
		var (
			attempts, maxAttempts int
			payload               string
		)
		err := tx.QueryRowContext(ctx, `SELECT attempts, max_attempts, payload FROM memory_jobs WHERE id = ? AND state = 'leased'
			AND lease_owner = ?`, id, owner).Scan(&attempts, &maxAttempts, &payload)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("job %d: %w", id, memory.ErrLeaseLost)
		}
		if err != nil {
			return fmt.Errorf("couldn't read job %d: %w", id, err)
		}
		now := s.db.nowMillis()
		dead = attempts+1 >= maxAttempts
		state := memory.JobQueued
		if dead {
			state = memory.JobDead
		}
		return leasedUpdate(ctx, tx, id, owner, `state = ?, payload = CASE WHEN ? THEN `+s.db.dialect.JobIDsPayload+` ELSE payload END,
			attempts = attempts + 1, run_after = ?, lease_owner = '', leased_until = 0, last_error = ?, updated_at = ?`,
			state, dead, now+max(retryIn, 0).Milliseconds(), jobErrorText(cause, payload), now)
	})
	return dead, err
}

// Bury dead-letters a leased job at once, for failures that will fail the same way every
// time (a rejected request, a bad payload). It counts as one more attempt. Like any dead
// job it keeps only its ids, and the stored error never quotes the payload.
func (s *Jobs) Bury(ctx context.Context, id int64, owner string, cause error) error {
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		var payload string
		err := tx.QueryRowContext(ctx, `SELECT payload FROM memory_jobs WHERE id = ? AND state = 'leased'
			AND lease_owner = ?`, id, owner).Scan(&payload)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("job %d: %w", id, memory.ErrLeaseLost)
		}
		if err != nil {
			return fmt.Errorf("couldn't read job %d: %w", id, err)
		}
		return leasedUpdate(ctx, tx, id, owner, `state = 'dead', payload = `+s.db.dialect.JobIDsPayload+`, attempts = attempts + 1,
			lease_owner = '', leased_until = 0, last_error = ?, updated_at = ?`, jobErrorText(cause, payload), s.db.nowMillis())
	})
}

// Postpone gives a leased job back to the queue until runAfter without counting an attempt:
// the job did not fail, it could not run yet (the model budget is spent, the process is
// shutting down). payload, when not nil, replaces the job's payload so work done so far is
// kept for the next run.
func (s *Jobs) Postpone(ctx context.Context, id int64, owner string, runAfter time.Time, payload any) error {
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		set, args := `state = 'queued', run_after = ?, lease_owner = '', leased_until = 0, updated_at = ?`,
			[]any{max(millis(runAfter), s.db.nowMillis()), s.db.nowMillis()}
		if payload != nil {
			body, err := encodePayload(payload)
			if err != nil {
				return fmt.Errorf("couldn't postpone job %d: %w", id, err)
			}
			set += `, payload = ?`
			args = append(args, body)
		}
		return leasedUpdate(ctx, tx, id, owner, set, args...)
	})
}

// Heartbeat extends owner's lease on job id to leaseFor from now, so a long job is not
// reaped while it is still making progress. payload, when not nil, checkpoints the job.
func (s *Jobs) Heartbeat(ctx context.Context, id int64, owner string, leaseFor time.Duration, payload any) error {
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		now := s.db.nowMillis()
		set, args := `leased_until = ?, updated_at = ?`, []any{now + leaseFor.Milliseconds(), now}
		if payload != nil {
			body, err := encodePayload(payload)
			if err != nil {
				return fmt.Errorf("couldn't checkpoint job %d: %w", id, err)
			}
			set += `, payload = ?`
			args = append(args, body)
		}
		return leasedUpdate(ctx, tx, id, owner, set, args...)
	})
}

// ReapStale returns jobs whose lease expired (their worker crashed or hung) to the queue.
// An expired lease counts as a failed attempt, so a job that kills its worker every time
// still ends dead after max attempts instead of looping forever.
func (s *Jobs) ReapStale(ctx context.Context) (memory.ReapResult, error) {
	var res memory.ReapResult
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		now := s.db.nowMillis()
		rows, err := tx.QueryContext(ctx, `UPDATE memory_jobs SET
			state = CASE WHEN attempts + 1 >= max_attempts THEN 'dead' ELSE 'queued' END,
			payload = CASE WHEN attempts + 1 >= max_attempts THEN `+s.db.dialect.JobIDsPayload+` ELSE payload END,
			attempts = attempts + 1, run_after = ?, last_error = 'lease of ' || lease_owner || ' expired',
			lease_owner = '', leased_until = 0, updated_at = ?
			WHERE state = 'leased' AND leased_until < ? RETURNING state`, now, now, now)
		if err != nil {
			return fmt.Errorf("couldn't reap stale jobs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var state string
			if err := rows.Scan(&state); err != nil {
				return fmt.Errorf("couldn't reap stale jobs: %w", err)
			}
			if state == memory.JobDead {
				res.Dead++
			} else {
				res.Requeued++
			}
		}
		return rows.Err()
	})
	return res, err
}

// Requeue gives a dead job a fresh set of attempts, to run now. It fails with ECONFLICT
// when another job for the same work is already queued or running.
func (s *Jobs) Requeue(ctx context.Context, id int64) error {
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		var kind, key, state string
		err := tx.QueryRowContext(ctx, `SELECT kind, dedup_key, state FROM memory_jobs WHERE id = ?`, id).Scan(&kind, &key, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return memory.Errorf(memory.ENOTFOUND, "There is no job #%d.", id)
		}
		if err != nil {
			return fmt.Errorf("couldn't read job %d: %w", id, err)
		}
		if state != memory.JobDead {
			return memory.Errorf(memory.ECONFLICT, "Job #%d is %s, not dead; only dead jobs can be requeued.", id, jobStateWord(state))
		}
		var live int64
		err = tx.QueryRowContext(ctx, `SELECT id FROM memory_jobs WHERE kind = ? AND dedup_key = ?
			AND state IN ('queued', 'leased')`, kind, key).Scan(&live)
		if err == nil {
			return memory.Errorf(memory.ECONFLICT, "Job #%d already does the same work; job #%d stays dead.", live, id)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("couldn't check duplicates of job %d: %w", id, err)
		}
		now := s.db.nowMillis()
		_, err = tx.ExecContext(ctx, `UPDATE memory_jobs SET state = 'queued', attempts = 0, run_after = ?,
			updated_at = ? WHERE id = ?`, now, now, id)
		if err != nil {
			return fmt.Errorf("couldn't requeue job %d: %w", id, err)
		}
		return nil
	})
}

// GetJob returns one job.
func (s *Jobs) GetJob(ctx context.Context, id int64) (*memory.Job, error) {
	j, err := scanJob(s.db.read.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM memory_jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memory.Errorf(memory.ENOTFOUND, "There is no job #%d.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't read job %d: %w", id, err)
	}
	return j, nil
}

// ListJobs returns up to limit jobs in state (any state when empty), newest first.
func (s *Jobs) ListJobs(ctx context.Context, state string, limit int) ([]*memory.Job, error) {
	f := memory.JobFilter{Limit: limit}
	if state != "" {
		f.States = []string{state}
	}
	return s.FindJobs(ctx, f)
}

// FindJobs returns the jobs f selects, newest first. The guild is matched in the query, so
// a listing for one server never reads another's jobs.
func (s *Jobs) FindJobs(ctx context.Context, f memory.JobFilter) ([]*memory.Job, error) {
	limit := f.Limit
	if limit <= 0 || limit > 500 {
		limit = 500
	}
	where, args, err := jobWhere(s.db.eng, f)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+jobColumns+` FROM memory_jobs WHERE `+where+
		` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("couldn't list jobs: %w", err)
	}
	defer rows.Close()
	var out []*memory.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("couldn't read job row: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// jobWhere is the WHERE clause of f, never empty. A guild is read from the payload, where
// every job of a guild conversation names it (see jobIDsPayload: even a finished job keeps it).
func jobWhere(eng Engine, f memory.JobFilter) (string, []any, error) {
	where, args := []string{"1 = 1"}, []any{}
	if len(f.States) > 0 {
		for _, st := range f.States {
			switch st {
			case memory.JobQueued, memory.JobLeased, memory.JobDone, memory.JobDead:
			default:
				return "", nil, memory.Errorf(memory.EINVALID, "Unknown job state %q.", st)
			}
			args = append(args, st)
		}
		where = append(where, `state IN (`+placeholders(len(f.States))+`)`)
	}
	if f.GuildID != "" {
		where = append(where, eng.Dialect().JSONText("payload", "guild_id")+` = ?`)
		args = append(args, f.GuildID)
	}
	if !f.UpdatedBefore.IsZero() {
		where = append(where, `updated_at < ?`)
		args = append(args, millis(f.UpdatedBefore))
	}
	return strings.Join(where, " AND "), args, nil
}

// CountJobs counts the jobs f selects (its Limit does not apply), for a purge's preview.
func (s *Jobs) CountJobs(ctx context.Context, f memory.JobFilter) (int, error) {
	where, args, err := jobWhere(s.db.eng, f)
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM memory_jobs WHERE `+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("couldn't count jobs: %w", err)
	}
	return n, nil
}

// purgeBatchJobs is how many jobs one transaction of PurgeJobs deletes, so a large purge
// next to a running bot never holds the write lock for long.
const purgeBatchJobs = 500

// PurgeJobs deletes the finished jobs f selects (its Limit does not apply) and returns how
// many. Only done and dead jobs can be purged: a queued or running job is work still to do,
// and f must name the states, so that an empty filter cannot empty the queue.
func (s *Jobs) PurgeJobs(ctx context.Context, f memory.JobFilter) (int, error) {
	if len(f.States) == 0 {
		return 0, memory.Errorf(memory.EINVALID, "Name the states to purge: done, dead or both.")
	}
	for _, st := range f.States {
		if st != memory.JobDone && st != memory.JobDead {
			return 0, memory.Errorf(memory.EINVALID, "Only done and dead jobs can be purged, not %s ones.", jobStateWord(st))
		}
	}
	where, args, err := jobWhere(s.db.eng, f)
	if err != nil {
		return 0, err
	}
	total := 0
	for {
		var n int
		err := s.db.withWriteTx(ctx, func(tx *txn) error {
			var err error
			n, err = execCount(ctx, tx, `DELETE FROM memory_jobs WHERE id IN (SELECT id FROM memory_jobs WHERE `+where+
				` LIMIT ?)`, append(slices.Clone(args), purgeBatchJobs)...)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("couldn't purge jobs: %w", err)
		}
		total += n
		if n < purgeBatchJobs {
			return total, nil
		}
	}
}

// jobStateWord names a stored job state for people: "queued" and "leased" are the queue's
// words, "waiting to run" and "running" what they mean.
func jobStateWord(state string) string {
	switch state {
	case memory.JobQueued:
		return "waiting to run"
	case memory.JobLeased:
		return "running"
	}
	return state
}

// JobStats counts jobs by state.
func (s *Jobs) JobStats(ctx context.Context) (memory.JobStats, error) {
	var (
		st     memory.JobStats
		oldest sql.NullInt64
	)
	now := s.db.nowMillis()
	err := s.db.read.QueryRowContext(ctx, `SELECT
		count(*) FILTER (WHERE state = 'queued'),
		count(*) FILTER (WHERE state = 'queued' AND run_after <= ?),
		count(*) FILTER (WHERE state = 'leased'),
		count(*) FILTER (WHERE state = 'leased' AND leased_until < ?),
		count(*) FILTER (WHERE state = 'done'),
		count(*) FILTER (WHERE state = 'dead'),
		min(CASE WHEN state = 'queued' AND run_after <= ? THEN run_after END)
		FROM memory_jobs`, now, now, now).Scan(&st.Queued, &st.Ready, &st.Leased, &st.Stale, &st.Done, &st.Dead, &oldest)
	if err != nil {
		return st, fmt.Errorf("couldn't read job stats: %w", err)
	}
	if oldest.Valid {
		st.OldestReady = fromMillis(oldest.Int64)
	}
	return st, nil
}

// RecordRun stores r as the latest run of its task and counts it.
func (s *Jobs) RecordRun(ctx context.Context, r memory.TaskRun) error {
	fail := 0
	if !r.OK {
		fail = 1
	}
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO pipeline_runs (name, started_at, finished_at, ok, error, detail, runs, failures)
			VALUES (?, ?, ?, ?, ?, ?, 1, ?) ON CONFLICT (name) DO UPDATE SET started_at = excluded.started_at,
			finished_at = excluded.finished_at, ok = excluded.ok, error = excluded.error, detail = excluded.detail,
			runs = pipeline_runs.runs + 1, failures = pipeline_runs.failures + excluded.failures`,
			r.Name, millis(r.StartedAt), millis(r.FinishedAt), boolInt(r.OK), r.Error, r.Detail, fail)
		if err != nil {
			return fmt.Errorf("couldn't record run of %s: %w", r.Name, err)
		}
		return nil
	})
}

// TaskRuns returns the latest run of every task that ever ran, by name.
func (s *Jobs) TaskRuns(ctx context.Context) ([]memory.TaskRun, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT name, started_at, finished_at, ok, error, detail, runs, failures
		FROM pipeline_runs ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("couldn't read task runs: %w", err)
	}
	defer rows.Close()
	var out []memory.TaskRun
	for rows.Next() {
		var (
			r                 memory.TaskRun
			started, finished int64
			ok                int
		)
		if err := rows.Scan(&r.Name, &started, &finished, &ok, &r.Error, &r.Detail, &r.Runs, &r.Failures); err != nil {
			return nil, fmt.Errorf("couldn't read task run: %w", err)
		}
		r.StartedAt, r.FinishedAt, r.OK = fromMillis(started), fromMillis(finished), ok != 0
		out = append(out, r)
	}
	return out, rows.Err()
}
