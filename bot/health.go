package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// statusFindings is how many findings /kioku status lists: the most serious, enough to act
// on; `kioku doctor` lists them all.
const statusFindings = 3

// healthFields are the health score, its domains and the top findings, for members who
// manage the server. The score is the bot's as a whole (like the queue), and a finding's
// fix is shown only when it names nothing outside this server: a memory id of another
// server or of a member's personal memory would say more than the status should.
func (b settingsCommands) healthFields(ctx context.Context, c *call, owner memory.Owner) []*discordgo.MessageEmbedField {
	d, err := b.store.Maintenance.Diagnose(ctx)
	if err != nil {
		c.log.Error("couldn't diagnose the store for status", "err", err)
		return []*discordgo.MessageEmbedField{{Name: c.t("status.score"), Value: c.t("status.score.unavailable")}}
	}
	if b.provider != nil {
		d.Provider = b.provider()
	}
	r := maintenance.Assess(d)
	domains := make([]string, len(r.Domains))
	for i, dom := range r.Domains {
		domains[i] = fmt.Sprintf("%s %d", dom.Name, dom.Score)
		if !dom.Known {
			domains[i] = c.t("status.domain.unknown", dom.Name)
		}
	}
	findings := c.t("status.none")
	if n := len(r.Findings); n > 0 {
		lines := make([]string, 0, statusFindings+1)
		for _, f := range r.Findings[:min(n, statusFindings)] {
			fix := f.Fix
			if f.Scope != "" && f.Scope != owner.Key() {
				fix = "kioku doctor"
			}
			lines = append(lines, fmt.Sprintf("**%s** %s: %s (fix: `%s`)", f.Severity, f.Domain, f.Detail, fix))
		}
		if n > statusFindings {
			lines = append(lines, c.t("status.findings.more", n-statusFindings))
		}
		findings = truncate(strings.Join(lines, "\n"), 1024)
	}
	return []*discordgo.MessageEmbedField{
		{Name: c.t("status.score"), Value: c.t("status.score.value", r.Score, c.t(i18n.Key("status.verdict."+string(r.Status)))), Inline: true},
		{Name: c.t("status.domains"), Value: strings.Join(domains, " · "), Inline: true},
		{Name: c.t("status.findings"), Value: findings},
	}
}
