package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
	"github.com/sashabaranov/go-openai"
)

// TickResult counts what one Tick did.
type TickResult struct {
	Done      int `json:"done"`      // jobs completed
	Retried   int `json:"retried"`   // jobs failed and queued again with backoff
	Dead      int `json:"dead"`      // jobs that used their last attempt
	Postponed int `json:"postponed"` // jobs put back without counting an attempt
	Lost      int `json:"lost"`      // jobs whose lease was taken over meanwhile
	// BudgetWait is set when the Tick stopped because the model budget is spent; the
	// queued jobs wait for it.
	BudgetWait bool `json:"budget_wait,omitempty"`
	// ShareWait counts jobs put back because their server used its share of the budget
	// while other servers' jobs were waiting (they are among Postponed).
	ShareWait int `json:"share_wait,omitempty"`
}

// budgetError stops a job that needs a model call while the budget, or its server's share
// of it (share), is spent.
type budgetError struct {
	retryAt time.Time
	share   bool
}

func (e *budgetError) Error() string {
	if e.share {
		return fmt.Sprintf("this server's share of the pipeline model budget is spent until %s", e.retryAt.Format(time.RFC3339))
	}
	return fmt.Sprintf("pipeline model budget spent until %s", e.retryAt.Format(time.RFC3339))
}

// errBadPayload marks a job that can never run; it is dead-lettered at once.
var errBadPayload = errors.New("bad job payload")

// Tick runs due jobs one after another until none is due, the budget is spent, ctx ends
// or MaxJobsPerTick ran. The scheduler calls it every few seconds; tests call it by hand.
// Job failures are recorded on the jobs, not returned; the error is for the queue itself.
func (p *worker) Tick(ctx context.Context) (TickResult, error) {
	p.tickMu.Lock()
	defer p.tickMu.Unlock()
	var res TickResult
	for range p.cfg.MaxJobsPerTick {
		if ctx.Err() != nil {
			return res, nil
		}
		if ok, _ := p.guard.Available(); !ok {
			res.BudgetWait = true
			return res, nil
		}
		job, err := p.jobs.Lease(ctx, p.nextOwner(), []string{KindExtract}, p.cfg.LeaseFor)
		if err != nil {
			return res, err
		}
		if job == nil {
			return res, nil
		}
		p.runJob(ctx, job, &res)
	}
	return res, nil
}

// Reap returns jobs with expired leases to the queue (or to the dead letters when their
// attempts are used up).
func (p *worker) Reap(ctx context.Context) (memory.ReapResult, error) {
	return p.jobs.ReapStale(ctx)
}

// jobRun is the state of one run of one job.
type jobRun struct {
	job     *memory.Job
	payload jobPayload
	log     *slog.Logger
	calls   int
	stats   map[memory.Action]int
	beat    time.Time // last lease renewal, in store time
	started time.Time // when this run leased the job, in store time
}

func (p *worker) runJob(ctx context.Context, job *memory.Job, res *TickResult) {
	start := time.Now()
	leased := job.UpdatedAt // Lease stamps the job with its lease time
	if leased.IsZero() {
		leased = p.now()
	}
	run := &jobRun{job: job, stats: map[memory.Action]int{}, beat: p.now(), started: leased,
		log: p.log.With(slog.Int64(memory.LogJobID, job.ID), slog.String("kind", job.Kind), slog.Int("attempt", job.Attempts+1))}
	err := p.runSafely(ctx, run)
	elapsed := slog.Duration("took", time.Since(start))
	// Bookkeeping must reach the database even when ctx was cancelled by shutdown.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var be *budgetError
	var daily *dailyBudgetError
	switch {
	case err == nil:
		res.Done++
		p.report(JobCompleted)
		run.log.Info("pipeline job done", slog.Int("model_calls", run.calls), slog.Any("outcomes", run.stats), elapsed)
	case errors.Is(err, memory.ErrLeaseLost):
		res.Lost++
		p.report(JobLost)
		run.log.Warn("pipeline job lease lost; its new holder redoes the work", elapsed)
	case errors.As(err, &be) && be.share:
		res.ShareWait++
		p.postpone(bctx, run, be.retryAt, res)
		run.log.Info("pipeline job waits: its server used its share of the model budget while others wait",
			slog.Time("until", be.retryAt), elapsed)
	case errors.As(err, &be):
		res.BudgetWait = true
		p.postpone(bctx, run, be.retryAt, res)
		run.log.Info("pipeline job waits for the model budget", slog.Time("until", be.retryAt), elapsed)
	case errors.As(err, &daily):
		p.postpone(bctx, run, daily.resetAt, res)
		run.log.Info("pipeline job waits: its server's daily model budget is spent", slog.Time("until", daily.resetAt), elapsed)
	case ctx.Err() != nil:
		p.postpone(bctx, run, p.now(), res)
		run.log.Info("pipeline job interrupted by shutdown; requeued", elapsed)
	case errors.Is(err, errRulesUnknown):
		run.payload.RulesWaits++
		wait := rulesWait(run.payload.RulesWaits)
		p.postpone(bctx, run, p.now().Add(wait), res)
		run.log.Info("pipeline job waits: its server's roles are not known yet, so nobody can tell which memories it may see",
			slog.Int("waits", run.payload.RulesWaits), slog.Duration("retry_in", wait), elapsed)
	case errors.Is(err, memory.ErrCursorMoved):
		run.payload.Checkpoint = nil
		p.postpone(bctx, run, p.now(), res)
		run.log.Info("pipeline job's turns were extracted by another run; requeued", elapsed)
	case errors.Is(err, errBadPayload):
		if berr := p.jobs.Bury(bctx, job.ID, job.LeaseOwner, err); berr != nil {
			run.log.Error("couldn't dead-letter pipeline job", slog.Any("err", berr))
		}
		res.Dead++
		p.report(JobBuried)
		run.log.Error("pipeline job dead-lettered", slog.Any("err", err), elapsed)
	default:
		wait := p.backoff(job.Attempts + 1)
		dead, ferr := p.jobs.Fail(bctx, job.ID, job.LeaseOwner, err, wait)
		switch {
		case ferr != nil:
			p.report(JobFailed)
			run.log.Error("couldn't record pipeline job failure", slog.Any("err", ferr), slog.Any("cause", err))
		case dead:
			res.Dead++
			p.report(JobDead)
			run.log.Error("pipeline job failed for the last time; dead-lettered", slog.Any("err", err), elapsed)
		default:
			res.Retried++
			p.report(JobFailed)
			run.log.Warn("pipeline job failed; will retry", slog.Any("err", err), slog.Duration("retry_in", wait), elapsed)
		}
	}
}

func (p *worker) postpone(ctx context.Context, run *jobRun, at time.Time, res *TickResult) {
	if err := p.jobs.Postpone(ctx, run.job.ID, run.job.LeaseOwner, at, run.payload); err != nil {
		if errors.Is(err, memory.ErrLeaseLost) {
			res.Lost++
			p.report(JobLost)
			return
		}
		run.log.Error("couldn't requeue pipeline job", slog.Any("err", err))
	}
	res.Postponed++
	p.report(JobPostponed)
}

// runSafely runs the job and turns a panic into a failed attempt, so one poisoned job
// cannot take the worker down; the lease and max attempts keep it from looping.
func (p *worker) runSafely(ctx context.Context, run *jobRun) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pipeline job panicked: %v", r)
		}
	}()
	if err := json.Unmarshal(run.job.Payload, &run.payload); err != nil || run.payload.ChannelID == "" {
		return fmt.Errorf("%w: %s", errBadPayload, string(run.job.Payload))
	}
	run.log = run.log.With(slog.String(memory.LogGuildID, run.payload.GuildID), slog.String(memory.LogChannelID, run.payload.ChannelID))
	// The job's embedding calls (its candidates' recall, the vectors of what it writes) are
	// charged to the conversation's budget, as its model calls are.
	ctx = memory.WithPayer(ctx, memory.Payer{GuildID: run.payload.GuildID, ChannelID: run.payload.ChannelID})
	return p.extract(ctx, run)
}

// extract is one run of an extraction job: read the turns after the channel's cursor,
// extract facts (or reuse the checkpoint), decide each fact against its candidates, and
// commit everything in one transaction.
func (p *worker) extract(ctx context.Context, run *jobRun) error {
	ch := memory.Channel{GuildID: run.payload.GuildID, ChannelID: run.payload.ChannelID}
	mode, err := p.modeFor(ctx, ch.GuildID)
	if err != nil {
		return err
	}
	cursor, err := p.transcript.ExtractionCursor(ctx, ch.GuildID, ch.ChannelID)
	if err != nil {
		return err
	}
	cp := run.payload.Checkpoint
	if cp != nil && (cp.From != cursor || len(cp.Records) == 0) {
		// Another run moved on, or the checkpoint predates record numbers: redo it.
		cp, run.payload.Checkpoint = nil, nil
	}
	turns, err := p.transcript.TurnsAfter(ctx, ch.GuildID, ch.ChannelID, cursor, p.cfg.MaxTurnsPerJob)
	if err != nil {
		return err
	}
	if cp != nil {
		turns = turnsThrough(turns, cp.Through)
	}
	people, err := p.people(ctx, turns)
	if err != nil {
		return err
	}
	selected, through := selectTurns(turns, people, cursor)
	records := make([]*memory.Turn, len(selected))
	for i := range selected {
		records[i] = &selected[i]
	}
	if cp != nil {
		through = cp.Through
		records = recordsByID(cp.Records, turns, people)
	}
	batch := memory.PipelineBatch{JobID: run.job.ID, LeaseOwner: run.job.LeaseOwner, GuildID: ch.GuildID,
		ChannelID: ch.ChannelID, CursorFrom: cursor, CursorTo: through}
	recs := newBatchRecords(records, people)
	if mode == memory.PipelineOff || len(recs.speakers) == 0 {
		// Nothing to extract (pipeline off, only the bot spoke, or only people who opted
		// out): move the cursor past these turns so they are never mined later.
		return p.commit(ctx, run, ch, batch)
	}
	// Decisions compare facts with the memories the conversation may see; without its
	// server's roles nobody can tell which, so the job waits for them (before paying for
	// the extraction).
	aud := p.audience(ctx, ch)
	if aud != nil && aud.RulesUnknown {
		return errRulesUnknown
	}
	if cp == nil {
		if cp, err = p.extractFacts(ctx, run, ch, selected, cursor, through); err != nil {
			return err
		}
	}
	if cp.Decisions == nil {
		cp.Decisions = map[int]Decision{}
	}
	// The fence of forget-me covers everything since the model first read these turns.
	batch.StartedAt = run.started
	if !cp.StartedAt.IsZero() && cp.StartedAt.Before(batch.StartedAt) {
		batch.StartedAt = cp.StartedAt
	}
	batch.Proposals, err = p.proposeAll(ctx, factBatch{run: run, mode: mode, ch: ch, aud: aud, from: cursor, through: through},
		recs, cp.Extraction.Facts)
	if err != nil {
		return err
	}
	p.prefetchEmbeddings(ctx, run, batch.Proposals)
	if err := p.commit(ctx, run, ch, batch); err != nil {
		return err
	}
	p.recordGraph(ctx, run, ch, mode, recs, cp.Extraction.Entities, batch.StartedAt)
	return nil
}

// extractFacts asks the model for the facts of the selected turns and keeps them as the
// job's checkpoint, so a crash or a spent budget from here on does not pay for them again.
func (p *worker) extractFacts(ctx context.Context, run *jobRun, ch memory.Channel, selected []memory.Turn, cursor, through int64) (*checkpoint, error) {
	reply, err := p.complete(ctx, run, memory.PurposeExtraction, ExtractionMessages(selected, ch.GuildID))
	if err != nil {
		return nil, err
	}
	x := ParseExtraction(reply)
	cp := &checkpoint{From: cursor, Through: through, Records: turnIDs(selected), StartedAt: run.started,
		Extraction: x, Decisions: map[int]Decision{}}
	run.payload.Checkpoint = cp
	for _, w := range x.Warnings {
		run.log.Warn("extraction warning", slog.String("warning", w))
	}
	// Keeping the checkpoint also renews the lease.
	if err := p.heartbeat(ctx, run); err != nil {
		return nil, err
	}
	return cp, nil
}

// prefetchEmbeddings embeds the contents the proposals will write, before the write
// transaction, which must not wait on a model.
func (p *worker) prefetchEmbeddings(ctx context.Context, run *jobRun, props []memory.Proposal) {
	var texts []string
	for _, pr := range props {
		if pr.Record == "" && pr.Action.Writes() {
			texts = append(texts, pr.Memory.Content)
		}
	}
	if err := p.facts.PrefetchEmbeddings(ctx, texts); err != nil {
		// The memories are written anyway; the embedding tracker fills their vectors later.
		run.log.Warn("couldn't prefetch embeddings", slog.Any("err", err))
	}
}

// commit applies the batch in one transaction, then re-arms the channel for turns that
// arrived meanwhile.
func (p *worker) commit(ctx context.Context, run *jobRun, ch memory.Channel, batch memory.PipelineBatch) error {
	if p.cfg.BeforeCommit != nil {
		if err := p.cfg.BeforeCommit(ctx, run.job); err != nil {
			return err
		}
	}
	outcomes, err := p.facts.ApplyPipelineBatch(ctx, batch)
	if err != nil {
		return err
	}
	for _, o := range outcomes {
		run.stats[o.Action]++
	}
	if _, err := p.rearm(ctx, ch); err != nil {
		// The sweep schedules the channel later; the job itself succeeded.
		run.log.Warn("couldn't schedule follow-up extraction", slog.Any("err", err))
	}
	return nil
}

// heartbeat renews the job's lease and checkpoints its model work.
func (p *worker) heartbeat(ctx context.Context, run *jobRun) error {
	if err := p.jobs.Heartbeat(ctx, run.job.ID, run.job.LeaseOwner, p.cfg.LeaseFor, run.payload); err != nil {
		return err
	}
	run.beat = p.now()
	return nil
}

// complete makes one model call for purpose within the budget.
func (p *worker) complete(ctx context.Context, run *jobRun, purpose memory.ModelPurpose, msgs []openai.ChatCompletionMessage) (string, error) {
	key := shareKey(run.payload.GuildID, run.payload.ChannelID)
	if spent, at := p.guard.ShareSpent(key); spent && p.othersWaiting(ctx, key, run.log) {
		return "", &budgetError{retryAt: at, share: true}
	}
	if err := p.takeDaily(ctx, run); err != nil {
		return "", err
	}
	if ok, at := p.guard.TakeFor(key); !ok {
		return "", &budgetError{retryAt: at}
	}
	run.calls++
	resp, err := p.model.CompletePipeline(memory.WithModelPurpose(ctx, purpose), openai.ChatCompletionRequest{Messages: msgs})
	if err != nil {
		return "", fmt.Errorf("couldn't call the pipeline model: %w", err)
	}
	if len(resp.Choices) == 0 {
		return "", errors.New("couldn't call the pipeline model: the reply has no choices")
	}
	return resp.Choices[0].Message.Content, nil
}

// people loads the privacy level and latest name of everyone whose turns are in the batch.
func (p *worker) people(ctx context.Context, turns []memory.Turn) (map[string]*person, error) {
	out := make(map[string]*person)
	for _, t := range turns {
		who := out[t.UserID]
		if who == nil {
			us, err := p.settings.UserSettings(ctx, t.UserID)
			if err != nil {
				return nil, err
			}
			who = &person{id: t.UserID, privacy: us.Privacy}
			out[t.UserID] = who
		}
		if t.Role == memory.RoleUser && t.AuthorName != "" {
			who.name = t.AuthorName
		}
	}
	return out, nil
}

func turnsThrough(turns []memory.Turn, through int64) []memory.Turn {
	for i, t := range turns {
		if t.ID > through {
			return turns[:i]
		}
	}
	return turns
}

// selectTurns picks the turns to extract from: in order, leaving out everything of people
// with privacy "full" (and the bot's answers to them), until MaxInputChars. through is
// the last turn the batch covers, skipped ones included, so the cursor moves past them.
func selectTurns(turns []memory.Turn, people map[string]*person, cursor int64) (selected []memory.Turn, through int64) {
	through = cursor
	size := 0
	for _, t := range turns {
		if who := people[t.UserID]; who != nil && who.privacy == memory.PrivacyFull {
			through = t.ID
			continue
		}
		n := len(recordJSON(len(selected)+1, t)) + 2
		if size+n > MaxInputChars {
			if len(selected) > 0 {
				break
			}
			// One turn longer than the whole budget: keep as much of its beginning as
			// fits once encoded (escapes can make the record longer than the text).
			for room := MaxInputChars - (n - len(t.Content)); n > MaxInputChars && room > 0; room -= n - MaxInputChars {
				t.Content = truncateUTF8(t.Content, room)
				n = len(recordJSON(1, t)) + 2
			}
		}
		selected = append(selected, t)
		size += n
		through = t.ID
	}
	return selected, through
}

func truncateUTF8(s string, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	if len(s) <= maxBytes {
		return s
	}
	s = s[:maxBytes]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
