package bot_test

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// TestPublicAudience: from the stored rules alone, a member whose roles are unknown sees the
// channels every member of their guilds reads: not a role-gated channel, not a private
// thread, nothing of a guild whose roles were never stored nor of a guild they are not in.
// A guild whose rules cannot be read adds nothing, and says so.
func TestPublicAudience(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hide := memory.Overwrite{ID: "g1", Type: int(discordgo.PermissionOverwriteTypeRole), Deny: view}
	allowMods := memory.Overwrite{ID: roleMod, Type: int(discordgo.PermissionOverwriteTypeRole), Allow: view}
	if err := s.Channels.SaveGuildRoles(ctx, memory.GuildRoles{GuildID: "g1", OwnerID: gOwner,
		Roles: map[string]int64{"g1": view | send, roleMod: view}}); err != nil {
		t.Fatal(err)
	}
	err = s.Channels.SaveGuildChannels(ctx, []memory.GuildChannel{
		{GuildID: "g1", ChannelID: "general", Kind: int(discordgo.ChannelTypeGuildText), Overwrites: []memory.Overwrite{}},
		{GuildID: "g1", ChannelID: "mods", Kind: int(discordgo.ChannelTypeGuildText), Overwrites: []memory.Overwrite{hide, allowMods}},
		{GuildID: "g1", ChannelID: "thread", ParentID: "general", Kind: int(discordgo.ChannelTypeGuildPublicThread)},
		{GuildID: "g1", ChannelID: "secret-thread", ParentID: "general", Kind: int(discordgo.ChannelTypeGuildPrivateThread), PrivateThread: true},
		// A guild whose channels are stored but whose roles never were: unknown.
		{GuildID: "g2", ChannelID: "g2-general", Kind: int(discordgo.ChannelTypeGuildText), Overwrites: []memory.Overwrite{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		guilds []string
		want   []string
	}{
		"MemberOfBoth": {[]string{"g1", "g2"}, []string{"general", "thread"}},
		"MemberOfNone": {nil, nil},
		"OnlyUnknown":  {[]string{"g2"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			aud, err := bot.PublicAudience(ctx, s.Channels, c.guilds)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(aud.Channels)); !slices.Equal(got, c.want) {
				t.Errorf("audience %v, want %v", got, c.want)
			}
		})
	}
	t.Run("ErrUnreadableRules", func(t *testing.T) {
		s.Close()
		aud, err := bot.PublicAudience(ctx, s.Channels, []string{"g1"})
		if err == nil || aud == nil || len(aud.Channels) != 0 {
			t.Fatalf("audience %+v, error %v; want an empty audience and the error", aud, err)
		}
	})
}
