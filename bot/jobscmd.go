package bot

// /kioku jobs: a server's background jobs, for the members who manage it.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

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
	state := c.str("state")
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
		return nil, memory.Errorf(memory.EINVALID, "Unknown state %q: use due, running, dead, done or all.", state)
	}
	jobs, err := b.store.Jobs.FindJobs(ctx, memory.JobFilter{States: states, GuildID: c.guildID(), Limit: maxJobsShown})
	if err != nil {
		return nil, err
	}
	title := "Background jobs in this server"
	if state != "all" {
		title += " · " + state
	}
	if len(jobs) == 0 {
		what := "background jobs"
		if state != "all" {
			what = state + " " + what
		}
		return &response{content: fmt.Sprintf("There are no %s for this server.", what)}, nil
	}
	footer := "Newest first."
	if len(jobs) == maxJobsShown {
		footer = fmt.Sprintf("The %d newest, newest first.", maxJobsShown)
	}
	footer += " A dead job failed for good; the bot's operator can run it again with kioku jobs requeue."
	var sb strings.Builder
	for _, j := range jobs {
		sb.WriteString(jobLine(j, b.now().Unix()))
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
func jobLine(j *memory.Job, now int64) string {
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
	line := fmt.Sprintf("**#%d** · %s · %s · %d/%d %s", j.ID, j.Kind, state, j.Attempts, j.MaxAttempts,
		plural(j.MaxAttempts, "attempt", "attempts"))
	if where.ChannelID != "" {
		line += " · <#" + where.ChannelID + ">"
	}
	if j.State == memory.JobQueued {
		if at := j.RunAfter.Unix(); at > now {
			line += fmt.Sprintf(" · runs <t:%d:R>", at)
		} else {
			line += " · runs now"
		}
	}
	if j.LastError != "" {
		line += "\n> last error: " + oneLine(j.LastError, 200)
	}
	return line
}
