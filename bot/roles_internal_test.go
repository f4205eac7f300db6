package bot

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

const (
	rgGuild   = "700000000000000001"
	rgGeneral = "700000000000000010"
	rgMods    = "700000000000000011"
	rgModRole = "700000000000000091"
	rgMember  = "700000000000000301"
)

// rolesGuild is a guild with a public #general and a #mods only its moderators read.
func rolesGuild() *discordgo.Guild {
	return &discordgo.Guild{ID: rgGuild, Name: "roles", OwnerID: "700000000000000099",
		Roles: []*discordgo.Role{
			{ID: rgGuild, Name: "@everyone", Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages},
			{ID: rgModRole, Name: "mods"},
		},
		Channels: []*discordgo.Channel{
			{ID: rgGeneral, GuildID: rgGuild, Type: discordgo.ChannelTypeGuildText, Name: "general"},
			{ID: rgMods, GuildID: rgGuild, Type: discordgo.ChannelTypeGuildText, Name: "mods",
				PermissionOverwrites: []*discordgo.PermissionOverwrite{
					{ID: rgGuild, Type: discordgo.PermissionOverwriteTypeRole, Deny: discordgo.PermissionViewChannel},
					{ID: rgModRole, Type: discordgo.PermissionOverwriteTypeRole, Allow: discordgo.PermissionViewChannel},
				}},
		}}
}

// testClock is a clock tests move by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// rolesBot is a bot on store whose REST calls go to fake; its state holds the guilds given.
func rolesBot(t *testing.T, store *ltm.Store, fake *fakediscord.Fake, clock *testClock, guilds ...*discordgo.Guild) *Bot {
	t.Helper()
	s, err := NewSession("fake-bot-token", fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	s.State.User = fake.BotUser()
	s.State.TrackChannels, s.State.TrackThreads, s.State.TrackRoles = true, true, true
	for _, g := range guilds {
		if err := s.State.GuildAdd(g); err != nil {
			t.Fatal(err)
		}
	}
	short, err := stm.New(stm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Session: s, STM: short, Now: clock.Now,
		Turner: turnerOK{},
		Store: Store{Memories: store.Memories, Review: store.Review, Duplicates: store.Duplicates, Recall: store.Recall, Facts: store.Facts, Jobs: store.Jobs,
			Transcripts: store.Transcripts, Settings: store.Settings, Confirmations: store.Confirmations,
			Transfer: store.Transfer, Channels: store.Channels, Guilds: store.Guilds, Maintenance: store.Health,
			Now: store.Now, RecoverWindow: store.RecoverWindow, Graph: store.Graph}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type turnerOK struct{}

func (turnerOK) Turn(context.Context, chat.Request) (chat.Reply, error) {
	return chat.Reply{Text: "ok"}, nil
}

func channelsOf(a *memory.Audience) []string { return slices.Sorted(maps.Keys(a.Channels)) }

// TestAudienceFromStoredRoles: a process whose state does not hold the guild (a shard
// another process runs, an outage, the window after a restart) decides from the roles and
// channels the owning process stored, exactly as it does; without stored roles it allows a
// channel for itself only and says the rules are unknown.
func TestAudienceFromStoredRoles(t *testing.T) {
	ctx := context.Background()
	store := testkit.MustOpenStore(t)
	fake := fakediscord.New(t)
	clock := &testClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	owner := rolesBot(t, store, fake, clock, rolesGuild())
	owner.channelEvs.onGuildCreate(owner.session, &discordgo.GuildCreate{Guild: rolesGuild()})

	other := rolesBot(t, store, fake, clock)
	unavailable := rolesBot(t, store, fake, clock, &discordgo.Guild{ID: rgGuild, Unavailable: true})
	for _, y := range []string{rgGeneral, rgMods} {
		want := owner.ReplyAudience(ctx, rgGuild, y)
		for name, b := range map[string]*Bot{"another process": other, "an unavailable guild": unavailable} {
			got := b.ReplyAudience(ctx, rgGuild, y)
			if !slices.Equal(channelsOf(got), channelsOf(want)) || got.RulesUnknown || want.RulesUnknown {
				t.Errorf("%s: audience of %s = %v (unknown %v), the owning process's %v (unknown %v)",
					name, y, channelsOf(got), got.RulesUnknown, channelsOf(want), want.RulesUnknown)
			}
			mod := b.MemberAudience(ctx, rgMember, rgGuild, rgGeneral, []string{rgModRole})
			if wantMod := owner.MemberAudience(ctx, rgMember, rgGuild, rgGeneral, []string{rgModRole}); !slices.Equal(channelsOf(mod), channelsOf(wantMod)) {
				t.Errorf("%s: a moderator's audience %v, the owning process's %v", name, channelsOf(mod), channelsOf(wantMod))
			}
		}
	}
	if general := other.ReplyAudience(ctx, rgGuild, rgGeneral); general.Channels[rgMods] {
		t.Errorf("#mods reaches #general from stored rules: %v", channelsOf(general))
	}
	if mods := other.ReplyAudience(ctx, rgGuild, rgMods); !mods.Channels[rgGeneral] {
		t.Errorf("#general does not reach #mods from stored rules: %v", channelsOf(mods))
	}

	t.Run("RolesNotStored", func(t *testing.T) {
		bare := testkit.MustOpenStore(t)
		// The channels are stored (an older kioku kept them), the roles are not.
		var chans []memory.GuildChannel
		for _, c := range rolesGuild().Channels {
			chans = append(chans, storedOf(rgGuild, c))
		}
		if err := bare.Channels.SaveGuildChannels(ctx, chans); err != nil {
			t.Fatal(err)
		}
		b := rolesBot(t, bare, fake, clock)
		for _, y := range []string{rgGeneral, rgMods} {
			if got := b.ReplyAudience(ctx, rgGuild, y); !slices.Equal(channelsOf(got), []string{y}) || !got.RulesUnknown {
				t.Errorf("audience of %s without roles = %v (unknown %v), want only itself, unknown", y, channelsOf(got), got.RulesUnknown)
			}
		}
		if got := b.MemberAudience(ctx, rgMember, rgGuild, rgGeneral, []string{rgModRole}); !slices.Equal(channelsOf(got), []string{rgGeneral}) {
			t.Errorf("a moderator's audience without roles = %v, want only where they ask", channelsOf(got))
		}
		if got := b.MemberAudience(ctx, rgMember, "", "dm", nil); len(got.Channels) != 0 {
			t.Errorf("a DM audience without roles = %v", channelsOf(got))
		}
	})

	t.Run("RoleEventsKeepTheStoreCurrent", func(t *testing.T) {
		// A role update: @everyone loses View, so #general is no longer everyone's.
		g := rolesGuild()
		g.Roles[0].Permissions = discordgo.PermissionSendMessages
		if err := owner.session.State.RoleAdd(rgGuild, g.Roles[0]); err != nil {
			t.Fatal(err)
		}
		owner.channelEvs.onRoleUpdate(owner.session, &discordgo.GuildRoleUpdate{GuildRole: &discordgo.GuildRole{GuildID: rgGuild, Role: g.Roles[0]}})
		stored, ok, err := store.Channels.GuildRoles(ctx, rgGuild)
		if err != nil || !ok || stored.Roles[rgGuild] != discordgo.PermissionSendMessages || stored.OwnerID != g.OwnerID {
			t.Fatalf("stored roles after the update: %+v %v %v", stored, ok, err)
		}
		if got, want := other.ReplyAudience(ctx, rgGuild, rgGeneral), owner.ReplyAudience(ctx, rgGuild, rgGeneral); !slices.Equal(channelsOf(got), channelsOf(want)) {
			t.Errorf("after a role update: %v, the owning process's %v", channelsOf(got), channelsOf(want))
		}
	})
}

// TestStaleMemberRolesFetchedAgain: a DM answer relies on a member's last seen roles only
// while they are younger than memberRolesMaxAge; past it they are fetched again, so a
// demoted moderator loses #mods; the fetched roles are the cache of the next answers; a
// member who left sees nothing of the guild; a failed fetch leaves only what every member
// can read.
func TestStaleMemberRolesFetchedAgain(t *testing.T) {
	ctx := context.Background()
	store := testkit.MustOpenStore(t)
	fake := fakediscord.New(t)
	fake.SetGuild(rolesGuild())
	clock := &testClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	b := rolesBot(t, store, fake, clock, rolesGuild())
	mod := &discordgo.User{ID: rgMember, Username: "mod"}
	fake.SetMember(rgGuild, &discordgo.Member{User: mod, Roles: []string{rgModRole}})
	// The moderator speaks in #general: their roles, as the message carries them.
	b.visibility.observe(&discordgo.Message{ID: "1", GuildID: rgGuild, ChannelID: rgGeneral, Author: mod,
		Member: &discordgo.Member{Roles: []string{rgModRole}}})
	memberFetches := func() int {
		n := 0
		for _, r := range fake.Requests() {
			if r.Method == http.MethodGet && strings.HasPrefix(r.Path, "/guilds/"+rgGuild+"/members/") {
				n++
			}
		}
		return n
	}
	dm := func() *memory.Audience { return b.MemberAudience(ctx, rgMember, "", "dm", nil) }

	if got := dm(); !got.Channels[rgMods] || !got.Channels[rgGeneral] || memberFetches() != 0 {
		t.Fatalf("fresh roles: DM audience %v after %d fetches, want #mods without a fetch", channelsOf(got), memberFetches())
	}
	// Demoted; kioku has no member events, so it cannot know yet.
	fake.SetMember(rgGuild, &discordgo.Member{User: mod, Roles: []string{}})
	clock.Advance(memberRolesMaxAge - time.Second)
	if got := dm(); !got.Channels[rgMods] || memberFetches() != 0 {
		t.Fatalf("roles within the bound: %v after %d fetches", channelsOf(got), memberFetches())
	}
	clock.Advance(2 * time.Second)
	if got := dm(); got.Channels[rgMods] || !got.Channels[rgGeneral] || memberFetches() != 1 {
		t.Fatalf("stale roles: DM audience %v after %d fetches, want #general only after one fetch", channelsOf(got), memberFetches())
	}
	for range 5 {
		dm()
	}
	if n := memberFetches(); n != 1 {
		t.Errorf("a storm of DMs fetched the roles %d times, want once per bound", n)
	}

	t.Run("InteractionRolesAreFresh", func(t *testing.T) {
		// Promoted again: an interaction carries the roles, and its answer uses them.
		got := b.MemberAudience(ctx, rgMember, rgGuild, rgGeneral, []string{rgModRole})
		if !got.Channels[rgMods] {
			t.Errorf("an interaction's own roles: %v", channelsOf(got))
		}
	})

	t.Run("MemberUpdateRefreshes", func(t *testing.T) {
		b.channelEvs.onMemberUpdate(b.session, &discordgo.GuildMemberUpdate{Member: &discordgo.Member{GuildID: rgGuild, User: mod,
			Roles: []string{rgModRole}}})
		if got := dm(); !got.Channels[rgMods] {
			t.Errorf("after a member update with the mods role: %v", channelsOf(got))
		}
		b.channelEvs.onMemberUpdate(b.session, &discordgo.GuildMemberUpdate{Member: &discordgo.Member{GuildID: rgGuild, User: mod}})
		if got := dm(); got.Channels[rgMods] || !got.Channels[rgGeneral] {
			t.Errorf("after a member update without roles: %v", channelsOf(got))
		}
	})

	t.Run("FailedFetchMeansUnknown", func(t *testing.T) {
		b.channels.noteRoles(rgGuild, rgMember, []string{rgModRole}, clock.Now())
		clock.Advance(memberRolesMaxAge + time.Second)
		before := memberFetches()
		fake.FailNext(1, func(r fakediscord.Request) bool { return strings.Contains(r.Path, "/members/") }, http.StatusInternalServerError, 0, "boom")
		if got := dm(); got.Channels[rgMods] || !got.Channels[rgGeneral] {
			t.Errorf("after a failed fetch: %v, want what every member reads", channelsOf(got))
		}
		dm()
		if n := memberFetches() - before; n != 1 {
			t.Errorf("%d fetches right after a failure, want 1", n)
		}
		clock.Advance(memberRolesRetry)
		fake.SetMember(rgGuild, &discordgo.Member{User: mod, Roles: []string{rgModRole}})
		if got := dm(); !got.Channels[rgMods] {
			t.Errorf("after the retry: %v", channelsOf(got))
		}
	})

	t.Run("MemberLeft", func(t *testing.T) {
		gone := &discordgo.User{ID: "700000000000000302", Username: "gone"}
		b.visibility.observe(&discordgo.Message{ID: "2", GuildID: rgGuild, ChannelID: rgGeneral, Author: gone,
			Member: &discordgo.Member{Roles: []string{rgModRole}}})
		clock.Advance(memberRolesMaxAge + time.Second)
		if got := b.MemberAudience(ctx, gone.ID, "", "dm", nil); len(got.Channels) != 0 {
			t.Errorf("a member who left: %v, want nothing of the guild", channelsOf(got))
		}
	})
}
