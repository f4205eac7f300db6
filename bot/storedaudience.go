package bot

import (
	"context"
	"errors"
	"maps"

	"github.com/kioku-bot/kioku/memory"
)

// StoredRules are the channels and roles kioku stored for each guild, from which a process
// without a gateway session of its own decides who may see what. *ltm.Channels satisfies it.
type StoredRules interface {
	GuildChannels(ctx context.Context, guildID string) ([]memory.GuildChannel, error)
	GuildRoles(ctx context.Context, guildID string) (memory.GuildRoles, bool, error)
}

// PublicAudience is the audience of a view only one member reads (the web dashboard) when
// all that is known of the member is which guilds they are in, not their roles there: the
// channels of those guilds every member can read, by the guilds' stored channels and roles.
// It is the rule the bot applies to a member whose roles it has not seen (memberAudience,
// memberUnseen), computed by the same GuildRules. A guild without stored roles adds nothing
// (unknown means not visible), nor does a guild the member is not in. A guild whose rules
// could not be read adds nothing either; its error is returned beside the audience, which
// stays sound without it.
func PublicAudience(ctx context.Context, stored StoredRules, guildIDs []string) (*memory.Audience, error) {
	out := map[string]bool{}
	var errs []error
	for _, gid := range guildIDs {
		rules, err := storedGuildRules(ctx, stored, gid)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		maps.Copy(out, rules.PublicChannels())
	}
	return &memory.Audience{Channels: out}, errors.Join(errs...)
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
