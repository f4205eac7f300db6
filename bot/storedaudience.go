package bot

import (
	"context"
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// StoredRules are the channels and roles kioku stored for each guild, from which a process
// without a gateway session of its own decides who may see what. *ltm.Channels satisfies it.
type StoredRules interface {
	GuildChannels(ctx context.Context, guildID string) ([]memory.GuildChannel, error)
	GuildRoles(ctx context.Context, guildID string) (memory.GuildRoles, bool, error)
}

// storedGuildRules builds a guild's rules from what is stored alone: its roles and owner,
// and its channels, deleted ones included with the rule they last had.
func storedGuildRules(ctx context.Context, stored StoredRules, guildID string) (*GuildRules, error) {
	rules := &GuildRules{GuildID: guildID, Roles: map[string]int64{}, Channels: map[string]*ChannelRule{}}
	roles, ok, err := stored.GuildRoles(ctx, guildID)
	if err != nil || !ok {
		return rules, err
	}
	rules.Roles, rules.OwnerID = roles.Roles, roles.OwnerID
	chans, err := stored.GuildChannels(ctx, guildID)
	if err != nil {
		return &GuildRules{GuildID: guildID}, err
	}
	for _, c := range chans {
		rules.Channels[c.ChannelID] = ruleFromStored(c)
	}
	return rules, nil
}

// MemberAccess is what one member may do in one guild, decided from the guild's stored
// rules and the member's roles (the web dashboard reads them with the bot's token).
type MemberAccess struct {
	// Channels are the guild's channels the member can view.
	Channels map[string]bool
	// Manager may configure the bot (Manage Server or Administrator, or the owner); Editor
	// may change server memory (a manager, or a holder of the editor role).
	Manager, Editor bool
}

// StoredMemberAccess decides a member's access to a guild from what is stored alone: its
// roles and channels, computed by the same GuildRules the bot decides with, and the editor
// role of its settings (editorRoleID, "" for none). ok is false when the guild's roles were
// never stored (kioku is not there, or has not seen it yet): unknown means no access.
func StoredMemberAccess(ctx context.Context, stored StoredRules, guildID, userID string, roles []string, editorRoleID string) (MemberAccess, bool, error) {
	rules, err := storedGuildRules(ctx, stored, guildID)
	if err != nil || !rules.RolesKnown() {
		return MemberAccess{}, false, err
	}
	perms := rules.Permissions(nil, roles, userID)
	access := MemberAccess{
		Channels: rules.MemberAudience(userID, roles, true, func(string) bool { return false }),
		Manager:  perms&(discordgo.PermissionManageGuild|discordgo.PermissionAdministrator) != 0,
	}
	access.Editor = access.Manager || (editorRoleID != "" && slices.Contains(roles, editorRoleID))
	return access, true, nil
}
