package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/pipeline"
	"github.com/kioku-bot/kioku/stm"
)

// privacyHelp explains each level where people choose it.
var privacyHelp = map[memory.Privacy]string{
	memory.PrivacyNormal:  "I use your personal memories when we talk and may save new ones.",
	memory.PrivacyPartial: "I keep your personal memories out of my replies and don't save new ones on my own; you can still manage them by command.",
	memory.PrivacyFull:    "I ignore your messages and keep nothing, not even short-term. /memory forget and /memory export still work, and /memory forget-me erases what I already have.",
}

func (b settingsCommands) privacy(ctx context.Context, c *call) (*response, error) {
	level := memory.Privacy(c.str("level"))
	cross, hasCross := c.boolean("cross_server")
	var changed []string
	if level != "" {
		if err := b.store.Settings.SetPrivacy(ctx, c.userID(), level); err != nil {
			return nil, err
		}
		changed = append(changed, "privacy level")
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
		changed = append(changed, "cross-server use")
	}
	us, err := b.store.Settings.UserSettings(ctx, c.userID())
	if err != nil {
		return nil, err
	}
	crossText := "Your personal memories are used only in the server (or DM) where they were made."
	if us.CrossServer {
		crossText = "Your personal memories are used in every server you talk to me in."
	}
	intro := "Your privacy settings:"
	if len(changed) > 0 {
		intro = "Updated your " + strings.Join(changed, " and ") + "."
	}
	return &response{content: fmt.Sprintf("%s\n**Level: %s.** %s\n%s", intro, us.Privacy, privacyHelp[us.Privacy], crossText)}, nil
}

func (b settingsCommands) stmShow(_ context.Context, c *call) (*response, error) {
	entries := b.stm.ForUser(c.userID())
	if len(entries) == 0 {
		return &response{content: "I hold no short-term memory about you right now."}, nil
	}
	const maxEntries = 10
	embed := &discordgo.MessageEmbed{
		Title: "Your short-term memory",
		Description: fmt.Sprintf("%d %s. Short-term memory expires on its own within a day; /stm clear drops it now.",
			len(entries), plural(len(entries), "conversation", "conversations")),
		Color: colorView,
	}
	for _, e := range entries[:min(len(entries), maxEntries)] {
		embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: stmPlace(e.Key), Value: stmValue(e)})
	}
	return &response{embeds: []*discordgo.MessageEmbed{embed}}, nil
}

// stmPlace names where an entry was captured.
func stmPlace(k stm.Key) string {
	if k.IsDM() {
		return "Direct messages"
	}
	return fmt.Sprintf("Server %s, channel <#%s>", k.GuildID, k.ChannelID)
}

// stmValue renders an entry within an embed field's 1024 characters.
func stmValue(e stm.Entry) string {
	var sb strings.Builder
	if e.Summary != "" {
		fmt.Fprintf(&sb, "**Summary:** %s\n", oneLine(e.Summary, 400))
	}
	if n := len(e.Messages); n > 0 {
		fmt.Fprintf(&sb, "%d %s, expiring <t:%d:R>", n, plural(n, "message", "messages"), e.MessagesExpireAt.Unix())
		for _, m := range e.Messages[max(0, n-3):] {
			who := "you"
			if m.Role == stm.RoleAssistant {
				who = "kioku"
			}
			fmt.Fprintf(&sb, "\n> %s: %s", who, oneLine(m.Content, 120))
		}
	}
	return truncate(sb.String(), 1024)
}

func (b settingsCommands) stmClear(_ context.Context, c *call) (*response, error) {
	if c.str("what") == "channel" {
		if !c.inDM() {
			if err := b.perms.requireManager(c); err != nil {
				return nil, memory.Errorf(memory.EFORBIDDEN, "Clearing a whole channel's short-term memory needs the Manage Server permission. /stm clear what:me clears yours.")
			}
		}
		n := b.stm.ClearChannel(c.guildID(), c.i.ChannelID)
		c.log.Info("channel short-term memory cleared", "entries", n)
		return &response{content: fmt.Sprintf("Cleared this channel's short-term memory (%d %s).", n, plural(n, "entry", "entries"))}, nil
	}
	n := b.stm.ClearUser(c.userID())
	c.log.Info("user short-term memory cleared", "entries", n)
	return &response{content: fmt.Sprintf("Cleared your short-term memory (%d %s) and your messages in channels' short-term memory.", n, plural(n, "entry", "entries"))}, nil
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
	if v, ok := c.boolean("self_teaching"); ok {
		gs.SelfTeaching, changed = v, true
	}
	if v := c.str("pipeline_mode"); v != "" {
		gs.PipelineMode, changed = memory.PipelineMode(v), true
	}
	if v := c.str("auto_reply_add"); v != "" && !slices.Contains(gs.AutoReplyChannels, v) {
		gs.AutoReplyChannels, changed = append(gs.AutoReplyChannels, v), true
	}
	if v := c.str("auto_reply_remove"); v != "" {
		gs.AutoReplyChannels = slices.DeleteFunc(gs.AutoReplyChannels, func(id string) bool { return id == v })
		changed = true
	}
	if _, ok := c.options["persona"]; ok {
		gs.Persona, changed = c.str("persona"), true
	}
	if v := c.str("editor_role"); v != "" {
		gs.EditorRoleID, changed = v, true
	}
	switch c.str("reset") {
	case "persona":
		gs.Persona, changed = "", true
	case "editor_role":
		gs.EditorRoleID, changed = "", true
	case "auto_reply_channels":
		gs.AutoReplyChannels, changed = nil, true
	}
	if changed {
		if err := b.store.Settings.SaveGuildSettings(ctx, gs); err != nil {
			return nil, err
		}
		c.log.Info("guild settings changed", "self_teaching", gs.SelfTeaching, "pipeline_mode", gs.PipelineMode,
			"auto_reply_channels", len(gs.AutoReplyChannels), "editor_role_id", gs.EditorRoleID)
	}
	intro := "kioku's settings in this server:"
	if changed {
		intro = "Saved. kioku's settings in this server are now:"
	}
	return &response{content: intro, embeds: []*discordgo.MessageEmbed{configEmbed(gs)}}, nil
}

func configEmbed(gs memory.GuildSettings) *discordgo.MessageEmbed {
	onOff := map[bool]string{true: "on: the model may save server memories on its own", false: "off: only commands and the background pipeline write server memory"}
	channels := "none"
	if len(gs.AutoReplyChannels) > 0 {
		mentions := make([]string, len(gs.AutoReplyChannels))
		for i, id := range gs.AutoReplyChannels {
			mentions[i] = "<#" + id + ">"
		}
		channels = strings.Join(mentions, ", ")
	}
	editors := "members with Manage Server"
	if gs.EditorRoleID != "" {
		editors += " and <@&" + gs.EditorRoleID + ">"
	}
	persona := "default"
	if gs.Persona != "" {
		persona = oneLine(gs.Persona, 300)
	}
	return &discordgo.MessageEmbed{
		Title: "Configuration",
		Color: colorView,
		Fields: []*discordgo.MessageEmbedField{
			{Name: "Self-teaching", Value: onOff[gs.SelfTeaching]},
			{Name: "Pipeline mode", Value: string(gs.PipelineMode)},
			{Name: "Auto-reply channels", Value: channels},
			{Name: "Server memory editors", Value: editors},
			{Name: "Persona", Value: persona},
		},
	}
}

func (b settingsCommands) kiokuStatus(ctx context.Context, c *call) (*response, error) {
	if c.inDM() {
		return nil, errNoGuild
	}
	owner := memory.ServerOwner(c.guildID())
	// The integrity check reads the whole database file: only members who manage the
	// server may set it off. Everyone else gets the same status without it.
	manager := CanManageServer(c.member)
	stats := b.store.Maintenance.Counts
	if manager {
		stats = b.store.Maintenance.Stats
	}
	st, err := stats(ctx, owner.Key())
	if err != nil {
		return nil, err
	}
	ps, err := b.pipelineStatus(ctx)
	if err != nil {
		return nil, err
	}
	health := "healthy"
	switch problems := ps.Problems(); {
	case manager && !st.IntegrityOK:
		health = "database integrity check failed; an operator should run `kioku doctor`"
	case ps.Jobs.Dead > 0:
		health = fmt.Sprintf("%d background %s failed for good; an operator should look at `kioku doctor`",
			ps.Jobs.Dead, plural(ps.Jobs.Dead, "job", "jobs"))
	case len(problems) > 0:
		health = fmt.Sprintf("the background pipeline needs attention (%d %s); an operator should look at `kioku doctor`",
			len(problems), plural(len(problems), "problem", "problems"))
	case b.pipe != nil && !ps.Running:
		health = "the background pipeline is not running"
	case !b.connected.Load():
		health = "reconnecting to Discord"
	}
	counters := b.snapshot()
	embed := &discordgo.MessageEmbed{
		Title: "kioku status",
		Color: colorView,
		Fields: []*discordgo.MessageEmbedField{
			{Name: "Server memory", Value: fmt.Sprintf("%d live, %d forgotten (recoverable)", st.Memories, st.Forgotten), Inline: true},
			{Name: "Background queue", Value: fmt.Sprintf("%d queued (%d due), %d running, %d failed", ps.Jobs.Queued, ps.Jobs.Ready, ps.Jobs.Leased, ps.Jobs.Dead), Inline: true},
		},
	}
	if ps.Budget != nil {
		budget := fmt.Sprintf("%d model calls in the last hour (no cap)", ps.Budget.Used)
		if ps.Budget.Limit > 0 {
			budget = fmt.Sprintf("%d of %d model calls in the last hour", ps.Budget.Used, ps.Budget.Limit)
		}
		embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: "Pipeline budget", Value: budget, Inline: true})
	}
	embed.Fields = append(embed.Fields,
		&discordgo.MessageEmbedField{Name: "Last background runs", Value: taskRunsText(ps.Runs)},
		&discordgo.MessageEmbedField{Name: "Health", Value: health},
		&discordgo.MessageEmbedField{Name: "Uptime", Value: roundDuration(b.now().Sub(b.started)), Inline: true},
		&discordgo.MessageEmbedField{Name: "Turns answered", Value: fmt.Sprintf("%d (%d failed)", counters.Turns, counters.TurnErrors), Inline: true},
	)
	integrity := "ok"
	switch {
	case !manager:
		integrity = "not checked (the check runs for members with Manage Server)"
	case !st.IntegrityOK:
		integrity = "failed"
	}
	embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: "Database integrity", Value: integrity, Inline: true})
	if manager {
		embed.Fields = append(embed.Fields, b.healthFields(ctx, c, owner)...)
	}
	return &response{embeds: []*discordgo.MessageEmbed{embed}}, nil
}

// pipelineStatus reads the background pipeline's state: from the running pipeline when
// the bot was given one (its model budget lives in memory), else from the database.
func (b settingsCommands) pipelineStatus(ctx context.Context) (pipeline.Status, error) {
	if b.pipe != nil {
		return b.pipe(ctx)
	}
	return pipeline.ReadStatus(ctx, b.store.Jobs, b.store.Now())
}

// taskRunsText lists the latest run of each pipeline task, one line each. Errors stay
// out: they are for operators (`kioku doctor`), and everyone in the server may ask.
func taskRunsText(runs []memory.TaskRun) string {
	if len(runs) == 0 {
		return "none yet"
	}
	lines := make([]string, len(runs))
	for i, r := range runs {
		state := "ok"
		if !r.OK {
			state = "failed"
		}
		lines[i] = fmt.Sprintf("%s: %s <t:%d:R>", r.Name, state, r.FinishedAt.Unix())
	}
	return truncate(strings.Join(lines, "\n"), 1024)
}
