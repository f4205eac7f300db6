package isolation

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// The world: three guilds, five members (all in every guild, so every public channel is
// read by all five), their DMs. Who can read what is written down here as a plain table,
// independently of kioku's permission code, which the test holds to it.

const (
	numGuilds  = 3
	numMembers = 5
	// Per guild: a public channel, a private channel only the "inner" role (and an
	// Administrator) can view, and a public thread of the public channel.
	chPublic, chPrivate, chThread = 0, 1, 2
	chansPerGuild                 = 3
	numGuildPlaces                = numGuilds * chansPerGuild
	numPlaces                     = numGuildPlaces + numMembers // + one DM per member
)

// readers is a set of members, one bit each.
type readers uint8

const everyone readers = 1<<numMembers - 1

func (r readers) has(m int) bool { return r&(1<<m) != 0 }

// covers reports whether everyone in o is in r.
func (r readers) covers(o readers) bool { return r&o == o }

func (r readers) String() string {
	var parts []string
	for m := range numMembers {
		if r.has(m) {
			parts = append(parts, memberID(m))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// The role table. inner[g] are the members with the inner role in guild g; admin holds
// Administrator in guild 0 (and so sees its private channel without the inner role);
// moderator holds Manage Server in guild 1 (which does not let them view its private
// channel). Guild owners are outsiders, none of the five.
var (
	inner = [numGuilds][]int{{0, 1}, {1, 3}, {2, 4}}
	// fans have a role without any permission, so role sets differ beyond inner.
	fans           = [numGuilds][]int{{3, 4}, {2}, {0, 1, 3}}
	adminGuild     = 0
	adminMember    = 2
	moderatorGuild = 1
	moderatorMem   = 0
	// Two members share a display name: names must never decide whose memory a fact is.
	displayNames = [numMembers]string{"Alice", "Bob", "Chen", "Sam", "Sam"}
)

func memberID(m int) string       { return "7" + strconv.Itoa(1000+m) }
func guildID(g int) string        { return "8" + strconv.Itoa(1000+g) }
func channelID(g, c int) string   { return "9" + strconv.Itoa(1000+g*10+c) }
func dmChannelID(m int) string    { return "6" + strconv.Itoa(1000+m) }
func roleInner(g int) string      { return "5" + strconv.Itoa(1000+g*10) }
func roleFan(g int) string        { return "5" + strconv.Itoa(1001+g*10) }
func roleAdmin(g int) string      { return "5" + strconv.Itoa(1002+g*10) }
func roleModerator(g int) string  { return "5" + strconv.Itoa(1003+g*10) }
func guildOwner(g int) string     { return "4" + strconv.Itoa(1000+g) }
func guildPlace(g, c int) int     { return g*chansPerGuild + c }
func dmPlace(m int) int           { return numGuildPlaces + m }
func isDMPlace(p int) bool        { return p >= numGuildPlaces }
func placeGuild(p int) (int, int) { return p / chansPerGuild, p % chansPerGuild }

func contains(list []int, m int) bool {
	for _, x := range list {
		if x == m {
			return true
		}
	}
	return false
}

// canViewPrivate is the table's answer for guild g's private channel.
func canViewPrivate(g, m int) bool {
	return contains(inner[g], m) || (g == adminGuild && m == adminMember)
}

// serverEditor reports whether m may change guild g's server memory (Administrator or
// Manage Server).
func serverEditor(g, m int) bool {
	return (g == adminGuild && m == adminMember) || (g == moderatorGuild && m == moderatorMem)
}

// readersOf is who can read place p: a DM its one member; a thread its parent's readers.
func readersOf(p int) readers {
	if isDMPlace(p) {
		return 1 << (p - numGuildPlaces)
	}
	g, c := placeGuild(p)
	if c != chPrivate {
		return everyone
	}
	var r readers
	for m := range numMembers {
		if canViewPrivate(g, m) {
			r |= 1 << m
		}
	}
	return r
}

// placeName describes a place for failure messages.
func placeName(p int) string {
	if isDMPlace(p) {
		return fmt.Sprintf("DM of %s", memberID(p-numGuildPlaces))
	}
	g, c := placeGuild(p)
	return fmt.Sprintf("guild %s %s channel %s", guildID(g), [...]string{"public", "private", "thread"}[c], channelID(g, c))
}

// placeOfChannel maps a channel id back to its place.
func placeOfChannel(id string) (int, bool) {
	for p := range numPlaces {
		if placeChannel(p) == id {
			return p, true
		}
	}
	return 0, false
}

func placeChannel(p int) string {
	if isDMPlace(p) {
		return dmChannelID(p - numGuildPlaces)
	}
	g, c := placeGuild(p)
	return channelID(g, c)
}

func placeGuildID(p int) string {
	if isDMPlace(p) {
		return ""
	}
	g, _ := placeGuild(p)
	return guildID(g)
}

// rolesOf are member m's roles in guild g.
func rolesOf(g, m int) []string {
	roles := []string{}
	if contains(inner[g], m) {
		roles = append(roles, roleInner(g))
	}
	if contains(fans[g], m) {
		roles = append(roles, roleFan(g))
	}
	if g == adminGuild && m == adminMember {
		roles = append(roles, roleAdmin(g))
	}
	if g == moderatorGuild && m == moderatorMem {
		roles = append(roles, roleModerator(g))
	}
	return roles
}

// discordGuild builds guild g as discordgo's state holds it.
func discordGuild(g int) *discordgo.Guild {
	gid := guildID(g)
	everyoneRole := &discordgo.Role{ID: gid, Name: "@everyone",
		Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages | discordgo.PermissionReadMessageHistory}
	roles := []*discordgo.Role{everyoneRole,
		{ID: roleInner(g), Name: "inner"},
		{ID: roleFan(g), Name: "fan"},
		{ID: roleAdmin(g), Name: "admin", Permissions: discordgo.PermissionAdministrator},
		{ID: roleModerator(g), Name: "moderator", Permissions: discordgo.PermissionManageGuild},
	}
	public := &discordgo.Channel{ID: channelID(g, chPublic), GuildID: gid, Name: "general", Type: discordgo.ChannelTypeGuildText}
	private := &discordgo.Channel{ID: channelID(g, chPrivate), GuildID: gid, Name: "inner", Type: discordgo.ChannelTypeGuildText,
		PermissionOverwrites: []*discordgo.PermissionOverwrite{
			{ID: gid, Type: discordgo.PermissionOverwriteTypeRole, Deny: discordgo.PermissionViewChannel},
			{ID: roleInner(g), Type: discordgo.PermissionOverwriteTypeRole, Allow: discordgo.PermissionViewChannel},
		}}
	thread := &discordgo.Channel{ID: channelID(g, chThread), GuildID: gid, Name: "thread", ParentID: public.ID,
		Type: discordgo.ChannelTypeGuildPublicThread, OwnerID: memberID(0)}
	return &discordgo.Guild{ID: gid, Name: "guild " + gid, OwnerID: guildOwner(g), Roles: roles,
		Channels: []*discordgo.Channel{public, private}, Threads: []*discordgo.Channel{thread}}
}

// Tokens: every message carries one, "zq" + a base-32 counter + "x". Base 32 has no
// "x", so the end of a token is unambiguous and nothing else in any prompt looks like one.

func tokenFor(n int) string { return "zq" + strconv.FormatInt(int64(n), 32) + "x" }

// scanTokens calls fn for every token in s.
func scanTokens(s string, fn func(tok string)) {
	for {
		i := strings.Index(s, "zq")
		if i < 0 {
			return
		}
		s = s[i+2:]
		j := 0
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'v') {
			j++
		}
		if j > 0 && j < len(s) && s[j] == 'x' {
			fn("zq" + s[:j] + "x")
			s = s[j+1:]
		}
	}
}

func tokensIn(s string) []string {
	var out []string
	scanTokens(s, func(tok string) { out = append(out, tok) })
	return out
}
