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
