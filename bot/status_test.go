package bot_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestStatusEmbed: /kioku status is one embed with the memory counts by scope and type,
// the queue, today's model budget, the last runs and the health, within Discord's limits;
// the payload is the golden one the README shows.
func TestStatusEmbed(t *testing.T) {
	tb := newTestBot(t, func(c *bot.Config) {
		c.BudgetToday = func(_ context.Context, guildID string) (int, int, error) {
			if guildID != "900" {
				t.Errorf("budget asked for guild %s", guildID)
			}
			return 37, 500, nil
		}
		// A fixed clock keeps the uptime, and so the golden payload, the same on every run.
		at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		c.Now = func() time.Time { return at }
	})
	// Connected to the gateway, as a running bot is.
	if err := tb.bot.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.bot.Shutdown(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tb.fake.WaitUntil(ctx, tb.bot.Connected); err != nil {
		t.Fatalf("not connected: %v", err)
	}
	const guild, channel = "900", "901"
	alice := tb.fake.NewUser("alice")
	for _, m := range []memory.Memory{
		{Scope: memory.ScopeServer, GuildID: guild, Type: memory.TypeFact, Content: "The raid is on Friday"},
		{Scope: memory.ScopeServer, GuildID: guild, Type: memory.TypeFact, Content: "The guild bank is run by Mika"},
		{Scope: memory.ScopeServer, GuildID: guild, Type: memory.TypeDecision, Content: "We use voice channel 2 for raids"},
		{Scope: memory.ScopePersonal, GuildID: guild, UserID: alice.ID, Type: memory.TypePreference, Content: "Alice likes tea"},
		// Another server's memory is not counted here.
		{Scope: memory.ScopeServer, GuildID: "999", Type: memory.TypeFact, Content: "Elsewhere"},
	} {
		testkit.MustRemember(t, tb.store, m)
	}

	// The channel is known, and not age-restricted: it learns.
	if err := tb.session.State.GuildAdd(&discordgo.Guild{ID: guild}); err != nil {
		t.Fatal(err)
	}
	if err := tb.session.State.ChannelAdd(&discordgo.Channel{ID: channel, GuildID: guild, Type: discordgo.ChannelTypeGuildText}); err != nil {
		t.Fatal(err)
	}

	i := tb.fake.SlashCommand(guild, channel, alice, discordgo.PermissionManageGuild, slashData("kioku", "status"))
	msg, _ := tb.interact(t, i)
	if len(msg.Embeds) != 1 {
		t.Fatalf("status = %+v, want one embed", msg)
	}
	e := msg.Embeds[0]
	fields := map[string]string{}
	for _, f := range e.Fields {
		fields[f.Name] = f.Value
	}
	for name, want := range map[string]string{
		"Server memory":               "3 live, 0 forgotten (recoverable)",
		"Personal memories made here": "1 (counts only; each stays its owner's)",
		"Server memory by type":       "fact 2 · decision 1",
		"Background queue":            "0 queued (0 due), 0 running, 0 failed",
		"Model budget today":          "37 of 500 model calls",
		"Last background runs":        "none yet",
		"Health":                      "healthy",
		"Learning in this channel":    "on",
	} {
		if fields[name] != want {
			t.Errorf("%s = %q, want %q", name, fields[name], want)
		}
	}
	if !strings.HasPrefix(fields["Health score"], "100/100") {
		t.Errorf("a manager's health score = %q", fields["Health score"])
	}
	if len(e.Fields) > 25 || bot.EmbedChars(e) > 6000 {
		t.Errorf("status breaks Discord's limits: %d fields, %d characters", len(e.Fields), bot.EmbedChars(e))
	}
	assertGolden(t, "status.en.json", callbackJSON(t, tb.fake, i))

	// A member sees the same counts without the health score; in Japanese when asked so.
	i = tb.fake.SlashCommand(guild, channel, alice, 0, slashData("kioku", "status"))
	i.Locale = discordgo.Japanese
	msg, _ = tb.interact(t, i)
	got := map[string]string{}
	for _, f := range msg.Embeds[0].Fields {
		got[f.Name] = f.Value
	}
	if got["サーバーの記憶"] != "有効 3件、忘却 0件(復元可能)" || got["種類別のサーバーの記憶"] != "事実 2 · 決定 1" {
		t.Errorf("Japanese status = %v", got)
	}
	if _, ok := got["健全性スコア"]; ok {
		t.Error("a member sees the health score")
	}
}

// TestFitEmbed: an embed past Discord's limits (too many fields, too many characters,
// over-long parts) is cut to fit, keeping its first fields.
func TestFitEmbed(t *testing.T) {
	e := &discordgo.MessageEmbed{Title: strings.Repeat("t", 300), Description: strings.Repeat("d", 5000)}
	for range 40 {
		e.Fields = append(e.Fields, &discordgo.MessageEmbedField{Name: strings.Repeat("n", 300), Value: strings.Repeat("v", 2000)})
	}
	e.Fields[0].Name = "first"
	got := bot.FitEmbed(e)
	if len(got.Fields) > 25 || bot.EmbedChars(got) > 6000 || len([]rune(got.Title)) > 256 || len([]rune(got.Description)) > 4096 {
		t.Fatalf("fitted embed: %d fields, %d characters, title %d, description %d", len(got.Fields), bot.EmbedChars(got),
			len([]rune(got.Title)), len([]rune(got.Description)))
	}
	for _, f := range got.Fields {
		if len([]rune(f.Value)) > 1024 || len([]rune(f.Name)) > 256 {
			t.Errorf("field %q over its limits", f.Name[:10])
		}
	}
	if len(got.Fields) == 0 || got.Fields[0].Name != "first" {
		t.Error("the first field was dropped")
	}
	if got.Footer == nil || !strings.HasPrefix(got.Footer.Text, "+") {
		t.Error("dropped fields are not noted")
	}
}

// readmeEmbeds are the golden payloads the README shows, each between a pair of markers
// "<!-- golden:NAME -->" and "<!-- /golden:NAME -->" in a text code block.
var readmeEmbeds = []string{"status.en.json", "config.en.json", "welcome.en.json", "welcome.ja.json"}

// TestReadmeShowsGoldenEmbeds keeps the README's rendered embeds equal to the golden
// payloads the tests compare Discord's requests against: no screenshot can drift. It is the
// last test of the package's last file, so with -update it renders the payloads the tests
// before it have just rewritten.
func TestReadmeShowsGoldenEmbeds(t *testing.T) {
	path := filepath.Join("..", "README.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, name := range readmeEmbeds {
		begin, end := "<!-- golden:"+name+" -->\n", "<!-- /golden:"+name+" -->"
		i, j := strings.Index(readme, begin), strings.Index(readme, end)
		if i < 0 || j < i {
			t.Errorf("README lacks the markers of %s", name)
			continue
		}
		want := "```text\n" + renderEmbeds(t, name) + "```\n"
		got := readme[i+len(begin) : j]
		if got == want {
			continue
		}
		if *update {
			readme = readme[:i+len(begin)] + want + readme[j:]
			continue
		}
		t.Errorf("README's %s differs from the golden payload (run with -update):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
	if *update && readme != string(raw) {
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStatusCountsOnlyWhatTheMemberMaySee: a #general member's /kioku status does not move
// when a memory is saved in #mods, which they cannot view (the count would tell them that
// the moderators saved something); a manager's counts the whole server.
func TestStatusCountsOnlyWhatTheMemberMaySee(t *testing.T) {
	tb := newTestBot(t)
	const guild, general, mods, modRole = "700", "701", "702", "703"
	g := &discordgo.Guild{ID: guild, Name: "guild", Roles: []*discordgo.Role{
		{ID: guild, Name: "@everyone", Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages},
		{ID: modRole, Name: "mods", Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages},
	}, Channels: []*discordgo.Channel{
		{ID: general, GuildID: guild, Name: "general", Type: discordgo.ChannelTypeGuildText},
		{ID: mods, GuildID: guild, Name: "mods", Type: discordgo.ChannelTypeGuildText, PermissionOverwrites: []*discordgo.PermissionOverwrite{
			{ID: guild, Type: discordgo.PermissionOverwriteTypeRole, Deny: discordgo.PermissionViewChannel},
			{ID: modRole, Type: discordgo.PermissionOverwriteTypeRole, Allow: discordgo.PermissionViewChannel},
		}},
	}}
	if err := tb.session.State.GuildAdd(g); err != nil {
		t.Fatal(err)
	}
	alice, boss := tb.fake.NewUser("alice"), tb.fake.NewUser("boss")
	status := func(user *discordgo.User, perms int64) map[string]string {
		t.Helper()
		i := tb.fake.SlashCommand(guild, general, user, perms, slashData("kioku", "status"))
		i.Member.Roles = []string{}
		msg, _ := tb.interact(t, i)
		fields := map[string]string{}
		for _, f := range msg.Embeds[0].Fields {
			fields[f.Name] = f.Value
		}
		return fields
	}
	in := func(channel string, m memory.Memory) memory.Memory {
		m.GuildID, m.Provenance.ChannelID = guild, channel
		return m
	}
	testkit.MustRemember(t, tb.store, in(general, memory.Memory{Scope: memory.ScopeServer, Type: memory.TypeFact, Content: "The raid is on Friday"}))
	member, manager := status(alice, 0), status(boss, discordgo.PermissionManageGuild)

	testkit.MustRemember(t, tb.store, in(mods, memory.Memory{Scope: memory.ScopeServer, Type: memory.TypeDecision, Content: "Ban the spammer on sight"}))
	testkit.MustRemember(t, tb.store, in(mods, memory.Memory{Scope: memory.ScopePersonal, UserID: boss.ID, Type: memory.TypePreference, Content: "I moderate on weekends"}))
	for _, name := range []string{"Server memory", "Personal memories made here", "Server memory by type"} {
		if got := status(alice, 0)[name]; got != member[name] {
			t.Errorf("after #mods saves, a #general member's %s = %q, was %q", name, got, member[name])
		}
	}
	after := status(boss, discordgo.PermissionManageGuild)
	for name, want := range map[string]string{
		"Server memory":               "2 live, 0 forgotten (recoverable)",
		"Personal memories made here": "1 (counts only; each stays its owner's)",
		"Server memory by type":       "fact 1 · decision 1",
	} {
		if after[name] != want || after[name] == manager[name] {
			t.Errorf("a manager's %s = %q (was %q), want %q", name, after[name], manager[name], want)
		}
	}
}
