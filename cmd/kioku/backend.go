package main

// The long-term store as cmd/kioku uses it, whichever engine holds it. Each aggregate is
// the union of what the consumers declare (bot.Store, chat.Deps, pipeline.Deps) and what the
// subcommands here call; an engine's aggregates fill it one to one. What only SQLite can do
// (a file snapshot, the scheduled backups, the keyword index's bound) stays on the
// *ltm.Store the backend keeps for it, and a command that needs it says so on PostgreSQL.

import (
	"context"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
	"github.com/kioku-bot/kioku/memory/maintenance"
	"github.com/kioku-bot/kioku/tools"
	"github.com/kioku-bot/kioku/web"
)

// The kinds of store a backend can be.
const (
	kindSQLite   = "sqlite"
	kindPostgres = "postgres"
)

// backend is an opened long-term store: its aggregates, its clock and how to close it.
type backend struct {
	// kind is kindSQLite or kindPostgres.
	kind string
	// where names the database for people: the file path, or the URL without its password.
	where string

	Memories      storeMemories
	Review        *ltm.Review
	Duplicates    storeDuplicates
	Recall        storeRecall
	Facts         storeFacts
	Jobs          storeJobs
	Transcripts   storeTranscripts
	Settings      storeSettings
	Confirmations storeConfirmations
	Transfer      storeTransfer
	Channels      bot.Channels
	Guilds        storeGuilds
	Budgets       chat.BudgetStore
	Maintenance   storeMaintenance
	Health        storeHealth
	Graph         storeGraph
	Sessions      web.Sessions
	Overview      web.Overview

	// now is the store's clock, read at each call so a test that moves it moves every user.
	now func() time.Time
	// RecoverWindow is how long a forgotten memory can be recovered.
	RecoverWindow time.Duration

	// sqlite is the SQLite store behind the backend, for what only SQLite does; nil on
	// PostgreSQL.
	sqlite *ltm.Store
	// fences reads the forget-me fences recorded since a time, for a store that does not
	// push them (SQLite: the forget watch polls); nil when changes is set.
	fences func(ctx context.Context, since time.Time) ([]memory.ForgetFence, error)
	// changes pushes other processes' changes (PostgreSQL's LISTEN/NOTIFY); nil on SQLite.
	changes changeFeed
	// pool reports the connection pool, nil when the engine has none to report.
	pool  func() poolStats
	close func() error
}

// changeFeed is a store's push of what other processes on the database changed.
type changeFeed interface {
	// OnForget registers fn, called on the feed's goroutine for every forget-me any process
	// does, with the member and the time of the forget-me.
	OnForget(fn func(userID string, at time.Time))
	// Sync returns once every change committed before the call has been handed to the
	// registered functions.
	Sync(ctx context.Context) error
}

// poolStats is a connection pool's state, for doctor and metrics.
type poolStats struct {
	Total, Idle, InUse, Max int32
	Acquires                int64
}

// Now is the store's clock.
func (b *backend) Now() time.Time { return b.now() }

// Close releases the store.
func (b *backend) Close() error { return b.close() }

// sqliteOnly returns the SQLite store for a command only SQLite supports, or an error
// naming what to use instead (instead: "use pg_dump", …) on another engine.
func (b *backend) sqliteOnly(command, instead string) (*ltm.Store, error) {
	if b.sqlite == nil {
		return nil, fmt.Errorf("%s works on a SQLite database, not on PostgreSQL: %s", command, instead)
	}
	return b.sqlite, nil
}

// sqliteBackend is the backend over an opened SQLite store.
func sqliteBackend(s *ltm.Store, where string) *backend {
	return &backend{
		kind: kindSQLite, where: where,
		Memories: s.Memories, Review: s.Review, Duplicates: s.Duplicates, Recall: s.Recall, Facts: s.Facts, Jobs: s.Jobs,
		Transcripts: s.Transcripts, Settings: s.Settings, Confirmations: s.Confirmations,
		Transfer: s.Transfer, Channels: s.Channels, Guilds: s.Guilds, Budgets: s.Budgets,
		Maintenance: s.Maintenance, Health: s.Health, Graph: s.Graph, Sessions: s.Sessions, Overview: s.Overview,
		now:           func() time.Time { return s.Now() },
		RecoverWindow: s.RecoverWindow,
		fences:        s.Memories.ForgottenSince,
		sqlite:        s,
		close:         s.Close,
	}
}

// storeMemories are the memories: the bot's, the chat engine's and the CLI's calls.
type storeMemories interface {
	bot.Memories
	chat.Memories
	web.Memories
	Remember(ctx context.Context, m memory.Memory, actor memory.Actor) (memory.WriteResult, error)
	Recover(ctx context.Context, owner memory.Owner, id int64, ifVersion int, actor memory.Actor) (*memory.Memory, error)
	Undo(ctx context.Context, owner memory.Owner, id int64, version int, actor memory.Actor) (memory.Undone, error)
}

// storeDuplicates find the memory a content says again in other words: the chat engine's
// and the CLI's calls.
type storeDuplicates interface {
	tools.Duplicates
	Similar(ctx context.Context, owner memory.Owner, content string) (*memory.Memory, error)
}

// storeRecall finds memories and keeps their vectors.
type storeRecall interface {
	bot.Recall
	pipeline.Embeddings
	SetEmbedder(fn ltm.EmbedFunc, model string)
	SetVectorCache(bytes int64)
	EmbedStatus() memory.EmbedStatus
	EmbeddingCoverage(ctx context.Context, model string) (memory.EmbedCoverage, error)
	// ForgetCachedQueries empties the query cache, whose keys are texts people searched.
	ForgetCachedQueries()
}

// storeFacts applies the pipeline's decisions.
type storeFacts interface {
	bot.Facts
	pipeline.FactWriter
}

// storeJobs is the job queue and its ledger, and the `kioku jobs` commands.
type storeJobs interface {
	bot.Jobs
	pipeline.JobQueue
	GetJob(ctx context.Context, id int64) (*memory.Job, error)
	CountJobs(ctx context.Context, f memory.JobFilter) (int, error)
	PurgeJobs(ctx context.Context, f memory.JobFilter) (int, error)
	Requeue(ctx context.Context, id int64) error
}

// storeTranscripts are what people said.
type storeTranscripts interface {
	bot.Transcripts
	pipeline.Transcript
	web.Turns
}

// storeSettings are members' and guilds' choices.
type storeSettings interface {
	bot.Settings
	chat.Settings
}

// storeConfirmations are previewed destructive actions, from Discord and the CLI.
type storeConfirmations interface {
	bot.Confirmations
	web.ForgetMe
	PreviewForget(ctx context.Context, owner memory.Owner, query string, actor memory.Actor, limit int) (memory.ForgetPreview, error)
}

// storeTransfer exports and imports memories.
type storeTransfer interface {
	bot.Transfer
	Export(ctx context.Context, owner memory.Owner) (memory.ExportFile, error)
	Import(ctx context.Context, owner memory.Owner, f memory.ExportFile, actor memory.Actor) (memory.ImportResult, error)
}

// storeGuilds are the servers the bot is in and left.
type storeGuilds interface {
	bot.Guilds
	PurgeGuild(ctx context.Context, guildID string) (memory.GuildPurge, error)
	PurgeDepartedGuilds(ctx context.Context) (memory.GuildPurge, int, error)
}

// storeMaintenance is the store's retention and repairs.
type storeMaintenance interface {
	pipeline.Repairer
	Retention(ctx context.Context, pol memory.RetentionPolicy) (memory.RetentionResult, error)
	Reindex(ctx context.Context) (maintenance.ReindexReport, error)
}

// storeHealth is what the store holds and how healthy it is, and the repair audit.
type storeHealth interface {
	bot.Maintenance
	pipeline.Health
	MemoryCounts(ctx context.Context) ([]memory.MemoryCount, error)
	DiagnoseModel(ctx context.Context, embedModel string) (maintenance.Diagnostics, error)
}

// dataRepairer is a store that repairs data older versions of kioku wrote (SQLite's, which
// has such versions); one without it has nothing to repair.
type dataRepairer interface {
	RunRepairs(ctx context.Context) (maintenance.RepairReport, error)
}

// runRepairs runs the store's one-time repairs of old data, when it has any.
func (b *backend) runRepairs(ctx context.Context) (maintenance.RepairReport, error) {
	r, ok := b.Maintenance.(dataRepairer)
	if !ok {
		return maintenance.RepairReport{}, nil
	}
	return r.RunRepairs(ctx)
}

// storeGraph is the knowledge graph.
type storeGraph interface {
	bot.Graph
	pipeline.GraphWriter
	TopEntities(ctx context.Context, owner memory.Owner, limit int) ([]graph.Node, error)
	Neighbourhood(ctx context.Context, owner memory.Owner, name string) (graph.Neighbourhood, error)
	MentionedWith(ctx context.Context, vis memory.Visible, entityID int64, aud *memory.Audience, limit int) ([]graph.CoMention, error)
	AboutSameEntities(ctx context.Context, q memory.SearchQuery) ([]*memory.Memory, error)
}
