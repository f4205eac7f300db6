package bot

import (
	"context"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// Store is the long-term memory as the bot sees it: one small interface per
// aggregate, listing only what the bot calls. The fields carry the names of
// ltm.Store's aggregates, so cmd/kioku fills them one to one from an opened
// store and the bot never depends on the whole of it.
type Store struct {
	Memories      Memories
	Review        Review
	Duplicates    Duplicates
	Recall        Recall
	Facts         Facts
	Jobs          Jobs
	Transcripts   Transcripts
	Settings      Settings
	Confirmations Confirmations
	Transfer      Transfer
	Channels      Channels
	Guilds        Guilds
	Maintenance   Maintenance
	// Graph is the knowledge graph; optional: without it /memory show lists no entities.
	Graph Graph

	// Now is the store's clock, for the pipeline status read from the ledger.
	Now func() time.Time
	// RecoverWindow is how long a forgotten memory can be recovered, shown
	// after /memory forget.
	RecoverWindow time.Duration
}

// missing names the first aggregate s lacks, or "" when it is complete.
func (s Store) missing() string {
	for _, f := range []struct {
		name string
		nil  bool
	}{
		{"Memories", s.Memories == nil}, {"Review", s.Review == nil}, {"Duplicates", s.Duplicates == nil},
		{"Recall", s.Recall == nil}, {"Facts", s.Facts == nil},
		{"Jobs", s.Jobs == nil}, {"Transcripts", s.Transcripts == nil}, {"Settings", s.Settings == nil},
		{"Confirmations", s.Confirmations == nil}, {"Transfer", s.Transfer == nil},
		{"Channels", s.Channels == nil}, {"Guilds", s.Guilds == nil}, {"Maintenance", s.Maintenance == nil},
		{"Now", s.Now == nil},
	} {
		if f.nil {
			return f.name
		}
	}
	return ""
}

// Memories are the memories themselves: the /memory commands and "Remember
// this" read, write, forget and recover them. *ltm.Memories satisfies it.
type Memories interface {
	Evidence(ctx context.Context, id int64) ([]memory.MessageRef, error)
	Forget(ctx context.Context, owner memory.Owner, ids []int64, actor memory.Actor, reason string) ([]*memory.Memory, error)
	Get(ctx context.Context, owner memory.Owner, id int64) (*memory.Memory, error)
	History(ctx context.Context, owner memory.Owner, id int64) ([]memory.HistoryEvent, error)
	List(ctx context.Context, owner memory.Owner, opt memory.ListOptions) ([]*memory.Memory, int, error)
	ModifyAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error)
	RecoverAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, ifVersion int, actor memory.Actor) (*memory.Memory, error)
	RememberAs(ctx context.Context, w memory.WriteContext, m memory.Memory, actor memory.Actor, evidence ...memory.MessageRef) (memory.WriteResult, error)
	UndoAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, version int, actor memory.Actor) (memory.Undone, error)
}

// Review is what waits for a person to decide: /memory review lists and settles it,
// /kioku status counts it, and the Replace of a near-duplicate answer supersedes the memory
// a save repeats. *ltm.Review satisfies it.
type Review interface {
	Queue(ctx context.Context, owner memory.Owner, aud *memory.Audience, limit, offset int) ([]memory.ReviewItem, int, error)
	Resolve(ctx context.Context, owner memory.Owner, ref string, choice memory.ReviewChoice, text string, actor memory.Actor, aud *memory.Audience) ([]*memory.Memory, error)
	Supersede(ctx context.Context, owner memory.Owner, old, newer int64, actor memory.Actor, reason string) (*memory.Memory, error)
}

// Duplicates finds the memory a save says again in other words, among those the member
// saving may see where they are. *ltm.Duplicates satisfies it.
type Duplicates interface {
	SimilarAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, content string) (*memory.Memory, error)
}

// Jobs is the record of background work: the pipeline's ledger for /kioku status, and one
// server's jobs for /kioku jobs. *ltm.Jobs satisfies it.
type Jobs interface {
	pipeline.Ledger
	FindJobs(ctx context.Context, f memory.JobFilter) ([]*memory.Job, error)
}

// Recall finds memories for /memory search. *ltm.Recall satisfies it.
type Recall interface {
	Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
}

// Facts applies a batch of decisions, for "Remember this". *ltm.Facts satisfies it.
type Facts interface {
	ApplyPipelineBatch(ctx context.Context, b memory.PipelineBatch) ([]memory.ProposalOutcome, error)
}

// Transcripts are what people said per channel; the bot records edits and
// deletions. *ltm.Transcripts satisfies it.
type Transcripts interface {
	AppendTurn(ctx context.Context, t memory.Turn) (int64, error)
	DeleteMessages(ctx context.Context, guildID, channelID string, messageIDs []string) (memory.MessageChange, error)
	EditMessage(ctx context.Context, guildID, channelID, messageID, content string) (memory.MessageChange, error)
	RecentTurns(ctx context.Context, guildID, channelID, userID string, limit int) ([]memory.Turn, error)
}

// Settings are members' and guilds' choices, for /privacy and /kioku.
// *ltm.Settings satisfies it.
type Settings interface {
	GuildSettings(ctx context.Context, guildID string) (memory.GuildSettings, error)
	SaveGuildSettings(ctx context.Context, gs memory.GuildSettings) error
	SetChannelLearning(ctx context.Context, guildID, channelID string, on bool, threads ...string) (int, error)
	SetCrossServer(ctx context.Context, userID string, on bool) error
	SetPrivacy(ctx context.Context, userID string, p memory.Privacy) error
	UserSettings(ctx context.Context, userID string) (memory.UserSettings, error)
}

// Confirmations are what waits behind a token for a member's choice: the destructive
// actions of forget by query and forget-me, and the saves a near-duplicate answer holds.
// *ltm.Confirmations satisfies it.
type Confirmations interface {
	ConfirmForget(ctx context.Context, owner memory.Owner, token string, actor memory.Actor) ([]*memory.Memory, error)
	ConfirmForgetMe(ctx context.Context, userID, token string) (memory.ForgetMeSummary, error)
	DropWrite(ctx context.Context, owner memory.Owner, token string, actor memory.Actor) error
	HeldWrite(ctx context.Context, owner memory.Owner, token string, actor memory.Actor) (memory.HeldWrite, error)
	HoldWrite(ctx context.Context, w memory.HeldWrite, actor memory.Actor) (string, time.Time, error)
	PreviewForgetMe(ctx context.Context, userID string) (memory.ForgetMeSummary, error)
	PreviewForgetWithin(ctx context.Context, owner memory.Owner, query string, actor memory.Actor, limit int, aud *memory.Audience) (memory.ForgetPreview, error)
}

// Transfer exports and imports memories as files. *ltm.Transfer satisfies it.
type Transfer interface {
	ExportWithin(ctx context.Context, owner memory.Owner, aud *memory.Audience) (memory.ExportFile, error)
	ImportAs(ctx context.Context, owner memory.Owner, f memory.ExportFile, by memory.Importer) (memory.ImportResult, error)
}

// Channels is the remembered shape of each guild's channels, kept current
// from gateway events. *ltm.Channels satisfies it.
type Channels interface {
	GuildChannels(ctx context.Context, guildID string) ([]memory.GuildChannel, error)
	GuildRoles(ctx context.Context, guildID string) (memory.GuildRoles, bool, error)
	Lookup(ctx context.Context, owner memory.Owner, id int64) (*memory.Memory, error)
	MarkChannelDeleted(ctx context.Context, guildID, channelID string) error
	SaveGuildChannels(ctx context.Context, chans []memory.GuildChannel) error
	SaveGuildRoles(ctx context.Context, r memory.GuildRoles) error
}

// Guilds are the servers the bot left, and their grace period before the
// purge, and the servers it welcomed. *ltm.Guilds satisfies it.
type Guilds interface {
	CancelDeparture(ctx context.Context, guildID string, joinedAt time.Time) (bool, error)
	ClaimWelcome(ctx context.Context, guildID string) (bool, error)
	Guilds(ctx context.Context) ([]memory.GuildSummary, error)
	RecordDeparture(ctx context.Context, guildID string, grace time.Duration) (memory.Departure, error)
	ReleaseWelcome(ctx context.Context, guildID string) error
}

// Maintenance reports what the database holds and how healthy it is, for
// /kioku status. *ltm.Health satisfies it.
type Maintenance interface {
	Counts(ctx context.Context, scopeKey string) (maintenance.Stats, error)
	GuildMemoryCountsWithin(ctx context.Context, guildID string, aud *memory.Audience) (memory.GuildMemoryCounts, error)
	Stats(ctx context.Context, scopeKey string) (maintenance.Stats, error)
	Diagnose(ctx context.Context) (maintenance.Diagnostics, error)
}
