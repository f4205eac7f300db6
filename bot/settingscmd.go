package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

func (b settingsCommands) privacy(ctx context.Context, c *call) (*response, error) {
	level := memory.Privacy(c.options.str("level"))
	cross, hasCross := c.options.boolean("cross_server")
	var changed []string
	if level != "" {
		if err := b.store.Settings.SetPrivacy(ctx, c.userID(), level); err != nil {
			return nil, err
		}
		changed = append(changed, c.t("privacy.changed.level"))
		if level == memory.PrivacyFull {
			// "Keep nothing" includes the conversation so far: drop it now
			// instead of letting it expire over the next hours.
			b.stm.ClearUser(c.userID())
		}
		c.log.Info("privacy level set", "level", level)
	}
	if hasCross {
		if err := b.store.Settings.SetCrossServer(ctx, c.userID(), cross); err != nil {
			return nil, err
		}
		changed = append(changed, c.t("privacy.changed.cross"))
	}
	us, err := b.store.Settings.UserSettings(ctx, c.userID())
	if err != nil {
		return nil, err
	}
	crossText := c.t("privacy.cross.off")
	if us.CrossServer {
		crossText = c.t("privacy.cross.on")
	}
	intro := c.t("privacy.intro")
	if len(changed) > 0 {
		intro = c.t("privacy.updated", strings.Join(changed, c.t("privacy.and")))
	}
	return &response{content: c.t("privacy.summary", intro, c.t(i18n.Key("choice.level."+string(us.Privacy))),
		c.t(i18n.Key("privacy.help."+string(us.Privacy))), crossText)}, nil
}

func (b settingsCommands) stmShow(_ context.Context, c *call) (*response, error) {
	entries := b.stm.ForUser(c.userID())
	if len(entries) == 0 {
		return &response{content: c.t("stm.none")}, nil
	}
	const maxEntries = 10
	embed := &discordgo.MessageEmbed{
		Title:       c.t("stm.title"),
		Description: c.t("stm.description", i18n.N(c.locale(), "count.conversation", len(entries))),
		Color:       colorView,
	}
	for _, e := range entries[:min(len(entries), maxEntries)] {
		embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: stmPlace(c.locale(), e.Key), Value: stmValue(c.locale(), e)})
	}
	return &response{embeds: []*discordgo.MessageEmbed{embed}}, nil
}

// stmPlace names where an entry was captured.
func stmPlace(l i18n.Locale, k stm.Key) string {
	if k.IsDM() {
		return i18n.T(l, "stm.place.dm")
	}
	return i18n.T(l, "stm.place.channel", k.GuildID, k.ChannelID)
}

// stmValue renders an entry within an embed field's 1024 characters.
func stmValue(l i18n.Locale, e stm.Entry) string {
	var sb strings.Builder
	if e.Summary != "" {
		sb.WriteString(i18n.T(l, "stm.summary", oneLine(e.Summary, 400)) + "\n")
	}
	if n := len(e.Messages); n > 0 {
		sb.WriteString(i18n.N(l, "stm.messages", n, e.MessagesExpireAt.Unix()))
		for _, m := range e.Messages[max(0, n-3):] {
			who := i18n.T(l, "stm.you")
			if m.Role == stm.RoleAssistant {
				who = "kioku"
			}
			fmt.Fprintf(&sb, "\n> %s: %s", who, oneLine(m.Content, 120))
		}
	}
	return truncate(sb.String(), 1024)
}

func (b settingsCommands) stmClear(_ context.Context, c *call) (*response, error) {
	if c.options.str("what") == "channel" {
		if !c.inDM() {
			if err := b.perms.requireManager(c); err != nil {
				return nil, errT(memory.EFORBIDDEN, "stm.error.channel")
			}
		}
		n := b.stm.ClearChannel(c.guildID(), c.i.ChannelID)
		c.log.Info("channel short-term memory cleared", "entries", n)
		return &response{content: c.t("stm.cleared.channel", i18n.N(c.locale(), "count.entry", n))}, nil
	}
	n := b.stm.ClearUser(c.userID())
	c.log.Info("user short-term memory cleared", "entries", n)
	return &response{content: c.t("stm.cleared.me", i18n.N(c.locale(), "count.entry", n))}, nil
}

func (b settingsCommands) kiokuConfig(ctx context.Context, c *call) (*response, error) {
	if err := b.perms.requireManager(c); err != nil {
		return nil, err
	}
	gs, err := b.store.Settings.GuildSettings(ctx, c.guildID())
	if err != nil {
		return nil, err
	}
	changed := false
	if v, ok := c.options.boolean("self_teaching"); ok {
		gs.SelfTeaching, changed = v, true
	}
	if v := c.options.str("pipeline_mode"); v != "" {
		gs.PipelineMode, changed = memory.PipelineMode(v), true
	}
	if v := c.options.str("auto_reply_add"); v != "" && !slices.Contains(gs.AutoReplyChannels, v) {
		gs.AutoReplyChannels, changed = append(gs.AutoReplyChannels, v), true
	}
	if v := c.options.str("auto_reply_remove"); v != "" {
		gs.AutoReplyChannels = slices.DeleteFunc(gs.AutoReplyChannels, func(id string) bool { return id == v })
		changed = true
	}
	if c.options.has("persona") {
		gs.Persona, changed = c.options.str("persona"), true
	}
	if v := c.options.str("editor_role"); v != "" {
		gs.EditorRoleID, changed = v, true
	}
	if v := c.options.str("language"); v != "" {
		gs.Language, changed = v, true
	}
	switch c.options.str("reset") {
	case "persona":
		gs.Persona, changed = "", true
	case "editor_role":
		gs.EditorRoleID, changed = "", true
	case "auto_reply_channels":
		gs.AutoReplyChannels, changed = nil, true
	}
	learning, err := b.switchLearning(ctx, c)
	if err != nil {
		return nil, err
	}
	if learning != "" {
		// Switched in its own write: SaveGuildSettings leaves the learning choices alone.
		if gs, err = b.store.Settings.GuildSettings(ctx, c.guildID()); err != nil {
			return nil, err
		}
	}
	if changed {
		if err := b.store.Settings.SaveGuildSettings(ctx, gs); err != nil {
			return nil, err
		}
		c.log.Info("guild settings changed", "self_teaching", gs.SelfTeaching, "pipeline_mode", gs.PipelineMode,
			"auto_reply_channels", len(gs.AutoReplyChannels), "editor_role_id", gs.EditorRoleID, "language", gs.Language)
		if gs, err = b.store.Settings.GuildSettings(ctx, c.guildID()); err != nil {
			return nil, err
		}
	}
	r := b.configResponse(c, gs, changed || learning != "")
	if learning != "" {
		r.content = learning + "\n" + r.content
	}
	return r, nil
}

// switchLearning applies the learning option of /kioku config (to learning_channel, else
// the channel the command is used in) and returns what it did, or "" without the option.
// Switching a channel off stops what it has not been learned from yet, and that of its
// threads the bot knows.
func (b settingsCommands) switchLearning(ctx context.Context, c *call) (string, error) {
	on, ok := c.options.boolean("learning")
	channel := c.options.str("learning_channel")
	if !ok {
		if channel != "" {
			return "", errT(memory.EINVALID, "config.learning.error.choose")
		}
		return "", nil
	}
	if channel == "" {
		channel = c.i.ChannelID
	}
	var threads []string
	if !on {
		threads = b.visibility.threadsOf(c.guildID(), channel)
	}
	stopped, err := b.store.Settings.SetChannelLearning(ctx, c.guildID(), channel, on, threads...)
	if err != nil {
		return "", err
	}
	c.log.Info("channel learning switched", "learning_channel_id", channel, "learning", on, "turns_stopped", stopped)
	if on {
		return c.t("config.learning.switched.on", channel), nil
	}
	return c.t("config.learning.switched.off", channel, i18n.N(c.locale(), "count.turn", stopped)), nil
}

// pipelineStatus reads the background pipeline's state: from the running pipeline when
// the bot was given one (its model budget lives in memory), else from the database.
func (b settingsCommands) pipelineStatus(ctx context.Context) (pipeline.Status, error) {
	if b.pipe != nil {
		return b.pipe(ctx)
	}
	return pipeline.ReadStatus(ctx, b.store.Jobs, b.store.Now())
}
