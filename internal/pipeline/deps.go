package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// The pipeline's view of the store, one small interface per thing it does with it, in
// domain types. The SQLite store's aggregates satisfy them (cmd/kioku/wire.go hands them
// over); a second store implementation (PostgreSQL) only has to do the same to run the
// pipeline.

// JobQueue is the durable queue of pipeline jobs: leases that expire, heartbeats that
// extend them, and backoff or burial when a run fails. Every call that names a lease owner
// fails with memory.ErrLeaseLost when that lease no longer holds. HasDue only reads: the
// worker asks it before every Lease, so an idle queue costs no write transaction.
type JobQueue interface {
	Enqueue(ctx context.Context, kind, dedupKey string, payload any, opt memory.EnqueueOptions) (id int64, created bool, err error)
	HasDue(ctx context.Context, kinds []string) (bool, error)
	Lease(ctx context.Context, owner string, kinds []string, leaseFor time.Duration) (*memory.Job, error)
	Heartbeat(ctx context.Context, id int64, owner string, leaseFor time.Duration, payload any) error
	Postpone(ctx context.Context, id int64, owner string, runAfter time.Time, payload any) error
	Fail(ctx context.Context, id int64, owner string, cause error, retryIn time.Duration) (dead bool, err error)
	Bury(ctx context.Context, id int64, owner string, cause error) error
	ReapStale(ctx context.Context) (memory.ReapResult, error)
}

// Ledger is the record of the background work: jobs by state, the queue's counts and the
// latest run of each scheduled task.
type Ledger interface {
	ListJobs(ctx context.Context, state string, limit int) ([]*memory.Job, error)
	JobStats(ctx context.Context) (memory.JobStats, error)
	RecordRun(ctx context.Context, r memory.TaskRun) error
	TaskRuns(ctx context.Context) ([]memory.TaskRun, error)
}

// Transcript is what people said, per channel, and how far extraction has read it.
type Transcript interface {
	TurnsAfter(ctx context.Context, guildID, channelID string, afterID int64, limit int) ([]memory.Turn, error)
	ExtractionCursor(ctx context.Context, guildID, channelID string) (int64, error)
	ExtractionBacklog(ctx context.Context, guildID, channelID string) (memory.Backlog, error)
	ChannelsWithBacklog(ctx context.Context, since time.Time, limit int) ([]memory.Channel, error)
}

// FactWriter applies a job's decisions. ApplyPipelineBatch writes the proposals, moves the
// channel's cursor and completes the job in one transaction, failing with
// memory.ErrLeaseLost or memory.ErrCursorMoved (wrapped) when another run got there first.
// PrefetchEmbeddings embeds texts ahead of that transaction, so no model call happens inside it.
type FactWriter interface {
	ApplyPipelineBatch(ctx context.Context, b memory.PipelineBatch) ([]memory.ProposalOutcome, error)
	PrefetchEmbeddings(ctx context.Context, texts []string) error
}

// GraphWriter records the extraction's entity triples in the knowledge graph, after the facts
// and in a transaction of its own.
type GraphWriter interface {
	AddTriples(ctx context.Context, b graph.Batch) (int, error)
}

// Candidates finds the existing memories a new fact is compared with.
type Candidates interface {
	Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
	// AboutSameEntities returns memories naming an entity the query's text names (by
	// names and aliases), inside the query's scopes.
	AboutSameEntities(ctx context.Context, q memory.SearchQuery) ([]*memory.Memory, error)
}

// Settings are members' and guilds' choices that bound what the pipeline may do.
type Settings interface {
	UserSettings(ctx context.Context, userID string) (memory.UserSettings, error)
	GuildSettings(ctx context.Context, guildID string) (memory.GuildSettings, error)
}

// Housekeeping deletes what has outlived its keeping: old rows, and the data of servers
// that removed the bot longer ago than their grace period.
type Housekeeping interface {
	Retention(ctx context.Context, pol memory.RetentionPolicy) (memory.RetentionResult, error)
	PurgeDepartedGuilds(ctx context.Context) (memory.GuildPurge, int, error)
}

// Embeddings keeps memories' vectors current for the vector leg of recall: one run embeds,
// in bounded batches and outside any write transaction, live memories without a vector of
// the configured model for their content, and reports a provider that is down in the
// result's Skipped rather than as an error.
type Embeddings interface {
	TrackEmbeddings(ctx context.Context, opt memory.EmbedTrackOptions) (memory.EmbedTrackResult, error)
}

// Health reads the store's health for the maintenance task and keeps the audit of its
// repairs.
type Health interface {
	Diagnose(ctx context.Context) (maintenance.Diagnostics, error)
	RecordRepairs(ctx context.Context, repairs []maintenance.Repair) error
	RepairLog(ctx context.Context, since time.Time) ([]maintenance.Repair, error)
}

// Repairer runs the store's repairs for the maintenance task; each returns how many items
// it changed (bytes, for Compact).
type Repairer interface {
	RequeueDead(ctx context.Context, limit int) (int, error)
	RepairIndexes(ctx context.Context) (int, error)
	EmbedMissing(ctx context.Context) (int, error)
	Compact(ctx context.Context) (int64, error)
}

// Deps are the pipeline's collaborators. cmd/kioku hands it the store's aggregates.
type Deps struct {
	Jobs         JobQueue
	Ledger       Ledger
	Transcript   Transcript
	Facts        FactWriter
	Candidates   Candidates
	Settings     Settings
	Housekeeping Housekeeping
	// Graph is the knowledge graph the extraction's triples go to; optional: nil records
	// none.
	Graph GraphWriter
	// Embeddings is the embedding tracker's store; optional: nil (no embedding model
	// configured) leaves the embeddings task unscheduled.
	Embeddings Embeddings
	// Model runs the pipeline's extraction and decision prompts.
	Model Model
	// Quote renders what people wrote as quoted prompt data, escaped so that it cannot end
	// the quotation or pass for an instruction or a forged "[id:N]" memory line.
	// cmd/kioku hands it contextbuild.Quote, so every prompt quotes memories the same way.
	Quote func(s string) string
	// Now is the clock of leases, backoff, idle timers and the cost guard: the store's,
	// so that a test that moves the store's clock moves the pipeline's with it.
	Now func() time.Time

	// Health and Repairer are the store's side of the maintenance task; without both
	// there is no maintenance task (as with Config.MaintenanceMode off).
	Health   Health
	Repairer Repairer
	// Provider, when set, reads this process's model provider counters (calls, errors,
	// embedding status) for the provider part of the health score; nil leaves it unknown.
	Provider func() maintenance.ProviderCounts
}

// validate reports the first missing collaborator.
func (d Deps) validate() error {
	for _, dep := range []struct {
		name string
		ok   bool
	}{
		{"job queue", d.Jobs != nil}, {"ledger", d.Ledger != nil}, {"transcript", d.Transcript != nil},
		{"fact writer", d.Facts != nil}, {"candidates", d.Candidates != nil}, {"settings", d.Settings != nil},
		{"housekeeping", d.Housekeeping != nil}, {"model", d.Model != nil}, {"quoting", d.Quote != nil}, {"clock", d.Now != nil},
	} {
		if !dep.ok {
			return fmt.Errorf("couldn't create pipeline: the %s is required", dep.name)
		}
	}
	return nil
}
