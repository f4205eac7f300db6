package isolation

import (
	"context"
	"fmt"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/ltm"
)

// The states the bot can be in for a guild: the gateway holds it, holds it unavailable (a
// Discord outage), or does not hold it yet (after a restart, before GUILD_CREATE). In every
// one of them what it shows must stay within what the oracle allows: unknown means not
// visible.
type outageState int

const (
	guildUp outageState = iota
	guildUnavailable
	guildGone
)

func (o outageState) String() string {
	return [...]string{"up", "unavailable", "not yet known after a restart"}[o]
}

// outageStep moves one guild to its next state: up → unavailable → gone → up.
func (h *harness) outageStep() {
	g := h.rng.IntN(numGuilds)
	next := (h.outage[g] + 1) % 3
	h.desc = fmt.Sprintf("guild %s goes from %s to %s", guildID(g), h.outage[g], next)
	h.kinds["outage"]++
	st := h.session.State
	switch next {
	case guildUnavailable:
		gs, err := st.Guild(guildID(g))
		if err != nil {
			h.t.Fatal(err)
		}
		st.Lock()
		gs.Unavailable = true
		st.Unlock()
	case guildGone:
		if err := st.GuildRemove(&discordgo.Guild{ID: guildID(g)}); err != nil {
			h.t.Fatal(err)
		}
	case guildUp:
		if err := st.GuildAdd(discordGuild(g)); err != nil {
			h.t.Fatal(err)
		}
		for m := range numMembers {
			if err := st.MemberAdd(&discordgo.Member{GuildID: guildID(g), Roles: rolesOf(g, m),
				User: &discordgo.User{ID: memberID(m), Username: displayNames[m]}}); err != nil {
				h.t.Fatal(err)
			}
		}
	}
	h.outage[g] = next
}

// storeRules stores a guild's channels, and its roles when withRoles, as the process whose
// gateway holds the guild does on GUILD_CREATE.
func storeRules(t *testing.T, ctx context.Context, store bot.Channels, g *discordgo.Guild, withRoles bool) {
	t.Helper()
	var chans []ltm.GuildChannel
	for _, list := range [][]*discordgo.Channel{g.Channels, g.Threads} {
		for _, c := range list {
			s := ltm.GuildChannel{GuildID: g.ID, ChannelID: c.ID, ParentID: c.ParentID, Kind: int(c.Type),
				PrivateThread: c.Type == discordgo.ChannelTypeGuildPrivateThread, Overwrites: []ltm.Overwrite{}}
			for _, ow := range c.PermissionOverwrites {
				s.Overwrites = append(s.Overwrites, ltm.Overwrite{ID: ow.ID, Type: int(ow.Type), Allow: ow.Allow, Deny: ow.Deny})
			}
			chans = append(chans, s)
		}
	}
	if err := store.SaveGuildChannels(ctx, chans); err != nil {
		t.Fatal(err)
	}
	if !withRoles {
		return
	}
	r := ltm.GuildRoles{GuildID: g.ID, OwnerID: g.OwnerID, Roles: map[string]int64{}}
	for _, role := range g.Roles {
		r.Roles[role.ID] = role.Permissions
	}
	if err := store.SaveGuildRoles(ctx, r); err != nil {
		t.Fatal(err)
	}
}
