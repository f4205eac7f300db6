package bot

// /kioku jobs: a server's background jobs, for the members who manage it.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// maxJobsShown bounds one /kioku jobs answer: fifteen entries with their errors fit an
// embed's description.
const maxJobsShown = 15

// jobStateChoices are the states /kioku jobs filters by, in the words `kioku jobs` uses,
// and the stored states each one means.
var jobStateChoices = []struct {
	name   string
	stored []string
}{
	{"all", nil},
	{"due", []string{memory.JobQueued}},
	{"running", []string{memory.JobLeased}},
	{"dead", []string{memory.JobDead}},
	{"done", []string{memory.JobDone}},
}

// jobStateOptionChoices offers the states /kioku jobs filters by.
func jobStateOptionChoices() []*discordgo.ApplicationCommandOptionChoice {
	out := make([]*discordgo.ApplicationCommandOptionChoice, 0, len(jobStateChoices))
	for _, c := range jobStateChoices {
		out = append(out, &discordgo.ApplicationCommandOptionChoice{Name: c.name, Value: c.name})
	}
	return out
}

// kiokuJobs lists this server's newest background jobs: kind, state, attempts, when a
// waiting job runs and the last error. The guild is part of the store's query, so no other
// server's job (and no DM's) is ever read; payloads, which may hold what people said, are
// never shown, and the stored error never quotes them.
func (b settingsCommands) kiokuJobs(ctx context.Context, c *call) (*response, error) {
	if err := b.perms.requireManager(c); err != nil {
		return nil, err
	}
	state := c.options.str("state")
	if state == "" {
		state = "all"
	}
	var states []string
	known := false
	for _, ch := range jobStateChoices {
		if ch.name == state {
			states, known = ch.stored, true
		}
	}
	if !known {
		return nil, errT(memory.EINVALID, "jobs.error.state", state)
	}
	jobs, err := b.store.Jobs.FindJobs(ctx, memory.JobFilter{States: states, GuildID: c.guildID(), Limit: maxJobsShown})
	if err != nil {
		return nil, err
	}
	title := c.t("jobs.title")
	if state != "all" {
		title += " · " + c.t(i18n.Key("choice.state."+state))
	}
	if len(jobs) == 0 {
		if state != "all" {
			return &response{content: c.t("jobs.none.state", c.t(i18n.Key("choice.state."+state)))}, nil
		}
		return &response{content: c.t("jobs.none")}, nil
	}
	footer := c.t("jobs.footer.newest")
	if len(jobs) == maxJobsShown {
		footer = c.t("jobs.footer.limit", maxJobsShown)
	}
	footer += " " + c.t("jobs.footer.dead")
	var sb strings.Builder
	for _, j := range jobs {
		sb.WriteString(jobLine(c.locale(), j, b.now().Unix()))
		sb.WriteString("\n")
	}
	return &response{embeds: []*discordgo.MessageEmbed{{
		Title:       title,
		Description: truncate(sb.String(), 4000),
		Color:       colorView,
		Footer:      &discordgo.MessageEmbedFooter{Text: footer},
	}}}, nil
}

// jobLine renders one job for /kioku jobs.
func jobLine(l i18n.Locale, j *memory.Job, now int64) string {
	var where struct {
		ChannelID string `json:"channel_id"`
	}
	_ = json.Unmarshal(j.Payload, &where) // only the channel is read; a payload of another shape names none
	state := j.State
	switch state {
	case memory.JobQueued:
		state = "due"
	case memory.JobLeased:
		state = "running"
	}
	line := fmt.Sprintf("**#%d** · %s · %s · %s", j.ID, j.Kind, i18n.T(l, i18n.Key("choice.state."+state)),
		i18n.N(l, "jobs.attempts", j.MaxAttempts, j.Attempts))
	if where.ChannelID != "" {
		line += " · <#" + where.ChannelID + ">"
	}
	if j.State == memory.JobQueued {
		if at := j.RunAfter.Unix(); at > now {
			line += " · " + i18n.T(l, "jobs.runs_at", at)
		} else {
			line += " · " + i18n.T(l, "jobs.runs_now")
		}
	}
	if j.LastError != "" {
		line += "\n> " + i18n.T(l, "jobs.last_error", oneLine(j.LastError, 200))
	}
	return line
}
