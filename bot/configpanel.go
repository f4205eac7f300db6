package bot

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// idConfigSet prefixes the select menus of the /kioku config panel. The custom id names
// the one setting a menu changes ("cfg:set:language"); the guild is the interaction's and
// the values are Discord's, so a crafted id can change nothing but that setting of the
// presser's own server, and only for a member who manages it (checked on every press).
const idConfigSet = "cfg:set"

// The settings the panel offers, by the last part of their custom id.
const (
	panelLanguage     = "language"
	panelPipelineMode = "pipeline_mode"
	panelSelfTeaching = "self_teaching"
	panelEditorRole   = "editor_role"
	panelAutoReply    = "auto_reply"
)

// maxAutoReplyChannels bounds the auto-reply channels one panel choice may set: Discord's
// limit on a select menu's values.
const maxAutoReplyChannels = 25

// languageOption is /kioku config's language option.
func languageOption() *discordgo.ApplicationCommandOption {
	o := &discordgo.ApplicationCommandOption{
		Type: discordgo.ApplicationCommandOptionString, Name: "language",
		Description: "Language of messages kioku posts in channels: auto follows the server",
	}
	for _, l := range memory.Languages {
		o.Choices = append(o.Choices, &discordgo.ApplicationCommandOptionChoice{Name: l, Value: l})
	}
	return o
}

// configPanel is the settings embed with one select menu per setting that is a choice (at
// most Discord's five action rows), each showing the current value. Persona stays an
// option of the command: a prompt is typed, not chosen.
func configPanel(l i18n.Locale, gs memory.GuildSettings) []discordgo.MessageComponent {
	lang := gs.Language
	if lang == "" {
		lang = memory.LanguageAuto
	}
	langOpts := make([]discordgo.SelectMenuOption, 0, len(memory.Languages))
	for _, v := range memory.Languages {
		langOpts = append(langOpts, discordgo.SelectMenuOption{Label: i18n.T(l, i18n.Key("choice.language."+v)), Value: v,
			Description: i18n.T(l, i18n.Key("config.language."+v)), Default: v == lang})
	}
	modeOpts := make([]discordgo.SelectMenuOption, 0, len(memory.GuildPipelineModes))
	for _, m := range memory.GuildPipelineModes {
		modeOpts = append(modeOpts, discordgo.SelectMenuOption{Label: i18n.T(l, i18n.Key("choice.pipeline_mode."+string(m))),
			Value: string(m), Description: i18n.T(l, i18n.Key("config.pipeline_mode."+string(m))), Default: m == gs.PipelineMode})
	}
	teachOpts := []discordgo.SelectMenuOption{
		{Label: i18n.T(l, "config.self_teaching.on.label"), Value: "on", Description: i18n.T(l, "config.self_teaching.on"), Default: gs.SelfTeaching},
		{Label: i18n.T(l, "config.self_teaching.off.label"), Value: "off", Description: i18n.T(l, "config.self_teaching.off"), Default: !gs.SelfTeaching},
	}
	role := discordgo.SelectMenu{MenuType: discordgo.RoleSelectMenu, CustomID: idConfigSet + ":" + panelEditorRole,
		Placeholder: i18n.T(l, "config.panel.editor_role"), MinValues: ptr(0), MaxValues: 1}
	if gs.EditorRoleID != "" {
		role.DefaultValues = []discordgo.SelectMenuDefaultValue{{ID: gs.EditorRoleID, Type: discordgo.SelectMenuDefaultValueRole}}
	}
	channels := discordgo.SelectMenu{MenuType: discordgo.ChannelSelectMenu, CustomID: idConfigSet + ":" + panelAutoReply,
		Placeholder: i18n.T(l, "config.panel.auto_reply"), MinValues: ptr(0), MaxValues: maxAutoReplyChannels,
		ChannelTypes: []discordgo.ChannelType{discordgo.ChannelTypeGuildText, discordgo.ChannelTypeGuildPublicThread,
			discordgo.ChannelTypeGuildPrivateThread}}
	for _, id := range gs.AutoReplyChannels[:min(len(gs.AutoReplyChannels), maxAutoReplyChannels)] {
		channels.DefaultValues = append(channels.DefaultValues, discordgo.SelectMenuDefaultValue{ID: id, Type: discordgo.SelectMenuDefaultValueChannel})
	}
	return []discordgo.MessageComponent{
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.SelectMenu{CustomID: idConfigSet + ":" + panelLanguage,
			Placeholder: i18n.T(l, "config.panel.language"), Options: langOpts}}},
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.SelectMenu{CustomID: idConfigSet + ":" + panelPipelineMode,
			Placeholder: i18n.T(l, "config.panel.pipeline_mode"), Options: modeOpts}}},
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.SelectMenu{CustomID: idConfigSet + ":" + panelSelfTeaching,
			Placeholder: i18n.T(l, "config.panel.self_teaching"), Options: teachOpts}}},
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{role}},
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{channels}},
	}
}

// configPress applies one choice of the settings panel. The permission is checked here,
// on every press: the panel may have been opened by someone else, or before the presser
// lost Manage Server. A refused or invalid press changes nothing and answers the presser
// alone; an accepted one redraws the panel with the saved settings.
func (b settingsCommands) configPress(ctx context.Context, c *call) (*response, error) {
	if err := b.perms.requireManager(c); err != nil {
		return nil, err
	}
	setting := strings.TrimPrefix(c.customID, idConfigSet+":")
	values := c.i.MessageComponentData().Values
	gs, err := b.store.Settings.GuildSettings(ctx, c.guildID())
	if err != nil {
		return nil, err
	}
	one := func() (string, error) {
		if len(values) != 1 {
			return "", errT(memory.EINVALID, "config.error.one_value")
		}
		return values[0], nil
	}
	switch setting {
	case panelLanguage:
		v, err := one()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(memory.Languages, v) {
			return nil, errT(memory.EINVALID, "config.error.value", v)
		}
		gs.Language = v
	case panelPipelineMode:
		v, err := one()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(memory.GuildPipelineModes, memory.PipelineMode(v)) {
			return nil, errT(memory.EINVALID, "config.error.value", v)
		}
		gs.PipelineMode = memory.PipelineMode(v)
	case panelSelfTeaching:
		v, err := one()
		if err != nil {
			return nil, err
		}
		if v != "on" && v != "off" {
			return nil, errT(memory.EINVALID, "config.error.value", v)
		}
		gs.SelfTeaching = v == "on"
	case panelEditorRole:
		if len(values) > 1 || (len(values) == 1 && !snowflake(values[0])) {
			return nil, errT(memory.EINVALID, "config.error.one_value")
		}
		gs.EditorRoleID = ""
		if len(values) == 1 {
			gs.EditorRoleID = values[0]
		}
	case panelAutoReply:
		if len(values) > maxAutoReplyChannels || slices.ContainsFunc(values, func(v string) bool { return !snowflake(v) }) {
			return nil, errT(memory.EINVALID, "config.error.value", strings.Join(values, ","))
		}
		gs.AutoReplyChannels = slices.Clone(values)
	default:
		return nil, errT(memory.EINVALID, "config.error.unknown")
	}
	if err := b.store.Settings.SaveGuildSettings(ctx, gs); err != nil {
		return nil, err
	}
	c.log.Info("guild settings changed from the panel", "setting", setting)
	gs, err = b.store.Settings.GuildSettings(ctx, c.guildID())
	if err != nil {
		return nil, err
	}
	return b.configResponse(c, gs, true), nil
}

// configResponse shows the settings and the panel that changes them.
func (b settingsCommands) configResponse(c *call, gs memory.GuildSettings, saved bool) *response {
	l := c.locale()
	intro := i18n.T(l, "config.intro")
	if saved {
		intro = i18n.T(l, "config.saved")
	}
	return &response{content: intro, embeds: []*discordgo.MessageEmbed{configEmbed(l, gs, b.guildLocale(gs, guildLocaleHint(c)))},
		components: configPanel(l, gs)}
}

// guildLocaleHint is the guild's preferred locale as the interaction reports it, or "".
func guildLocaleHint(c *call) string {
	if c.i.GuildLocale != nil {
		return string(*c.i.GuildLocale)
	}
	return ""
}

// snowflake reports whether s looks like a Discord id: digits only, at most 20 of them.
func snowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// configEmbed shows a guild's settings in language l; posting is the language the guild's
// channel messages use now (the setting, or what auto resolves to).
func configEmbed(l i18n.Locale, gs memory.GuildSettings, posting i18n.Locale) *discordgo.MessageEmbed {
	channels := i18n.T(l, "config.none")
	if len(gs.AutoReplyChannels) > 0 {
		mentions := make([]string, len(gs.AutoReplyChannels))
		for i, id := range gs.AutoReplyChannels {
			mentions[i] = "<#" + id + ">"
		}
		channels = truncate(strings.Join(mentions, ", "), 1024)
	}
	editors := i18n.T(l, "config.editors.managers")
	if gs.EditorRoleID != "" {
		editors = i18n.T(l, "config.editors.role", gs.EditorRoleID)
	}
	persona := i18n.T(l, "config.persona.default")
	if gs.Persona != "" {
		persona = oneLine(gs.Persona, 300)
	}
	teaching := i18n.T(l, "config.self_teaching.off")
	if gs.SelfTeaching {
		teaching = i18n.T(l, "config.self_teaching.on")
	}
	lang := gs.Language
	if lang == "" {
		lang = memory.LanguageAuto
	}
	language := i18n.T(l, i18n.Key("choice.language."+lang))
	if lang == memory.LanguageAuto {
		language = i18n.T(l, "config.language.auto.now", i18n.T(l, i18n.Key("choice.language."+string(posting))))
	}
	return &discordgo.MessageEmbed{
		Title: i18n.T(l, "config.title"),
		Color: colorView,
		Fields: []*discordgo.MessageEmbedField{
			{Name: i18n.T(l, "config.field.language"), Value: language},
			{Name: i18n.T(l, "config.field.self_teaching"), Value: teaching},
			{Name: i18n.T(l, "config.field.pipeline_mode"), Value: i18n.T(l, i18n.Key("choice.pipeline_mode."+string(gs.PipelineMode))) +
				": " + i18n.T(l, i18n.Key("config.pipeline_mode."+string(gs.PipelineMode)))},
			{Name: i18n.T(l, "config.field.auto_reply"), Value: channels},
			{Name: i18n.T(l, "config.field.learning"), Value: learningChoicesText(l, gs.LearningChannels)},
			{Name: i18n.T(l, "config.field.editors"), Value: editors},
			{Name: i18n.T(l, "config.field.persona"), Value: persona},
		},
	}
}

// learningChoicesText lists the channels whose learning a manager switched, after the
// default that holds for the others.
func learningChoicesText(l i18n.Locale, choices map[string]bool) string {
	var on, off []string
	for _, id := range slices.Sorted(maps.Keys(choices)) {
		if choices[id] {
			on = append(on, "<#"+id+">")
		} else {
			off = append(off, "<#"+id+">")
		}
	}
	lines := []string{i18n.T(l, "config.learning.default")}
	if len(off) > 0 {
		lines = append(lines, i18n.T(l, "config.learning.off", strings.Join(off, ", ")))
	}
	if len(on) > 0 {
		lines = append(lines, i18n.T(l, "config.learning.on", strings.Join(on, ", ")))
	}
	return truncate(strings.Join(lines, "\n"), 1024)
}
