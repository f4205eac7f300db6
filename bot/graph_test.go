package bot_test

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestMemoryShowListsEntities: /memory show lists the entities a memory mentions, by name
// only (no kinds, no user ids), and nothing for a memory that mentions none.
func TestMemoryShowListsEntities(t *testing.T) {
	store := testkit.MustOpenStore(t)
	tb := newTestBotOn(t, store)
	const guild, channel = "700", "701"
	alice := tb.fake.NewUser("alice")
	named := testkit.MustRemember(t, store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild,
		Content:    "Kuro says Kate hosts the Valheim server, details in #events",
		Provenance: memory.Provenance{AuthorID: "770000000000000077", Author: "Kuro"}})
	plain := testkit.MustRemember(t, store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: "the ferry leaves at noon"})
	elsewhere := testkit.MustRemember(t, store, memory.Memory{Scope: memory.ScopeServer, GuildID: "900", Content: "Bill plays Factorio"})

	ask := func(id int64) *discordgo.Interaction {
		data := discordgo.ApplicationCommandInteractionData{Name: "memory", Options: []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: "show", Type: discordgo.ApplicationCommandOptionSubCommand, Options: []*discordgo.ApplicationCommandInteractionDataOption{
				{Name: "id", Type: discordgo.ApplicationCommandOptionInteger, Value: float64(id)},
				{Name: "scope", Type: discordgo.ApplicationCommandOptionString, Value: "server"}}}}}
		return tb.fake.SlashCommand(guild, channel, alice, 0, data)
	}
	show := func(id int64) *discordgo.MessageEmbed {
		t.Helper()
		msg, _ := tb.interact(t, ask(id))
		if len(msg.Embeds) != 1 {
			t.Fatalf("/memory show #%d answered %+v", id, msg)
		}
		return msg.Embeds[0]
	}
	mentions := func(e *discordgo.MessageEmbed) (string, bool) {
		for _, f := range e.Fields {
			if f.Name == "Mentions" {
				return f.Value, true
			}
		}
		return "", false
	}
	if got, ok := mentions(show(named.ID)); !ok || got != "#events, Katherine, Kuro, Valheim" {
		t.Errorf("Mentions field %q (present %v), want the four names", got, ok)
	} else if strings.Contains(got, "77") || strings.Contains(got, "person") {
		t.Errorf("the field shows more than names: %q", got)
	}
	if got, ok := mentions(show(plain.ID)); ok {
		t.Errorf("a memory without entities shows %q", got)
	}
	// Another guild's memory is not found here, so none of its entities are listed either.
	msg, _ := tb.interact(t, ask(elsewhere.ID))
	if len(msg.Embeds) != 0 || !strings.Contains(msg.Content, "There is no memory") || strings.Contains(msg.Content, "Bill") {
		t.Errorf("another guild's memory from this one: %q %+v", msg.Content, msg.Embeds)
	}
}

// TestMemoryShowListsMentionedWith: /memory show lists, beside the memory's entities, the
// entities other memories mention with them, as "Name (n)" by how many memories. A
// member who cannot view #mods sees neither an entity known only from #mods nor #mods'
// memories in a count, and no field at all where only #mods links anything; a moderator
// sees both.
func TestMemoryShowListsMentionedWith(t *testing.T) {
	tb := newTestBot(t)
	const guild, general, mods, modRole = "710", "711", "712", "713"
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
	in := func(channel, content string) *memory.Memory {
		return testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
			Provenance: memory.Provenance{ChannelID: channel}})
	}
	shown := in(general, "Kate hosts the Valheim server")
	in(general, "Kate and Bill plan the Project Falcon launch")
	in(mods, "Bill and Kate plan the Osaka trip")
	ramen := in(general, "Osaka has good ramen")

	show := func(id int64, roles []string) *discordgo.MessageEmbed {
		t.Helper()
		i := tb.fake.SlashCommand(guild, general, tb.fake.NewUser("viewer"), 0, memorySub("show", strOpt("scope", "server"), intOpt("id", id)))
		i.Member.Roles = roles
		msg, _ := tb.interact(t, i)
		if len(msg.Embeds) != 1 {
			t.Fatalf("/memory show #%d answered %+v", id, msg)
		}
		return msg.Embeds[0]
	}
	field := func(e *discordgo.MessageEmbed, name string) (string, bool) {
		for _, f := range e.Fields {
			if f.Name == name {
				return f.Value, true
			}
		}
		return "", false
	}

	member := show(shown.ID, []string{})
	if got, ok := field(member, "Mentioned with"); !ok || got != "Falcon (1), William (1)" {
		t.Errorf("a #general member's Mentioned with field %q (present %v), want Falcon (1), William (1)", got, ok)
	}
	for _, f := range member.Fields {
		if strings.Contains(f.Value, "Osaka") || strings.Contains(f.Value, "(2)") {
			t.Errorf("a #general member sees #mods through field %s: %q", f.Name, f.Value)
		}
	}
	if got, ok := field(show(shown.ID, []string{modRole}), "Mentioned with"); got != "William (2), Falcon (1), Osaka (1)" {
		t.Errorf("a moderator's Mentioned with field %q (present %v), want William (2), Falcon (1), Osaka (1)", got, ok)
	}

	// Osaka goes with Kate and Bill only in #mods.
	if got, ok := field(show(ramen.ID, []string{}), "Mentioned with"); ok {
		t.Errorf("a #general member sees what #mods mentions with Osaka: %q", got)
	}
	if got, _ := field(show(ramen.ID, []string{modRole}), "Mentioned with"); got != "Katherine (1), William (1)" {
		t.Errorf("a moderator's Mentioned with field for Osaka %q, want Katherine (1), William (1)", got)
	}
}
