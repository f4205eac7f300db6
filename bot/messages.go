package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// typingInterval refreshes the typing indicator, which Discord shows for
// about ten seconds per call.
const typingInterval = 8 * time.Second

// OnMessageCreate answers a message when it is addressed to the bot: in a
// DM, when it mentions the bot, when it replies to one of the bot's
// messages, or when it is posted in one of the guild's auto-reply channels.
// Bots (itself included), system messages and partial events without an
// author are ignored.
func (b messageEvents) OnMessageCreate(s *discordgo.Session, e *discordgo.MessageCreate) {
	if e == nil || e.Message == nil {
		return
	}
	m := e.Message
	self := b.botUserID()
	if !fromHuman(m, self) {
		return
	}
	b.visibility.observe(m)
	// One logger and one read of each settings row for the whole message: whether the
	// bot is addressed, whether the author edits server memory and the turn all use them.
	log := b.log.With("guild_id", m.GuildID, "channel_id", m.ChannelID, "user_id", m.Author.ID, "message_id", m.ID)
	settings := &messageSettings{store: b.store, log: log, guildID: m.GuildID}
	if !b.addressed(m, self, settings) {
		return
	}
	content := StripMention(m.Content, self)
	if content == "" {
		// An image-only message or a bare mention: nothing for the model
		// to answer, and a reply like "?" helps nobody.
		b.stats.ignored.Add(1)
		return
	}
	if !b.begin() {
		// Shutting down: a turn started now could not finish. Discord
		// users see no reply, as when the bot is offline.
		b.stats.ignored.Add(1)
		return
	}
	defer b.inflight.Done()
	if !b.guard.start(m.ID) {
		// Deleted before its turn began (handlers run concurrently): answering would
		// store what its author took back.
		b.stats.ignored.Add(1)
		log.Debug("message deleted before its turn")
		return
	}
	// A delete or edit handled while the turn runs is applied again once the turn has
	// captured the message.
	defer b.settle(m, log)
	// At most Config.MaxConcurrentTurns turns run at once; others wait in a bounded queue,
	// and a message that finds it full is answered "I'm busy" instead.
	release, admitted := b.admitTurn(m, log)
	if !admitted {
		return
	}
	defer release()
	b.stats.inFlight.Add(1)
	defer b.stats.inFlight.Add(-1)

	ctx, cancel := context.WithTimeout(b.base, b.turnTimeout)
	defer cancel()
	b.runTurn(ctx, m, content, settings, log)
}

// runTurn runs the chat turn for message m, whose text for the model is content, and
// answers in its channel.
func (b messageEvents) runTurn(ctx context.Context, m *discordgo.Message, content string, settings *messageSettings, log *slog.Logger) {
	// The engine ignores full-privacy users too; checking here as well keeps
	// even the typing indicator away from someone who asked to be ignored.
	// The settings read here go to the engine with the request, so the turn
	// does not read them again; after a failed read the engine tries itself.
	var speaker *memory.UserSettings
	if us, err := b.store.Settings.UserSettings(ctx, m.Author.ID); err == nil {
		if us.Privacy == memory.PrivacyFull {
			b.stats.ignored.Add(1)
			return
		}
		speaker = &us
	}
	req := b.turnRequest(ctx, m, content, settings, speaker)
	// Never the content itself: the engine redacts credentials, and a log line
	// written before that would keep them (and logs outlive forget-me).
	log.Debug("turn started", "content_bytes", len(content))
	started := time.Now()
	stopTyping := b.keepTyping(ctx, m.ChannelID)
	reply, err := b.turner.Turn(ctx, req)
	stopTyping()
	b.stats.turns.Add(1)
	b.answerTurn(ctx, m, settings, log, reply, err, started)
}

// turnRequest is what the engine is asked for message m: who speaks, where, what the
// speaker may change, and who will read the reply.
func (b messageEvents) turnRequest(ctx context.Context, m *discordgo.Message, content string, settings *messageSettings, speaker *memory.UserSettings) chat.Request {
	req := chat.Request{
		GuildID:   m.GuildID,
		ChannelID: m.ChannelID,
		UserID:    m.Author.ID,
		UserName:  AuthorName(m),
		MessageID: m.ID,
		Content:   content,
		At:        m.Timestamp,
		// The model may change server memory others wrote only for editors.
		ServerEditor: b.perms.messageServerEditor(ctx, m, settings),
		Speaker:      speaker,
	}
	if m.GuildID != "" {
		if gs, err := settings.guild(ctx); err == nil {
			req.Guild = &gs
		}
		// A channel that does not learn (switched off, age-restricted, or unknown) is still
		// answered; the turn is kept for replies but never learned from. DMs learn.
		req.NoLearning = !b.visibility.messageLearns(ctx, m, settings)
	}
	// Everyone who can read the channel reads the reply; a DM only its author.
	if m.GuildID != "" {
		req.Audience = b.visibility.replyAudience(ctx, m.GuildID, m.ChannelID)
	} else {
		req.Audience = b.visibility.memberAudience(ctx, m.Author.ID, "", "", nil)
	}
	if req.At.IsZero() {
		req.At = b.now()
	}
	return req
}

// answerTurn sends what the turn started at started gave for message m: its reply with
// the notices' buttons, or what its error means to the member.
func (b messageEvents) answerTurn(ctx context.Context, m *discordgo.Message, settings *messageSettings, log *slog.Logger, reply chat.Reply, err error, started time.Time) {
	// What the bot writes itself (notices, errors) is in the channel's language; the model's
	// answer is in the language the member wrote in.
	l := b.messageLocale(ctx, m, settings)
	var text string
	switch {
	case err != nil:
		b.stats.turnErrors.Add(1)
		text = b.turnErrorText(ctx, log, err, l)
	case reply.Ignored:
		b.stats.ignored.Add(1)
		log.Debug("turn ignored")
		return
	default:
		text = RenderReplyIn(l, reply)
	}
	if strings.TrimSpace(text) == "" {
		log.Warn("turn produced no reply text")
		return
	}
	var buttons []discordgo.MessageComponent
	if err == nil {
		buttons = noticeComponents(l, reply.Notices)
	}
	if err := b.sendReply(ctx, m, text, buttons...); err != nil {
		log.Error("couldn't send reply", "err", err)
		return
	}
	log.Info("turn answered", "duration_ms", time.Since(started).Milliseconds(),
		"notices", len(reply.Notices), "rate_limited", reply.RateLimited)
}

// turnErrorText is what a failed turn shows: the message of a domain error,
// or a generic apology with the details in the log.
func (b messageEvents) turnErrorText(ctx context.Context, log *slog.Logger, err error, l i18n.Locale) string {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		log.Error("turn timed out", "err", err)
		return i18n.T(l, "turn.timeout")
	}
	code := memory.ErrorCode(err)
	if code != memory.EINTERNAL && code != memory.EUNAVAILABLE {
		return errorText(err, l)
	}
	log.Error("turn failed", "err", err)
	if code == memory.EUNAVAILABLE {
		// The database refused to store the message: the member reads why, the log has
		// the cause.
		return errorText(err, l)
	}
	return i18n.T(l, "turn.failed")
}

// messageLocale is the language of what the bot itself writes in m's channel: the guild's
// (its language setting, else its preferred locale), English in DMs, where Discord tells
// the bot nothing of the member's language.
func (b messageEvents) messageLocale(ctx context.Context, m *discordgo.Message, settings *messageSettings) i18n.Locale {
	if m.GuildID == "" {
		return i18n.English
	}
	gs, _ := settings.guild(ctx)
	gs.GuildID = m.GuildID
	return b.guildLocale(gs, "")
}

// fromHuman reports whether m was written by a person other than the bot,
// in a message type people write (not a join notice or pin message).
func fromHuman(m *discordgo.Message, self string) bool {
	if m.Author == nil || m.Author.Bot || m.Author.System || m.Author.ID == "" {
		return false
	}
	if self != "" && m.Author.ID == self {
		return false
	}
	if m.WebhookID != "" {
		return false
	}
	return m.Type == discordgo.MessageTypeDefault || m.Type == discordgo.MessageTypeReply
}

// addressed reports whether the bot should answer m (already known to come
// from a person).
func (b messageEvents) addressed(m *discordgo.Message, self string, settings *messageSettings) bool {
	if IsAddressed(m, self) {
		return true
	}
	if m.GuildID == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(b.base, 5*time.Second)
	defer cancel()
	gs, err := settings.guild(ctx)
	if err != nil {
		return false
	}
	return slices.Contains(gs.AutoReplyChannels, m.ChannelID)
}

// messageSettings are the guild settings of one message, read at most once however many
// checks look at them. It belongs to the message's handler goroutine.
type messageSettings struct {
	store   Store
	log     *slog.Logger // the message's logger
	guildID string

	read bool
	gs   memory.GuildSettings
	err  error
}

// guild returns the settings of the message's guild, reading them on first use. A failed
// read is logged once and returned to every caller.
func (s *messageSettings) guild(ctx context.Context) (memory.GuildSettings, error) {
	if !s.read {
		s.read = true
		s.gs, s.err = s.store.Settings.GuildSettings(ctx, s.guildID)
		if s.err != nil {
			s.log.Error("couldn't read guild settings", "err", s.err)
		}
	}
	return s.gs, s.err
}

// IsAddressed reports whether m speaks to the bot self without any guild
// setting: a DM, a mention of the bot, or a reply to one of its messages.
// Auto-reply channels are checked separately because they need the store.
func IsAddressed(m *discordgo.Message, self string) bool {
	if m == nil {
		return false
	}
	if m.GuildID == "" {
		return true
	}
	if self == "" {
		return false
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == self {
			return true
		}
	}
	if strings.Contains(m.Content, "<@"+self+">") || strings.Contains(m.Content, "<@!"+self+">") {
		return true
	}
	if r := m.ReferencedMessage; r != nil && r.Author != nil && r.Author.ID == self {
		return true
	}
	return false
}

var spaceRun = regexp.MustCompile(`[ \t]{2,}`)

// StripMention removes the bot's own mention markup (<@id> and the legacy
// <@!id>) from content, so the model reads what the person said rather than
// a raw id, and tidies the spaces it leaves behind. Other mentions stay as
// they are.
func StripMention(content, self string) string {
	if self != "" {
		content = strings.ReplaceAll(content, "<@!"+self+">", "")
		content = strings.ReplaceAll(content, "<@"+self+">", "")
	}
	content = spaceRun.ReplaceAllString(content, " ")
	return strings.TrimSpace(content)
}

// AuthorName is the name people see for the author of m: the server
// nickname, else the global display name, else the username. It tolerates
// the partial member Discord attaches to guild messages (no user inside).
func AuthorName(m *discordgo.Message) string {
	if m == nil || m.Author == nil {
		return ""
	}
	if m.Member != nil && m.Member.Nick != "" {
		return m.Member.Nick
	}
	return m.Author.DisplayName()
}

// AllowedMentions returns the allowed mentions of every message the bot
// sends on behalf of the model: nothing may ping except the person it
// answers (and the reply reference to them), so "@everyone", role mentions
// or other users' ids in model output render as text.
func AllowedMentions(authorID string) *discordgo.MessageAllowedMentions {
	am := &discordgo.MessageAllowedMentions{
		// Non-nil and empty: "parse": [] turns off every implicit mention
		// type, where a nil slice would be sent as null.
		Parse:       []discordgo.AllowedMentionType{},
		RepliedUser: authorID != "",
	}
	if authorID != "" {
		am.Users = []string{authorID}
	}
	return am
}

// noMentions is for bot messages that answer nobody in particular.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// sendReply posts text in m's channel as one or more messages, the first
// one a reply to m; buttons go under the last one, where the notices are.
func (b messageEvents) sendReply(ctx context.Context, m *discordgo.Message, text string, buttons ...discordgo.MessageComponent) error {
	chunks := SplitMessage(text, MaxMessageRunes)
	failIfGone := false
	for i, chunk := range chunks {
		send := &discordgo.MessageSend{
			Content:         chunk,
			AllowedMentions: AllowedMentions(m.Author.ID),
		}
		if i == 0 {
			// A reply keeps the answer attached to its question in a busy
			// channel; if the question was deleted meanwhile, post anyway.
			send.Reference = &discordgo.MessageReference{MessageID: m.ID, ChannelID: m.ChannelID,
				GuildID: m.GuildID, FailIfNotExists: &failIfGone}
		}
		if i == len(chunks)-1 && len(buttons) > 0 {
			send.Components = buttons
		}
		if _, err := b.session.ChannelMessageSendComplex(m.ChannelID, send, discordgo.WithContext(ctx)); err != nil {
			return fmt.Errorf("couldn't send part %d of %d: %w", i+1, len(chunks), err)
		}
	}
	return nil
}

// keepTyping shows the typing indicator in a channel until the returned
// function is called or ctx ends. The first indicator is sent even when the
// turn finishes first (the stop function waits for it): it runs alongside
// the turn, so it costs no latency, and a reply never overtakes it.
func (b messageEvents) keepTyping(ctx context.Context, channelID string) func() {
	stop, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	typing := func(ctx context.Context) {
		if err := b.session.ChannelTyping(channelID, discordgo.WithContext(ctx)); err != nil && ctx.Err() == nil {
			b.log.Debug("couldn't show typing indicator", "channel_id", channelID, "err", err)
		}
	}
	go func() {
		defer close(done)
		typing(ctx)
		t := time.NewTicker(typingInterval)
		defer t.Stop()
		for {
			select {
			case <-stop.Done():
				return
			case <-t.C:
				typing(stop)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// RenderReply turns a turn's reply into message text: the answer, then one
// line per memory change ("📌 Remembered (server) #42: …") so people always
// see what the bot wrote down. Notices go in the same message, not a
// follow-up, so they can never be separated from the answer that made them.
func RenderReply(r chat.Reply) string { return RenderReplyIn(i18n.English, r) }

// RenderReplyIn is RenderReply with the notices in language l.
func RenderReplyIn(l i18n.Locale, r chat.Reply) string {
	var sb strings.Builder
	sb.WriteString(strings.TrimSpace(cannedText(l, r)))
	for i, n := range r.Notices {
		if i == 0 && sb.Len() > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString("\n")
		sb.WriteString(noticeText(l, n))
	}
	return sb.String()
}

// cannedText is the text of r in l: the model's answer as it is, a reply the engine wrote
// itself (an apology, a rate limit) from the catalogue.
func cannedText(l i18n.Locale, r chat.Reply) string {
	if r.Canned == "" || l == i18n.English {
		return r.Text
	}
	key := i18n.Key("turn.canned." + r.Canned)
	if _, ok := i18n.Lookup(key); !ok {
		return r.Text
	}
	if r.Canned == chat.CannedRateLimited || r.Canned == chat.CannedGuildRate {
		return i18n.T(l, key, max(1, int((r.RetryAfter+time.Second-1)/time.Second)))
	}
	return i18n.T(l, key)
}

// noticeText renders one memory change in language l, e.g. "📌 Remembered (server) #42:
// The raid is on Friday" (tools.Notice.String is the English original).
func noticeText(l i18n.Locale, n chat.Notice) string {
	preview := truncate(n.Content, noticePreviewRunes)
	scope := i18n.T(l, i18n.Key("choice.scope."+string(n.Scope)))
	switch n.Action {
	case tools.NoticeSaved:
		return i18n.T(l, "notice.saved", scope, n.MemoryID, preview)
	case tools.NoticeUpdated:
		return i18n.T(l, "notice.updated", n.MemoryID, preview)
	case tools.NoticeDeleted:
		return i18n.T(l, "notice.deleted", n.MemoryID, preview)
	}
	return n.String()
}

// noticePreviewRunes bounds the memory text quoted in a notice, as tools.Notice does.
const noticePreviewRunes = 200

// oneLine flattens s to one line of at most n characters, ending in "…" when
// cut.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}
