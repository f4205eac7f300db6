package bot

import (
	"context"

	"github.com/bwmarrin/discordgo"
)

// messageCanEditServer reports whether the author of a guild message may change the
// guild's server memory as they send it: Manage Server or Administrator in the channel (as
// discordgo's state computes it from the roles that arrive with the message), or the
// editor role. The transcript keeps the answer so that the background pipeline changes
// server memory only on behalf of such members. Anything unknown counts as no.
func (b *Bot) messageCanEditServer(ctx context.Context, s *discordgo.Session, m *discordgo.Message) bool {
	if m == nil || m.GuildID == "" || m.Author == nil {
		return false
	}
	member := &discordgo.Member{}
	if m.Member != nil {
		member.Roles = m.Member.Roles
	}
	if s != nil && s.State != nil && m.Member != nil {
		// Computed from the guild's roles and the channel's overwrites in the state and
		// the roles the message carries; the owner and Administrator get everything.
		if perms, err := s.State.MessagePermissions(m); err == nil {
			member.Permissions = perms
		}
	}
	gs, err := b.store.GuildSettings(ctx, m.GuildID)
	if err != nil {
		b.log.Warn("couldn't read guild settings for server-memory rights", "guild_id", m.GuildID, "err", err)
		gs.EditorRoleID = ""
	}
	return CanEditServer(member, gs.EditorRoleID)
}
