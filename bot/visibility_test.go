package bot_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
)

const (
	view    = discordgo.PermissionViewChannel
	send    = discordgo.PermissionSendMessages
	connect = discordgo.PermissionVoiceConnect
	admin   = discordgo.PermissionAdministrator

	gGuild     = "1"
	gOwner     = "99"
	roleMod    = "10"
	roleAdmin  = "11"
	roleMuted  = "12"
	roleVIP    = "13"
	memberVIP  = "500" // has a member overwrite on #secret and #mods-plus
	memberGone = "501" // denied #kicked by a member overwrite
	threadOwn  = "600"
)

func roleOW(id string, allow, deny int64) *discordgo.PermissionOverwrite {
	return &discordgo.PermissionOverwrite{ID: id, Type: discordgo.PermissionOverwriteTypeRole, Allow: allow, Deny: deny}
}

func memberOW(id string, allow, deny int64) *discordgo.PermissionOverwrite {
	return &discordgo.PermissionOverwrite{ID: id, Type: discordgo.PermissionOverwriteTypeMember, Allow: allow, Deny: deny}
}

func text(id string, ows ...*discordgo.PermissionOverwrite) *bot.ChannelRule {
	return &bot.ChannelRule{ID: id, Kind: discordgo.ChannelTypeGuildText, Overwrites: ows}
}

// testGuild is a community with a public #general, role-gated #mods, #mods2 and #staff, a
// member-only #secret, channels that deny one role or one member, a voice channel nobody
// may join, and threads.
func testGuild() *bot.GuildRules {
	hideFromEveryone := roleOW(gGuild, 0, view)
	chans := []*bot.ChannelRule{
		text("general"),
		text("mods", hideFromEveryone, roleOW(roleMod, view, 0)),
		text("mods2", hideFromEveryone, roleOW(roleMod, view, 0)),
		text("staff", hideFromEveryone, roleOW(roleMod, view, 0), roleOW(roleVIP, view, 0)),
		text("secret", hideFromEveryone, memberOW(memberVIP, view, 0)),
		text("noisy", roleOW(roleMuted, 0, view)),
		text("kicked", memberOW(memberGone, 0, view)),
		text("admins-denied", roleOW(roleAdmin, 0, view)),
		text("mods-plus", hideFromEveryone, roleOW(roleMod, view, 0), memberOW(memberVIP, view, 0)),
		text("muted-vip", roleOW(roleMuted, 0, view), roleOW(roleVIP, view, 0)),
		{ID: "voice", Kind: discordgo.ChannelTypeGuildVoice, Overwrites: []*discordgo.PermissionOverwrite{roleOW(gGuild, 0, connect)}},
		{ID: "thread-general", Kind: discordgo.ChannelTypeGuildPublicThread, ParentID: "general"},
		{ID: "thread-mods", Kind: discordgo.ChannelTypeGuildPublicThread, ParentID: "mods"},
		{ID: "private-mods", Kind: discordgo.ChannelTypeGuildPrivateThread, ParentID: "mods", OwnerID: threadOwn},
		{ID: "private-general", Kind: discordgo.ChannelTypeGuildPrivateThread, ParentID: "general", OwnerID: threadOwn},
	}
	g := &bot.GuildRules{GuildID: gGuild, OwnerID: gOwner, Channels: map[string]*bot.ChannelRule{},
		Roles: map[string]int64{gGuild: view | send | connect, roleMod: view | send, roleAdmin: admin, roleMuted: 0, roleVIP: 0}}
	for _, c := range chans {
		g.Channels[c.ID] = c
	}
	return g
}

func TestViewersWithin(t *testing.T) {
	g := testGuild()
	cases := []struct {
		y, x string
		want bool
	}{
		{"general", "general", true},
		{"mods", "general", true},  // #general is public
		{"general", "mods", false}, // a #mods decision never reaches #general
		{"mods", "mods2", true},    // the same people
		{"mods2", "mods", true},
		{"mods", "staff", true}, // every moderator is staff
		{"staff", "mods", false},
		{"secret", "mods", false}, // the member allowed in #secret is no moderator
		{"mods", "secret", false},
		{"noisy", "general", true},
		{"general", "noisy", false}, // muted members read #general, not #noisy
		{"kicked", "general", true},
		{"general", "kicked", false}, // one member may not read #kicked
		{"general", "admins-denied", true},
		{"mods", "mods-plus", true},
		{"mods-plus", "mods", false}, // the member let into #mods-plus is no moderator
		{"general", "muted-vip", false},
		{"muted-vip", "general", true},
		{"general", "voice", false}, // nobody can connect, so nobody read its chat
		{"voice", "general", true},
		{"thread-general", "general", true},
		{"general", "thread-general", true},
		{"thread-mods", "mods", true},
		{"mods", "thread-mods", true},
		{"general", "thread-mods", false},
		{"private-mods", "private-mods", true},
		{"mods", "private-mods", false}, // private threads stay in themselves
		{"thread-mods", "private-mods", false},
		{"general", "private-general", false},
		{"private-mods", "mods", true}, // its members all read #mods
		{"private-mods", "general", true},
		{"private-mods", "staff", true},
		{"private-general", "mods", false},
		{"unknown", "general", true}, // public memories go anywhere
		{"unknown", "mods", false},
		{"general", "unknown", false},
	}
	for _, c := range cases {
		if got := g.ViewersWithin(c.y, c.x); got != c.want {
			t.Errorf("ViewersWithin(y=%s, x=%s) = %v, want %v", c.y, c.x, got, c.want)
		}
	}
}

func TestPermissions(t *testing.T) {
	g := testGuild()
	cases := []struct {
		name    string
		channel string
		roles   []string
		member  string
		want    bool
	}{
		{"MemberReadsGeneral", "general", nil, "7", true},
		{"MemberMissesMods", "mods", nil, "7", false},
		{"ModeratorReadsMods", "mods", []string{roleMod}, "7", true},
		{"AdministratorReadsAll", "secret", []string{roleAdmin}, "7", true},
		{"OwnerReadsAll", "secret", nil, gOwner, true},
		{"MemberOverwriteAllows", "secret", nil, memberVIP, true},
		{"MemberOverwriteDenies", "kicked", []string{roleMod}, memberGone, false},
		{"RoleDenyHides", "noisy", []string{roleMuted}, "7", false},
		{"RoleAllowBeatsRoleDeny", "muted-vip", []string{roleMuted, roleVIP}, "7", true},
		{"RoleDenyAlone", "muted-vip", []string{roleMuted}, "7", false},
		{"UnknownRoleIgnored", "mods", []string{"404"}, "7", false},
		{"PublicThreadFollowsParent", "thread-mods", []string{roleMod}, "7", true},
		{"PublicThreadHiddenWithParent", "thread-mods", nil, "7", false},
		{"VoiceNeedsConnect", "voice", nil, "7", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := g.MemberCanView(c.channel, c.roles, c.member, nil); got != c.want {
				t.Errorf("MemberCanView(%s, %v, %s) = %v, want %v", c.channel, c.roles, c.member, got, c.want)
			}
		})
	}
}

func TestMemberAudience(t *testing.T) {
	g := testGuild()
	poster := "700"
	posted := func(thread string) bool { return thread == "private-mods" }
	mod := g.MemberAudience(poster, []string{roleMod}, true, posted)
	for _, ch := range []string{"general", "mods", "staff", "thread-mods", "private-mods"} {
		if !mod[ch] {
			t.Errorf("a moderator who posted in private-mods cannot use %s", ch)
		}
	}
	for _, ch := range []string{"secret", "private-general", "voice"} {
		if mod[ch] {
			t.Errorf("a moderator's audience includes %s", ch)
		}
	}
	if owner := g.MemberAudience(threadOwn, []string{roleMod}, true, nil); !owner["private-mods"] {
		t.Error("a private thread's creator cannot use it")
	}
	if other := g.MemberAudience("701", []string{roleMod}, true, func(string) bool { return false }); other["private-mods"] {
		t.Error("a moderator never seen in a private thread can use it")
	}
	// Roles never seen: only what every member can read.
	unknown := g.MemberAudience("702", nil, false, nil)
	for ch := range unknown {
		if !g.FullyPublic(ch) {
			t.Errorf("unknown roles reach %s", ch)
		}
	}
	if !unknown["general"] || unknown["noisy"] || unknown["mods"] {
		t.Errorf("audience with unknown roles = %v", unknown)
	}
}

func TestReplyAudience(t *testing.T) {
	g := testGuild()
	general := g.ReplyAudience("general")
	if general["mods"] || general["private-general"] || !general["thread-general"] || !general["admins-denied"] {
		t.Errorf("#general audience = %v", general)
	}
	mods := g.ReplyAudience("mods")
	if !mods["mods"] || !mods["general"] || !mods["staff"] || !mods["thread-mods"] || mods["secret"] || mods["private-mods"] {
		t.Errorf("#mods audience = %v", mods)
	}
}

// TestViewersWithinTooManyRoles: past maxRoleClasses distinct roles the answer falls back to
// no, except where it needs no enumeration.
func TestViewersWithinTooManyRoles(t *testing.T) {
	g := testGuild()
	// Thirteen roles, each acting differently on the two channels (five bits of
	// behaviour: base view, allow and deny on each channel).
	a := []*discordgo.PermissionOverwrite{roleOW(gGuild, 0, view)}
	b := []*discordgo.PermissionOverwrite{roleOW(gGuild, 0, view)}
	on := func(i, bit int) int64 {
		if i&(1<<bit) != 0 {
			return view
		}
		return 0
	}
	for i := 1; i <= 13; i++ {
		id := strconv.Itoa(1000 + i)
		g.Roles[id] = on(i, 4)
		a = append(a, roleOW(id, on(i, 0), on(i, 1)))
		b = append(b, roleOW(id, on(i, 2), on(i, 3)))
	}
	g.Channels["crowd"] = text("crowd", a...)
	g.Channels["crowd2"] = text("crowd2", b...)
	if g.ViewersWithin("crowd", "crowd2") {
		t.Error("13 role classes were enumerated")
	}
	if !g.ViewersWithin("crowd", "crowd") || !g.ViewersWithin("crowd", "general") {
		t.Error("the quick answers need no enumeration")
	}
}

// TestViewersWithinIsSound checks ViewersWithin against brute force on random guilds: when
// it says yes, no member (any role set, with or without a member overwrite) can read y
// without reading x.
func TestViewersWithinIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	bits := []int64{0, view, connect, view | connect}
	pick := func() int64 { return bits[rng.IntN(len(bits))] }
	roles := []string{"r1", "r2", "r3", "r4"}
	members := []string{"m1", "m2", "m3"}
	yes := 0
	for range 300 {
		g := &bot.GuildRules{GuildID: gGuild, OwnerID: gOwner, Channels: map[string]*bot.ChannelRule{},
			Roles: map[string]int64{gGuild: pick()}}
		for _, r := range roles {
			g.Roles[r] = pick()
			if rng.IntN(10) == 0 {
				g.Roles[r] = admin
			}
		}
		for c := range 4 {
			ch := &bot.ChannelRule{ID: "c" + strconv.Itoa(c), Kind: discordgo.ChannelTypeGuildText}
			if rng.IntN(4) == 0 {
				ch.Kind = discordgo.ChannelTypeGuildVoice
			}
			if rng.IntN(2) == 0 {
				ch.Overwrites = append(ch.Overwrites, roleOW(gGuild, pick(), pick()))
			}
			for _, r := range roles {
				if rng.IntN(3) == 0 {
					ch.Overwrites = append(ch.Overwrites, roleOW(r, pick(), pick()))
				}
			}
			for _, m := range members {
				if rng.IntN(5) == 0 {
					ch.Overwrites = append(ch.Overwrites, memberOW(m, pick(), pick()))
				}
			}
			g.Channels[ch.ID] = ch
		}
		g.Channels["t"] = &bot.ChannelRule{ID: "t", Kind: discordgo.ChannelTypeGuildPublicThread, ParentID: "c0"}
		for y := range g.Channels {
			for x := range g.Channels {
				if !g.ViewersWithin(y, x) {
					continue
				}
				yes++
				for _, m := range append(members, "someone", gOwner) {
					for set := range 1 << len(roles) {
						var held []string
						for i, r := range roles {
							if set&(1<<i) != 0 {
								held = append(held, r)
							}
						}
						if g.MemberCanView(y, held, m, nil) && !g.MemberCanView(x, held, m, nil) {
							t.Fatalf("ViewersWithin(%s, %s) but member %s with %v reads %s and not %s\nroles %v\n%s: %+v\n%s: %+v",
								y, x, m, held, y, x, g.Roles, y, overwrites(g, y), x, overwrites(g, x))
						}
					}
				}
			}
		}
	}
	if yes < 1000 {
		t.Errorf("only %d pairs were within each other; the generator is too strict to test much", yes)
	}
}

func overwrites(g *bot.GuildRules, id string) []discordgo.PermissionOverwrite {
	var out []discordgo.PermissionOverwrite
	if c := g.Channels[id]; c != nil {
		for _, ow := range c.Overwrites {
			out = append(out, *ow)
		}
	}
	return out
}

// TestRulesWithoutRolesDecideNothing: without the guild's roles (a guild another process
// received, an outage, the window after a restart) nobody is known to view anything, so
// "everyone who views y views x" would hold vacuously. Unknown means not visible: a channel
// is allowed for itself only.
func TestRulesWithoutRolesDecideNothing(t *testing.T) {
	for name, drop := range map[string]func(g *bot.GuildRules){
		"NoRoles":        func(g *bot.GuildRules) { g.Roles = map[string]int64{} },
		"NilRoles":       func(g *bot.GuildRules) { g.Roles = nil },
		"NoEveryoneRole": func(g *bot.GuildRules) { delete(g.Roles, gGuild) },
	} {
		t.Run(name, func(t *testing.T) {
			g := testGuild()
			drop(g)
			if g.RolesKnown() {
				t.Error("rules without the @everyone role say the roles are known")
			}
			for _, c := range [][2]string{{"general", "mods"}, {"general", "staff"}, {"mods", "general"},
				{"thread-general", "general"}, {"general", "thread-general"}, {"private-mods", "mods"}} {
				if g.ViewersWithin(c[0], c[1]) {
					t.Errorf("ViewersWithin(y=%s, x=%s) without roles", c[0], c[1])
				}
			}
			if !g.ViewersWithin("mods", "mods") {
				t.Error("a channel is not within itself")
			}
			if g.FullyPublic("general") || len(g.PublicChannels()) != 0 {
				t.Errorf("public without roles: %v", g.PublicChannels())
			}
			if got := g.ReplyAudience("general"); len(got) != 1 || !got["general"] {
				t.Errorf("#general audience without roles = %v", got)
			}
			if got := g.MemberAudience("7", []string{roleMod}, true, nil); len(got) != 0 {
				t.Errorf("a moderator's audience without the guild's roles = %v", got)
			}
			if got := g.MemberAudience("7", nil, false, nil); len(got) != 0 {
				t.Errorf("an unknown member's audience without the guild's roles = %v", got)
			}
			if g.MemberCanView("mods", []string{roleMod}, "7", nil) {
				t.Error("a role overwrite alone lets a member view #mods")
			}
		})
	}
}
