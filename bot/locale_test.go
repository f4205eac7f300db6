package bot_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
)

// discordName is Discord's rule for localized command and option names: letters (of any
// script, lowercase where the script has case), digits, - and _, 1 to 32 characters.
var discordName = regexp.MustCompile(`^[-_\p{L}\p{N}]{1,32}$`)

// TestRegisteredCommandsCarryJapanese walks every command, subcommand, option and choice
// kioku registers, as Discord received them in the bulk overwrite, and wants a Japanese
// name and description for each, within Discord's limits.
func TestRegisteredCommandsCarryJapanese(t *testing.T) {
	tb := newTestBot(t)
	if err := tb.bot.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.bot.Shutdown(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tb.fake.WaitUntil(ctx, func() bool { return len(tb.fake.Commands()) == len(bot.Commands()) }); err != nil {
		t.Fatalf("commands were not registered: %v", err)
	}
	checkName := func(path, name string) {
		if !discordName.MatchString(name) || strings.ToLower(name) != name {
			t.Errorf("%s: Japanese name %q breaks Discord's naming rule", path, name)
		}
	}
	checkDesc := func(path string, loc map[discordgo.Locale]string) {
		d := loc[discordgo.Japanese]
		if d == "" {
			t.Errorf("%s: no Japanese description", path)
		}
		if utf8.RuneCountInString(d) > 100 {
			t.Errorf("%s: Japanese description has %d characters, Discord allows 100", path, utf8.RuneCountInString(d))
		}
	}
	var walk func(path string, opts []*discordgo.ApplicationCommandOption)
	walk = func(path string, opts []*discordgo.ApplicationCommandOption) {
		// Discord refuses two options of one command with the same name in a language.
		seen := map[string]string{}
		for _, o := range opts {
			if ja := o.NameLocalizations[discordgo.Japanese]; seen[ja] != "" {
				t.Errorf("%s: options %s and %s share the Japanese name %q", path, seen[ja], o.Name, ja)
			} else {
				seen[ja] = o.Name
			}
		}
		for _, o := range opts {
			p := path + " " + o.Name
			checkName(p, o.NameLocalizations[discordgo.Japanese])
			checkDesc(p, o.DescriptionLocalizations)
			for _, ch := range o.Choices {
				ja := ch.NameLocalizations[discordgo.Japanese]
				if ja == "" || utf8.RuneCountInString(ja) > 100 {
					t.Errorf("%s choice %v: Japanese name %q", p, ch.Value, ja)
				}
			}
			walk(p, o.Options)
		}
	}
	options := 0
	for _, c := range tb.fake.Commands() {
		if c.NameLocalizations == nil || (*c.NameLocalizations)[discordgo.Japanese] == "" {
			t.Errorf("/%s: no Japanese name", c.Name)
			continue
		}
		if c.Type == discordgo.MessageApplicationCommand {
			continue // context menu commands have a name only
		}
		checkName("/"+c.Name, (*c.NameLocalizations)[discordgo.Japanese])
		if c.DescriptionLocalizations == nil {
			t.Errorf("/%s: no description localizations", c.Name)
			continue
		}
		checkDesc("/"+c.Name, *c.DescriptionLocalizations)
		walk("/"+c.Name, c.Options)
		options += len(c.Options)
	}
	want := 0
	for _, c := range bot.Commands() {
		want += len(c.Options)
	}
	if options != want {
		t.Errorf("walked %d top-level options, want %d: the registered commands lost options", options, want)
	}
}

// TestJapaneseMemberGetsJapaneseReplies: replies, refusals and domain errors follow the
// language of the member's client; an English member asking the same gets English.
func TestJapaneseMemberGetsJapaneseReplies(t *testing.T) {
	tb := newTestBot(t)
	alice := tb.fake.NewUser("alice")
	const guild, channel = "700", "701"
	ja := func(i *discordgo.Interaction) *discordgo.Interaction {
		return fakediscord.WithLocale(i, discordgo.Japanese, discordgo.EnglishUS)
	}

	msg, _ := tb.interact(t, ja(tb.fake.SlashCommand(guild, channel, alice, 0, discordgo.ApplicationCommandInteractionData{Name: "privacy"})))
	if !strings.Contains(msg.Content, "あなたのプライバシー設定") || !strings.Contains(msg.Content, "**レベル:通常。**") {
		t.Errorf("/privacy in Japanese = %q", msg.Content)
	}
	msg, _ = tb.interact(t, tb.fake.SlashCommand(guild, channel, alice, 0, discordgo.ApplicationCommandInteractionData{Name: "privacy"}))
	if !strings.Contains(msg.Content, "Your privacy settings") {
		t.Errorf("/privacy in English = %q", msg.Content)
	}

	// A refusal made by the bot (no Manage Server) is a catalogue message.
	msg, _ = tb.interact(t, ja(tb.fake.SlashCommand(guild, channel, alice, 0, slashData("kioku", "config"))))
	if msg.Content != "これには「サーバー管理」権限が必要です。" {
		t.Errorf("refused /kioku config in Japanese = %q", msg.Content)
	}
	// A domain error from the store: the code's Japanese message, the English detail below.
	msg, _ = tb.interact(t, ja(tb.fake.SlashCommand(guild, channel, alice, 0, slashData("memory", "show",
		&discordgo.ApplicationCommandInteractionDataOption{Name: "id", Type: discordgo.ApplicationCommandOptionInteger, Value: float64(999)}))))
	if !strings.HasPrefix(msg.Content, "あなたが見られる範囲にその記憶は見つかりませんでした。\n-# ") {
		t.Errorf("not found in Japanese = %q", msg.Content)
	}
	// The server's locale answers when the member's client sent none.
	i := tb.fake.SlashCommand(guild, channel, alice, 0, discordgo.ApplicationCommandInteractionData{Name: "stm",
		Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "show", Type: discordgo.ApplicationCommandOptionSubCommand}}})
	fakediscord.WithLocale(i, "", discordgo.Japanese)
	msg, _ = tb.interact(t, i)
	if msg.Content != "今、あなたについての短期記憶はありません。" {
		t.Errorf("/stm show with a Japanese server = %q", msg.Content)
	}
}

// slashData is a subcommand's interaction data with options.
func slashData(cmd, sub string, opts ...*discordgo.ApplicationCommandInteractionDataOption) discordgo.ApplicationCommandInteractionData {
	return discordgo.ApplicationCommandInteractionData{Name: cmd, Options: []*discordgo.ApplicationCommandInteractionDataOption{
		{Name: sub, Type: discordgo.ApplicationCommandOptionSubCommand, Options: opts}}}
}

// TestLanguageSettingValidated: the option form of /kioku config stores a language and
// refuses an unknown one, changing nothing.
func TestLanguageSettingValidated(t *testing.T) {
	tb := newTestBot(t)
	admin := tb.fake.NewUser("admin")
	const guild, channel = "710", "711"
	lang := func(v string) *discordgo.ApplicationCommandInteractionDataOption {
		return &discordgo.ApplicationCommandInteractionDataOption{Name: "language", Type: discordgo.ApplicationCommandOptionString, Value: v}
	}
	msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, channel, admin, discordgo.PermissionManageGuild, slashData("kioku", "config", lang("ja"))))
	if !strings.HasPrefix(msg.Content, "Saved.") {
		t.Errorf("language:ja = %q", msg.Content)
	}
	msg, _ = tb.interact(t, tb.fake.SlashCommand(guild, channel, admin, discordgo.PermissionManageGuild, slashData("kioku", "config", lang("fr"))))
	if !strings.Contains(msg.Content, "Unknown language") {
		t.Errorf("language:fr = %q", msg.Content)
	}
	gs, err := tb.store.Settings.GuildSettings(context.Background(), guild)
	if err != nil || gs.Language != "ja" {
		t.Errorf("language = %q (%v), want ja kept", gs.Language, err)
	}
}
