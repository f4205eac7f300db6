package bot_test

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestHistoryHidesOtherChannelsText: /memory history of a #general memory shows a member
// who can view only #general neither the #mods memory it may contradict nor the words of a
// pipeline proposal made in #mods, and, after a pipeline update from #mods moved it and an
// undo moved it back, neither side of those changes' #mods text; each such row is a line
// of what happened, by whom and when. A moderator, who can view #mods, sees every text.
func TestHistoryHidesOtherChannelsText(t *testing.T) {
	tb := newTestBot(t)
	const guild, general, mods, modRole = "610", "611", "612", "613"
	if err := tb.session.State.GuildAdd(&discordgo.Guild{ID: guild, OwnerID: "1", Roles: []*discordgo.Role{
		{ID: guild, Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages},
		{ID: modRole},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*discordgo.Channel{
		{ID: general, GuildID: guild, Type: discordgo.ChannelTypeGuildText},
		{ID: mods, GuildID: guild, Type: discordgo.ChannelTypeGuildText, PermissionOverwrites: []*discordgo.PermissionOverwrite{
			{ID: guild, Type: discordgo.PermissionOverwriteTypeRole, Deny: discordgo.PermissionViewChannel},
			{ID: modRole, Type: discordgo.PermissionOverwriteTypeRole, Allow: discordgo.PermissionViewChannel}}},
	} {
		if err := tb.session.State.ChannelAdd(c); err != nil {
			t.Fatal(err)
		}
	}
	g := memory.ServerOwner(guild)
	in := func(channel, content string) *memory.Memory {
		return testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
			Provenance: memory.Provenance{ChannelID: channel}})
	}
	raid := in(general, "Raid night is Tuesday")
	bans := in(mods, "Troll42 is on the secret ban list")
	if _, err := tb.store.Facts.ApplyPipelineBatch(t.Context(), memory.PipelineBatch{GuildID: guild, ChannelID: mods, CursorTo: 1,
		Proposals: []memory.Proposal{
			{Action: memory.ProposeUpdate, Owner: g, TargetID: raid.ID, Record: memory.ActionShadow,
				Memory: memory.Memory{Content: "Raid night is cancelled because of the mod vote"}, Reason: "the mod vote"},
			{Action: memory.ProposeAdd, Owner: g, Memory: memory.Memory{Content: "Raid night is open to Troll42",
				Provenance: memory.Provenance{ChannelID: general}}, Contradicts: []int64{bans.ID}, Reason: "new"},
		}}); err != nil {
		t.Fatal(err)
	}
	// The contradiction's rows are on bans and on the memory just added; point raid at it too.
	if _, err := tb.store.Facts.ApplyPipelineBatch(t.Context(), memory.PipelineBatch{GuildID: guild, ChannelID: general, CursorTo: 1,
		Proposals: []memory.Proposal{
			{Action: memory.ProposeUpdate, Owner: g, TargetID: raid.ID, MayEditServer: true,
				Memory: memory.Memory{Content: "Raid night is Tuesday for everyone"}, Reason: "said again", Contradicts: []int64{bans.ID}},
		}}); err != nil {
		t.Fatal(err)
	}
	// A pipeline update from #mods moves raid there; an undo moves it back to #general.
	if _, err := tb.store.Facts.ApplyPipelineBatch(t.Context(), memory.PipelineBatch{GuildID: guild, ChannelID: mods, CursorFrom: 1, CursorTo: 2,
		Proposals: []memory.Proposal{
			{Action: memory.ProposeUpdate, Owner: g, TargetID: raid.ID, MayEditServer: true,
				Memory: memory.Memory{Content: "Raid night is mods only, Troll42 is banned"}, Reason: "the mods decided"},
		}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.store.Memories.Undo(t.Context(), g, raid.ID, 0, "cli"); err != nil {
		t.Fatal(err)
	}

	history := func(roles []string) string {
		t.Helper()
		i := tb.fake.SlashCommand(guild, general, tb.fake.NewUser("viewer"), 0, memorySub("history", strOpt("scope", "server"),
			&discordgo.ApplicationCommandInteractionDataOption{Name: "id", Type: discordgo.ApplicationCommandOptionInteger, Value: float64(raid.ID)}))
		i.Member.Roles = roles
		msg, _ := tb.interact(t, i)
		if len(msg.Embeds) != 1 {
			t.Fatalf("history answered %+v", msg)
		}
		return msg.Embeds[0].Description
	}
	secrets := []string{"Troll42", "cancelled", "mod vote", "mods only", "the mods decided"}

	member := history([]string{})
	for _, s := range secrets {
		if strings.Contains(member, s) {
			t.Errorf("a #general member sees %q of #mods:\n%s", s, member)
		}
	}
	for _, want := range []string{"> Raid night is Tuesday\n", "**v1 shadow**", "**v3 update**", "**v4 update**",
		"can't view", "**v2 review_needed**", "**v2 update** by kioku's background pipeline", "(said again)", "> ~~Raid night is Tuesday~~\n> Raid night is Tuesday for everyone"} {
		if !strings.Contains(member, want) {
			t.Errorf("a #general member's history lacks %q:\n%s", want, member)
		}
	}

	mod := history([]string{modRole})
	for _, want := range []string{"not applied: Raid night is cancelled because of the mod vote",
		"may contradict: Troll42 is on the secret ban list", "> Raid night is mods only, Troll42 is banned", "(the mods decided)"} {
		if !strings.Contains(mod, want) {
			t.Errorf("a moderator's history lacks %q:\n%s", want, mod)
		}
	}
}
