package bot

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
)

// maxEmbedFooter is the longest footer Discord accepts; the other limits of an embed are
// in notices.go (limEmbed…) and graph.go (maxEmbedField).
const maxEmbedFooter = 2048

// kiokuStatus is the server's overview as one embed: memory counts by scope and type, the
// background queue, the daily model budget, the last background runs and the health, and
// for members who manage the server the health score and its top findings. Everyone in
// the server may ask; counts say nothing of whose memories they are or what they say, and
// a member's count only the memories of channels they can view.
func (b settingsCommands) kiokuStatus(ctx context.Context, c *call) (*response, error) {
	if c.inDM() {
		return nil, errNoGuild
	}
	l := c.locale()
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
	// A member's counts cover only what they may see, so a save in a channel hidden from
	// them does not show; managers see the whole server's.
	var aud *memory.Audience
	if !manager {
		aud = c.audience(ctx)
	}
	counts, err := b.store.Maintenance.GuildMemoryCountsWithin(ctx, c.guildID(), aud)
	if err != nil {
		return nil, err
	}
	ps, err := b.pipelineStatus(ctx)
	if err != nil {
		return nil, err
	}
	health := b.healthText(l, ps, manager && !st.IntegrityOK)
	counters := b.snapshot()
	embed := &discordgo.MessageEmbed{
		Title: i18n.T(l, "status.title"),
		Color: colorView,
		Fields: []*discordgo.MessageEmbedField{
			{Name: i18n.T(l, "status.server"), Value: i18n.T(l, "status.server.value", counts.Server, counts.Forgotten), Inline: true},
			{Name: i18n.T(l, "status.personal"), Value: i18n.T(l, "status.personal.value", counts.Personal), Inline: true},
			{Name: i18n.T(l, "status.by_type"), Value: typeCountsText(l, counts.ServerByType)},
			{Name: i18n.T(l, "status.queue"), Value: i18n.T(l, "status.queue.value", ps.Jobs.Queued, ps.Jobs.Ready, ps.Jobs.Leased, ps.Jobs.Dead), Inline: true},
		},
	}
	if f := b.reviewField(ctx, c); f != nil {
		embed.Fields = append(embed.Fields, f)
	}
	embed.Fields = append(embed.Fields, b.budgetFields(ctx, c, ps)...)
	embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: i18n.T(l, "status.learning"), Value: b.learningHere(ctx, c)})
	uptime := i18n.T(l, "status.none")
	if !b.started.IsZero() {
		uptime = durationText(l, b.now().Sub(b.started))
	}
	embed.Fields = append(embed.Fields,
		&discordgo.MessageEmbedField{Name: i18n.T(l, "status.runs"), Value: taskRunsText(l, ps.Runs)},
		&discordgo.MessageEmbedField{Name: i18n.T(l, "status.health"), Value: health},
		&discordgo.MessageEmbedField{Name: i18n.T(l, "status.uptime"), Value: uptime, Inline: true},
		&discordgo.MessageEmbedField{Name: i18n.T(l, "status.turns"), Value: i18n.T(l, "status.turns.value", counters.Turns, counters.TurnErrors), Inline: true},
	)
	embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: i18n.T(l, "status.integrity"), Value: integrityText(l, manager, st.IntegrityOK), Inline: true})
	if manager {
		embed.Fields = append(embed.Fields, b.healthFields(ctx, c, owner)...)
	}
	return &response{embeds: []*discordgo.MessageEmbed{fitEmbed(embed)}}, nil
}

// reviewField counts what waits for review in the server's memory, as /memory review would
// list it to the member asking (only items whose memories they may see); nil when nothing
// waits, or when the count cannot be read (logged: the rest of the status still helps).
func (b settingsCommands) reviewField(ctx context.Context, c *call) *discordgo.MessageEmbedField {
	_, n, err := b.store.Review.Queue(ctx, memory.ServerOwner(c.guildID()), c.audience(ctx), 1, 0)
	if err != nil {
		c.log.Error("couldn't count the review queue for status", "err", err)
		return nil
	}
	if n == 0 {
		return nil
	}
	l := c.locale()
	return &discordgo.MessageEmbedField{Name: i18n.T(l, "status.review"), Value: i18n.T(l, "status.review.value", n), Inline: true}
}

// healthText is the one line of health the status shows: the worst of a failed integrity
// check, dead jobs, the pipeline's problems, a stopped pipeline and a lost gateway.
func (b settingsCommands) healthText(l i18n.Locale, ps pipeline.Status, integrityFailed bool) string {
	switch problems := ps.Problems(); {
	case integrityFailed:
		return i18n.T(l, "status.health.integrity")
	case ps.Jobs.Dead > 0:
		return i18n.T(l, "status.health.dead", i18n.N(l, "count.job", ps.Jobs.Dead))
	case len(problems) > 0:
		return i18n.T(l, "status.health.problems", i18n.N(l, "count.problem", len(problems)))
	case b.pipe != nil && !ps.Running:
		return i18n.T(l, "status.health.stopped")
	case !b.connected.Load():
		return i18n.T(l, "status.health.reconnecting")
	}
	return i18n.T(l, "status.health.ok")
}

// typeCountsText is the server's memory counts by type, in the order of memory.Types,
// the types without memories left out.
func typeCountsText(l i18n.Locale, byType map[memory.Type]int) string {
	parts := make([]string, 0, len(memory.Types))
	for _, t := range memory.Types {
		if n := byType[t]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", i18n.T(l, i18n.Key("choice.type."+string(t))), n))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, i18n.T(l, "status.none"))
	}
	return strings.Join(parts, " · ")
}

// budgetFields are the daily model budget of the server and the pipeline's, each when
// one is configured; a budget that cannot be read shows as unavailable.
func (b settingsCommands) budgetFields(ctx context.Context, c *call, ps pipeline.Status) []*discordgo.MessageEmbedField {
	l := c.locale()
	var fields []*discordgo.MessageEmbedField
	if b.budgetToday != nil {
		used, limit, err := b.budgetToday(ctx, c.guildID())
		value := i18n.T(l, "status.budget.unlimited")
		switch {
		case err != nil:
			c.log.Error("couldn't read the daily model budget for status", "err", err)
			value = i18n.T(l, "status.unavailable")
		case limit > 0:
			value = i18n.T(l, "status.budget.value", used, limit)
		}
		fields = append(fields, &discordgo.MessageEmbedField{Name: i18n.T(l, "status.budget"), Value: value, Inline: true})
	}
	if ps.Budget != nil {
		budget := i18n.T(l, "status.pipeline_budget.unlimited", ps.Budget.Used)
		if ps.Budget.Limit > 0 {
			budget = i18n.T(l, "status.pipeline_budget.value", ps.Budget.Used, ps.Budget.Limit)
		}
		fields = append(fields, &discordgo.MessageEmbedField{Name: i18n.T(l, "status.pipeline_budget"), Value: budget, Inline: true})
	}
	return fields
}

// integrityText is the integrity check's result; it is run only for managers.
func integrityText(l i18n.Locale, manager, ok bool) string {
	switch {
	case !manager:
		return i18n.T(l, "status.integrity.unchecked")
	case !ok:
		return i18n.T(l, "status.integrity.failed")
	}
	return i18n.T(l, "status.integrity.ok")
}

// taskRunsText lists the latest run of each pipeline task, one line each. Errors stay
// out: they are for operators (`kioku doctor`), and everyone in the server may ask.
func taskRunsText(l i18n.Locale, runs []memory.TaskRun) string {
	if len(runs) == 0 {
		return i18n.T(l, "status.runs.none")
	}
	lines := make([]string, len(runs))
	for i, r := range runs {
		state := i18n.T(l, "status.runs.ok")
		if !r.OK {
			state = i18n.T(l, "status.runs.failed")
		}
		lines[i] = fmt.Sprintf("%s: %s <t:%d:R>", r.Name, state, r.FinishedAt.Unix())
	}
	return truncate(strings.Join(lines, "\n"), maxEmbedField)
}

// fitEmbed keeps e within Discord's limits, which reject the whole message otherwise: at
// most 25 fields, each part within its own limit, and 6,000 characters in all (title,
// description, field names and values, footer, author). Fields past the budget are dropped
// from the end, where the least important ones are; a note says so in the footer.
func fitEmbed(e *discordgo.MessageEmbed) *discordgo.MessageEmbed {
	e.Title = truncate(e.Title, limEmbedTitle)
	e.Description = truncate(e.Description, limEmbedDesc)
	if e.Footer != nil {
		e.Footer.Text = truncate(e.Footer.Text, maxEmbedFooter)
	}
	for _, f := range e.Fields {
		f.Name = truncate(f.Name, limEmbedTitle)
		f.Value = truncate(f.Value, maxEmbedField)
	}
	dropped := 0
	if len(e.Fields) > limEmbedFields {
		dropped = len(e.Fields) - limEmbedFields
		e.Fields = e.Fields[:limEmbedFields]
	}
	for EmbedChars(e) > limEmbedChars-40 && len(e.Fields) > 0 {
		e.Fields = e.Fields[:len(e.Fields)-1]
		dropped++
	}
	if dropped > 0 {
		e.Footer = &discordgo.MessageEmbedFooter{Text: fmt.Sprintf("+%d …", dropped)}
	}
	return e
}

// EmbedChars counts the characters of e that Discord counts against its 6,000 limit.
func EmbedChars(e *discordgo.MessageEmbed) int {
	n := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Description)
	for _, f := range e.Fields {
		n += utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
	}
	if e.Footer != nil {
		n += utf8.RuneCountInString(e.Footer.Text)
	}
	if e.Author != nil {
		n += utf8.RuneCountInString(e.Author.Name)
	}
	return n
}

// learningHere says whether kioku learns in the channel the command is used in, and why;
// settings that cannot be read leave it unknown, which does not learn.
func (b settingsCommands) learningHere(ctx context.Context, c *call) string {
	l := c.locale()
	gs, err := b.store.Settings.GuildSettings(ctx, c.guildID())
	if err != nil {
		c.log.Warn("couldn't read guild settings for the learning status", "err", err)
		return learningText(l, false, learningUnknown)
	}
	learns, why := b.visibility.channelLearning(gs, c.i.ChannelID)
	return learningText(l, learns, why)
}
