// Package pipeline is kioku's background memory work (SPEC §4): it reads what people said
// in each channel, extracts facts worth keeping with the pipeline model, decides for each
// fact whether it is new, refines or retracts an existing memory, or is already known,
// and applies those decisions through controlled writes that are audited in history.
//
// Everything durable lives in the store, behind the small interfaces of deps.go: the job
// queue, the per-channel extraction cursor, checkpoints of work done so far. Model and
// embedding calls happen only between transactions; each job ends in one short
// transaction that writes its facts, moves the cursor and completes the job together, so a
// crash at any point either loses the whole run (which is then redone) or none of it, and
// never duplicates a fact.
//
// A chat turn calls OnTurn after storing a user turn; `kioku run` calls Start and Stop.
// Tests drive the same work by hand with Tick, Reap and Sweep.
package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/backoff"
	"github.com/kioku-bot/kioku/memory/maintenance"
	"github.com/robfig/cron/v3"
	"github.com/sashabaranov/go-openai"
)

// Model is what the pipeline needs from the language model: one completion with the
// pipeline model. *llm.Client satisfies it.
type Model interface {
	CompletePipeline(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// KindExtract is the job kind of conversation extraction; its dedup key is the channel.
const KindExtract = "extract"

// Defaults copied into a Config's zero fields by New.
const (
	// DefaultBatchTurns (N) is how many unextracted user turns in a channel start an
	// extraction right away: about a screenful of conversation, enough context for the
	// model to tell a decision from banter, few enough that memories appear the same hour.
	DefaultBatchTurns = 8
	// DefaultIdleAfter (T) starts an extraction when a channel has been quiet this long
	// with turns waiting: conversations usually pause for good after ten minutes.
	DefaultIdleAfter = 10 * time.Minute
	// DefaultConfidenceGate is the least confidence (the fact's and the decision's) for a
	// proposal to be applied (SPEC §4).
	DefaultConfidenceGate = 0.7
	// DefaultCallsPerHour caps pipeline model calls per hour (SPEC §4): one busy server's
	// worth of extractions, a bounded bill if a loop misbehaves.
	DefaultCallsPerHour = 120
	// DefaultLeaseFor is how long a worker holds a job before the reaper may take it
	// back. Heartbeats extend it between model calls, so it only has to outlast one call
	// with its retries (llm's 60 s timeout × 4 attempts plus backoff).
	DefaultLeaseFor = 10 * time.Minute
	// DefaultBackoffBase and DefaultBackoffMax bound the wait after a failed run:
	// 1, 2, 4, 8 minutes… with equal jitter, so with the default five attempts a job
	// survives a quarter-hour outage before it is dead-lettered.
	DefaultBackoffBase = time.Minute
	DefaultBackoffMax  = time.Hour
	// DefaultMaxTurnsPerJob bounds the transcript turns read by one job; the rest wait
	// for a follow-up job. MaxInputChars usually cuts earlier.
	DefaultMaxTurnsPerJob = 200
	// DefaultMaxJobsPerTick bounds the jobs one Tick runs, so a backlog does not hold the
	// worker (and its shutdown) for long.
	DefaultMaxJobsPerTick = 10
	// DefaultSweepWindow is how far back the sweep looks for channels whose extraction
	// was never scheduled (a crash between a turn and its enqueue).
	DefaultSweepWindow = 48 * time.Hour
	// Schedules of the cron tasks (robfig/cron syntax). The worker is woken at once by
	// this process's own enqueues; its schedule is only the slow poll for jobs other
	// processes (`kioku chat`, the CLI) queued and for jobs whose time came, and each poll
	// only reads until it finds a due job.
	DefaultWorkSchedule  = "@every 30s"
	DefaultReapSchedule  = "@every 1m"
	DefaultSweepSchedule = "@every 5m"
	// DefaultRetentionSchedule runs retention (SPEC §4: every 6 h).
	DefaultRetentionSchedule = "@every 6h"
	// DefaultMaintenanceSchedule diagnoses the store and repairs what it can every quarter
	// hour: a broken index or a stuck queue is mended before most people notice, while
	// the diagnostics' counts over every memory and index entry stay a small cost, and the
	// repairs' cooldowns (a quarter hour to a day) are a few runs long.
	DefaultMaintenanceSchedule = "@every 15m"
)

// Config configures a Pipeline. Zero values mean the documented default.
type Config struct {
	// Flags are the operator's switches for the whole bot; each guild's /kioku config mode
	// narrows them further. Nil means DefaultFlags (full).
	Flags *Flags
	// BatchTurns (N): unextracted user turns that start an extraction now; default
	// DefaultBatchTurns.
	BatchTurns int
	// IdleAfter (T): quiet time after the last turn that starts an extraction; default
	// DefaultIdleAfter.
	IdleAfter time.Duration
	// ConfidenceGate: least confidence for a proposal to be applied; default
	// DefaultConfidenceGate.
	ConfidenceGate float64
	// CallsPerHour caps model calls per hour; default DefaultCallsPerHour, negative for
	// no cap.
	CallsPerHour int
	// GuildShare is the part of CallsPerHour one server (or one member's DMs) may use
	// while other servers' jobs wait; default DefaultGuildShare, negative for no share
	// rule.
	GuildShare float64
	// HighSignalPerHour is how many high-signal turns of one member per hour start an
	// extraction at once; default DefaultHighSignalPerHour, negative for no limit.
	HighSignalPerHour int
	// LeaseFor is how long a job is held between heartbeats; default DefaultLeaseFor.
	LeaseFor time.Duration
	// MaxAttempts is the failed runs before a job is dead; default memory.DefaultMaxAttempts.
	MaxAttempts int
	// BackoffBase and BackoffMax bound the exponential wait after a failure.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// Jitter turns a backoff d into the actual wait; default uniform in [d/2, d], so jobs
	// failing together do not retry together. Tests make it exact.
	Jitter func(d time.Duration) time.Duration
	// MaxTurnsPerJob and MaxJobsPerTick bound one job and one Tick.
	MaxTurnsPerJob int
	MaxJobsPerTick int
	// SweepWindow is how far back Sweep looks; default DefaultSweepWindow.
	SweepWindow time.Duration
	// WorkSchedule, ReapSchedule, SweepSchedule and RetentionSchedule are the cron specs
	// of the worker, the stale-lease reaper, the sweep and retention; defaults above.
	WorkSchedule      string
	ReapSchedule      string
	SweepSchedule     string
	RetentionSchedule string
	// EmbedSchedule is the cron spec of the embedding tracker, EmbedBatch the memories per
	// embedding call and EmbedCallsPerRun the calls per run; defaults in embeddings.go.
	// The tracker runs only when Deps.Embeddings is set.
	EmbedSchedule    string
	EmbedBatch       int
	EmbedCallsPerRun int
	// Retention says how long history, jobs and transcripts are kept; zero fields are
	// the store's defaults (forgotten memories are purged after the store's RecoverWindow).
	Retention memory.RetentionPolicy
	// MaintenanceMode is what the maintenance task does: execute repairs (the default),
	// observe (record what it would repair, change nothing) or off (no task).
	MaintenanceMode maintenance.Mode
	// MaintenanceSchedule is the cron spec of the maintenance task; default
	// DefaultMaintenanceSchedule.
	MaintenanceSchedule string
	// RepairLimits are the per-action cooldowns and hourly budgets; nil means
	// maintenance.DefaultLimits.
	RepairLimits map[maintenance.Action]maintenance.Limit
	// WorkerID names this process in job leases; default hostname:pid.
	WorkerID string
	// Logger receives one structured line per job and per scheduled run (ids and counts,
	// never message content). Nil discards.
	Logger *slog.Logger

	// Audience, when set, returns which channels' memories may be used in a guild
	// channel (SPEC §2 channel-aware memory); decision candidates are limited to them. Nil
	// means no channel restriction beyond the conversation's guild. A nil result from it
	// restricts nothing either.
	Audience func(ctx context.Context, guildID, channelID string) *memory.Audience
	// DailyBudget, when set, is the daily model budget each server (or member's DMs) shares
	// with chat turns; a job whose budget is spent waits for it to reset. Nil: no daily limit.
	DailyBudget DailyBudget

	// BeforeCommit, when set, is called after every model and embedding call of a job
	// and right before its one write transaction. A test seam: tests block in it to
	// crash or race a job at the worst moment. An error fails the run like any other.
	BeforeCommit func(ctx context.Context, job *memory.Job) error

	// OnJobOutcome, when set, is told how each run of a job ended; the operator's metrics
	// count the outcomes. It runs on the worker's goroutine, so it must be quick.
	OnJobOutcome func(JobOutcome)
}

// Pipeline runs the background memory work. Create it with New. It is a facade over
// the parts that share one core: the job worker (Tick, Reap), the turn hook (OnTurn,
// Sweep) and the scheduler (Start, Stop, RunTask, Status).
type Pipeline struct {
	core  *core
	work  *worker
	hook  *turnHook
	maint *maintainer // nil when maintenance is off
	tasks *scheduler
}

// worker runs leased extraction jobs: model calls, proposals and the one commit.
type worker struct{ *core }

// turnHook reacts to chat turns and sweeps for channels whose extraction was never scheduled.
type turnHook struct{ *core }

// scheduler runs the periodic tasks (work, reap, sweep, retention) and reports status.
type scheduler struct {
	*core
	work  *worker
	hook  *turnHook
	maint *maintainer
}

// core is the state the pipeline's parts share: collaborators, configuration and locks.
type core struct {
	jobs         JobQueue
	ledger       Ledger
	transcript   Transcript
	facts        FactWriter
	finder       Candidates
	settings     Settings
	housekeeping Housekeeping
	embeddings   Embeddings  // nil: no embedding model, no tracker
	graph        GraphWriter // nil: no knowledge graph
	model        Model
	quote        func(string) string
	now          func() time.Time
	cfg          Config
	flags        Flags
	log          *slog.Logger
	guard        *CostGuard
	// triggers limits each member's high-signal extraction triggers.
	triggers *memberTriggers
	// provider reads the model provider's counters (nil: unknown); window turns them
	// into recent ones.
	provider func() maintenance.ProviderCounts
	window   *maintenance.ProviderWindow

	tickMu sync.Mutex // one Tick at a time, whoever calls it
	nonce  uint32     // tells this process's leases from those of an earlier one with the same pid
	leases atomic.Int64

	// wake is signalled (never blocking; one pending signal is enough) when this process
	// enqueues a job, so the started worker looks for due work at once.
	wake chan struct{}

	mu      sync.Mutex
	sched   *cron.Cron
	runCtx  context.Context // tasks' context while started
	cancel  context.CancelFunc
	running bool
	// wakeDone is closed when the wake loop that Start began has returned.
	wakeDone chan struct{}
}

// New returns a pipeline over its collaborators (every one is required). It starts
// nothing: call Start for the scheduled background work, or Tick, Reap and Sweep by hand.
func New(cfg Config, deps Deps) (*Pipeline, error) {
	if err := deps.validate(); err != nil {
		return nil, err
	}
	flags := DefaultFlags()
	if cfg.Flags != nil {
		flags = *cfg.Flags
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &core{
		jobs:         deps.Jobs,
		ledger:       deps.Ledger,
		transcript:   deps.Transcript,
		facts:        deps.Facts,
		finder:       deps.Candidates,
		settings:     deps.Settings,
		housekeeping: deps.Housekeeping,
		embeddings:   deps.Embeddings,
		graph:        deps.Graph,
		model:        deps.Model,
		quote:        deps.Quote,
		now:          deps.Now,
		cfg:          cfg,
		flags:        flags,
		log:          log,
		guard:        NewCostGuard(cfg.CallsPerHour, time.Hour, deps.Now).WithShare(cfg.GuildShare),
		triggers:     newMemberTriggers(cfg.HighSignalPerHour, deps.Now),
		nonce:        rand.Uint32(),
		wake:         make(chan struct{}, 1),
		provider:     deps.Provider,
		window:       maintenance.NewProviderWindow(maintenance.DefaultProviderWindow, deps.Now()),
	}
	work, hook := &worker{c}, &turnHook{c}
	maint := newMaintainer(c, deps)
	return &Pipeline{core: c, work: work, hook: hook, maint: maint,
		tasks: &scheduler{core: c, work: work, hook: hook, maint: maint}}, nil
}

// withDefaults fills cfg's zero fields with the defaults and checks the fields a default
// cannot stand in for.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.BatchTurns <= 0 {
		cfg.BatchTurns = DefaultBatchTurns
	}
	if cfg.IdleAfter <= 0 {
		cfg.IdleAfter = DefaultIdleAfter
	}
	if cfg.ConfidenceGate == 0 {
		cfg.ConfidenceGate = DefaultConfidenceGate
	}
	if cfg.CallsPerHour == 0 {
		cfg.CallsPerHour = DefaultCallsPerHour
	}
	if cfg.GuildShare == 0 {
		cfg.GuildShare = DefaultGuildShare
	}
	if cfg.HighSignalPerHour == 0 {
		cfg.HighSignalPerHour = DefaultHighSignalPerHour
	}
	if cfg.LeaseFor <= 0 {
		cfg.LeaseFor = DefaultLeaseFor
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = memory.DefaultMaxAttempts
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.BackoffMax < cfg.BackoffBase {
		cfg.BackoffMax = max(DefaultBackoffMax, cfg.BackoffBase)
	}
	if cfg.Jitter == nil {
		cfg.Jitter = backoff.EqualJitter
	}
	if cfg.MaxTurnsPerJob <= 0 {
		cfg.MaxTurnsPerJob = DefaultMaxTurnsPerJob
	}
	if cfg.MaxJobsPerTick <= 0 {
		cfg.MaxJobsPerTick = DefaultMaxJobsPerTick
	}
	if cfg.SweepWindow <= 0 {
		cfg.SweepWindow = DefaultSweepWindow
	}
	cfg = cfg.withDefaultSchedules()
	if cfg.EmbedBatch <= 0 {
		cfg.EmbedBatch = DefaultEmbedBatch
	}
	if cfg.EmbedCallsPerRun <= 0 {
		cfg.EmbedCallsPerRun = DefaultEmbedCallsPerRun
	}
	if cfg.MaintenanceMode == "" {
		cfg.MaintenanceMode = maintenance.ModeExecute
	}
	if _, err := maintenance.ParseMode(string(cfg.MaintenanceMode)); err != nil {
		return cfg, fmt.Errorf("couldn't create pipeline: %w", err)
	}
	if cfg.WorkerID == "" {
		host, _ := os.Hostname()
		cfg.WorkerID = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if cfg.ConfidenceGate < 0 || cfg.ConfidenceGate > 1 {
		return cfg, fmt.Errorf("couldn't create pipeline: confidence gate %v is outside 0–1", cfg.ConfidenceGate)
	}
	return cfg, nil
}

// withDefaultSchedules fills the empty task schedules with the defaults.
func (cfg Config) withDefaultSchedules() Config {
	if cfg.WorkSchedule == "" {
		cfg.WorkSchedule = DefaultWorkSchedule
	}
	if cfg.ReapSchedule == "" {
		cfg.ReapSchedule = DefaultReapSchedule
	}
	if cfg.SweepSchedule == "" {
		cfg.SweepSchedule = DefaultSweepSchedule
	}
	if cfg.RetentionSchedule == "" {
		cfg.RetentionSchedule = DefaultRetentionSchedule
	}
	if cfg.EmbedSchedule == "" {
		cfg.EmbedSchedule = DefaultEmbedSchedule
	}
	if cfg.MaintenanceSchedule == "" {
		cfg.MaintenanceSchedule = DefaultMaintenanceSchedule
	}
	return cfg
}

// Config returns the effective configuration, defaults filled in.
func (p *Pipeline) Config() Config { return p.core.cfg }

// Guard returns the cost guard, for status and tests.
func (p *Pipeline) Guard() *CostGuard { return p.core.guard }

// Tick runs the due jobs once; see worker.Tick.
func (p *Pipeline) Tick(ctx context.Context) (TickResult, error) { return p.work.Tick(ctx) }

// Reap requeues jobs whose lease expired; see worker.Reap.
func (p *Pipeline) Reap(ctx context.Context) (memory.ReapResult, error) { return p.work.Reap(ctx) }

// OnTurn records a chat turn's trigger; see turnHook.OnTurn.
func (p *Pipeline) OnTurn(ctx context.Context, t memory.Turn, highSignal bool) error {
	return p.hook.OnTurn(ctx, t, highSignal)
}

// Sweep schedules channels whose extraction was never scheduled; see turnHook.Sweep.
func (p *Pipeline) Sweep(ctx context.Context) (int, error) { return p.hook.Sweep(ctx) }

// Scheduler returns the cron scheduler of the periodic tasks; see scheduler.Scheduler.
func (p *Pipeline) Scheduler() (*cron.Cron, error) { return p.tasks.Scheduler() }

// RunTask runs one scheduled task now; see scheduler.RunTask.
func (p *Pipeline) RunTask(ctx context.Context, name string) error { return p.tasks.RunTask(ctx, name) }

// Start starts the scheduled background work; see scheduler.Start.
func (p *Pipeline) Start(ctx context.Context) error { return p.tasks.Start(ctx) }

// Stop stops the scheduled background work; see scheduler.Stop.
func (p *Pipeline) Stop(ctx context.Context) error { return p.tasks.Stop(ctx) }

// Status is ReadStatus plus this process's budget and scheduler state; see scheduler.Status.
func (p *Pipeline) Status(ctx context.Context) (Status, error) { return p.tasks.Status(ctx) }

// backoff is the wait after a job's attempt-th failure (1-based).
func (p *worker) backoff(attempt int) time.Duration {
	return p.cfg.Jitter(backoff.Exponential(p.cfg.BackoffBase, p.cfg.BackoffMax, attempt-1))
}

// nextOwner is a lease token unique to this process and lease.
func (p *worker) nextOwner() string {
	return fmt.Sprintf("%s/%08x#%d", p.cfg.WorkerID, p.nonce, p.leases.Add(1))
}
