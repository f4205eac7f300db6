package main

import (
	"path/filepath"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
)

// TestRunWelcomesOnce: `kioku run` introduces itself in a new server's system channel, in
// the server's language, once: a restart on the same database, where Discord announces the
// server again, posts nothing. A server without a system channel gets nothing. The second
// start also joins a new server, whose welcome shows that GUILD_CREATEs were handled.
func TestRunWelcomesOnce(t *testing.T) {
	const (
		guildC, systemC = "100000000000000003", "100000000000000031"
		guildD, systemD = "100000000000000004", "100000000000000041"
	)
	db := filepath.Join(t.TempDir(), "kioku.db")
	env := map[string]string{"KIOKU_DB": db, "KIOKU_PIPELINE_MODE": "off"}
	withGuild := func(id, system string, locale discordgo.Locale) func(*fakediscord.Fake) {
		return func(f *fakediscord.Fake) {
			f.SetGuild(&discordgo.Guild{ID: id, Name: "guild " + id, OwnerID: "1", SystemChannelID: system, PreferredLocale: string(locale)})
			f.SetChannel(&discordgo.Channel{ID: system, GuildID: id, Type: discordgo.ChannelTypeGuildText, Name: "welcome"})
		}
	}

	t.Run("FirstStart", func(t *testing.T) {
		h := startBotWith(t, env, withGuild(guildC, systemC, discordgo.Japanese))
		if _, err := h.fake.WaitFor(h.ctx(), fakediscord.Match("POST", "/channels/"+systemC+"/messages")); err != nil {
			t.Fatalf("no welcome in the new server: %v", err)
		}
		msgs := h.fake.Messages(systemC)
		if len(msgs) != 1 || len(msgs[0].Embeds) != 1 || msgs[0].Embeds[0].Title != "こんにちは、kiokuです 👋" {
			t.Fatalf("welcome = %+v", msgs)
		}
		// guild A and B of the harness have no system channel: nothing else was posted.
		for _, r := range h.fake.Requests() {
			if r.Method == "POST" && r.Path != "/channels/"+systemC+"/messages" && len(r.Path) > 10 && r.Path[:10] == "/channels/" {
				t.Errorf("unexpected post %s", r.Path)
			}
		}
	})

	t.Run("Restart", func(t *testing.T) {
		// Checked after kioku stopped (cleanups run last-registered first, and the harness
		// registers its stop when it starts): Shutdown waits for the GUILD_CREATE handlers
		// in flight, so a late second welcome would be counted.
		var fake *fakediscord.Fake
		t.Cleanup(func() {
			if n := len(fake.Messages(systemC)); n != 0 {
				t.Errorf("the restart welcomed the known server again (%d messages)", n)
			}
			if msgs := fake.Messages(systemD); len(msgs) != 1 || msgs[0].Embeds[0].Title != "Hello, I'm kioku 👋" {
				t.Errorf("new server's welcome = %+v", msgs)
			}
		})
		h := startBotWith(t, env, withGuild(guildC, systemC, discordgo.Japanese), withGuild(guildD, systemD, discordgo.EnglishUS))
		fake = h.fake
		if _, err := h.fake.WaitFor(h.ctx(), fakediscord.Match("POST", "/channels/"+systemD+"/messages")); err != nil {
			t.Fatalf("no welcome in the server joined while down: %v", err)
		}
	})
}
