// Package chat runs one chat turn (SPEC §3), the same for Discord and the terminal:
// privacy and rate limit, the raw-first transcript write, the intent gate, context from
// long- and short-term memory, the tool loop, the reply, and passive short-term capture.
//
// The transports only translate: the Discord adapter and `kioku chat` (REPL) build a
// Request from what they received and render the Reply (its text and its memory
// notices). Errors from Turn are for internal failures only (the database, a cancelled
// context); a model that is down, slow or confused still gets the user a friendly Reply,
// and the user's words are already in the transcript by then.
//
// # Who and what a turn sees
//
//   - A user at privacy level full is not answered and nothing of the message is kept
//     (no transcript row, no short-term entry); neither is an empty message. Turns of
//     users now at full are also left out of other people's history.
//   - A user over the rate limit, a message in a guild over the guild's rate limit, and
//     one whose guild (or DMs) used up the daily model budget get a polite reply; the
//     message is not processed or stored (a flood should not fill the transcript).
//   - Credentials are redacted from the message at the start of the turn, before the
//     transcript write, the intent gate, the prompt and short-term memory, and from the
//     reply before it is sent, recorded or captured. Logs carry ids and sizes, never the
//     message.
//   - The participants of a guild conversation are the speaker and the authors of the
//     channel's recent turns within Config.ParticipantWindow (at most MaxParticipants).
//     Their personal memories are used when they originated in this guild or the user
//     opted into cross-server use, never for users at partial or full. In a DM only the
//     speaker's personal memory exists, from any origin.
//   - Server memories are the guild's pinned memories plus those recalled for the
//     message; personal memories are recalled for the message. One hybrid recall covers
//     all visible scopes.
//   - Short-term memory: both sides of each exchange are captured into the user's entry
//     and, in a guild, the channel's shared entry. The prompt reads the conversation's
//     entry (the channel's in a guild, the user's in a DM), and only its summary when the
//     crude messages are already in the history.
//
// Every turn reads settings and recalls memories from the store afresh, so a change is
// seen by the very next turn. A guild's pinned server memories, read on every turn yet
// changed rarely and costly to list, are cached, but the cache checks the store's pinned
// change counter (one primary-key read) before serving, so a pinned memory changed or
// forgotten by any path, the CLI in another process included, is seen by the next turn
// too.
package chat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/contextbuild"
	"github.com/kioku-bot/kioku/intent"
	"github.com/kioku-bot/kioku/keyrate"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
	"github.com/sashabaranov/go-openai"
)

// Defaults copied into a Config's zero fields by New.
const (
	// DefaultContextWindow is the context window assumed for the chat model, in tokens:
	// what small local models commonly serve, and well inside every hosted model's.
	DefaultContextWindow = 16384
	// DefaultMaxOutputTokens is reserved for each reply: a Discord message is at most
	// 2000 characters, about 500 tokens, and the rest leaves room for tool calls.
	DefaultMaxOutputTokens = 1024
	// DefaultTurnsPerMinute is the per-user rate limit of SPEC §3 step 1.
	DefaultTurnsPerMinute = 10
	// DefaultBotName is how the bot refers to itself and labels its turns.
	DefaultBotName = "kioku"
	// DefaultHistoryTurns is how many recent turns are loaded for the prompt; the token
	// budget usually cuts before this does, which is what keeps loading bounded.
	DefaultHistoryTurns = 100
	// DefaultParticipantWindow is how far back someone's last message may be for them to
	// count as taking part in the conversation (SPEC §2): an hour keeps a slow-moving
	// channel's regulars in, and people who spoke yesterday out.
	DefaultParticipantWindow = time.Hour
	// DefaultMaxParticipants bounds whose personal memories one turn may draw on, beyond
	// the speaker: in a busy channel, the people who spoke most recently.
	DefaultMaxParticipants = 8
	// DefaultRecallLimit is how many server memories and how many personal memories
	// hybrid recall contributes to a prompt, each.
	DefaultRecallLimit = 8
	// DefaultPinnedLimit bounds the pinned server memories included on every turn.
	DefaultPinnedLimit = 10
)

// DefaultPersona is the system prompt used where a guild set none. %s is the bot's name.
const DefaultPersona = `You are %s (記憶, "memory"), a friendly and concise assistant in a Discord community. ` +
	`You remember what people ask you to remember and you are honest about what you know: when something is not in your memory, say so instead of guessing. ` +
	`Reply in the language of the latest message and keep replies short enough for chat.`

// Texts of replies the engine writes itself.
const (
	modelDownText  = "Sorry, I can't reach my language model right now. Your message is saved; please try again in a moment."
	modelSlowText  = "Sorry, my language model didn't answer in time. Your message is saved; please try again in a moment."
	exhaustedText  = "Sorry, I went around in circles with my memory tools and didn't get to an answer. Could you ask again, maybe more simply?"
	emptyReplyText = "Sorry, I couldn't come up with a reply to that. Could you rephrase it?"
	doneText       = "Done."
)

// Config tunes an Engine. Zero values mean the documented defaults.
type Config struct {
	// ContextWindow and MaxOutputTokens give the prompt budget,
	// (ContextWindow − MaxOutputTokens) × 0.9 (SPEC §3 step 4); MaxOutputTokens is also
	// the reply limit sent to the model. Defaults DefaultContextWindow and
	// DefaultMaxOutputTokens.
	ContextWindow   int
	MaxOutputTokens int
	// TurnsPerMinute is how many turns each user may start per minute, with bursts of
	// as many; default DefaultTurnsPerMinute.
	TurnsPerMinute int
	// GuildTurnsPerMinute is how many turns each guild may start per minute, all its
	// members together, with bursts of as many; zero means no per-guild limit (cmd/kioku
	// sets 60 unless the operator chose otherwise).
	GuildTurnsPerMinute int
	// DailyBudget, when set, is the daily model budget turns draw on (budget.go), the one
	// the background pipeline draws on too; nil means no daily limit.
	DailyBudget ModelBudget
	// BotName is how the bot calls itself; default DefaultBotName.
	BotName string
	// Persona is the system prompt for DMs and guilds without a persona of their own;
	// default DefaultPersona with BotName.
	Persona string
	// HistoryTurns is how many recent turns are loaded; default DefaultHistoryTurns.
	HistoryTurns int
	// ParticipantWindow and MaxParticipants decide who else takes part in a guild
	// conversation; defaults DefaultParticipantWindow and DefaultMaxParticipants.
	ParticipantWindow time.Duration
	MaxParticipants   int
	// RecallLimit and PinnedLimit bound the memories recalled for a prompt; defaults
	// DefaultRecallLimit and DefaultPinnedLimit.
	RecallLimit int
	PinnedLimit int
	// PinnedTTL is how long pinned memories are cached per guild; default
	// DefaultPinnedTTL, negative to read them on every turn.
	PinnedTTL time.Duration
	// MaxToolRounds is the tool loop's limit on model calls; default and maximum
	// tools.MaxRounds.
	MaxToolRounds int
	// Now is the clock for the rate limit, timestamps and the prompt's date; default
	// time.Now. Tests move it to refill the rate limit without sleeping.
	Now func() time.Time
	// Logger receives one line per turn with ids and counts, never message content at
	// info level. Nil discards.
	Logger *slog.Logger
}

// Request is one incoming message.
type Request struct {
	// GuildID is the guild the message was sent in; "" for a DM.
	GuildID   string
	ChannelID string
	UserID    string
	// UserName is the author's display name, shown to the model and kept in provenance.
	UserName  string
	MessageID string
	Content   string
	// At is when the message was sent; zero means now.
	At time.Time
	// ServerEditor is set by the transport when the author may change the guild's server
	// memory (Manage Server or the editor role); the model then may change any server
	// memory for them, not only the ones they authored. The transcript keeps it with the
	// turn, so the background pipeline changes server memory only on behalf of such members.
	ServerEditor bool
	// Audience says which guild channels' memories may be used in the reply (SPEC §2
	// "Channel-aware memory"): the transport computes it from who can read the reply. Nil
	// restricts nothing beyond scope (the terminal).
	Audience *memory.Audience
	// Speaker and Guild are the author's settings and the guild's when the transport has
	// already read them for this message (it looks at privacy, auto-reply channels and the
	// editor role before the turn starts), so one message reads them once. Nil makes the
	// turn read them itself.
	Speaker *memory.UserSettings
	Guild   *memory.GuildSettings
	// NoLearning is set by the transport where kioku does not learn (a channel a manager
	// switched off, an age-restricted one, or one it cannot tell): the turn is still
	// answered and stored for replies (raw-first), but marked so that extraction never
	// reads it, and the model is offered no tool that saves memories.
	NoLearning bool
}

// Notice is a memory change made during the turn, for the transport to show.
type Notice = tools.Notice

// Reply is the outcome of a turn.
type Reply struct {
	// Text is the answer to send. Empty only when Ignored.
	Text string
	// Notices are the memory changes made during the turn, in order; transports show
	// each with Notice.String.
	Notices []Notice
	// Ignored is set when the bot must not answer at all: the author's privacy level is
	// full, or the message has no text. Nothing of it was captured.
	Ignored bool
	// RateLimited is set when the author, or the guild, is over the rate limit; Text asks
	// them to wait and the message was not processed or stored.
	RateLimited bool
	// BudgetSpent is set when the daily model budget of the guild (or of the author's DMs)
	// is used up; Text says when it resets, and the message was not processed or stored.
	BudgetSpent bool
	// ModelUnavailable is set when the model could not be reached; Text apologises. The
	// user's turn is in the transcript, so nothing they said is lost.
	ModelUnavailable bool
	// Canned names the reply when the engine wrote Text itself instead of the model (one of
	// the Canned… constants; empty for the model's answers), so a transport can show it in
	// its own language; Text is the English. RetryAfter is the wait a rate-limit reply names.
	Canned     string
	RetryAfter time.Duration
	// Usage describes the work the turn did.
	Usage Usage
}

// Replies the engine writes itself (Reply.Canned).
const (
	CannedModelDown   = "model_down"
	CannedModelSlow   = "model_slow"
	CannedExhausted   = "exhausted"
	CannedEmpty       = "empty"
	CannedDone        = "done"
	CannedRateLimited = "rate_limited" // the author's rate; RetryAfter says how long
	CannedGuildRate   = "guild_rate"   // the server's rate; RetryAfter says how long
	CannedBudgetGuild = "budget_guild" // the server's daily model budget, reset at 00:00 UTC
	CannedBudgetDM    = "budget_dm"    // the member's DM budget, reset at 00:00 UTC
)

// Usage describes one turn's model calls and prompt, for logs and metrics.
type Usage struct {
	// ModelCalls is the number of tool-loop rounds (retries inside the client excluded).
	ModelCalls int
	// PromptTokens and CompletionTokens are as reported by the provider, summed.
	PromptTokens     int
	CompletionTokens int
	// ToolCalls counts tool calls run; ToolErrors those that returned an error.
	ToolCalls  int
	ToolErrors int
	// ContextTokens is the estimated size of the prompt built for the first round.
	ContextTokens int
	// DroppedTurns and DroppedMemories are what the budget cut from the prompt.
	DroppedTurns    int
	DroppedMemories int
	// MemoryIDs are the memories shown to the model.
	MemoryIDs []int64
	// Duration is the whole turn, model time included.
	Duration time.Duration
}

// Engine runs chat turns. It is safe for concurrent use; turns of different users and
// channels run in parallel.
type Engine struct {
	cfg        Config
	memories   Memories
	duplicates tools.Duplicates
	recaller   Recaller
	transcript Transcript
	settings   Settings
	short      ShortTerm
	model      ChatModel
	log        *slog.Logger
	budget     int
	limits     *keyrate.Limiter
	gate       turnGate
	pinned     *pinnedCache
	onTurn     TurnHook
}

// New validates cfg, fills in defaults and returns an engine.
func New(cfg Config, deps Deps) (*Engine, error) {
	switch {
	case deps.Memories == nil || deps.Duplicates == nil || deps.Recall == nil || deps.Transcript == nil || deps.Settings == nil:
		return nil, errors.New("couldn't create chat engine: no store")
	case deps.ShortTerm == nil:
		return nil, errors.New("couldn't create chat engine: no short-term memory")
	case deps.Model == nil:
		return nil, errors.New("couldn't create chat engine: no chat model")
	}
	for name, v := range map[string]int{"context window": cfg.ContextWindow, "max output tokens": cfg.MaxOutputTokens,
		"turns per minute": cfg.TurnsPerMinute, "guild turns per minute": cfg.GuildTurnsPerMinute, "history turns": cfg.HistoryTurns, "max participants": cfg.MaxParticipants,
		"recall limit": cfg.RecallLimit, "pinned limit": cfg.PinnedLimit, "max tool rounds": cfg.MaxToolRounds} {
		if v < 0 {
			return nil, fmt.Errorf("couldn't create chat engine: negative %s %d", name, v)
		}
	}
	cfg.ContextWindow = cmp.Or(cfg.ContextWindow, DefaultContextWindow)
	cfg.MaxOutputTokens = cmp.Or(cfg.MaxOutputTokens, DefaultMaxOutputTokens)
	if cfg.MaxOutputTokens >= cfg.ContextWindow {
		return nil, fmt.Errorf("couldn't create chat engine: max output tokens %d leave no room in a context window of %d", cfg.MaxOutputTokens, cfg.ContextWindow)
	}
	cfg.TurnsPerMinute = cmp.Or(cfg.TurnsPerMinute, DefaultTurnsPerMinute)
	cfg.BotName = cmp.Or(strings.TrimSpace(cfg.BotName), DefaultBotName)
	if strings.TrimSpace(cfg.Persona) == "" {
		cfg.Persona = fmt.Sprintf(DefaultPersona, cfg.BotName)
	}
	cfg.HistoryTurns = cmp.Or(cfg.HistoryTurns, DefaultHistoryTurns)
	cfg.ParticipantWindow = cmp.Or(cfg.ParticipantWindow, DefaultParticipantWindow)
	cfg.MaxParticipants = cmp.Or(cfg.MaxParticipants, DefaultMaxParticipants)
	cfg.RecallLimit = cmp.Or(cfg.RecallLimit, DefaultRecallLimit)
	cfg.PinnedLimit = cmp.Or(cfg.PinnedLimit, DefaultPinnedLimit)
	if cfg.MaxToolRounds == 0 || cfg.MaxToolRounds > tools.MaxRounds {
		cfg.MaxToolRounds = tools.MaxRounds
	}
	if cfg.PinnedTTL == 0 {
		cfg.PinnedTTL = DefaultPinnedTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{
		cfg:        cfg,
		memories:   deps.Memories,
		duplicates: deps.Duplicates,
		recaller:   deps.Recall,
		transcript: deps.Transcript,
		settings:   deps.Settings,
		short:      deps.ShortTerm,
		model:      deps.Model,
		log:        log,
		budget:     contextbuild.Budget(cfg.ContextWindow, cfg.MaxOutputTokens),
		limits:     keyrate.New(cfg.TurnsPerMinute),
		gate:       newTurnGate(cfg.GuildTurnsPerMinute, cfg.DailyBudget),
		pinned:     newPinnedCache(cfg.PinnedLimit, cfg.PinnedTTL, cfg.Now),
		onTurn:     deps.OnTurn,
	}, nil
}

// Turn answers one message. See the package documentation for the steps; the returned
// error is non-nil only for internal failures (the store, a cancelled context), never for
// a model that failed, which gives a Reply with ModelUnavailable instead.
func (e *Engine) Turn(ctx context.Context, req Request) (Reply, error) {
	started := time.Now()
	if req.ChannelID == "" || req.UserID == "" {
		return Reply{}, errors.New("couldn't run chat turn: channel and user are required")
	}
	if req.At.IsZero() {
		req.At = e.cfg.Now()
	}
	if strings.TrimSpace(req.UserName) == "" {
		req.UserName = req.UserID
	}
	log := e.log.With(slog.String("guild_id", req.GuildID), slog.String("channel_id", req.ChannelID),
		slog.String("user_id", req.UserID), slog.String("message_id", req.MessageID))
	// The turn's embedding calls (recall's query vectors, memories its tools write) are
	// charged to the budget its model calls draw on.
	ctx = memory.WithPayer(ctx, memory.Payer{GuildID: req.GuildID, ChannelID: req.ChannelID, UserID: req.UserID})

	// 1. Eligibility and privacy: a user at the full level is not answered and nothing of
	// the message is kept, so this comes before anything that writes.
	speaker, err := e.speakerSettings(ctx, req)
	if err != nil {
		return Reply{}, err
	}
	if speaker.Privacy == memory.PrivacyFull {
		log.DebugContext(ctx, "message ignored", slog.String("reason", "privacy full"))
		return Reply{Ignored: true}, nil
	}
	if strings.TrimSpace(req.Content) == "" {
		log.DebugContext(ctx, "message ignored", slog.String("reason", "empty"))
		return Reply{Ignored: true}, nil
	}
	if refusal, ok, err := e.admit(ctx, log, req); !ok || err != nil {
		return refusal, err
	}

	// Credentials are cut from the message before it goes anywhere: the transcript would
	// redact them anyway, and the model (a third party, possibly logging) and short-term
	// memory (injected into later prompts) have no more use for a live token than the
	// database. The model still sees that something was redacted, and can say so.
	req.Content = memory.RedactSecrets(req.Content)

	// 2. Raw-first: the user's words are durable before any model call.
	turnID, explicit, err := e.recordUserTurn(ctx, log, req)
	if err != nil {
		return Reply{}, err
	}

	// 3–4. Intent gate and context.
	tc, err := e.prepare(ctx, log, req, speaker, turnID, explicit)
	if err != nil {
		return Reply{}, err
	}
	reply := Reply{Usage: Usage{ContextTokens: tc.built.Tokens, DroppedTurns: tc.built.DroppedTurns,
		DroppedMemories: tc.built.DroppedMemories, MemoryIDs: tc.built.MemoryIDs}}

	// 5. Tool loop.
	tb := tools.New(tc.conv, e.memories, e.duplicates, e.recaller, e.short, log)
	res, runErr := tools.Run(ctx, e.model, openai.ChatCompletionRequest{Messages: tc.built.Messages, MaxTokens: e.cfg.MaxOutputTokens}, tb, e.cfg.MaxToolRounds)
	reply.Notices = tb.Notices()
	e.invalidateAfter(reply.Notices, req.GuildID)
	reply.Usage.ModelCalls, reply.Usage.ToolCalls, reply.Usage.ToolErrors = res.Rounds, res.ToolCalls, res.ToolErrors
	e.spendBudget(ctx, log, req, res.Rounds)
	reply.Usage.PromptTokens, reply.Usage.CompletionTokens = res.Usage.PromptTokens, res.Usage.CompletionTokens
	if runErr != nil {
		if ctx.Err() != nil {
			return reply, fmt.Errorf("couldn't finish chat turn: %w", runErr)
		}
		return e.apologize(ctx, log, req, reply, res.Rounds, runErr, started), nil
	}
	return e.answer(ctx, log, req, tc, reply, res, started), nil
}

// recordUserTurn stores the user's message in the transcript and tells the turn hook,
// returning the turn's id and whether the message asks to remember something.
func (e *Engine) recordUserTurn(ctx context.Context, log *slog.Logger, req Request) (int64, bool, error) {
	stored := memory.Turn{GuildID: req.GuildID, ChannelID: req.ChannelID, UserID: req.UserID,
		AuthorName: req.UserName, Role: memory.RoleUser, Content: req.Content, MessageID: req.MessageID, CreatedAt: req.At,
		CanEditServer: req.GuildID != "" && req.ServerEditor, NoLearning: req.NoLearning}
	turnID, err := e.transcript.AppendTurn(ctx, stored)
	if err != nil {
		return 0, false, err
	}
	stored.ID = turnID
	explicit := isExplicit(req.Content)
	e.notifyTurn(ctx, log, stored, explicit)
	return turnID, explicit, nil
}

// apologize is the reply of a turn whose model failed after rounds rounds with runErr.
// The transcript already holds the user's turn; the apology is not a real answer, so it
// is neither recorded nor captured.
func (e *Engine) apologize(ctx context.Context, log *slog.Logger, req Request, reply Reply, rounds int, runErr error, started time.Time) Reply {
	log.WarnContext(ctx, "chat model unavailable", slog.Int("rounds", rounds), slog.Any("err", runErr))
	e.capture(log, req, "")
	reply.Text, reply.ModelUnavailable, reply.Canned = modelDownText, true, CannedModelDown
	if errors.Is(runErr, context.DeadlineExceeded) {
		// Every attempt ran out of KIOKU_LLM_TIMEOUT: the model is reachable but slow,
		// which asks for patience rather than a check of the provider.
		reply.Text, reply.Canned = modelSlowText, CannedModelSlow
	}
	reply.Usage.Duration = time.Since(started)
	return reply
}

// answer completes the reply from the tool loop's result res (steps 6 and 7): the text
// or a canned stand-in, recorded in the transcript and captured in short-term memory.
func (e *Engine) answer(ctx context.Context, log *slog.Logger, req Request, tc turnContext, reply Reply, res tools.Result, started time.Time) Reply {
	// 6. Reply. The model never saw a credential from this message, but one may come
	// from elsewhere (a row stored before the detector knew its shape, or the model's
	// own invention): it is not echoed, recorded or captured either.
	reply.Text = memory.RedactSecrets(res.Text)
	switch {
	case reply.Text != "":
	case res.Exhausted:
		reply.Text, reply.Canned = exhaustedText, CannedExhausted
	case len(reply.Notices) > 0:
		reply.Text, reply.Canned = doneText, CannedDone
	default:
		reply.Text, reply.Canned = emptyReplyText, CannedEmpty
	}
	if _, err := e.transcript.AppendTurn(ctx, memory.Turn{GuildID: req.GuildID, ChannelID: req.ChannelID, UserID: req.UserID,
		AuthorName: e.cfg.BotName, Role: memory.RoleAssistant, Content: reply.Text, CreatedAt: e.cfg.Now(),
		NoLearning: req.NoLearning}); err != nil {
		// The answer exists and the user's turn is stored; losing the bot's own words
		// from the transcript is not worth withholding the reply.
		log.ErrorContext(ctx, "couldn't record reply", slog.Any("err", err))
	}

	// 7. Passive short-term capture.
	e.capture(log, req, reply.Text)

	reply.Usage.Duration = time.Since(started)
	log.InfoContext(ctx, "chat turn",
		slog.Bool("explicit_intent", tc.conv.ExplicitIntent), slog.Bool("self_teaching", tc.conv.SelfTeaching),
		slog.Int("participants", 1+len(tc.conv.Others)), slog.Int("memories", len(reply.Usage.MemoryIDs)),
		slog.Int("context_tokens", reply.Usage.ContextTokens), slog.Int("dropped_turns", reply.Usage.DroppedTurns),
		slog.Int("dropped_memories", reply.Usage.DroppedMemories), slog.Int("rounds", res.Rounds),
		slog.Int("tool_calls", res.ToolCalls), slog.Int("tool_errors", res.ToolErrors), slog.Bool("exhausted", res.Exhausted),
		slog.Int("notices", len(reply.Notices)), slog.Int("prompt_tokens", res.Usage.PromptTokens),
		slog.Int("completion_tokens", res.Usage.CompletionTokens), slog.Duration("duration", reply.Usage.Duration))
	return reply
}

// capture appends the user's message, and the reply when there is one, to short-term
// memory: the channel's shared entry and the user's own in a guild, the user's entry in a
// DM. Capture is best effort: short-term memory is a convenience, and a failure here
// must not cost the user their answer.
func (e *Engine) capture(log *slog.Logger, req Request, reply string) {
	keys := []stm.Key{stm.UserKey(req.GuildID, req.ChannelID, req.UserID)}
	if req.GuildID != "" {
		keys = append(keys, stm.ChannelKey(req.GuildID, req.ChannelID))
	}
	msgs := []stm.Message{{AuthorID: req.UserID, AuthorName: req.UserName, Role: stm.RoleUser, Content: req.Content, SentAt: req.At, MessageID: req.MessageID}}
	if reply != "" {
		msgs = append(msgs, stm.Message{AuthorName: e.cfg.BotName, Role: stm.RoleAssistant, Content: reply, InReplyTo: req.UserID, SentAt: e.cfg.Now()})
	}
	for _, k := range keys {
		for _, m := range msgs {
			if err := e.short.Append(k, m); err != nil {
				log.Warn("couldn't capture short-term memory", slog.String("stm_key", k.String()), slog.Any("err", err))
			}
		}
	}
}

// notifyTurn calls the turn hook for a stored user turn. It runs before the model is
// asked so that a high-signal turn is scheduled even when the model then fails or the
// process dies mid-turn; the hook only writes a queue row, outside any transaction.
func (e *Engine) notifyTurn(ctx context.Context, log *slog.Logger, t memory.Turn, explicit bool) {
	if e.onTurn == nil {
		return
	}
	// intent.HighSignal covers the explicit phrases too; checking the gate's answer first
	// spares a second scan of a message that asked to be remembered.
	highSignal := explicit || intent.HighSignal(t.Content)
	if err := e.onTurn(ctx, t, highSignal); err != nil {
		log.WarnContext(ctx, "couldn't notify the memory pipeline of a turn", slog.Int64("turn_id", t.ID),
			slog.Bool("high_signal", highSignal), slog.Any("err", err))
	}
}

// invalidateAfter drops cached server memory of the guild once the model changed it
// (SPEC §3 step 7). It runs before a failed turn returns too: the changes were made even
// if the answer was not.
func (e *Engine) invalidateAfter(notices []Notice, guildID string) {
	for _, n := range notices {
		if n.Scope == memory.ScopeServer {
			e.Invalidate(guildID)
			return
		}
	}
}

// rateLimitText is the polite reply to a user over the rate limit.
func rateLimitText(wait time.Duration) string {
	secs := max(1, int((wait+time.Second-1)/time.Second))
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	return fmt.Sprintf("You're sending messages faster than I can keep up with. Please wait about %d %s and try again.", secs, unit)
}

// isExplicit runs the intent gate on a message (SPEC §3 step 3).
func isExplicit(content string) bool { return intent.Explicit(content) }
