package bot

import (
	"slices"

	"github.com/bwmarrin/discordgo"
)

// Channel-aware memory (SPEC §2): a memory learned in channel X may be used in a reply in
// channel Y only if everyone who can view Y can also view X. This file decides that from a
// guild's roles and channel permission overwrites alone, without the member list (which
// needs a privileged intent): every answer is sound, so when it cannot be sure it says no.

// maxRoleClasses bounds the role combinations ViewersWithin enumerates (2^n). Roles that act
// alike on the two channels are merged first, so real guilds stay far below it; past it the
// answer is "no", which only keeps a memory out of a reply.
const maxRoleClasses = 12

// ChannelRule is what decides who can view one channel.
type ChannelRule struct {
	ID string
	// ParentID is a thread's channel (and a channel's category, which plays no part in
	// permissions: Discord copies a synced category's overwrites onto the channel).
	ParentID string
	Kind     discordgo.ChannelType
	// Overwrites are the channel's permission overwrites; threads have none.
	Overwrites []*discordgo.PermissionOverwrite
	// OwnerID is a thread's creator, who is always one of its members.
	OwnerID string
}

func (c *ChannelRule) isThread() bool {
	switch c.Kind {
	case discordgo.ChannelTypeGuildPublicThread, discordgo.ChannelTypeGuildPrivateThread, discordgo.ChannelTypeGuildNewsThread:
		return true
	}
	return false
}

func (c *ChannelRule) privateThread() bool { return c.Kind == discordgo.ChannelTypeGuildPrivateThread }

// readMask is what a member needs to read a channel's messages: View Channel, and for the
// text chat of voice and stage channels Connect as well. It is used for the channel a
// memory was learned in, where needing more can only shrink its viewers.
func (c *ChannelRule) readMask() int64 {
	if c.Kind == discordgo.ChannelTypeGuildVoice || c.Kind == discordgo.ChannelTypeGuildStageVoice {
		return discordgo.PermissionViewChannel | discordgo.PermissionVoiceConnect
	}
	return discordgo.PermissionViewChannel
}

// GuildRules is a snapshot of one guild's roles and channels. Rules without the guild's
// roles (RolesKnown false: a guild the process never received, or one in an outage) decide
// nothing: nobody is known to view anything, and "everyone who views y views x" would hold
// vacuously. So unknown means not visible: such rules only ever allow a channel for itself.
type GuildRules struct {
	GuildID string
	OwnerID string
	// Roles maps role ids to their permissions; the @everyone role's id is the guild's.
	Roles map[string]int64
	// Channels are the guild's channels and threads by id, deleted ones included with the
	// overwrites they last had.
	Channels map[string]*ChannelRule
}

// RolesKnown reports whether the rules hold the guild's roles: at least its @everyone
// role, whose id is the guild's.
func (g *GuildRules) RolesKnown() bool {
	_, ok := g.Roles[g.GuildID]
	return ok
}

// Permissions computes a member's permissions in ch the way Discord does: the guild owner
// and Administrator have everything; otherwise the union of the @everyone role and the
// member's roles, then the @everyone overwrite, then the role overwrites (all denies, then
// all allows), then the member's own overwrite. ch nil gives the guild-level permissions.
func (g *GuildRules) Permissions(ch *ChannelRule, roles []string, memberID string) int64 {
	if memberID != "" && memberID == g.OwnerID {
		return discordgo.PermissionAll
	}
	base := g.Roles[g.GuildID]
	for _, r := range roles {
		base |= g.Roles[r]
	}
	if base&discordgo.PermissionAdministrator != 0 {
		return discordgo.PermissionAll
	}
	if ch == nil {
		return base
	}
	for _, ow := range ch.Overwrites {
		if ow.Type == discordgo.PermissionOverwriteTypeRole && ow.ID == g.GuildID {
			base = base&^ow.Deny | ow.Allow
		}
	}
	var allow, deny int64
	for _, ow := range ch.Overwrites {
		if ow.Type == discordgo.PermissionOverwriteTypeRole && ow.ID != g.GuildID && slices.Contains(roles, ow.ID) {
			allow |= ow.Allow
			deny |= ow.Deny
		}
	}
	base = base&^deny | allow
	if memberID != "" {
		for _, ow := range ch.Overwrites {
			if ow.Type == discordgo.PermissionOverwriteTypeMember && ow.ID == memberID {
				base = base&^ow.Deny | ow.Allow
			}
		}
	}
	return base
}

// unit returns the channel whose overwrites decide who can view ch: a public thread is
// visible to whoever can view its parent. Private threads are answered by their own rules
// (see ViewersWithin and MemberCanView); nil when the channel or its parent is unknown.
func (g *GuildRules) unit(id string) *ChannelRule {
	ch := g.Channels[id]
	if ch == nil || !ch.isThread() {
		return ch
	}
	parent := g.Channels[ch.ParentID]
	if parent == nil || parent.isThread() {
		return nil
	}
	return parent
}

// MemberCanView reports whether the member with roles can read channel id. A private
// thread is readable only by its members, which kioku cannot list: postedIn says whether
// the member was seen posting in it (its creator counts), and they must still see the
// parent channel.
func (g *GuildRules) MemberCanView(id string, roles []string, memberID string, postedIn func(threadID string) bool) bool {
	ch := g.Channels[id]
	if ch == nil || !g.RolesKnown() {
		return false
	}
	if ch.privateThread() {
		if memberID == "" || (memberID != ch.OwnerID && (postedIn == nil || !postedIn(id))) {
			return false
		}
	}
	u := g.unit(id)
	if u == nil {
		return false
	}
	need := u.readMask()
	return g.Permissions(u, roles, memberID)&need == need
}

// FullyPublic reports whether every possible member of the guild can read channel id:
// @everyone may view it, and no role (short of Administrator) or member overwrite on it
// takes that away from anyone. A private thread never is.
func (g *GuildRules) FullyPublic(id string) bool {
	if ch := g.Channels[id]; ch == nil || ch.privateThread() || !g.RolesKnown() {
		return false
	}
	u := g.unit(id)
	if u == nil {
		return false
	}
	need := u.readMask()
	if g.Permissions(u, nil, "")&need != need {
		return false
	}
	for _, ow := range u.Overwrites {
		if ow.ID == g.GuildID || ow.Deny&need == 0 {
			continue
		}
		if ow.Type == discordgo.PermissionOverwriteTypeMember && ow.ID != g.OwnerID {
			return false
		}
		if ow.Type == discordgo.PermissionOverwriteTypeRole && g.Roles[ow.ID]&discordgo.PermissionAdministrator == 0 {
			return false
		}
	}
	return true
}

// ViewersWithin reports whether everyone who can view channel y can also view channel x,
// so that what was learned in x may be said in y. It holds when x is y, when x is fully
// public, and when y is a public thread of x (never, beyond x is y, without the guild's
// roles); otherwise every combination of the roles
// that matter to the two channels is tried, for a member without a member overwrite and
// for each member that has one. A private thread x is only within itself; a private
// thread y is treated as its parent, whose viewers include all of its members.
func (g *GuildRules) ViewersWithin(y, x string) bool {
	if x == y {
		return true
	}
	xc := g.Channels[x]
	if xc == nil || xc.privateThread() || !g.RolesKnown() {
		return false
	}
	if g.FullyPublic(x) {
		return true
	}
	xu, yu := g.unit(x), g.unit(y)
	if xu == nil || yu == nil {
		return false
	}
	if xu == yu {
		// Same parent channel, and x needs no more than y: a public thread and its
		// parent, or y a private thread of x.
		return true
	}
	xNeed, yNeed := xu.readMask(), int64(discordgo.PermissionViewChannel)

	// Members with their own overwrite on either channel, and "" for everyone else.
	members := []string{""}
	for _, ch := range []*ChannelRule{xu, yu} {
		for _, ow := range ch.Overwrites {
			if ow.Type == discordgo.PermissionOverwriteTypeMember && ow.ID != g.OwnerID && !slices.Contains(members, ow.ID) {
				members = append(members, ow.ID)
			}
		}
	}
	classes, ok := g.roleClasses(xu, yu, xNeed|yNeed)
	if !ok {
		return false
	}
	roles := make([]string, 0, len(classes))
	for _, m := range members {
		for set := 0; set < 1<<len(classes); set++ {
			roles = roles[:0]
			for i, r := range classes {
				if set&(1<<i) != 0 {
					roles = append(roles, r)
				}
			}
			if g.Permissions(yu, roles, m)&yNeed == yNeed && g.Permissions(xu, roles, m)&xNeed != xNeed {
				return false
			}
		}
	}
	return true
}

// roleClasses returns one representative role per way a role can act on channels a and b
// with respect to the permission bits in need: its own bits beyond @everyone's, and its
// overwrites on a and b. Holding two roles of one class is the same as holding one, and
// roles outside every class (no relevant bits, no overwrite) change nothing, so trying
// every subset of the representatives covers every member. Administrator roles are left
// out: their holders see everything. ok is false when there are too many classes.
func (g *GuildRules) roleClasses(a, b *ChannelRule, need int64) ([]string, bool) {
	type signature struct {
		base                         int64
		aAllow, aDeny, bAllow, bDeny int64
	}
	everyone := g.Roles[g.GuildID]
	if everyone&discordgo.PermissionAdministrator != 0 {
		return nil, true
	}
	ids := make([]string, 0, len(g.Roles))
	for id := range g.Roles {
		ids = append(ids, id)
	}
	for _, ch := range []*ChannelRule{a, b} {
		for _, ow := range ch.Overwrites {
			if ow.Type == discordgo.PermissionOverwriteTypeRole && !slices.Contains(ids, ow.ID) {
				ids = append(ids, ow.ID) // an overwrite of a role the snapshot does not know
			}
		}
	}
	slices.Sort(ids) // a stable representative per class
	seen := map[signature]bool{}
	var out []string
	for _, id := range ids {
		if id == g.GuildID || g.Roles[id]&discordgo.PermissionAdministrator != 0 {
			continue
		}
		sig := signature{base: g.Roles[id] & need &^ everyone}
		for _, ow := range a.Overwrites {
			if ow.Type == discordgo.PermissionOverwriteTypeRole && ow.ID == id {
				sig.aAllow, sig.aDeny = ow.Allow&need, ow.Deny&need
			}
		}
		for _, ow := range b.Overwrites {
			if ow.Type == discordgo.PermissionOverwriteTypeRole && ow.ID == id {
				sig.bAllow, sig.bDeny = ow.Allow&need, ow.Deny&need
			}
		}
		if sig == (signature{}) || seen[sig] {
			continue
		}
		seen[sig] = true
		out = append(out, id)
	}
	return out, len(out) <= maxRoleClasses
}

// ReplyAudience returns the channels of the guild whose memories may be used in a reply
// posted in channel y: those whose viewers include all of y's.
func (g *GuildRules) ReplyAudience(y string) map[string]bool {
	out := map[string]bool{y: true}
	for x := range g.Channels {
		if g.ViewersWithin(y, x) {
			out[x] = true
		}
	}
	return out
}

// PublicChannels returns the guild's channels every member can read.
func (g *GuildRules) PublicChannels() map[string]bool {
	out := map[string]bool{}
	for x := range g.Channels {
		if g.FullyPublic(x) {
			out[x] = true
		}
	}
	return out
}

// MemberAudience returns the channels of the guild the member with roles can read, for a
// reply only they see (a DM or an ephemeral answer). rolesKnown false means the member's
// roles were never seen: then only channels every member can read are certain.
func (g *GuildRules) MemberAudience(memberID string, roles []string, rolesKnown bool, postedIn func(string) bool) map[string]bool {
	if !rolesKnown {
		return g.PublicChannels()
	}
	out := map[string]bool{}
	for x := range g.Channels {
		if g.MemberCanView(x, roles, memberID, postedIn) {
			out[x] = true
		}
	}
	return out
}
