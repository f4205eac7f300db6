// Package bot is kioku's Discord adapter: it turns gateway events into chat
// turns and slash commands into memory operations, and renders the results
// back as Discord messages.
//
// Everything Discord-specific lives here: which messages deserve an answer,
// how long replies are split, who may change server memory, how buttons carry
// their state. The turn itself is transport-independent and reached through
// the Turner seam; memory goes through ltm and stm.
package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
	"github.com/kioku-bot/kioku/stm"
)

// Turner runs one chat turn. *chat.Engine satisfies it; tests may pass a
// function-backed fake.
type Turner interface {
	Turn(ctx context.Context, req chat.Request) (chat.Reply, error)
}

// Defaults copied into a Config's zero fields by New.
const (
	// DefaultTurnTimeout bounds one chat turn, model calls and tool rounds
	// included. The model client has its own per-call timeout; this one
	// catches a turn that keeps going (four tool rounds of slow calls).
	DefaultTurnTimeout = 3 * time.Minute
	// DefaultCommandTimeout bounds one interaction. Deferred responses stay
	// editable for 15 minutes, but no command should take more than a
	// minute; past that something is stuck and the user deserves an answer.
	DefaultCommandTimeout = time.Minute
	// DefaultMaxImportBytes is the largest attachment /memory import reads:
	// memory.MaxImportBytes, the limit `kioku memories import` applies too.
	DefaultMaxImportBytes = memory.MaxImportBytes
	// DefaultPageSize is how many memories one page of /memory list shows:
	// ten lines of up to ~200 characters keep an embed readable on a phone.
	DefaultPageSize = 10
)

// Config holds a Bot's dependencies and settings.
type Config struct {
	// Session is the Discord session (see NewSession). The bot adds its
	// handlers and opens it in Open, and closes it in Shutdown.
	Session *discordgo.Session
	// Store is the long-term store, one aggregate per field (see Store).
	Store Store
	// STM is the short-term memory, for /stm and /memory forget-me.
	STM *stm.Store
	// Turner answers messages.
	Turner Turner
	// PipelineStatus reports the background pipeline for /kioku status; the
	// running pipeline's Status adds its model budget. Nil reads what the
	// database says (pipeline.ReadStatus).
	PipelineStatus func(ctx context.Context) (pipeline.Status, error)
	// Provider reports what this process saw of the model provider recently, for the
	// health score /kioku status shows managers; nil leaves the provider out of it.
	Provider func() maintenance.Provider
	// BudgetToday reports the model calls a server used today and its daily limit (<= 0:
	// none), for /kioku status; nil leaves the line out.
	BudgetToday func(ctx context.Context, guildID string) (used, limit int, err error)
	// Logger receives ids and outcomes, never message content above debug.
	// Nil discards.
	Logger *slog.Logger
	// HTTPClient downloads import attachments. Default: the session's client,
	// which leaves non-Discord-API hosts such as the CDN untouched.
	HTTPClient *http.Client

	// TurnTimeout bounds one chat turn; default DefaultTurnTimeout.
	TurnTimeout time.Duration
	// MaxConcurrentTurns caps the chat turns running at once; default
	// DefaultMaxConcurrentTurns. TurnQueue is how many messages may wait for one;
	// default DefaultTurnQueue, negative for none. A message that finds the queue full is
	// answered "I'm busy" and gets no turn (admission.go).
	MaxConcurrentTurns int
	TurnQueue          int
	// CommandTimeout bounds one interaction; default DefaultCommandTimeout.
	CommandTimeout time.Duration
	// MaxImportBytes bounds an import file; default DefaultMaxImportBytes.
	MaxImportBytes int64
	// PageSize is the number of memories per list page; default DefaultPageSize.
	PageSize int
	// GuildPurgeAfter is how long a server's data is kept after the bot was removed
	// from it; default memory.DefaultGuildPurgeAfter.
	GuildPurgeAfter time.Duration
	// Now is the clock for timestamps in requests and status; default time.Now.
	Now func() time.Time
}

// Bot answers Discord messages and interactions. Create it with New, start it
// with Open and stop it with Shutdown.
//
// Bot holds the lifecycle and its exported API; the work lives in parts by
// concern, each sharing one core (the dependencies, settings and caches). Bot
// keeps the parts in named fields and its exported methods delegate to them,
// so no type's method set grows with the others'.
type Bot struct {
	*core

	events     *messageEvents
	memory     *memoryCommands
	browser    *memoryBrowser
	forms      *memoryForms
	transfer   *memoryTransfer
	settings   *settingsCommands
	review     *memoryReview
	visibility *channelVisibility
	channelEvs *channelEvents
	router     *router
}

// core is what every part of the bot shares: dependencies, settings, caches,
// the lifecycle state and the counters. Parts call each other through the
// named pointers at its end.
type core struct {
	session *discordgo.Session
	store   Store
	stm     *stm.Store
	turner  Turner
	pipe    func(ctx context.Context) (pipeline.Status, error)
	log     *slog.Logger
	http    *http.Client
	now     func() time.Time

	// provider is Config.Provider: nil when unknown.
	provider func() maintenance.Provider
	// budgetToday is Config.BudgetToday: nil when unknown.
	budgetToday func(ctx context.Context, guildID string) (used, limit int, err error)

	turnTimeout    time.Duration
	commandTimeout time.Duration
	maxImportBytes int64
	pageSize       int

	guildPurgeAfter time.Duration
	guard           messageGuard
	// admission caps the chat turns running at once (admission.go).
	admission *admission

	commands map[string]commandHandler
	started  time.Time
	// channels knows who can read which channel, for channel-aware memory.
	channels *channelWatch

	// base is the parent of every turn and interaction context; Shutdown
	// cancels it when in-flight work overruns the shutdown bound.
	base       context.Context
	cancelBase context.CancelFunc

	// mu guards closing and the Add side of inflight, so no work starts
	// after Shutdown has begun waiting.
	mu       sync.Mutex
	closing  bool
	inflight sync.WaitGroup

	connected atomic.Bool
	stats     counters

	// perms checks who may do what; visibility computes audiences; dups answers a save
	// that repeats a memory in other words. Other parts reach them through these pointers.
	perms      *permissions
	visibility *channelVisibility
	dups       *nearDuplicates
}

// messageEvents handles gateway message events: answering messages (messages.go)
// and keeping the transcript and guild lifecycle in step with edits,
// deletions and departures (events.go).
type messageEvents struct{ *core }

// memoryCommands are the /memory slash commands that search, add, change and
// forget memory (memorycmd.go, memoryforget.go, undocmd.go) and the "Remember
// this" context menu (rememberthis.go).
type memoryCommands struct{ *core }

// memoryBrowser is reading memory page by page: /memory list and /memory show
// with their page and filter buttons (browse.go).
type memoryBrowser struct{ *core }

// memoryForms are the add and edit forms and the Undo and Edit buttons of
// memory notices (modals.go, actions.go).
type memoryForms struct{ *core }

// memoryTransfer is /memory export and /memory import (transfer.go).
type memoryTransfer struct{ *core }

// memoryReview is /memory review with its buttons and merge form (review.go).
type memoryReview struct{ *core }

// nearDuplicates is the answer to a save that a memory already says in other words, with
// its buttons and merge form (dupanswer.go).
type nearDuplicates struct{ *core }

// settingsCommands are /privacy, /stm and /kioku: settings and status
// (settingscmd.go).
type settingsCommands struct{ *core }

// channelVisibility turns what the bot knows about channels, roles and
// members into audiences for channel-aware memory (channels.go).
type channelVisibility struct{ *core }

// channelEvents tracks who can read which channel from gateway events and
// keeps the stored channel list in step (channels.go).
type channelEvents struct{ *core }

// permissions are the checks of who may change which memory and settings
// (permissions.go).
type permissions struct{ *core }

// router turns interactions into calls of the command handlers (router.go).
type router struct{ *core }

// counters are the bot's monotonic counters, exported through Stats.
type counters struct {
	turns, turnErrors, ignored, inFlight    atomic.Int64
	interactions, interactionErrors, denied atomic.Int64
	commandsRegistered                      atomic.Int64
	busy                                    atomic.Int64
}

// Stats is a snapshot of the bot's counters for metrics.
type Stats struct {
	// Turns counts chat turns run; TurnErrors those that failed.
	Turns, TurnErrors int64
	// Ignored counts messages that were addressed to the bot but not
	// answered (privacy full, shutting down, empty).
	Ignored int64
	// TurnsInFlight is the number of turns running now.
	TurnsInFlight int64
	// TurnsQueued is the number of messages waiting for a turn now; TurnsBusy counts
	// messages answered "I'm busy" because the wait queue was full.
	TurnsQueued, TurnsBusy int64
	// Interactions counts slash commands, context menus and button presses;
	// InteractionErrors those answered with an internal error; Denied those
	// refused for missing permission.
	Interactions, InteractionErrors, Denied int64
	// CommandsRegistered is the number of commands of the last bulk overwrite.
	CommandsRegistered int64
	// Connected reports whether the gateway session is up.
	Connected bool
}

// New checks cfg and returns a bot that is not connected yet.
func New(cfg Config) (*Bot, error) {
	switch {
	case cfg.Session == nil:
		return nil, errors.New("couldn't create bot: no discord session")
	case cfg.Store.missing() != "":
		return nil, fmt.Errorf("couldn't create bot: the long-term store has no %s", cfg.Store.missing())
	case cfg.STM == nil:
		return nil, errors.New("couldn't create bot: no short-term memory")
	case cfg.Turner == nil:
		return nil, errors.New("couldn't create bot: no chat engine")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	client := cmp.Or(cfg.HTTPClient, cfg.Session.Client)
	if client == nil {
		client = http.DefaultClient
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	c := &core{
		session:         cfg.Session,
		store:           cfg.Store,
		stm:             cfg.STM,
		turner:          cfg.Turner,
		pipe:            cfg.PipelineStatus,
		provider:        cfg.Provider,
		budgetToday:     cfg.BudgetToday,
		log:             log,
		http:            client,
		now:             now,
		turnTimeout:     cmp.Or(cfg.TurnTimeout, DefaultTurnTimeout),
		commandTimeout:  cmp.Or(cfg.CommandTimeout, DefaultCommandTimeout),
		maxImportBytes:  cmp.Or(cfg.MaxImportBytes, DefaultMaxImportBytes),
		pageSize:        cmp.Or(cfg.PageSize, DefaultPageSize),
		channels:        newChannelWatch(),
		guildPurgeAfter: cmp.Or(cfg.GuildPurgeAfter, memory.DefaultGuildPurgeAfter),
	}
	c.admission = newAdmission(cmp.Or(cfg.MaxConcurrentTurns, DefaultMaxConcurrentTurns), cmp.Or(cfg.TurnQueue, DefaultTurnQueue))
	c.perms = &permissions{c}
	c.visibility = &channelVisibility{c}
	c.dups = &nearDuplicates{c}
	b := &Bot{
		core:       c,
		events:     &messageEvents{c},
		memory:     &memoryCommands{c},
		browser:    &memoryBrowser{c},
		forms:      &memoryForms{c},
		transfer:   &memoryTransfer{c},
		settings:   &settingsCommands{c},
		review:     &memoryReview{c},
		visibility: c.visibility,
		channelEvs: &channelEvents{c},
		router:     &router{c},
	}
	c.base, c.cancelBase = context.WithCancel(context.Background())
	c.commands = commandHandlers(b.memory, b.browser, b.forms, b.transfer, b.settings)
	maps.Copy(c.commands, interactiveHandlers(b.forms, b.browser))
	maps.Copy(c.commands, reviewHandlers(b.review))
	maps.Copy(c.commands, dupHandlers(c.dups))
	return b, nil
}

// Open adds the bot's handlers to the session and connects to the gateway.
// Commands are registered when READY arrives.
func (b *Bot) Open() error {
	b.started = b.now()
	// Channel-aware memory reads channels, threads and roles from the state, which the
	// Guilds intent keeps current; member tracking is not needed (roles arrive with every
	// message and interaction).
	b.session.StateEnabled = true
	if st := b.session.State; st != nil {
		st.TrackChannels, st.TrackThreads, st.TrackRoles = true, true, true
	}
	ce := b.channelEvs
	for _, h := range []any{ce.onGuildCreate, ce.onGuildUpdate, ce.onRoleCreate, ce.onRoleUpdate, ce.onRoleDelete,
		ce.onChannelCreate, ce.onChannelUpdate, ce.onChannelDelete, ce.onThreadCreate, ce.onThreadUpdate,
		ce.onThreadDelete, ce.onThreadListSync, ce.onMemberUpdate, ce.onMemberRemove} {
		b.session.AddHandler(h)
	}
	b.session.AddHandler(b.onReady)
	b.session.AddHandler(b.onDisconnect)
	b.session.AddHandler(b.onResumed)
	b.session.AddHandler(b.events.OnMessageCreate)
	b.session.AddHandler(b.events.OnMessageDelete)
	b.session.AddHandler(b.events.OnMessageDeleteBulk)
	b.session.AddHandler(b.events.OnMessageUpdate)
	b.session.AddHandler(b.events.OnGuildDelete)
	b.session.AddHandler(b.events.OnGuildCreate)
	b.session.AddHandler(b.router.handleInteraction)
	if err := b.session.Open(); err != nil {
		return fmt.Errorf("couldn't connect to the discord gateway: %w", err)
	}
	return nil
}

// Connected reports whether the gateway session is up (READY or RESUMED
// seen, no disconnect since), for the health endpoint.
func (b *Bot) Connected() bool { return b.connected.Load() }

// Stats returns a snapshot of the bot's counters.
func (b *Bot) Stats() Stats { return b.snapshot() }

// snapshot reads the counters into a Stats.
func (b *core) snapshot() Stats {
	_, queued := b.admission.counts()
	return Stats{
		Turns:              b.stats.turns.Load(),
		TurnErrors:         b.stats.turnErrors.Load(),
		Ignored:            b.stats.ignored.Load(),
		TurnsInFlight:      b.stats.inFlight.Load(),
		TurnsQueued:        int64(queued),
		TurnsBusy:          b.stats.busy.Load(),
		Interactions:       b.stats.interactions.Load(),
		InteractionErrors:  b.stats.interactionErrors.Load(),
		Denied:             b.stats.denied.Load(),
		CommandsRegistered: b.stats.commandsRegistered.Load(),
		Connected:          b.connected.Load(),
	}
}

// OnMessageCreate answers a message addressed to the bot (see messageEvents).
func (b *Bot) OnMessageCreate(s *discordgo.Session, e *discordgo.MessageCreate) {
	b.events.OnMessageCreate(s, e)
}

// OnMessageDelete keeps the transcript in step with a deleted message.
func (b *Bot) OnMessageDelete(s *discordgo.Session, e *discordgo.MessageDelete) {
	b.events.OnMessageDelete(s, e)
}

// OnMessageDeleteBulk keeps the transcript in step with a bulk deletion.
func (b *Bot) OnMessageDeleteBulk(s *discordgo.Session, e *discordgo.MessageDeleteBulk) {
	b.events.OnMessageDeleteBulk(s, e)
}

// OnMessageUpdate keeps the transcript in step with an edited message.
func (b *Bot) OnMessageUpdate(s *discordgo.Session, e *discordgo.MessageUpdate) {
	b.events.OnMessageUpdate(s, e)
}

// OnGuildCreate notes a server the bot is in (again).
func (b *Bot) OnGuildCreate(s *discordgo.Session, e *discordgo.GuildCreate) {
	b.events.OnGuildCreate(s, e)
}

// OnGuildDelete notes that the bot left or was removed from a server.
func (b *Bot) OnGuildDelete(s *discordgo.Session, e *discordgo.GuildDelete) {
	b.events.OnGuildDelete(s, e)
}

// HandleInteraction answers a slash command, context menu or button press
// (see router.handleInteraction).
func (b *Bot) HandleInteraction(s *discordgo.Session, e *discordgo.InteractionCreate) {
	b.router.handleInteraction(s, e)
}

// ReplyAudience is the channel rule of a conversation in a guild channel, for work done on
// its behalf elsewhere (the background pipeline's decisions): the memories a reply there may
// use.
func (b *Bot) ReplyAudience(ctx context.Context, guildID, channelID string) *memory.Audience {
	return b.visibility.replyAudience(ctx, guildID, channelID)
}

// MemberAudience is the audience of an answer only userID reads (a DM, an ephemeral view):
// every channel they can view, in every guild the bot knows. guildID and channelID name
// where they asked ("" in a DM) and roles are their roles there as the interaction carried
// them (nil when unknown). It is exported for work done on a member's behalf outside an
// interaction, and for tests that hold the bot to its channel rule.
func (b *Bot) MemberAudience(ctx context.Context, userID, guildID, channelID string, roles []string) *memory.Audience {
	return b.visibility.memberAudience(ctx, userID, guildID, channelID, roles)
}

// begin registers one unit of work (a turn or an interaction) and reports
// false once Shutdown has started, when no new work may begin.
func (b *core) begin() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return false
	}
	b.inflight.Add(1)
	return true
}

// Shutdown stops accepting turns and commands, waits for the in-flight ones
// until ctx ends, then cancels whatever is left and closes the gateway
// session. The caller closes the store afterwards. It returns an error when
// work had to be cancelled.
func (b *Bot) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	b.closing = true
	b.mu.Unlock()
	// Messages waiting for a turn are told to send again; running turns finish.
	b.admission.close()

	done := make(chan struct{})
	go func() {
		b.inflight.Wait()
		close(done)
	}()
	var errs []error
	select {
	case <-done:
	case <-ctx.Done():
		n := b.stats.inFlight.Load()
		b.log.Warn("shutdown bound reached; cancelling in-flight work", "turns_in_flight", n)
		b.cancelBase()
		// Everything in flight takes its context from base, so it returns
		// promptly once cancelled; the bound keeps a stuck call from
		// holding the process.
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			errs = append(errs, errors.New("in-flight work did not stop after cancellation"))
		}
		errs = append(errs, fmt.Errorf("couldn't finish in-flight work before shutdown: %w", context.Cause(ctx)))
	}
	b.cancelBase()
	if err := b.session.Close(); err != nil {
		errs = append(errs, fmt.Errorf("couldn't close the discord session: %w", err))
	}
	return errors.Join(errs...)
}

func (b *Bot) onReady(s *discordgo.Session, r *discordgo.Ready) {
	b.connected.Store(true)
	appID := ""
	if r.Application != nil {
		appID = r.Application.ID
	}
	if appID == "" && r.User != nil {
		appID = r.User.ID // a bot's application shares its user's id
	}
	b.log.Info("connected to discord", "user_id", userID(r.User), "guilds", len(r.Guilds))
	if !b.begin() {
		return
	}
	defer b.inflight.Done()
	ctx, cancel := context.WithTimeout(b.base, b.commandTimeout)
	defer cancel()
	// A bulk overwrite replaces the whole set, so commands renamed or removed
	// in a new version disappear instead of lingering as dead entries.
	cmds, err := s.ApplicationCommandBulkOverwrite(appID, "", Commands(), discordgo.WithContext(ctx))
	if err != nil {
		b.log.Error("couldn't register application commands", "app_id", appID, "err", err)
		return
	}
	b.stats.commandsRegistered.Store(int64(len(cmds)))
	b.log.Info("registered application commands", "app_id", appID, "commands", len(cmds))
}

func (b *Bot) onDisconnect(*discordgo.Session, *discordgo.Disconnect) {
	b.connected.Store(false)
	b.mu.Lock()
	closing := b.closing
	b.mu.Unlock()
	if closing {
		b.log.Info("disconnected from discord gateway")
		return
	}
	// discordgo reconnects on its own; a warning makes flapping visible.
	b.log.Warn("disconnected from discord gateway; reconnecting")
}

func (b *Bot) onResumed(*discordgo.Session, *discordgo.Resumed) {
	b.connected.Store(true)
	b.log.Info("resumed discord gateway session")
}

// botUserID returns the bot's own user id from the session state.
func (b *core) botUserID() string {
	if b.session.State == nil {
		return ""
	}
	b.session.State.RLock()
	defer b.session.State.RUnlock()
	if b.session.State.User == nil {
		return ""
	}
	return b.session.State.User.ID
}

func userID(u *discordgo.User) string {
	if u == nil {
		return ""
	}
	return u.ID
}
