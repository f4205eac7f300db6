package bot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// Item 11: "Remember this" on another member's message respects that member's privacy
// level, and a copy it makes records the author as subject and the message as evidence,
// so the author's forget-me can find it.
func TestRememberThisRespectsAuthorPrivacy(t *testing.T) {
	ctx := context.Background()
	tb := newTestBot(t)
	const guild, channel = "500", "501"
	alice := tb.fake.NewUser("alice")
	member := int64(discordgo.PermissionSendMessages)
	count := func() int {
		t.Helper()
		st, err := tb.store.Health.Counts(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return st.Memories
	}

	for _, level := range []memory.Privacy{memory.PrivacyPartial, memory.PrivacyFull} {
		t.Run("Err"+string(level), func(t *testing.T) {
			bob := tb.fake.NewUser("bob-" + string(level))
			if err := tb.store.Settings.SetPrivacy(ctx, bob.ID, level); err != nil {
				t.Fatal(err)
			}
			before := count()
			target := tb.fake.GuildMessage(guild, channel, bob, "Bob's birthday is on June 9th")
			for _, perms := range []int64{member, discordgo.PermissionManageGuild} {
				msg, ephemeral := tb.interact(t, tb.fake.MessageCommand(guild, channel, alice, perms, "Remember this", target))
				if !ephemeral || !strings.Contains(msg.Content, "asked me not to keep their words") {
					t.Fatalf("Remember this on a %s member's message answered %q (ephemeral %v)", level, msg.Content, ephemeral)
				}
				if strings.Contains(msg.Content, string(level)) {
					t.Errorf("the refusal names the author's privacy level: %q", msg.Content)
				}
			}
			if n := count(); n != before {
				t.Fatalf("%d memories after the refusals, want %d", n, before)
			}
		})
	}

	t.Run("OwnMessageAtPartial", func(t *testing.T) {
		dora := tb.fake.NewUser("dora")
		if err := tb.store.Settings.SetPrivacy(ctx, dora.ID, memory.PrivacyPartial); err != nil {
			t.Fatal(err)
		}
		target := tb.fake.GuildMessage(guild, channel, dora, "My locker code is blue door")
		msg, _ := tb.interact(t, tb.fake.MessageCommand(guild, channel, dora, member, "Remember this", target))
		if !strings.Contains(msg.Content, "Remembered (personal)") {
			t.Fatalf("a partial member saving their own message answered %q", msg.Content)
		}
	})

	t.Run("CopyRecordsSubjectAndEvidence", func(t *testing.T) {
		carol := tb.fake.NewUser("carol")
		target := tb.fake.GuildMessage(guild, channel, carol, "Carol's cat is called Miso")
		for _, tc := range []struct {
			perms int64
			owner memory.Owner
		}{
			{member, memory.PersonalOwner(alice.ID)},
			{discordgo.PermissionManageGuild, memory.ServerOwner(guild)},
		} {
			msg, _ := tb.interact(t, tb.fake.MessageCommand(guild, channel, alice, tc.perms, "Remember this", target))
			if !strings.Contains(msg.Content, "Remembered ("+string(tc.owner.Scope)+")") {
				t.Fatalf("Remember this answered %q", msg.Content)
			}
			mems, _, err := tb.store.Memories.List(ctx, tc.owner, memory.ListOptions{})
			if err != nil || len(mems) == 0 {
				t.Fatalf("no memory in %s: %v", tc.owner, err)
			}
			m := mems[0]
			if m.SubjectID != carol.ID || m.Provenance.AuthorID != carol.ID || m.Provenance.MessageID != target.ID {
				t.Fatalf("copy = subject %q, provenance %+v; want Carol %s and message %s", m.SubjectID, m.Provenance, carol.ID, target.ID)
			}
			ev, err := tb.store.Memories.Evidence(ctx, m.ID)
			if err != nil || len(ev) != 1 || ev[0] != (memory.MessageRef{MessageID: target.ID, AuthorID: carol.ID}) {
				t.Fatalf("evidence = %+v, %v", ev, err)
			}
		}
	})
}

// Item 14: the integrity check of /kioku status runs only for members with Manage Server;
// others get the status without it.
func TestStatusIntegrityCheckNeedsManageServer(t *testing.T) {
	tb := newTestBot(t)
	const guild, channel = "500", "501"
	user := tb.fake.NewUser("someone")
	status := discordgo.ApplicationCommandInteractionData{Name: "kioku", Options: []*discordgo.ApplicationCommandInteractionDataOption{
		{Name: "status", Type: discordgo.ApplicationCommandOptionSubCommand}}}
	field := func(perms int64) string {
		t.Helper()
		msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, channel, user, perms, status))
		if len(msg.Embeds) == 0 {
			t.Fatalf("status answered without an embed: %q", msg.Content)
		}
		for _, f := range msg.Embeds[0].Fields {
			if f.Name == "Database integrity" {
				return f.Value
			}
		}
		t.Fatalf("status has no integrity field: %+v", msg.Embeds[0].Fields)
		return ""
	}
	if v := field(discordgo.PermissionSendMessages); !strings.Contains(v, "not checked") {
		t.Errorf("a plain member's status integrity = %q, want not checked", v)
	}
	if v := field(discordgo.PermissionManageGuild); v != "ok" {
		t.Errorf("a manager's status integrity = %q, want ok", v)
	}
}

// The chat request says whether the author may edit server memory: from the editor role
// that came with the message, or Manage Server computed from the guild in state.
func TestMessageCarriesServerEditor(t *testing.T) {
	ctx := context.Background()
	tb := newTestBot(t)
	me := tb.fake.BotUser()
	const guild, channel, editorRole, modRole = "500", "501", "900", "901"
	if err := tb.store.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: guild, EditorRoleID: editorRole}); err != nil {
		t.Fatal(err)
	}
	if err := tb.session.State.GuildAdd(&discordgo.Guild{ID: guild, OwnerID: "1", Roles: []*discordgo.Role{
		{ID: guild, Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages},
		{ID: modRole, Permissions: discordgo.PermissionManageGuild},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := tb.session.State.ChannelAdd(&discordgo.Channel{ID: channel, GuildID: guild, Type: discordgo.ChannelTypeGuildText}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		roles []string
		want  bool
	}{
		{"PlainMember", nil, false},
		{"EditorRole", []string{editorRole}, true},
		{"ManageServerRole", []string{modRole}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tb.fake.GuildMessage(guild, channel, tb.fake.NewUser(tc.name), "<@"+me.ID+"> hi", me)
			m.Member.Roles = tc.roles
			tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: m})
			reqs := tb.turner.requests()
			if len(reqs) == 0 || reqs[len(reqs)-1].MessageID != m.ID {
				t.Fatalf("no turn for the message")
			}
			if got := reqs[len(reqs)-1].ServerEditor; got != tc.want {
				t.Fatalf("ServerEditor = %v, want %v", got, tc.want)
			}
		})
	}
}
