package bot

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// Discord events that change what kioku may keep (SPEC §2): deleted and edited messages,
// and the bot's removal from a server.

// OnMessageDelete removes a deleted message from short-term memory, the transcript and
// pending extraction, and soft-deletes pipeline memories learned only from it. Partial
// events (no author, no member, no guild in a DM) are normal: only the ids are needed.
func (b messageEvents) OnMessageDelete(_ *discordgo.Session, e *discordgo.MessageDelete) {
	if e == nil || e.Message == nil || e.ID == "" || e.ChannelID == "" {
		return
	}
	b.messagesDeleted(e.GuildID, e.ChannelID, []string{e.ID})
}

// OnMessageDeleteBulk is OnMessageDelete for a moderator's bulk delete, in one store
// transaction for the batch.
func (b messageEvents) OnMessageDeleteBulk(_ *discordgo.Session, e *discordgo.MessageDeleteBulk) {
	if e == nil || e.ChannelID == "" || len(e.Messages) == 0 {
		return
	}
	b.messagesDeleted(e.GuildID, e.ChannelID, e.Messages)
}

// OnMessageUpdate replaces an edited message's text in short-term memory and the
// transcript, redacted and without the bot's mention as when it was first stored, and
// sends pending extraction back to read it afresh. An update without content (an embed
// unfurled, a pin) changes nothing; memories learned from the old text stay.
func (b messageEvents) OnMessageUpdate(_ *discordgo.Session, e *discordgo.MessageUpdate) {
	if e == nil || e.Message == nil || e.ID == "" || e.ChannelID == "" || e.Content == "" {
		return
	}
	self := b.botUserID()
	if e.Author != nil && (e.Author.Bot || e.Author.ID == self) {
		return // the bot's replies are stored without message ids; other bots are never stored
	}
	content := memory.RedactSecrets(StripMention(e.Content, self))
	if b.guard.edited(e.ID, content) {
		// Its turn is still running and captures the message when it ends; the turn
		// applies the edit then (see OnMessageCreate).
		b.log.Debug("message edited during its turn", "message_id", e.ID)
	}
	b.messageEdited(e.GuildID, e.ChannelID, e.ID, content)
}

// messagesDeleted applies deleted messages to short-term memory and the store.
func (b messageEvents) messagesDeleted(guildID, channelID string, ids []string) {
	b.guard.deleted(ids, b.now())
	log := b.log.With("guild_id", guildID, "channel_id", channelID)
	if !b.begin() {
		log.Warn("message deletion not applied: shutting down", "messages", len(ids))
		return
	}
	defer b.inflight.Done()
	ctx, cancel := context.WithTimeout(b.base, b.commandTimeout)
	defer cancel()
	// Short-term memory first: it is injected into the very next prompt.
	short := b.stm.RemoveMessages(guildID, channelID, ids...)
	var res memory.MessageChange
	err := b.retryUnavailable(ctx, log, "message deletion", func(ctx context.Context) (err error) {
		res, err = b.store.Transcripts.DeleteMessages(ctx, guildID, channelID, ids)
		return err
	})
	if err != nil {
		log.Error("couldn't remove deleted messages", "messages", len(ids), "err", err)
		return
	}
	if short == 0 && res.Turns == 0 && len(res.Forgotten) == 0 {
		return
	}
	forgotten := make([]int64, 0, len(res.Forgotten))
	for _, m := range res.Forgotten {
		forgotten = append(forgotten, m.ID)
		if m.Scope == memory.ScopeServer {
			b.invalidate(m.GuildID)
		}
	}
	log.Info("deleted messages removed", "messages", len(ids), "stm_messages", short, "turns", res.Turns,
		"jobs_rewound", res.Jobs, "memories_forgotten", forgotten)
}

// messageEdited applies an edited message's new text to short-term memory and the store.
func (b messageEvents) messageEdited(guildID, channelID, messageID, content string) {
	log := b.log.With("guild_id", guildID, "channel_id", channelID, "message_id", messageID)
	if !b.begin() {
		log.Warn("message edit not applied: shutting down")
		return
	}
	defer b.inflight.Done()
	ctx, cancel := context.WithTimeout(b.base, b.commandTimeout)
	defer cancel()
	short := b.stm.ReplaceMessage(guildID, channelID, messageID, content)
	var res memory.MessageChange
	err := b.retryUnavailable(ctx, log, "message edit", func(ctx context.Context) (err error) {
		res, err = b.store.Transcripts.EditMessage(ctx, guildID, channelID, messageID, content)
		return err
	})
	if err != nil {
		log.Error("couldn't apply message edit", "err", err)
		return
	}
	if short > 0 || res.Turns > 0 {
		log.Info("edited message replaced", "stm_messages", short, "turns", res.Turns, "jobs_rewound", res.Jobs)
	}
}

// invalidate drops what the turner caches about a guild's server memory (the chat
// engine's pinned memories), so a memory forgotten here stops reaching prompts at once.
func (b messageEvents) invalidate(guildID string) {
	if inv, ok := b.turner.(interface{ Invalidate(guildID string) }); ok && guildID != "" {
		inv.Invalidate(guildID)
	}
}

// OnGuildDelete records the bot's removal from a server: its data is deleted once the
// grace period (Config.GuildPurgeAfter) has passed, unless the bot is added back first.
// A guild that became unavailable (an outage) is not a removal and changes nothing.
func (b messageEvents) OnGuildDelete(_ *discordgo.Session, e *discordgo.GuildDelete) {
	if e == nil || e.Guild == nil || e.ID == "" {
		return
	}
	log := b.log.With("guild_id", e.ID)
	if e.Unavailable {
		log.Info("guild unavailable (a Discord outage); its data is kept")
		return
	}
	if !b.begin() {
		log.Warn("removal from guild not recorded: shutting down")
		return
	}
	defer b.inflight.Done()
	ctx, cancel := context.WithTimeout(b.base, b.commandTimeout)
	defer cancel()
	var d memory.Departure
	err := b.retryUnavailable(ctx, log, "removal from guild", func(ctx context.Context) (err error) {
		d, err = b.store.Guilds.RecordDeparture(ctx, e.ID, b.guildPurgeAfter)
		return err
	})
	if err != nil {
		log.Error("couldn't record removal from guild", "err", err)
		return
	}
	log.Info("removed from guild; its data will be deleted unless the bot is added back",
		"purge_after", d.PurgeAfter.Format(time.RFC3339))
}

// OnGuildCreate welcomes a server seen for the first time and cancels a recorded removal
// when the bot is added back to the server
// before its data was due for deletion. Discord sends GUILD_CREATE for every guild on
// every connect; one without a departure costs a read, and one whose joined_at is older
// than the departure (the connect's listing, handled after a later removal) keeps it.
func (b messageEvents) OnGuildCreate(_ *discordgo.Session, e *discordgo.GuildCreate) {
	if e == nil || e.Guild == nil || e.ID == "" || e.Unavailable {
		return
	}
	if !b.begin() {
		return
	}
	defer b.inflight.Done()
	ctx, cancel := context.WithTimeout(b.base, b.commandTimeout)
	defer cancel()
	log := b.log.With("guild_id", e.ID)
	// A server seen for the first time gets kioku's introduction (onboarding.go).
	defer b.welcome(ctx, log, e.Guild)
	var cancelled bool
	err := b.retryUnavailable(ctx, log, "return to guild", func(ctx context.Context) (err error) {
		cancelled, err = b.store.Guilds.CancelDeparture(ctx, e.ID, e.JoinedAt)
		return err
	})
	if err != nil {
		log.Error("couldn't cancel removal from guild", "err", err)
		return
	}
	if cancelled {
		log.Info("added back to guild; its data is kept")
	}
}

// Waits between the tries of an event's store update while the database is unavailable.
const (
	eventRetryMin = 100 * time.Millisecond
	eventRetryMax = 5 * time.Second
)

// retryUnavailable runs apply, the store update of a Discord event, again while the
// database is unavailable (restarting, its connections cut, full or read-only), until it
// succeeds, fails otherwise, or ctx ends. Discord sends each event once: a deletion lost
// to a moment without the database would leave the member's deleted words stored.
func (b messageEvents) retryUnavailable(ctx context.Context, log *slog.Logger, what string, apply func(context.Context) error) error {
	wait := eventRetryMin
	for {
		err := apply(ctx)
		if err == nil || memory.ErrorCode(err) != memory.EUNAVAILABLE || ctx.Err() != nil {
			return err
		}
		log.Warn("database unavailable; trying again", "update", what, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, eventRetryMax)
	}
}

// Limits of messageGuard's memory of deleted messages.
const (
	// deletedMemory is how long a deleted message id is remembered, for a MESSAGE_CREATE
	// handled after its MESSAGE_DELETE: discordgo runs handlers concurrently, and
	// moderation bots delete within milliseconds.
	deletedMemory = time.Minute
	// maxDeleted bounds the ids remembered; past it, older ids are dropped first.
	maxDeleted = 4096
)

// messageGuard closes the window between a chat turn storing a message and a delete or
// edit of that message handled meanwhile: the turn writes the transcript early and short-
// term memory last, so a change applied in between would be undone by the capture.
type messageGuard struct {
	mu sync.Mutex
	// running holds the messages whose turn is running, with what happened to them since.
	running map[string]*messageFate
	// recent holds recently deleted message ids and when they were deleted.
	recent map[string]time.Time
}

// messageFate is what happened to a message while its turn ran.
type messageFate struct {
	deleted bool
	edited  *string
}

// start registers a turn for message id and reports false when the message was deleted
// already, in which case no turn should run.
func (g *messageGuard) start(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, gone := g.recent[id]; gone {
		return false
	}
	if g.running == nil {
		g.running = map[string]*messageFate{}
	}
	g.running[id] = &messageFate{}
	return true
}

// finish ends the turn of message id and returns what happened to the message meanwhile.
func (g *messageGuard) finish(id string) messageFate {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.running[id]
	delete(g.running, id)
	if f == nil {
		return messageFate{}
	}
	return *f
}

// deleted notes deleted messages: their running turns re-apply the deletion when they end,
// and a turn not started yet does not start.
func (g *messageGuard) deleted(ids []string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.recent == nil {
		g.recent = map[string]time.Time{}
	}
	if len(g.recent)+len(ids) > maxDeleted {
		for id, at := range g.recent {
			if now.Sub(at) > deletedMemory {
				delete(g.recent, id)
			}
		}
		if len(g.recent)+len(ids) > maxDeleted {
			clear(g.recent) // a burst: forgetting old ids only reopens a narrow window
		}
	}
	for _, id := range ids {
		g.recent[id] = now
		if f := g.running[id]; f != nil {
			f.deleted = true
		}
	}
}

// edited notes the new text of a message whose turn is running and reports whether it was.
func (g *messageGuard) edited(id, content string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.running[id]
	if f == nil {
		return false
	}
	f.edited = &content
	return true
}

// settle re-applies to message m what happened to it during its turn.
func (b messageEvents) settle(m *discordgo.Message, log *slog.Logger) {
	switch f := b.guard.finish(m.ID); {
	case f.deleted:
		log.Info("message deleted during its turn; removing it again")
		b.stm.RemoveMessages(m.GuildID, m.ChannelID, m.ID)
		ctx, cancel := context.WithTimeout(b.base, b.commandTimeout)
		defer cancel()
		if err := b.retryUnavailable(ctx, log, "message deletion", func(ctx context.Context) error {
			_, err := b.store.Transcripts.DeleteMessages(ctx, m.GuildID, m.ChannelID, []string{m.ID})
			return err
		}); err != nil {
			log.Error("couldn't remove message deleted during its turn", "err", err)
		}
	case f.edited != nil:
		b.stm.ReplaceMessage(m.GuildID, m.ChannelID, m.ID, *f.edited)
		ctx, cancel := context.WithTimeout(b.base, b.commandTimeout)
		defer cancel()
		if err := b.retryUnavailable(ctx, log, "message edit", func(ctx context.Context) error {
			_, err := b.store.Transcripts.EditMessage(ctx, m.GuildID, m.ChannelID, m.ID, *f.edited)
			return err
		}); err != nil {
			log.Error("couldn't apply edit made during its turn", "err", err)
		}
	}
}
