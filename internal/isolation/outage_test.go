package isolation

import (
	"context"
	"fmt"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/memory"
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
	var chans []memory.GuildChannel
	for _, list := range [][]*discordgo.Channel{g.Channels, g.Threads} {
		for _, c := range list {
			s := memory.GuildChannel{GuildID: g.ID, ChannelID: c.ID, ParentID: c.ParentID, Kind: int(c.Type),
				PrivateThread: c.Type == discordgo.ChannelTypeGuildPrivateThread, Overwrites: []memory.Overwrite{}}
			for _, ow := range c.PermissionOverwrites {
				s.Overwrites = append(s.Overwrites, memory.Overwrite{ID: ow.ID, Type: int(ow.Type), Allow: ow.Allow, Deny: ow.Deny})
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
	r := memory.GuildRoles{GuildID: g.ID, OwnerID: g.OwnerID, Roles: map[string]int64{}}
	for _, role := range g.Roles {
		r.Roles[role.ID] = role.Permissions
	}
	if err := store.SaveGuildRoles(ctx, r); err != nil {
		t.Fatal(err)
	}
}

// statusView is what /kioku status counts for member m in guild g (bot/status.go): a
// member who does not manage the server counts only memories of channels they may read, so
// that a save in a channel hidden from them does not move their numbers. While the guild is
// up the counts are exactly those; in an outage the bot may know less and count less, never
// more.
func (h *harness) statusView(m, g int, aud *memory.Audience, where string) {
	h.desc = fmt.Sprintf("%s views /kioku status %s", memberID(m), where)
	if serverEditor(g, m) {
		return // managers are shown the whole server's counts
	}
	got, err := h.store.Maintenance.GuildMemoryCountsWithin(h.ctx, guildID(g), aud)
	if err != nil {
		h.t.Fatal(err)
	}
	rows, err := h.db.QueryContext(h.ctx, `SELECT scope, deleted_at IS NOT NULL, channel_id FROM memories WHERE guild_id = ?`, guildID(g))
	if err != nil {
		h.t.Fatal(err)
	}
	var server, forgotten, personal int
	for rows.Next() {
		var scope, channel string
		var deleted bool
		if err := rows.Scan(&scope, &deleted, &channel); err != nil {
			h.t.Fatal(err)
		}
		if p, ok := placeOfChannel(channel); channel != "" && (!ok || !readersOf(p).has(m)) {
			continue
		}
		switch {
		case scope == string(memory.ScopeServer) && deleted:
			forgotten++
		case scope == string(memory.ScopeServer):
			server++
		case !deleted:
			personal++
		}
	}
	rows.Close()
	exact := h.outage[g] == guildUp
	if exact && (got.Server != server || got.Forgotten != forgotten || got.Personal != personal) ||
		got.Server > server || got.Forgotten > forgotten || got.Personal > personal {
		h.fail("%s's /kioku status %s counts server %d, forgotten %d, personal %d; of what they may read there are %d, %d and %d",
			memberID(m), where, got.Server, got.Forgotten, got.Personal, server, forgotten, personal)
	}
}
