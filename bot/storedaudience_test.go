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

// TestStoredMemberAccess: from the stored rules and a member's roles alone, the access the
// web dashboard gives: the channels those roles view (a role-gated one only with the role,
// never a private thread), manager with Manage Server or as the owner, editor with the
// editor role, and nothing of a guild whose roles were never stored or cannot be read.
func TestStoredMemberAccess(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const editorRole = "role-editor"
	hide := memory.Overwrite{ID: "g1", Type: int(discordgo.PermissionOverwriteTypeRole), Deny: view}
	allowMods := memory.Overwrite{ID: roleMod, Type: int(discordgo.PermissionOverwriteTypeRole), Allow: view}
	if err := s.Channels.SaveGuildRoles(ctx, memory.GuildRoles{GuildID: "g1", OwnerID: gOwner,
		Roles: map[string]int64{"g1": view | send, roleMod: view, "role-admin": discordgo.PermissionManageGuild, editorRole: 0}}); err != nil {
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
		guild, user     string
		roles           []string
		ok              bool
		want            []string
		manager, editor bool
	}{
		"Member":        {"g1", "u1", nil, true, []string{"general", "thread"}, false, false},
		"Moderator":     {"g1", "u1", []string{roleMod}, true, []string{"general", "mods", "thread"}, false, false},
		"Editor":        {"g1", "u1", []string{editorRole}, true, []string{"general", "thread"}, false, true},
		"Manager":       {"g1", "u1", []string{"role-admin"}, true, []string{"general", "thread"}, true, true},
		"Owner":         {"g1", gOwner, nil, true, []string{"general", "mods", "thread"}, true, true},
		"UnknownGuild":  {"g2", "u1", nil, false, nil, false, false},
		"NoGuildStored": {"g3", "u1", nil, false, nil, false, false},
	} {
		t.Run(name, func(t *testing.T) {
			a, ok, err := bot.StoredMemberAccess(ctx, s.Channels, c.guild, c.user, c.roles, editorRole)
			if err != nil || ok != c.ok {
				t.Fatalf("ok %v, err %v; want ok %v", ok, err, c.ok)
			}
			if got := slices.Sorted(maps.Keys(a.Channels)); !slices.Equal(got, c.want) {
				t.Errorf("channels %v, want %v", got, c.want)
			}
			if a.Manager != c.manager || a.Editor != c.editor {
				t.Errorf("manager %v editor %v, want %v %v", a.Manager, a.Editor, c.manager, c.editor)
			}
		})
	}
	t.Run("ErrUnreadableRules", func(t *testing.T) {
		s.Close()
		a, ok, err := bot.StoredMemberAccess(ctx, s.Channels, "g1", "u1", nil, "")
		if err == nil || ok || len(a.Channels) != 0 {
			t.Fatalf("access %+v ok %v, error %v; want no access and the error", a, ok, err)
		}
	})
}
