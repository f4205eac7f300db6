package bot

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// commandHandler runs one slash command, context menu command or button.
// It returns what to show, or an error whose domain message is shown.
type commandHandler func(ctx context.Context, c *call) (*response, error)

// call is one interaction being handled: who, where, what was asked, and
// whether it has been acknowledged yet.
type call struct {
	b      *core
	i      *discordgo.Interaction
	log    *slog.Logger
	user   *discordgo.User
	member *discordgo.Member // nil in DMs
	// key names the handler: "memory list", "privacy", "Remember this", or
	// the custom ID prefix of a button.
	key string
	// options are the options of the (sub)command by name.
	options commandOptions
	// command is the command data; zero for buttons.
	command discordgo.ApplicationCommandInteractionData
	// customID is the button's or modal's custom ID; empty for commands.
	customID string
	deferred bool
	// ownReply makes a button press answer with a new ephemeral message instead of
	// updating the message the button is on (actions.go).
	ownReply bool
	// modalUpdates makes a modal submitted from a button answer by updating the message the
	// button was on, as the button itself would (the review queue, the near-duplicate answer).
	modalUpdates bool
	// notice are the Undo/Edit buttons of the change a command just made, shown under its
	// reply (notices.go).
	notice []discordgo.MessageComponent
	// aud is the caller's audience once computed (see audience).
	aud *memory.Audience
}

// response is what a handler shows. Command replies are always ephemeral:
// /memory, /privacy, /stm and /kioku are a personal management surface,
// and answering only the caller keeps personal memory private and the
// channel free of bookkeeping. Button presses edit the message they are on.
type response struct {
	content    string
	embeds     []*discordgo.MessageEmbed
	components []discordgo.MessageComponent
	files      []*discordgo.File
	// modal, when set, opens this modal instead of answering with a message.
	modal *discordgo.InteractionResponseData
}

func (c *call) guildID() string { return c.i.GuildID }
func (c *call) userID() string  { return c.user.ID }
func (c *call) inDM() bool      { return c.i.GuildID == "" }

// userName is the caller's name as people see it here.
func (c *call) userName() string {
	if c.member != nil && c.member.Nick != "" {
		return c.member.Nick
	}
	return c.user.DisplayName()
}

// isComponent reports whether the call is a button press.
func (c *call) isComponent() bool { return c.i.Type == discordgo.InteractionMessageComponent }

// updatesMessage reports whether the call answers by updating the message its button is
// on: every button press but those that reply on their own (see ownReply), and the forms
// that ask to (see modalUpdates) when Discord says which message they came from.
func (c *call) updatesMessage() bool {
	if c.ownReply {
		return false
	}
	return c.isComponent() || (c.modalUpdates && c.i.Type == discordgo.InteractionModalSubmit && c.i.Message != nil)
}

// deferReply acknowledges the interaction before slow work, so Discord's
// three-second window cannot expire: commands show "thinking…" (ephemeral),
// buttons keep their message until it is edited.
func (c *call) deferReply(ctx context.Context) error {
	if c.deferred {
		return nil
	}
	resp := &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral},
	}
	if c.updatesMessage() {
		resp = &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
	}
	if err := c.b.session.InteractionRespond(c.i, resp, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("couldn't acknowledge interaction: %w", err)
	}
	c.deferred = true
	return nil
}

// finish shows r: as the interaction's response, or as an edit of the
// deferred response.
func (c *call) finish(ctx context.Context, r *response) error {
	if r.modal != nil && !c.deferred {
		return c.openModal(ctx, r.modal)
	}
	components := r.components
	if components == nil && c.notice != nil {
		components = c.notice
	}
	if components == nil {
		// An empty list removes buttons from a message being updated.
		components = []discordgo.MessageComponent{}
	}
	embeds := r.embeds
	if embeds == nil {
		embeds = []*discordgo.MessageEmbed{}
	}
	if c.deferred {
		edit := &discordgo.WebhookEdit{
			Content:         &r.content,
			Embeds:          &embeds,
			Components:      &components,
			Files:           r.files,
			AllowedMentions: noMentions(),
		}
		if _, err := c.b.session.InteractionResponseEdit(c.i, edit, discordgo.WithContext(ctx)); err != nil {
			return fmt.Errorf("couldn't edit interaction response: %w", err)
		}
		return nil
	}
	data := &discordgo.InteractionResponseData{
		Content:         r.content,
		Embeds:          embeds,
		Components:      components,
		Files:           r.files,
		AllowedMentions: noMentions(),
	}
	typ := discordgo.InteractionResponseChannelMessageWithSource
	if c.updatesMessage() {
		// An update keeps the message's own flags; only new messages choose.
		typ = discordgo.InteractionResponseUpdateMessage
	} else {
		data.Flags = discordgo.MessageFlagsEphemeral
	}
	if err := c.b.session.InteractionRespond(c.i, &discordgo.InteractionResponse{Type: typ, Data: data},
		discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("couldn't respond to interaction: %w", err)
	}
	return nil
}

// fail shows an error to the caller only. A failed button press answers
// with a new ephemeral message so the message it was on stays as it was.
func (c *call) fail(ctx context.Context, text string) error {
	if c.updatesMessage() {
		msg := &discordgo.InteractionResponseData{Content: text, Flags: discordgo.MessageFlagsEphemeral,
			AllowedMentions: noMentions()}
		if c.deferred {
			_, err := c.b.session.FollowupMessageCreate(c.i, true, &discordgo.WebhookParams{Content: text,
				Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
			return err
		}
		return c.b.session.InteractionRespond(c.i, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource, Data: msg}, discordgo.WithContext(ctx))
	}
	return c.finish(ctx, &response{content: text})
}

// handleInteraction routes an interaction to its handler. It checks the
// interaction type before reading its data (discordgo's accessors panic on
// the wrong type), gives the handler a context bounded by the command
// timeout, and turns errors into an ephemeral message: the domain message
// for domain errors, a generic one (with a log line) for everything else.
func (b router) handleInteraction(s *discordgo.Session, e *discordgo.InteractionCreate) {
	if e == nil || e.Interaction == nil {
		return
	}
	c, ok := b.newCall(e.Interaction)
	if !ok {
		return
	}
	if c.member != nil {
		b.channels.noteRoles(c.guildID(), c.userID(), c.member.Roles, b.now())
	}
	b.stats.interactions.Add(1)
	if !b.begin() {
		if c.i.Type == discordgo.InteractionApplicationCommandAutocomplete {
			// Suggestions take no message; Discord shows none.
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.fail(ctx, c.t("error.restarting"))
		return
	}
	defer b.inflight.Done()
	ctx, cancel := context.WithTimeout(b.base, b.commandTimeout)
	defer cancel()
	// Whatever the provider is asked for this interaction (a search's query vector, a new
	// memory's vector, an import's) is charged to this server, or in DMs to this member.
	ctx = memory.WithPayer(ctx, memory.Payer{GuildID: c.guildID(), ChannelID: c.i.ChannelID, UserID: c.userID()})
	if c.i.Type == discordgo.InteractionApplicationCommandAutocomplete {
		b.autocomplete(ctx, c)
		return
	}

	h := b.handlerFor(c)
	if h == nil && c.i.Type == discordgo.InteractionModalSubmit {
		// Only kioku's own modals come back here; anything else is left unanswered.
		c.log.Warn("unknown modal", "key", c.key)
		return
	}
	if h == nil {
		c.log.Warn("unknown interaction", "key", c.key)
		if err := c.fail(ctx, c.t("error.unknown_command")); err != nil {
			c.log.Error("couldn't answer interaction", "err", err)
		}
		return
	}
	started := time.Now()
	r, err := h(ctx, c)
	if err == nil {
		if err := c.finish(ctx, r); err != nil {
			c.log.Error("couldn't answer interaction", "key", c.key, "err", err)
			return
		}
		c.log.Info("interaction answered", "key", c.key, "duration_ms", time.Since(started).Milliseconds())
		return
	}
	b.answerFailure(ctx, c, err)
}

// answerFailure tells the member why their interaction failed: a timeout or an internal
// error is counted and logged with its cause, a refusal (a domain error) is shown as it is.
func (b router) answerFailure(ctx context.Context, c *call, err error) {
	var text string
	switch code := memory.ErrorCode(err); {
	case ctx.Err() != nil:
		b.stats.interactionErrors.Add(1)
		c.log.Error("interaction timed out", "key", c.key, "err", err)
		text = c.t("error.timeout")
	case code == memory.EINTERNAL, code == memory.EUNAVAILABLE:
		// A database that refuses writes is the operator's to fix: logged with its cause,
		// while the member reads what happened.
		b.stats.interactionErrors.Add(1)
		c.log.Error("interaction failed", "key", c.key, "err", err)
		text = errorText(err, c.locale())
	default:
		if code == memory.EFORBIDDEN {
			b.stats.denied.Add(1)
		}
		c.log.Info("interaction declined", "key", c.key, "code", code)
		text = errorText(err, c.locale())
	}
	// The answer may still fit in a context that just timed out.
	answerCtx, answerCancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer answerCancel()
	if err := c.fail(answerCtx, text); err != nil {
		c.log.Error("couldn't answer interaction", "key", c.key, "err", err)
	}
}

// newCall reads who sent the interaction and what it asks for: commands,
// autocomplete, buttons and modal submits. It reports false for pings, for
// data of another type than the interaction says, and for partial payloads
// without a user.
func (b router) newCall(i *discordgo.Interaction) (*call, bool) {
	c := &call{b: b.core, i: i, member: i.Member}
	switch {
	case i.Member != nil && i.Member.User != nil:
		c.user = i.Member.User
	case i.User != nil:
		c.user = i.User
		c.member = nil
	default:
		b.log.Warn("interaction without a user", "interaction_id", i.ID, "guild_id", i.GuildID)
		return nil, false
	}
	c.log = b.log.With("guild_id", i.GuildID, "channel_id", i.ChannelID, "user_id", c.user.ID, "interaction_id", i.ID)
	switch i.Type {
	case discordgo.InteractionApplicationCommand, discordgo.InteractionApplicationCommandAutocomplete:
		data, ok := i.Data.(discordgo.ApplicationCommandInteractionData)
		if !ok {
			return nil, false
		}
		c.command = data
		c.key = data.Name
		opts := data.Options
		if len(opts) == 1 && opts[0] != nil && (opts[0].Type == discordgo.ApplicationCommandOptionSubCommand ||
			opts[0].Type == discordgo.ApplicationCommandOptionSubCommandGroup) {
			c.key += " " + opts[0].Name
			opts = opts[0].Options
		}
		c.options = make(commandOptions, len(opts))
		for _, o := range opts {
			if o != nil {
				c.options[o.Name] = o
			}
		}
		return c, true
	case discordgo.InteractionMessageComponent:
		data, ok := i.Data.(discordgo.MessageComponentInteractionData)
		if !ok {
			return nil, false
		}
		c.setCustomID(data.CustomID)
		return c, true
	case discordgo.InteractionModalSubmit:
		data, ok := i.Data.(discordgo.ModalSubmitInteractionData)
		if !ok {
			return nil, false
		}
		c.setCustomID(data.CustomID)
		return c, true
	}
	return nil, false
}

// setCustomID records a button's or modal's custom ID and keys the call by its first two
// parts ("mem:page", "kioku:undo").
func (c *call) setCustomID(id string) {
	c.customID = id
	c.key, _, _ = strings.Cut(id, ":")
	if rest, ok := strings.CutPrefix(id, c.key+":"); ok {
		sub, _, _ := strings.Cut(rest, ":")
		c.key += ":" + sub
	}
}

// handlerFor returns the handler of c's key, or nil.
func (b router) handlerFor(c *call) commandHandler {
	return b.commands[c.key]
}

// errNoGuild is returned by commands that only make sense in a server.
var errNoGuild = errT(memory.EINVALID, "error.no_guild")
