package bot

import (
	"context"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// writeContext is the member running a command, where they run it: what decides which
// existing memories their write may be deduplicated against (memory.WriteContext).
func (c *call) writeContext(ctx context.Context) memory.WriteContext {
	return memory.WriteContext{WriterID: c.userID(), GuildID: c.guildID(), ChannelID: c.i.ChannelID, Audience: c.audience(ctx)}
}

// errAuthorPrivate refuses to save another member's message when that member's privacy
// level keeps their words from being saved by anyone but themselves. It does not say
// which level, which is theirs to tell.
var errAuthorPrivate = errT(memory.EFORBIDDEN, "remember.error.author_private")

// rememberThis saves the target message of the context menu command. In a
// guild it goes to server memory when the caller may edit it, and to their
// personal memory otherwise; in DMs to personal memory.
//
// The words are the message author's: a member at privacy level partial or
// full cannot have their messages saved by someone else (and at full not
// even by themselves), and the copy records the author as its subject and
// the message as its evidence, so the author's forget-me removes it.
func (b memoryCommands) rememberThis(ctx context.Context, c *call) (*response, error) {
	data := c.command
	var target *discordgo.Message
	if data.Resolved != nil {
		target = data.Resolved.Messages[data.TargetID]
	}
	if target == nil || strings.TrimSpace(target.Content) == "" {
		return nil, errT(memory.EINVALID, "remember.error.no_text")
	}
	author := target.Author
	human := author != nil && author.ID != "" && !author.Bot && !author.System
	if human {
		if err := b.requireAuthorAllows(ctx, c, author.ID); err != nil {
			return nil, err
		}
	}
	owner := memory.PersonalOwner(c.userID())
	if !c.inDM() {
		gs, err := b.store.Settings.GuildSettings(ctx, c.guildID())
		if err != nil {
			return nil, err
		}
		if CanEditServer(c.member, gs.EditorRoleID) {
			owner = memory.ServerOwner(c.guildID())
		}
	}
	if owner.Scope == memory.ScopePersonal {
		if err := b.perms.requireNotFullPrivacy(ctx, c); err != nil {
			return nil, err
		}
	}
	prov := memory.Provenance{ChannelID: target.ChannelID, MessageID: target.ID}
	if prov.ChannelID == "" {
		prov.ChannelID = c.i.ChannelID
	}
	m := memory.Memory{Scope: owner.Scope, GuildID: c.guildID(), UserID: owner.UserID,
		Content: target.Content, Source: memory.SourceCommand, Provenance: prov}
	var evidence []memory.MessageRef
	if author != nil {
		m.Provenance.AuthorID, m.Provenance.Author = author.ID, author.DisplayName()
		evidence = append(evidence, memory.MessageRef{MessageID: target.ID, AuthorID: author.ID})
	}
	if human {
		m.SubjectID = author.ID
	}
	if r, similar, err := b.dups.answer(ctx, c, memory.HeldWrite{Memory: m, Evidence: evidence}); err != nil || similar {
		return r, err
	}
	res, err := b.store.Memories.RememberAs(ctx, c.writeContext(ctx), m, memory.UserActor(c.userID()), evidence...)
	if err != nil {
		return nil, err
	}
	c.log.Info("memory added from message", "memory_id", res.Memory.ID, "scope", owner.Scope, "created", res.Created)
	if res.Created {
		c.setNotice(res.Memory, false)
	}
	if !res.Created {
		return &response{content: c.t("remember.already", res.Memory.ID, scopeName(c.locale(), owner))}, nil
	}
	return &response{content: c.t("notice.saved", scopeName(c.locale(), owner), res.Memory.ID, oneLine(res.Memory.Content, 300))}, nil
}

// requireAuthorAllows refuses to save the words of authorID when their privacy level
// forbids it: partial or full when someone else asks, full when they ask themselves
// (SPEC §2: full blocks even manual saves).
func (b memoryCommands) requireAuthorAllows(ctx context.Context, c *call, authorID string) error {
	us, err := b.store.Settings.UserSettings(ctx, authorID)
	if err != nil {
		return err
	}
	switch {
	case us.Privacy == memory.PrivacyFull && authorID == c.userID():
		return errT(memory.EFORBIDDEN, "remember.error.privacy_full")
	case us.Privacy == memory.PrivacyFull, us.Privacy == memory.PrivacyPartial && authorID != c.userID():
		return errAuthorPrivate
	}
	return nil
}
