package storetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// MemoryStore is the memories aggregate with its history: writes deduplicated per scope,
// versioned edits, soft delete and recover, and the audit trail of every mutation.
type MemoryStore interface {
	Remember(ctx context.Context, m memory.Memory, actor memory.Actor) (memory.WriteResult, error)
	RememberAs(ctx context.Context, w memory.WriteContext, m memory.Memory, actor memory.Actor, evidence ...memory.MessageRef) (memory.WriteResult, error)
	Get(ctx context.Context, owner memory.Owner, id int64) (*memory.Memory, error)
	List(ctx context.Context, owner memory.Owner, opt memory.ListOptions) ([]*memory.Memory, int, error)
	Modify(ctx context.Context, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error)
	ModifyAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error)
	Forget(ctx context.Context, owner memory.Owner, ids []int64, actor memory.Actor, reason string) ([]*memory.Memory, error)
	ForgetAt(ctx context.Context, owner memory.Owner, versions map[int64]int, actor memory.Actor, reason string) ([]*memory.Memory, error)
	Recover(ctx context.Context, owner memory.Owner, id int64, ifVersion int, actor memory.Actor) (*memory.Memory, error)
	RecoverAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, ifVersion int, actor memory.Actor) (*memory.Memory, error)
	History(ctx context.Context, owner memory.Owner, id int64) ([]memory.HistoryEvent, error)
	ScopeHistory(ctx context.Context, owner memory.Owner, limit int) ([]memory.HistoryEvent, error)
	Undo(ctx context.Context, owner memory.Owner, id int64, version int, actor memory.Actor) (memory.Undone, error)
	UndoAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, version int, actor memory.Actor) (memory.Undone, error)
}

// DuplicateFinder finds the live memory a content says again in other words: in the whole
// scope, or among what a writer may see where they are.
type DuplicateFinder interface {
	Similar(ctx context.Context, owner memory.Owner, content string) (*memory.Memory, error)
	SimilarAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, content string) (*memory.Memory, error)
}

// Recaller finds memories by their words inside the scopes a query names. The suite only
// runs keyword recall (no embedder is configured), which every store must offer.
type Recaller interface {
	Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
}

// JobQueue is the pipeline's durable job queue: dedup by kind and key, exclusive leases,
// backoff and dead-lettering.
type JobQueue interface {
	Enqueue(ctx context.Context, kind, dedupKey string, payload any, opt memory.EnqueueOptions) (int64, bool, error)
	Lease(ctx context.Context, owner string, kinds []string, leaseFor time.Duration) (*memory.Job, error)
	HasDue(ctx context.Context, kinds []string) (bool, error)
	Complete(ctx context.Context, id int64, owner string) error
	Fail(ctx context.Context, id int64, owner string, cause error, retryIn time.Duration) (dead bool, err error)
	Bury(ctx context.Context, id int64, owner string, cause error) error
	Postpone(ctx context.Context, id int64, owner string, runAfter time.Time, payload any) error
	Heartbeat(ctx context.Context, id int64, owner string, leaseFor time.Duration, payload any) error
	ReapStale(ctx context.Context) (memory.ReapResult, error)
	Requeue(ctx context.Context, id int64) error
	GetJob(ctx context.Context, id int64) (*memory.Job, error)
	JobStats(ctx context.Context) (memory.JobStats, error)
	FindJobs(ctx context.Context, f memory.JobFilter) ([]*memory.Job, error)
	CountJobs(ctx context.Context, f memory.JobFilter) (int, error)
	PurgeJobs(ctx context.Context, f memory.JobFilter) (int, error)
}

// TranscriptStore holds what people said (the raw-first record) and follows the edits and
// deletions Discord reports.
type TranscriptStore interface {
	AppendTurn(ctx context.Context, t memory.Turn) (int64, error)
	RecentTurns(ctx context.Context, guildID, channelID, userID string, limit int) ([]memory.Turn, error)
	TurnsAfter(ctx context.Context, guildID, channelID string, afterID int64, limit int) ([]memory.Turn, error)
	ExtractionBacklog(ctx context.Context, guildID, channelID string) (memory.Backlog, error)
	CountTurns(ctx context.Context, userID string) (int, error)
	DeleteMessages(ctx context.Context, guildID, channelID string, messageIDs []string) (memory.MessageChange, error)
	EditMessage(ctx context.Context, guildID, channelID, messageID, content string) (memory.MessageChange, error)
}

// SettingsStore holds users' privacy choices and guilds' configuration.
type SettingsStore interface {
	UserSettings(ctx context.Context, userID string) (memory.UserSettings, error)
	UsersSettings(ctx context.Context, ids []string) (map[string]memory.UserSettings, error)
	SetPrivacy(ctx context.Context, userID string, p memory.Privacy) error
	SetCrossServer(ctx context.Context, userID string, on bool) error
	GuildSettings(ctx context.Context, guildID string) (memory.GuildSettings, error)
	SaveGuildSettings(ctx context.Context, gs memory.GuildSettings) error
	SetChannelLearning(ctx context.Context, guildID, channelID string, on bool, threads ...string) (int, error)
}

// ConfirmationStore runs forget-by-query in two steps: a preview with a single-use token,
// then the confirmation that forgets exactly what the preview showed.
type ConfirmationStore interface {
	PreviewForget(ctx context.Context, owner memory.Owner, query string, actor memory.Actor, limit int) (memory.ForgetPreview, error)
	PreviewForgetWithin(ctx context.Context, owner memory.Owner, query string, actor memory.Actor, limit int, aud *memory.Audience) (memory.ForgetPreview, error)
	ConfirmForget(ctx context.Context, owner memory.Owner, token string, actor memory.Actor) ([]*memory.Memory, error)
}

// ForgetMeStore erases everything a store holds about one member, after a counted preview.
type ForgetMeStore interface {
	PreviewForgetMe(ctx context.Context, userID string) (memory.ForgetMeSummary, error)
	ConfirmForgetMe(ctx context.Context, userID, token string) (memory.ForgetMeSummary, error)
}

// RawAccess lets the suite read a file-backed store's bytes, to prove that forget-me leaves
// none of a member's words on disk.
type RawAccess interface {
	// DataFiles makes the store's files complete on their own (SQLite: checkpoint and
	// truncate the WAL) and returns the path of every file that holds its data.
	DataFiles(ctx context.Context) ([]string, error)
}

// Stores is one store implementation seen through the aggregates the suite checks. Every
// field but Graph and Raw is required; all of them must share one database, because
// behaviours cross aggregates (forget-me reaches transcripts, jobs and the graph, privacy
// reaches jobs).
type Stores struct {
	Memories      MemoryStore
	Review        LifecycleStore
	Duplicates    DuplicateFinder
	Recall        Recaller
	Jobs          JobQueue
	Transcripts   TranscriptStore
	Settings      SettingsStore
	Confirmations ConfirmationStore
	ForgetMe      ForgetMeStore
	// Graph, when set, adds the knowledge graph's cases; nil skips them for a store that
	// has no graph yet.
	Graph GraphStore
	// Facts, Channels, Guilds and Budgets, when set, add the cases of the pipeline's
	// writes, the channel records, departed and welcomed servers and the model budget;
	// nil skips them for a store that has none yet.
	Facts    FactStore
	Channels ChannelStore
	Guilds   GuildStore
	Budgets  BudgetStore
	// Counts, when set, adds the case of /kioku status's counts; nil skips it.
	Counts CountStore
	// Contributions, when set, adds the case of the dashboard's counts by channel and by
	// author; nil skips it.
	Contributions ContributionStore
	// Sessions, when set, adds the cases of the web dashboard's sign-ins and sessions (and
	// their end at forget-me); nil skips them.
	Sessions SessionStore
	// Repairs and Exec, when set, add the upgrade re-scan's case: Exec runs one statement
	// (no arguments) on the store's database, to write rows as an older version did.
	Repairs Repairer
	Exec    func(ctx context.Context, stmt string) error
	// Keywords, when set, adds the check that forget-me takes the member's words out of
	// the store's in-memory keyword indexes; it must be the index the suite's Recall
	// searches through.
	Keywords KeywordIndex
	// Raw, when set, adds the byte-level scan to the forget-me case; nil for stores that
	// keep no files of their own (a database server).
	Raw RawAccess
	// Writes and Embedder, when both set, add the case of ARCHITECTURE invariant 2: no
	// embedding call while a write transaction is open. Embedder must be the Recall the
	// suite searches through.
	Writes   WriteWatcher
	Embedder Embedder
	// ReadOnly, when set, adds the case of refused writes: on puts the database in a state
	// that refuses every write (SQLite: query_only; PostgreSQL: default_transaction_read_only),
	// off makes it writable again.
	ReadOnly func(ctx context.Context, on bool) error
	// Stages, when set, are the ranking stages the suite's Recall reads, so that a case can
	// switch on one the product leaves off (the date stage's spans); nil skips such cases.
	Stages *recall.Stages
	// Clock is the time every part of the store reads; the suite moves it through recover
	// windows, token lifetimes, leases and backoff.
	Clock *Clock
	// RecoverWindow is how long a forgotten memory stays recoverable.
	RecoverWindow time.Duration
	// ConfirmTTL is how long a preview's token stays valid.
	ConfirmTTL time.Duration
}

// Epoch is a convenient start for a store's Clock: whole milliseconds, so times the store
// keeps in milliseconds compare equal.
var Epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Clock is a hand-driven clock. A store under test reads Now; the suite calls Advance.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	onRead func()
}

// NewClock returns a clock set to start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	now, onRead := c.now, c.onRead
	c.mu.Unlock()
	if onRead != nil {
		onRead()
	}
	return now
}

// OnRead makes every later Now call fn first: stores read the clock inside their write
// transactions, so a case can look at the store's state from there.
func (c *Clock) OnRead(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onRead = fn
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Run checks a store implementation against the contract. open must return a fresh, empty
// store on every call, closed by its own t.Cleanup; the suite opens one per case, so cases
// never see each other's rows.
func Run(t *testing.T, open func(t *testing.T) Stores) {
	opener := func(t *testing.T) Stores {
		t.Helper()
		s := open(t)
		checkComplete(t, s)
		return s
	}
	t.Run("ScopeIsolation", func(t *testing.T) { testScopeIsolation(t, opener) })
	t.Run("Dedup", func(t *testing.T) { testDedup(t, opener) })
	t.Run("WriterVisibility", func(t *testing.T) { testWriterVisibility(t, opener) })
	t.Run("Similar", func(t *testing.T) { testSimilar(t, opener) })
	t.Run("Versions", func(t *testing.T) { testVersions(t, opener) })
	t.Run("SoftDeleteAndRecover", func(t *testing.T) { testSoftDelete(t, opener) })
	t.Run("History", func(t *testing.T) { testHistory(t, opener) })
	t.Run("Undo", func(t *testing.T) { testUndo(t, opener) })
	t.Run("ImportanceDecay", func(t *testing.T) { testImportanceDecay(t, opener) })
	t.Run("ForgetByQuery", func(t *testing.T) { testForgetByQuery(t, opener) })
	t.Run("ForgetMe", func(t *testing.T) { testForgetMe(t, opener) })
	t.Run("Jobs", func(t *testing.T) { testJobs(t, opener) })
	t.Run("JobQueries", func(t *testing.T) { testJobQueries(t, opener) })
	t.Run("Transcripts", func(t *testing.T) { testTranscripts(t, opener) })
	t.Run("Settings", func(t *testing.T) { testSettings(t, opener) })
	t.Run("LearningControls", func(t *testing.T) { testLearningControls(t, opener) })
	t.Run("GraphScopeIsolation", func(t *testing.T) { testGraphScopeIsolation(t, opener) })
	t.Run("GraphForgetMe", func(t *testing.T) { testGraphForgetMe(t, opener) })
	t.Run("GraphOrphans", func(t *testing.T) { testGraphOrphans(t, opener) })
	t.Run("GraphMentionedWith", func(t *testing.T) { testGraphMentionedWith(t, opener) })
	t.Run("PipelineActions", func(t *testing.T) { testPipelineActions(t, opener) })
	t.Run("PipelineAllOrNothing", func(t *testing.T) { testPipelineAllOrNothing(t, opener) })
	t.Run("PipelineEvidenceAndReview", func(t *testing.T) { testPipelineEvidenceAndReview(t, opener) })
	t.Run("PipelineForgetMe", func(t *testing.T) { testPipelineForgetMe(t, opener) })
	t.Run("HistoryOrigins", func(t *testing.T) { testHistoryOrigins(t, opener) })
	t.Run("PipelineUpdateEvidence", func(t *testing.T) { testPipelineUpdateEvidence(t, opener) })
	t.Run("Channels", func(t *testing.T) { testChannels(t, opener) })
	t.Run("GuildPurge", func(t *testing.T) { testGuildPurge(t, opener) })
	t.Run("GuildPurgeProposals", func(t *testing.T) { testGuildPurgeProposals(t, opener) })
	t.Run("GuildPurgeJobRows", func(t *testing.T) { testGuildPurgeJobRows(t, opener) })
	t.Run("GuildDepartures", func(t *testing.T) { testGuildDepartures(t, opener) })
	t.Run("Welcome", func(t *testing.T) { testWelcome(t, opener) })
	t.Run("ModelCallBudget", func(t *testing.T) { testModelCallBudget(t, opener) })
	t.Run("WebLogins", func(t *testing.T) { testWebLogins(t, opener) })
	t.Run("WebSessions", func(t *testing.T) { testWebSessions(t, opener) })
	t.Run("EmbeddingPayers", func(t *testing.T) { testEmbeddingPayers(t, opener) })
	t.Run("GuildCountsWithin", func(t *testing.T) { testGuildCountsWithin(t, opener) })
	t.Run("ListChannelAndDates", func(t *testing.T) { testListChannelAndDates(t, opener) })
	t.Run("Contributions", func(t *testing.T) { testContributions(t, opener) })
	t.Run("ForgetAt", func(t *testing.T) { testForgetAt(t, opener) })
	t.Run("IDsNeverReused", func(t *testing.T) { testIDsNeverReused(t, opener) })
	t.Run("SecretTags", func(t *testing.T) { testSecretTags(t, opener) })
	t.Run("SecretRescan", func(t *testing.T) { testSecretRescan(t, opener) })
	t.Run("RefersTo", func(t *testing.T) { testRefersTo(t, opener) })
	t.Run("RefersToRecall", func(t *testing.T) { testRefersToRecall(t, opener) })
	t.Run("RefersToBackfill", func(t *testing.T) { testRefersToBackfill(t, opener) })
	t.Run("TimingList", func(t *testing.T) { testTimingList(t, opener) })
	t.Run("Lifecycle", func(t *testing.T) { testLifecycle(t, opener) })
	t.Run("LifecycleVisibility", func(t *testing.T) { testLifecycleVisibility(t, opener) })
	t.Run("PipelineReplace", func(t *testing.T) { testPipelineReplace(t, opener) })
	t.Run("ReviewQueue", func(t *testing.T) { testReviewQueue(t, opener) })
	t.Run("HeldWrites", func(t *testing.T) { testHeldWrites(t, opener) })
	t.Run("WordCompany", func(t *testing.T) { testWordCompany(t, opener) })
	t.Run("WordCompanyBackfill", func(t *testing.T) { testWordCompanyBackfill(t, opener) })
	t.Run("NoEmbeddingInWrite", func(t *testing.T) { testNoEmbeddingInWrite(t, opener) })
	t.Run("RefusedWritesUnavailable", func(t *testing.T) { testRefusedWritesUnavailable(t, opener) })
}

func checkComplete(t *testing.T, s Stores) {
	t.Helper()
	missing := map[string]bool{
		"Memories": s.Memories == nil, "Duplicates": s.Duplicates == nil, "Recall": s.Recall == nil, "Jobs": s.Jobs == nil,
		"Transcripts": s.Transcripts == nil, "Settings": s.Settings == nil,
		"Confirmations": s.Confirmations == nil, "ForgetMe": s.ForgetMe == nil, "Clock": s.Clock == nil,
		"RecoverWindow": s.RecoverWindow <= 0, "ConfirmTTL": s.ConfirmTTL <= 0,
	}
	for field, gone := range missing {
		if gone {
			t.Fatalf("storetest: the constructor left Stores.%s unset", field)
		}
	}
}

func server(guild, content string) memory.Memory {
	return memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content}
}

func personal(user, guild, content string) memory.Memory {
	return memory.Memory{Scope: memory.ScopePersonal, UserID: user, GuildID: guild, Content: content}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := memory.ErrorCode(err); got != code {
		t.Fatalf("error = %v (code %q), want code %q", err, got, code)
	}
}

func mustRemember(t *testing.T, s Stores, m memory.Memory) *memory.Memory {
	t.Helper()
	res, err := s.Memories.Remember(t.Context(), m, "test")
	if err != nil {
		t.Fatalf("remember %q: %v", m.Content, err)
	}
	return res.Memory
}

func mustForget(t *testing.T, s Stores, owner memory.Owner, id int64) {
	t.Helper()
	if _, err := s.Memories.Forget(t.Context(), owner, []int64{id}, "test", ""); err != nil {
		t.Fatalf("forget #%d: %v", id, err)
	}
}

// isLive reports whether memory id of owner can be read, failing on errors other than
// not found.
func isLive(t *testing.T, s Stores, owner memory.Owner, id int64) bool {
	t.Helper()
	_, err := s.Memories.Get(t.Context(), owner, id)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return false
	}
	if err != nil {
		t.Fatalf("get #%d: %v", id, err)
	}
	return true
}

// searchIDs returns the ids keyword recall finds for text in owners' scopes.
func searchIDs(t *testing.T, s Stores, text string, owners ...memory.Owner) []int64 {
	t.Helper()
	res, err := s.Recall.Search(t.Context(), memory.SearchQuery{Text: text, Owners: owners, KeywordOnly: true, Limit: 100})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Memory.ID
	}
	return ids
}

func listIDs(t *testing.T, s Stores, owner memory.Owner, opt memory.ListOptions) []int64 {
	t.Helper()
	opt.Limit = 500
	list, _, err := s.Memories.List(t.Context(), owner, opt)
	if err != nil {
		t.Fatalf("list %v: %v", owner, err)
	}
	ids := make([]int64, len(list))
	for i, m := range list {
		ids[i] = m.ID
	}
	return ids
}

// payloadKeys returns the top-level keys of a job payload.
func payloadKeys(t *testing.T, j *memory.Job) map[string]bool {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(j.Payload, &obj); err != nil {
		t.Fatalf("payload of job %d is not a JSON object: %s", j.ID, j.Payload)
	}
	keys := make(map[string]bool, len(obj))
	for k := range obj {
		keys[k] = true
	}
	return keys
}
