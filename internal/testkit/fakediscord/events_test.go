package fakediscord_test

import (
	"slices"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
)

// TestDispatchMessageAndGuildEvents: deletes, bulk deletes, edits (whole and partial) and
// guild removals reach a real session's handlers decoded as discordgo's events.
func TestDispatchMessageAndGuildEvents(t *testing.T) {
	t.Parallel()
	deletes := make(chan *discordgo.MessageDelete, 4)
	bulks := make(chan *discordgo.MessageDeleteBulk, 4)
	updates := make(chan *discordgo.MessageUpdate, 4)
	guildDeletes := make(chan *discordgo.GuildDelete, 4)
	h := newHarness(t, func(f *fakediscord.Fake) {
		f.SetGuild(&discordgo.Guild{ID: "10", Name: "ten"})
	})
	h.session.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageDelete) { deletes <- e })
	h.session.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageDeleteBulk) { bulks <- e })
	h.session.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageUpdate) { updates <- e })
	h.session.AddHandler(func(_ *discordgo.Session, e *discordgo.GuildDelete) { guildDeletes <- e })
	receive(t, h.guilds) // the GUILD_CREATE of identify
	alice := h.fake.NewUser("alice")

	m := h.fake.GuildMessage("10", "11", alice, "my code is 4412")
	if err := h.fake.DispatchMessage(m); err != nil {
		t.Fatal(err)
	}
	receive(t, h.messages)

	edit := *m
	edit.Content = "my code is secret"
	if err := h.fake.DispatchMessageUpdate(&edit); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, updates); got.ID != m.ID || got.Content != "my code is secret" || got.Author == nil {
		t.Errorf("MESSAGE_UPDATE = %+v", got.Message)
	}
	if stored, _ := h.fake.StoredMessage(m.ID); stored.Content != "my code is secret" {
		t.Errorf("stored message after the edit = %q", stored.Content)
	}
	partial := &discordgo.Message{ID: m.ID, ChannelID: "11", GuildID: "10"}
	if err := h.fake.DispatchMessageUpdate(partial); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, updates); got.Content != "" || got.Author != nil {
		t.Errorf("partial MESSAGE_UPDATE = %+v", got.Message)
	}

	if err := h.fake.DispatchMessageDelete("10", "11", m.ID); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, deletes); got.ID != m.ID || got.ChannelID != "11" || got.GuildID != "10" || got.Author != nil {
		t.Errorf("MESSAGE_DELETE = %+v", got.Message)
	}
	if _, ok := h.fake.StoredMessage(m.ID); ok {
		t.Error("the deleted message is still stored")
	}
	if err := h.fake.DispatchMessageDelete("", "20", "30"); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, deletes); got.GuildID != "" || got.ChannelID != "20" {
		t.Errorf("DM MESSAGE_DELETE = %+v", got.Message)
	}
	if err := h.fake.DispatchMessageDeleteBulk("10", "11", "1", "2", "3"); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, bulks); !slices.Equal(got.Messages, []string{"1", "2", "3"}) || got.ChannelID != "11" || got.GuildID != "10" {
		t.Errorf("MESSAGE_DELETE_BULK = %+v", got)
	}

	if err := h.fake.DispatchGuildDelete("10", true); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, guildDeletes); got.ID != "10" || !got.Unavailable {
		t.Errorf("outage GUILD_DELETE = %+v", got.Guild)
	}
	if err := h.fake.DispatchGuildDelete("10", false); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, guildDeletes); got.ID != "10" || got.Unavailable {
		t.Errorf("removal GUILD_DELETE = %+v", got.Guild)
	}
	if err := h.fake.DispatchGuildCreate("10"); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, h.guilds); got.ID != "10" || got.Name != "ten" {
		t.Errorf("GUILD_CREATE = %+v", got.Guild)
	}
	if err := h.fake.DispatchGuildCreate("404"); err == nil {
		t.Error("GUILD_CREATE of an unknown guild was sent")
	}
}
