package bot

// /memory forget, forget by query with its confirmation, and /memory forget-me.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// maxForgetPreview bounds how many matches one forget-by-query may delete,
// which is also how many the preview can show.
const maxForgetPreview = 10

func (b memoryCommands) memoryForget(ctx context.Context, c *call) (*response, error) {
	owner, err := c.owner()
	if err != nil {
		return nil, err
	}
	// Forgetting is allowed at every privacy level: it is how people leave.
	if err := b.perms.requireWrite(ctx, c, owner); err != nil {
		return nil, err
	}
	id, hasID := c.options.integer("id")
	query := c.options.str("query")
	switch {
	case hasID && query != "":
		return nil, errT(memory.EINVALID, "forget.error.both")
	case hasID:
		if err := b.visibility.requireVisible(ctx, c, owner, id); err != nil {
			return nil, err
		}
		forgotten, err := b.store.Memories.Forget(ctx, owner, []int64{id}, memory.UserActor(c.userID()), "forgotten by command")
		if err != nil {
			return nil, err
		}
		c.setNotice(forgotten[0], true)
		c.log.Info("memory forgotten by command", "memory_id", id, "scope", owner.Scope)
		return &response{content: c.t("forget.done", scopeName(c.locale(), owner), id, oneLine(forgotten[0].Content, 200), id,
			scopeArg(owner), b.recoverWindow(c.locale()))}, nil
	case query != "":
		return b.forgetPreview(ctx, c, owner, query)
	}
	return nil, errT(memory.EINVALID, "forget.error.what")
}

// forgetPreview shows what a forget-by-query would delete, with a confirm
// button carrying the store's single-use token for exactly these memories.
func (b memoryCommands) forgetPreview(ctx context.Context, c *call, owner memory.Owner, query string) (*response, error) {
	p, err := b.store.Confirmations.PreviewForgetWithin(ctx, owner, query, memory.UserActor(c.userID()), maxForgetPreview, c.audience(ctx))
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	for _, m := range p.Matches {
		sb.WriteString(memoryLineIn(c.locale(), m, owner, c.guildID()))
		sb.WriteString("\n")
	}
	l := c.locale()
	embed := &discordgo.MessageEmbed{
		Title:       i18n.T(l, "forget.preview.title", i18n.N(l, "count.memory", len(p.Matches)), describeIn(l, owner)),
		Description: sb.String(),
		Color:       colorConfirm,
		// Footers do not render <t:…> timestamps, so the expiry is spelled out.
		Footer: &discordgo.MessageEmbedFooter{Text: i18n.T(l, "forget.preview.footer",
			b.recoverWindow(l), durationText(l, p.ExpiresAt.Sub(b.now())))},
	}
	return &response{
		embeds: []*discordgo.MessageEmbed{embed},
		components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: i18n.T(l, "forget.preview.confirm"), Style: discordgo.DangerButton,
				CustomID: fmt.Sprintf("%s:%s:%s", idForget, owner.Scope, p.Token)},
			discordgo.Button{Label: i18n.T(l, "button.cancel"), Style: discordgo.SecondaryButton, CustomID: idCancel},
		}}},
	}, nil
}

// forgetPress executes a forget preview. Permission is checked again: the
// preview may be minutes old.
func (b memoryCommands) forgetPress(ctx context.Context, c *call) (*response, error) {
	parts := strings.Split(c.customID, ":")
	if len(parts) != 4 {
		return nil, errT(memory.EINVALID, "error.old_button")
	}
	owner, err := resolveOwner(parts[2], c.guildID(), c.userID())
	if err != nil {
		return nil, err
	}
	if err := b.perms.requireWrite(ctx, c, owner); err != nil {
		return nil, err
	}
	forgotten, err := b.store.Confirmations.ConfirmForget(ctx, owner, parts[3], memory.UserActor(c.userID()))
	if err != nil {
		return nil, err
	}
	if len(forgotten) == 0 {
		return &response{content: c.t("forget.already_gone")}, nil
	}
	ids := make([]string, len(forgotten))
	for i, m := range forgotten {
		ids[i] = "#" + strconv.FormatInt(m.ID, 10)
	}
	c.notice = forgottenRows(c.uxLocale(), forgotten)
	c.log.Info("memories forgotten by query", "scope", owner.Scope, "count", len(forgotten))
	l := c.locale()
	return &response{content: c.t("forget.done.many", i18n.N(l, "count.memory", len(forgotten)), scopeName(l, owner),
		strings.Join(ids, ", "), scopeArg(owner), b.recoverWindow(l))}, nil
}

// cancelPress closes a confirmation without doing anything.
func (b memoryCommands) cancelPress(_ context.Context, c *call) (*response, error) {
	return &response{content: c.t("button.cancelled")}, nil
}

func (b memoryCommands) memoryForgetMe(ctx context.Context, c *call) (*response, error) {
	sum, err := b.store.Confirmations.PreviewForgetMe(ctx, c.userID())
	if err != nil {
		return nil, err
	}
	stmEntries := len(b.stm.ForUser(c.userID()))
	l := c.locale()
	desc := i18n.T(l, "forgetme.preview", i18n.N(l, "count.personal_memory", sum.Memories), i18n.N(l, "count.other_memory", sum.About),
		sum.FromMessages, i18n.N(l, "count.turn", sum.Turns), i18n.N(l, "count.stm_entry", stmEntries), i18n.N(l, "count.job", sum.Jobs),
		i18n.N(l, "count.server_memory", sum.Anonymised))
	return &response{
		embeds: []*discordgo.MessageEmbed{{Title: i18n.T(l, "forgetme.title"), Description: desc, Color: colorConfirm,
			Footer: &discordgo.MessageEmbedFooter{Text: i18n.T(l, "forgetme.expires", durationText(l, sum.ExpiresAt.Sub(b.now())))}}},
		components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: i18n.T(l, "forgetme.confirm"), Style: discordgo.DangerButton,
				CustomID: idForgetMeConfirm + ":" + sum.Token},
			discordgo.Button{Label: i18n.T(l, "button.cancel"), Style: discordgo.SecondaryButton, CustomID: idForgetMeCancel},
		}}},
	}, nil
}

// forgetMePress erases the presser's data. The token is bound to the user
// who asked, so someone else pressing the button erases nothing.
func (b memoryCommands) forgetMePress(ctx context.Context, c *call) (*response, error) {
	token := strings.TrimPrefix(c.customID, idForgetMeConfirm+":")
	sum, err := b.store.Confirmations.ConfirmForgetMe(ctx, c.userID(), token)
	if err != nil {
		return nil, err
	}
	cleared := b.stm.ClearUser(c.userID())
	c.log.Info("user forgotten", "memories", sum.Memories, "about", sum.About, "from_messages", sum.FromMessages,
		"anonymised", sum.Anonymised, "turns", sum.Turns, "jobs", sum.Jobs, "stm_entries", cleared)
	l := c.locale()
	return &response{content: i18n.T(l, "forgetme.done", i18n.N(l, "count.personal_memory", sum.Memories), i18n.N(l, "count.memory", sum.About),
		i18n.N(l, "count.memory", sum.FromMessages), i18n.N(l, "count.turn", sum.Turns), i18n.N(l, "count.stm_entry", cleared),
		i18n.N(l, "count.job", sum.Jobs), i18n.N(l, "count.server_memory", sum.Anonymised), i18n.N(l, "forgetme.names", sum.Anonymised))}, nil
}

// recoverWindow is how long a forgotten memory can be recovered, said in l.
func (b memoryCommands) recoverWindow(l i18n.Locale) string {
	return durationText(l, b.store.RecoverWindow)
}
