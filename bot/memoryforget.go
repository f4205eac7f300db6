package bot

// /memory forget, forget by query with its confirmation, and /memory forget-me.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"

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
	id, hasID := c.integer("id")
	query := c.str("query")
	switch {
	case hasID && query != "":
		return nil, memory.Errorf(memory.EINVALID, "Give either id: or query:, not both.")
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
		return &response{content: fmt.Sprintf("🗑️ Forgot (%s) #%d: %s\nChanged your mind? /memory recover id:%d%s brings it back for %s.",
			owner.Scope, id, oneLine(forgotten[0].Content, 200), id, scopeArg(owner), b.recoverWindow())}, nil
	case query != "":
		return b.forgetPreview(ctx, c, owner, query)
	}
	return nil, memory.Errorf(memory.EINVALID, "Tell me what to forget: id: for one memory, or query: to see what matches first.")
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
		sb.WriteString(memoryLine(m, owner, c.guildID()))
		sb.WriteString("\n")
	}
	embed := &discordgo.MessageEmbed{
		Title:       fmt.Sprintf("Forget %d %s from %s?", len(p.Matches), plural(len(p.Matches), "memory", "memories"), describe(owner)),
		Description: sb.String(),
		Color:       colorConfirm,
		// Footers do not render <t:…> timestamps, so the expiry is spelled out.
		Footer: &discordgo.MessageEmbedFooter{Text: fmt.Sprintf("Forgotten memories can be recovered for %s. This confirmation expires in %s.",
			b.recoverWindow(), roundDuration(p.ExpiresAt.Sub(b.now())))},
	}
	return &response{
		embeds: []*discordgo.MessageEmbed{embed},
		components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: "Forget these", Style: discordgo.DangerButton,
				CustomID: fmt.Sprintf("%s:%s:%s", idForget, owner.Scope, p.Token)},
			discordgo.Button{Label: "Cancel", Style: discordgo.SecondaryButton, CustomID: idCancel},
		}}},
	}, nil
}

// forgetPress executes a forget preview. Permission is checked again: the
// preview may be minutes old.
func (b memoryCommands) forgetPress(ctx context.Context, c *call) (*response, error) {
	parts := strings.Split(c.customID, ":")
	if len(parts) != 4 {
		return nil, memory.Errorf(memory.EINVALID, "That button is from an older version of kioku; run the command again.")
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
		return &response{content: "Those memories were already gone; nothing changed."}, nil
	}
	ids := make([]string, len(forgotten))
	for i, m := range forgotten {
		ids[i] = "#" + strconv.FormatInt(m.ID, 10)
	}
	c.notice = forgottenRows(c.uxLocale(), forgotten)
	c.log.Info("memories forgotten by query", "scope", owner.Scope, "count", len(forgotten))
	return &response{content: fmt.Sprintf("🗑️ Forgot %d %s (%s): %s\nRecover any of them with /memory recover id:N%s within %s.",
		len(forgotten), plural(len(forgotten), "memory", "memories"), owner.Scope, strings.Join(ids, ", "), scopeArg(owner), b.recoverWindow())}, nil
}

// cancelPress closes a confirmation without doing anything.
func (b memoryCommands) cancelPress(context.Context, *call) (*response, error) {
	return &response{content: "Cancelled; nothing was changed."}, nil
}

func (b memoryCommands) memoryForgetMe(ctx context.Context, c *call) (*response, error) {
	sum, err := b.store.Confirmations.PreviewForgetMe(ctx, c.userID())
	if err != nil {
		return nil, err
	}
	stmEntries := len(b.stm.ForUser(c.userID()))
	desc := fmt.Sprintf("This permanently erases everything kioku holds about you:\n"+
		"• %d personal %s (forgotten ones included) and their history\n"+
		"• %d other %s about you and %d learned only from your messages\n"+
		"• %d conversation %s in the transcript\n"+
		"• %d short-term memory %s, and your messages in channels' short-term memory\n"+
		"• what %d background %s kept of recent conversations\n\n"+
		"%d server %s you added stay but no longer name you. Unlike forget, this cannot be undone.",
		sum.Memories, plural(sum.Memories, "memory", "memories"), sum.About, plural(sum.About, "memory", "memories"),
		sum.FromMessages, sum.Turns, plural(sum.Turns, "turn", "turns"),
		stmEntries, plural(stmEntries, "entry", "entries"), sum.Jobs, plural(sum.Jobs, "job", "jobs"),
		sum.Anonymised, plural(sum.Anonymised, "memory", "memories"))
	return &response{
		embeds: []*discordgo.MessageEmbed{{Title: "Forget me?", Description: desc, Color: colorConfirm,
			Footer: &discordgo.MessageEmbedFooter{Text: "This confirmation expires in " + roundDuration(sum.ExpiresAt.Sub(b.now())) + "."}}},
		components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: "Erase everything about me", Style: discordgo.DangerButton,
				CustomID: idForgetMeConfirm + ":" + sum.Token},
			discordgo.Button{Label: "Cancel", Style: discordgo.SecondaryButton, CustomID: idForgetMeCancel},
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
	return &response{content: fmt.Sprintf("Done. I erased %d personal %s, %d %s about you, %d %s learned from your messages, "+
		"%d conversation %s, %d short-term memory %s and the saved work of %d background %s; "+
		"%d server %s you added no longer %s you. I don't remember anything about you now.",
		sum.Memories, plural(sum.Memories, "memory", "memories"), sum.About, plural(sum.About, "memory", "memories"),
		sum.FromMessages, plural(sum.FromMessages, "memory", "memories"), sum.Turns, plural(sum.Turns, "turn", "turns"),
		cleared, plural(cleared, "entry", "entries"), sum.Jobs, plural(sum.Jobs, "job", "jobs"),
		sum.Anonymised, plural(sum.Anonymised, "memory", "memories"), plural(sum.Anonymised, "names", "name"))}, nil
}

func (b memoryCommands) recoverWindow() string {
	return roundDuration(b.store.RecoverWindow)
}
