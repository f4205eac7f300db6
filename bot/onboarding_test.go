package bot_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
)

// restarted is a new bot on tb's store and fake Discord, as after a process restart.
func restarted(t *testing.T, tb *testBot) *testBot {
	t.Helper()
	s, err := bot.NewSession("fake-bot-token", tb.fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	s.State.User = tb.fake.BotUser()
	short, err := stm.New(stm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bot.New(bot.Config{Session: s, Store: botStore(tb.store), STM: short, Turner: tb.turner})
	if err != nil {
		t.Fatal(err)
	}
	return &testBot{bot: b, session: s, fake: tb.fake, store: tb.store, turner: tb.turner}
}

// joinGuild is a guild with a system channel the bot (a member with only @everyone's
// permissions) may post in; edit adjusts it before it is sent.
func joinGuild(tb *testBot, id, system string, locale discordgo.Locale) *discordgo.Guild {
	g := &discordgo.Guild{ID: id, Name: "guild " + id, SystemChannelID: system, PreferredLocale: string(locale),
		Roles: []*discordgo.Role{{ID: id, Name: "@everyone", Permissions: fakediscord.EveryonePermissions}}}
	if system != "" {
		g.Channels = []*discordgo.Channel{{ID: system, GuildID: id, Name: "general", Type: discordgo.ChannelTypeGuildText}}
		tb.fake.SetChannel(g.Channels[0])
	}
	g.Members = []*discordgo.Member{{GuildID: id, User: tb.fake.BotUser(), Roles: []string{}}}
	return g
}

// guildCreate hands g to the bot as discordgo would: the state learns it first, then the
// handler runs.
func guildCreate(t *testing.T, tb *testBot, g *discordgo.Guild) {
	t.Helper()
	c := *g
	if err := tb.session.State.GuildAdd(&c); err != nil {
		t.Fatal(err)
	}
	tb.bot.OnGuildCreate(tb.session, &discordgo.GuildCreate{Guild: &c})
}

// TestWelcomeOnce: a server seen for the first time gets one note in its system channel;
// Discord's GUILD_CREATE of every later connect (a restart included) posts nothing more.
func TestWelcomeOnce(t *testing.T) {
	tb := newTestBot(t)
	g := joinGuild(tb, "800", "801", discordgo.EnglishUS)
	guildCreate(t, tb, g)
	guildCreate(t, tb, g) // a reconnect
	again := restarted(t, tb)
	guildCreate(t, again, g) // a restart
	msgs := tb.fake.Messages("801")
	if len(msgs) != 1 {
		t.Fatalf("system channel got %d messages, want 1", len(msgs))
	}
	if len(msgs[0].Embeds) != 1 || msgs[0].Embeds[0].Title != "Hello, I'm kioku 👋" {
		t.Errorf("welcome = %+v", msgs[0].Embeds)
	}
	assertGolden(t, "welcome.en.json", msgs[0].JSON)
	if e := msgs[0].Embeds[0]; bot.EmbedChars(e) > 6000 || len(e.Fields) > 25 {
		t.Errorf("welcome breaks Discord's embed limits: %d characters, %d fields", bot.EmbedChars(e), len(e.Fields))
	}
	if !strings.Contains(string(msgs[0].JSON), `"allowed_mentions":{"parse":[]`) {
		t.Errorf("welcome may ping: %s", msgs[0].JSON)
	}
}

// TestWelcomeInTheServersLanguage: a Japanese server is welcomed in Japanese; the language
// setting overrides the server's locale.
func TestWelcomeInTheServersLanguage(t *testing.T) {
	tb := newTestBot(t)
	guildCreate(t, tb, joinGuild(tb, "810", "811", discordgo.Japanese))
	msgs := tb.fake.Messages("811")
	if len(msgs) != 1 || msgs[0].Embeds[0].Title != "こんにちは、kiokuです 👋" {
		t.Fatalf("Japanese server's welcome = %+v", msgs)
	}
	assertGolden(t, "welcome.ja.json", msgs[0].JSON)

	// A server set to English before the bot joined it (settings kept from an earlier stay
	// that was purged) reads English despite its Japanese locale.
	if err := tb.store.Settings.SaveGuildSettings(context.Background(), memory.GuildSettings{GuildID: "820",
		PipelineMode: memory.PipelineFull, Language: "en"}); err != nil {
		t.Fatal(err)
	}
	guildCreate(t, tb, joinGuild(tb, "820", "821", discordgo.Japanese))
	if msgs := tb.fake.Messages("821"); len(msgs) != 1 || msgs[0].Embeds[0].Title != "Hello, I'm kioku 👋" {
		t.Errorf("English-set server's welcome = %+v", msgs)
	}
}

// TestNoWelcomeWithoutSystemChannel: no system channel, or one the bot may not post in,
// means no note and no error; neither is tried again on the next connect.
func TestNoWelcomeWithoutSystemChannel(t *testing.T) {
	tb := newTestBot(t)
	mark := tb.fake.Mark()
	g := joinGuild(tb, "830", "", discordgo.EnglishUS)
	guildCreate(t, tb, g)
	guildCreate(t, tb, g)
	closed := joinGuild(tb, "840", "841", discordgo.EnglishUS)
	closed.Channels[0].PermissionOverwrites = []*discordgo.PermissionOverwrite{{ID: "840", Type: discordgo.PermissionOverwriteTypeRole,
		Deny: discordgo.PermissionSendMessages}}
	guildCreate(t, tb, closed)
	for _, r := range tb.fake.Requests()[mark:] {
		t.Errorf("request %s %s without a place to post", r.Method, r.Path)
	}
	if st := tb.bot.Stats(); st.InteractionErrors != 0 {
		t.Errorf("errors counted: %+v", st)
	}
}

// TestWelcomeRetriedAfterDiscordFailed: a post Discord failed (a 500) is tried again on
// the next connect, and then only once.
func TestWelcomeRetriedAfterDiscordFailed(t *testing.T) {
	tb := newTestBot(t)
	g := joinGuild(tb, "850", "851", discordgo.EnglishUS)
	tb.fake.FailNext(1, fakediscord.Match(http.MethodPost, "/channels/851/messages"), http.StatusInternalServerError, 0, "boom")
	guildCreate(t, tb, g)
	if n := len(tb.fake.Messages("851")); n != 0 {
		t.Fatalf("%d messages despite the failure", n)
	}
	guildCreate(t, tb, g)
	guildCreate(t, tb, g)
	if n := len(tb.fake.Messages("851")); n != 1 {
		t.Errorf("%d welcomes after the retry, want 1", n)
	}
}

// TestClaimWelcomeOnce: the store's claim is given once per server, and again only after
// a release (ltm/sqlite/migration_onboarding_test.go covers servers known before the
// upgrade).
func TestClaimWelcomeOnce(t *testing.T) {
	tb := newTestBot(t)
	ctx := context.Background()
	first, err := tb.store.Guilds.ClaimWelcome(ctx, "860")
	if err != nil || !first {
		t.Fatalf("first claim = %v, %v", first, err)
	}
	if again, err := tb.store.Guilds.ClaimWelcome(ctx, "860"); err != nil || again {
		t.Fatalf("second claim = %v, %v", again, err)
	}
	if err := tb.store.Guilds.ReleaseWelcome(ctx, "860"); err != nil {
		t.Fatal(err)
	}
	if again, err := tb.store.Guilds.ClaimWelcome(ctx, "860"); err != nil || !again {
		t.Fatalf("claim after release = %v, %v", again, err)
	}
}

// TestNoticesInTheServersLanguage: the memory-change notices under a chat reply follow
// the server's language; the model's own answer is left as it is.
func TestNoticesInTheServersLanguage(t *testing.T) {
	tb := newTestBot(t)
	tb.turner.fn = func(chat.Request) (chat.Reply, error) {
		return chat.Reply{Text: "了解です。", Notices: []chat.Notice{
			{Action: tools.NoticeSaved, Scope: memory.ScopeServer, MemoryID: 42, Content: "レイドは金曜日"}}}, nil
	}
	ctx := context.Background()
	if err := tb.store.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: "870", PipelineMode: memory.PipelineFull,
		Language: "ja"}); err != nil {
		t.Fatal(err)
	}
	alice := tb.fake.NewUser("alice")
	self := tb.fake.BotUser()
	tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.GuildMessage("870", "871", alice,
		"<@"+self.ID+"> レイドは金曜日だと覚えて", self)})
	msgs := tb.fake.Messages("871")
	if len(msgs) != 1 || msgs[0].Content != "了解です。\n\n📌 記憶しました(サーバー)#42:レイドは金曜日" {
		t.Fatalf("reply = %+v", msgs)
	}

	// Auto follows the server's preferred locale from the gateway.
	g := joinGuild(tb, "880", "881", discordgo.Japanese)
	if err := tb.session.State.GuildAdd(g); err != nil {
		t.Fatal(err)
	}
	tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.GuildMessage("880", "882", alice,
		"<@"+self.ID+"> hi", self)})
	if msgs := tb.fake.Messages("882"); len(msgs) != 1 || !strings.Contains(msgs[0].Content, "📌 記憶しました") {
		t.Fatalf("reply in an auto Japanese server = %+v", msgs)
	}
}

// TestEngineRepliesInTheServersLanguage: the replies the chat engine writes itself (the
// model did not answer in time, a rate limit) are shown in the server's language; the same
// reply in a DM stays English.
func TestEngineRepliesInTheServersLanguage(t *testing.T) {
	tb := newTestBot(t)
	if err := tb.store.Settings.SaveGuildSettings(context.Background(), memory.GuildSettings{GuildID: "890", PipelineMode: memory.PipelineFull,
		Language: "ja"}); err != nil {
		t.Fatal(err)
	}
	alice := tb.fake.NewUser("alice")
	self := tb.fake.BotUser()
	for _, c := range []struct {
		reply chat.Reply
		want  string
	}{
		{chat.Reply{Text: "Sorry, my language model didn't answer in time. Your message is saved; please try again in a moment.",
			ModelUnavailable: true, Canned: chat.CannedModelSlow},
			"すみません、言語モデルが時間内に応答しませんでした。メッセージは保存しました。少ししてからもう一度お試しください。"},
		{chat.Reply{Text: "You're sending messages faster than I can keep up with. Please wait about 3 seconds and try again.",
			RateLimited: true, Canned: chat.CannedRateLimited, RetryAfter: 2500 * time.Millisecond},
			"メッセージの送信が速すぎて追いつけません。3秒ほど待ってからもう一度お試しください。"},
	} {
		tb.turner.fn = func(chat.Request) (chat.Reply, error) { return c.reply, nil }
		mark := len(tb.fake.Messages("891"))
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.GuildMessage("890", "891", alice,
			"<@"+self.ID+"> こんにちは", self)})
		msgs := tb.fake.Messages("891")
		if len(msgs) != mark+1 || msgs[mark].Content != c.want {
			t.Errorf("%s in a Japanese server = %+v, want %q", c.reply.Canned, msgs[mark:], c.want)
		}
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.DMMessage("895", alice, "hi")})
		dms := tb.fake.Messages("895")
		if len(dms) == 0 || dms[len(dms)-1].Content != c.reply.Text {
			t.Errorf("%s in a DM = %+v, want the English", c.reply.Canned, dms)
		}
	}
}
