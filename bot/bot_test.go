package bot_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

// turnerFunc adapts a function to bot.Turner and records the requests.
type turnerFunc struct {
	mu   sync.Mutex
	reqs []chat.Request
	fn   func(chat.Request) (chat.Reply, error)
}

func (f *turnerFunc) Turn(_ context.Context, req chat.Request) (chat.Reply, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return f.fn(req)
}

func (f *turnerFunc) requests() []chat.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]chat.Request(nil), f.reqs...)
}

// testBot is a Bot whose session talks REST to a fake Discord. The gateway
// is not opened: tests call the handlers directly with the events, which is
// exactly what discordgo would do, and read the REST calls the fake recorded.
type testBot struct {
	bot     *bot.Bot
	session *discordgo.Session
	fake    *fakediscord.Fake
	store   *ltm.Store
	turner  *turnerFunc
}

func newTestBot(t *testing.T, edit ...func(*bot.Config)) *testBot {
	t.Helper()
	return newTestBotOn(t, testkit.MustOpenStore(t), edit...)
}

// newTestBotOn is newTestBot on a store the test opened itself.
func newTestBotOn(t *testing.T, store *ltm.Store, edit ...func(*bot.Config)) *testBot {
	t.Helper()
	fake := fakediscord.New(t)
	s, err := bot.NewSession("fake-bot-token", fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	s.State.User = fake.BotUser()
	short, err := stm.New(stm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	turner := &turnerFunc{fn: func(chat.Request) (chat.Reply, error) { return chat.Reply{Text: "ok"}, nil }}
	cfg := bot.Config{Session: s, Store: botStore(store), STM: short, Turner: turner}
	for _, e := range edit {
		e(&cfg)
	}
	b, err := bot.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &testBot{bot: b, session: s, fake: fake, store: store, turner: turner}
}

// botStore is the bot's view of an opened store, as cmd/kioku builds it.
func botStore(s *ltm.Store) bot.Store {
	return bot.Store{
		Memories: s.Memories, Review: s.Review, Duplicates: s.Duplicates, Recall: s.Recall, Facts: s.Facts, Jobs: s.Jobs,
		Transcripts: s.Transcripts, Settings: s.Settings, Confirmations: s.Confirmations,
		Transfer: s.Transfer, Channels: s.Channels, Guilds: s.Guilds,
		Maintenance: s.Health, Now: s.Now, RecoverWindow: s.RecoverWindow,
		Graph: s.Graph,
	}
}

// interact runs the interaction through the bot and returns what it finally
// showed (the response, or the edit of a deferred one) and whether the
// response was ephemeral.
func (tb *testBot) interact(t *testing.T, i *discordgo.Interaction) (*fakediscord.SentMessage, bool) {
	t.Helper()
	tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
	for _, r := range tb.fake.InteractionResponses() {
		if r.Token != i.Token {
			continue
		}
		// A modal is shown to its caller alone, as an ephemeral message is.
		ephemeral := r.Data != nil && r.Data.Flags&discordgo.MessageFlagsEphemeral != 0 ||
			r.Type == discordgo.InteractionResponseModal
		deferred := r.Type == discordgo.InteractionResponseDeferredChannelMessageWithSource ||
			r.Type == discordgo.InteractionResponseDeferredMessageUpdate
		if !deferred {
			if r.Data == nil {
				t.Fatalf("interaction %s answered without data", i.ID)
			}
			return r.Data, ephemeral
		}
		for _, e := range tb.fake.EditedOriginals() {
			if e.Token == i.Token {
				return e, ephemeral
			}
		}
		t.Fatalf("deferred interaction %s was never answered", i.ID)
	}
	t.Fatalf("interaction %s was not answered", i.ID)
	return nil, false
}

func TestHandleInteractionChecksTypes(t *testing.T) {
	tb := newTestBot(t)
	user := tb.fake.NewUser("alice")
	cases := map[string]*discordgo.Interaction{
		"Ping": {ID: "1", Type: discordgo.InteractionPing, User: user},
		"Autocomplete": {ID: "2", Type: discordgo.InteractionApplicationCommandAutocomplete, User: user,
			Data: discordgo.ApplicationCommandInteractionData{Name: "memory"}},
		"ModalSubmit": {ID: "3", Type: discordgo.InteractionModalSubmit, User: user,
			Data: discordgo.ModalSubmitInteractionData{CustomID: "x"}},
		// The type says command but the data is a component's: reading it
		// with ApplicationCommandData would panic.
		"MismatchedData": {ID: "4", Type: discordgo.InteractionApplicationCommand, User: user,
			Data: discordgo.MessageComponentInteractionData{CustomID: "mem:cancel"}},
		"NoData":         {ID: "5", Type: discordgo.InteractionMessageComponent, User: user},
		"NoUserOrMember": {ID: "6", Type: discordgo.InteractionApplicationCommand, Data: discordgo.ApplicationCommandInteractionData{Name: "privacy"}},
		"MemberWithoutUser": {ID: "7", Type: discordgo.InteractionApplicationCommand, GuildID: "1",
			Member: &discordgo.Member{}, Data: discordgo.ApplicationCommandInteractionData{Name: "privacy"}},
	}
	for name, i := range cases {
		t.Run(name, func(t *testing.T) {
			tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
		})
	}
	tb.bot.HandleInteraction(tb.session, nil)
	tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{})
	if reqs := tb.fake.Requests(); len(reqs) != 0 {
		t.Errorf("ignored interactions made %d REST calls, first %s %s", len(reqs), reqs[0].Method, reqs[0].Path)
	}
}

func TestEveryCommandIsHandled(t *testing.T) {
	tb := newTestBot(t)
	admin := tb.fake.NewUser("admin")
	const guild, channel = "500", "501"
	for _, cmd := range bot.Commands() {
		var interactions []*discordgo.Interaction
		switch {
		case cmd.Type == discordgo.MessageApplicationCommand:
			target := tb.fake.GuildMessage(guild, channel, admin, "The meetup is on Saturday")
			interactions = append(interactions, tb.fake.MessageCommand(guild, channel, admin, discordgo.PermissionManageGuild, cmd.Name, target))
		case len(cmd.Options) > 0 && cmd.Options[0].Type == discordgo.ApplicationCommandOptionSubCommand:
			for _, sub := range cmd.Options {
				data := discordgo.ApplicationCommandInteractionData{Name: cmd.Name, Options: []*discordgo.ApplicationCommandInteractionDataOption{
					{Name: sub.Name, Type: discordgo.ApplicationCommandOptionSubCommand}}}
				interactions = append(interactions, tb.fake.SlashCommand(guild, channel, admin, discordgo.PermissionManageGuild, data))
			}
		default:
			data := discordgo.ApplicationCommandInteractionData{Name: cmd.Name}
			interactions = append(interactions, tb.fake.SlashCommand(guild, channel, admin, discordgo.PermissionManageGuild, data))
		}
		for _, i := range interactions {
			msg, ephemeral := tb.interact(t, i)
			if strings.Contains(msg.Content, "don't know that command") || strings.Contains(msg.Content, "went wrong") {
				t.Errorf("%s: answered %q", cmd.Name, msg.Content)
			}
			if !ephemeral {
				t.Errorf("%s: answer is not ephemeral", cmd.Name)
			}
		}
	}
	if un := tb.fake.Unhandled(); len(un) != 0 {
		t.Errorf("unhandled routes: %+v", un)
	}
}

func TestCommandDefinitions(t *testing.T) {
	name := regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)
	var checkOptions func(path string, opts []*discordgo.ApplicationCommandOption)
	checkOptions = func(path string, opts []*discordgo.ApplicationCommandOption) {
		if len(opts) > 25 {
			t.Errorf("%s: %d options, Discord allows 25", path, len(opts))
		}
		optional := false
		for _, o := range opts {
			p := path + " " + o.Name
			if !name.MatchString(o.Name) {
				t.Errorf("%s: invalid option name", p)
			}
			if n := utf8.RuneCountInString(o.Description); n == 0 || n > 100 {
				t.Errorf("%s: description of %d characters, want 1–100", p, n)
			}
			if len(o.Choices) > 25 {
				t.Errorf("%s: %d choices", p, len(o.Choices))
			}
			if o.Required && optional {
				t.Errorf("%s: required option after an optional one", p)
			}
			optional = optional || !o.Required
			if o.Type == discordgo.ApplicationCommandOptionSubCommand {
				if o.Options == nil {
					t.Errorf("%s: subcommand options are null", p)
				}
				checkOptions(p, o.Options)
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range bot.Commands() {
		if seen[c.Name] {
			t.Errorf("command %q defined twice", c.Name)
		}
		seen[c.Name] = true
		if c.Options == nil {
			t.Errorf("%s: options are null, which a bulk overwrite rejects", c.Name)
		}
		if c.Type == discordgo.MessageApplicationCommand {
			if c.Description != "" || len(c.Options) != 0 {
				t.Errorf("%s: context menu commands take no description or options", c.Name)
			}
			continue
		}
		if !name.MatchString(c.Name) {
			t.Errorf("%s: invalid command name", c.Name)
		}
		if n := utf8.RuneCountInString(c.Description); n == 0 || n > 100 {
			t.Errorf("%s: description of %d characters", c.Name, n)
		}
		checkOptions("/"+c.Name, c.Options)
	}
	for _, want := range []string{"memory", "privacy", "stm", "kioku", bot.RememberThisCommand} {
		if !seen[want] {
			t.Errorf("command %q is missing", want)
		}
	}
}

func TestPermissionChecks(t *testing.T) {
	const role = "900"
	cases := []struct {
		name            string
		member          *discordgo.Member
		manage, edit    bool
		editWithoutRole bool
	}{
		{"NilMember", nil, false, false, false},
		{"PlainMember", &discordgo.Member{Permissions: discordgo.PermissionSendMessages}, false, false, false},
		{"ManageServer", &discordgo.Member{Permissions: discordgo.PermissionManageGuild}, true, true, true},
		{"Administrator", &discordgo.Member{Permissions: discordgo.PermissionAdministrator}, true, true, true},
		{"EditorRole", &discordgo.Member{Roles: []string{"1", role}}, false, true, false},
		{"OtherRole", &discordgo.Member{Roles: []string{"1"}}, false, false, false},
		{"ManageMessagesIsNotEnough", &discordgo.Member{Permissions: discordgo.PermissionManageMessages}, false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := bot.CanManageServer(c.member); got != c.manage {
				t.Errorf("CanManageServer = %v, want %v", got, c.manage)
			}
			if got := bot.CanEditServer(c.member, role); got != c.edit {
				t.Errorf("CanEditServer = %v, want %v", got, c.edit)
			}
			if got := bot.CanEditServer(c.member, ""); got != c.editWithoutRole {
				t.Errorf("CanEditServer without an editor role = %v, want %v", got, c.editWithoutRole)
			}
		})
	}
}

func TestServerMemoryMutationsNeedPermission(t *testing.T) {
	tb := newTestBot(t)
	const guild, channel = "500", "501"
	member := tb.fake.NewUser("member")
	testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: "Rules are in #rules"})
	sub := func(name string, opts ...*discordgo.ApplicationCommandInteractionDataOption) discordgo.ApplicationCommandInteractionData {
		return discordgo.ApplicationCommandInteractionData{Name: "memory", Options: []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: name, Type: discordgo.ApplicationCommandOptionSubCommand, Options: opts}}}
	}
	id := &discordgo.ApplicationCommandInteractionDataOption{Name: "id", Type: discordgo.ApplicationCommandOptionInteger, Value: float64(1)}
	content := &discordgo.ApplicationCommandInteractionDataOption{Name: "content", Type: discordgo.ApplicationCommandOptionString, Value: "x y z"}
	for _, data := range []discordgo.ApplicationCommandInteractionData{
		sub("add", content), sub("edit", id, content), sub("forget", id), sub("recover", id), sub("export"),
	} {
		msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, channel, member, discordgo.PermissionSendMessages, data))
		if !strings.Contains(msg.Content, "Manage Server") {
			t.Errorf("/memory %s by a plain member answered %q", data.Options[0].Name, msg.Content)
		}
	}
	// The button of a preview is checked again when pressed.
	click := tb.fake.ComponentClick(guild, channel, member, discordgo.PermissionSendMessages, "mem:forget:server:0123456789abcdef", nil)
	if msg, _ := tb.interact(t, click); !strings.Contains(msg.Content, "Manage Server") {
		t.Errorf("forget confirm by a plain member answered %q", msg.Content)
	}
	mems, _, err := tb.store.Memories.List(context.Background(), memory.ServerOwner(guild), memory.ListOptions{})
	if err != nil || len(mems) != 1 || mems[0].Version != 1 {
		t.Errorf("server memory changed by refused commands: %v %v", mems, err)
	}
}

func TestOnMessageCreate(t *testing.T) {
	tb := newTestBot(t)
	me := tb.fake.BotUser()
	alice := tb.fake.NewUser("alice")
	const guild, channel = "500", "501"

	t.Run("PartialEventsAreTolerated", func(t *testing.T) {
		tb.bot.OnMessageCreate(tb.session, nil)
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{})
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: &discordgo.Message{ID: "1", ChannelID: channel, Content: "hi"}})
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: &discordgo.Message{ID: "2", GuildID: guild,
			ChannelID: channel, Content: "<@" + me.ID + "> hi", Author: &discordgo.User{}}})
		if n := len(tb.turner.requests()); n != 0 {
			t.Errorf("%d turns for partial events", n)
		}
	})

	t.Run("BotsAndItselfAreIgnored", func(t *testing.T) {
		other := &discordgo.User{ID: "77", Username: "otherbot", Bot: true}
		for _, m := range []*discordgo.Message{
			tb.fake.GuildMessage(guild, channel, other, "<@"+me.ID+"> hi", me),
			tb.fake.DMMessage("600", me, "talking to myself"),
		} {
			tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: m})
		}
		if n := len(tb.turner.requests()); n != 0 {
			t.Errorf("%d turns for bot messages", n)
		}
	})

	t.Run("MentionWithPartialMember", func(t *testing.T) {
		m := tb.fake.GuildMessage(guild, channel, alice, "<@"+me.ID+"> what's up?", me)
		m.Member.Nick = "Ali"
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: m})
		reqs := tb.turner.requests()
		if len(reqs) != 1 {
			t.Fatalf("%d turns, want 1", len(reqs))
		}
		// The state does not know the channel, so whether it is age-restricted is unknown:
		// the turn is answered but not learned from.
		want := chat.Request{GuildID: guild, ChannelID: channel, UserID: alice.ID, UserName: "Ali", MessageID: m.ID,
			Content: "what's up?", At: m.Timestamp, NoLearning: true}
		got := reqs[0]
		if got.Audience == nil || !got.Audience.Channels[channel] {
			t.Errorf("the reply's audience %+v does not include its own channel", got.Audience)
		}
		got.Audience = nil
		// The settings the bot read for the message go with it, so the turn reads them once.
		if got.Speaker == nil || got.Speaker.UserID != alice.ID || got.Guild == nil || got.Guild.GuildID != guild {
			t.Errorf("request carries speaker settings %+v and guild settings %+v, want the author's and the guild's", got.Speaker, got.Guild)
		}
		got.Speaker, got.Guild = nil, nil
		if got != want {
			t.Errorf("request = %+v, want %+v", got, want)
		}
		sent := tb.fake.Messages(channel)
		if len(sent) != 1 || sent[0].Content != "ok" || sent[0].Reference == nil || sent[0].Reference.MessageID != m.ID {
			t.Errorf("sent %+v", sent)
		}
		if tb.fake.TypingCount(channel) == 0 {
			t.Error("no typing indicator")
		}
	})

	t.Run("LongReplyIsSplit", func(t *testing.T) {
		tb.turner.fn = func(chat.Request) (chat.Reply, error) {
			return chat.Reply{Text: strings.Repeat("This is a sentence of a long answer. ", 120)}, nil
		}
		defer func() { tb.turner.fn = func(chat.Request) (chat.Reply, error) { return chat.Reply{Text: "ok"}, nil } }()
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.DMMessage("601", alice, "tell me a lot")})
		sent := tb.fake.Messages("601")
		if len(sent) != 3 {
			t.Fatalf("sent %d messages for ~4400 characters, want 3", len(sent))
		}
		for i, m := range sent {
			if utf8.RuneCountInString(m.Content) > bot.MaxMessageRunes {
				t.Errorf("message %d has %d characters", i, utf8.RuneCountInString(m.Content))
			}
			if (m.Reference != nil) != (i == 0) {
				t.Errorf("message %d reference = %+v; only the first replies", i, m.Reference)
			}
			if m.AllowedMentions == nil || len(m.AllowedMentions.Parse) != 0 {
				t.Errorf("message %d allowed mentions = %+v", i, m.AllowedMentions)
			}
		}
	})

	t.Run("TurnErrors", func(t *testing.T) {
		for _, c := range []struct {
			err  error
			want string
		}{
			{memory.Errorf(memory.EINVALID, "That looks like a secret."), "That looks like a secret."},
			{errors.New("disk I/O error at /var/lib/kioku.db"), "something went wrong on my side"},
		} {
			tb.turner.fn = func(chat.Request) (chat.Reply, error) { return chat.Reply{}, c.err }
			m := tb.fake.DMMessage("602", alice, "hello")
			tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: m})
			sent := tb.fake.Messages("602")
			last := sent[len(sent)-1].Content
			if !strings.Contains(last, c.want) || strings.Contains(last, "/var/lib") {
				t.Errorf("error reply = %q, want it to contain %q and no internals", last, c.want)
			}
		}
		tb.turner.fn = func(chat.Request) (chat.Reply, error) { return chat.Reply{Text: "ok"}, nil }
	})

	t.Run("FullPrivacyIsIgnored", func(t *testing.T) {
		bob := tb.fake.NewUser("bob")
		if err := tb.store.Settings.SetPrivacy(context.Background(), bob.ID, memory.PrivacyFull); err != nil {
			t.Fatal(err)
		}
		before := len(tb.turner.requests())
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.DMMessage("603", bob, "hello?")})
		if len(tb.turner.requests()) != before || len(tb.fake.Messages("603")) != 0 || tb.fake.TypingCount("603") != 0 {
			t.Error("a full-privacy user's message was processed")
		}
	})

	t.Run("AutoReplyChannel", func(t *testing.T) {
		const auto = "502"
		if err := tb.store.Settings.SaveGuildSettings(context.Background(), memory.GuildSettings{GuildID: guild, AutoReplyChannels: []string{auto}}); err != nil {
			t.Fatal(err)
		}
		before := len(tb.turner.requests())
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.GuildMessage(guild, auto, alice, "no mention needed here")})
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.GuildMessage(guild, channel, alice, "but here it is")})
		if n := len(tb.turner.requests()) - before; n != 1 {
			t.Errorf("%d turns, want 1 (auto-reply channel only)", n)
		}
	})

	t.Run("ServerMemoryRightTravelsWithTheTurn", func(t *testing.T) {
		// The pipeline changes server memory only on behalf of members who may; the
		// editor role on the message's member is one way to be such a member.
		if err := tb.store.Settings.SaveGuildSettings(context.Background(), memory.GuildSettings{GuildID: guild, EditorRoleID: "editors"}); err != nil {
			t.Fatal(err)
		}
		before := len(tb.turner.requests())
		editor := tb.fake.GuildMessage(guild, channel, alice, "<@"+me.ID+"> raid moved to Friday", me)
		editor.Member.Roles = []string{"editors"}
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: editor})
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.GuildMessage(guild, channel, alice, "<@"+me.ID+"> raid moved to Sunday", me)})
		reqs := tb.turner.requests()[before:]
		if len(reqs) != 2 || !reqs[0].ServerEditor || reqs[1].ServerEditor {
			t.Errorf("requests %+v: want the editor's marked and the plain member's not", reqs)
		}
	})
}

func TestShutdownRefusesNewWork(t *testing.T) {
	tb := newTestBot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tb.bot.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	alice := tb.fake.NewUser("alice")
	tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.DMMessage("700", alice, "still there?")})
	if len(tb.turner.requests()) != 0 {
		t.Error("a turn ran after shutdown")
	}
	msg, _ := tb.interact(t, tb.fake.SlashCommand("", "700", alice, 0, discordgo.ApplicationCommandInteractionData{Name: "privacy"}))
	if !strings.Contains(msg.Content, "restarting") {
		t.Errorf("interaction during shutdown answered %q", msg.Content)
	}
}

func TestInvitePermissions(t *testing.T) {
	// README.md quotes this number in the invite URL; keep them in sync.
	if bot.InvitePermissions != 277025508352 {
		t.Errorf("InvitePermissions = %d; update README.md's invite URL", int64(bot.InvitePermissions))
	}
}

func TestListPagination(t *testing.T) {
	tb := newTestBot(t)
	const guild, channel = "500", "501"
	alice := tb.fake.NewUser("alice")
	for i := range 25 {
		testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild,
			Content: "Server fact number " + strconv.Itoa(i+1)})
	}
	list := discordgo.ApplicationCommandInteractionData{Name: "memory", Options: []*discordgo.ApplicationCommandInteractionDataOption{
		{Name: "list", Type: discordgo.ApplicationCommandOptionSubCommand}}}
	i := tb.fake.SlashCommand(guild, channel, alice, 0, list)
	msg, _ := tb.interact(t, i)
	if len(msg.Embeds) != 1 || !strings.Contains(msg.Embeds[0].Footer.Text, "Page 1 of 3 · 25 memories") {
		t.Fatalf("first page = %+v", msg.Embeds)
	}
	if !strings.Contains(msg.Embeds[0].Description, "number 25") || strings.Contains(msg.Embeds[0].Description, "number 15\n") {
		t.Errorf("first page shows %q, want the newest ten", msg.Embeds[0].Description)
	}
	buttons := buttonsOf(msg)
	if len(buttons) != 2 || !buttons[0].Disabled || buttons[1].Disabled {
		t.Fatalf("buttons = %+v, want a disabled Previous and an enabled Next", buttons)
	}
	original, ok := tb.fake.OriginalResponse(i)
	if !ok {
		t.Fatal("no original response")
	}
	click := tb.fake.ComponentClick(guild, channel, alice, 0, buttons[1].CustomID, original)
	tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: click})
	resps := tb.fake.InteractionResponses()
	page2 := resps[len(resps)-1]
	if page2.Type != discordgo.InteractionResponseUpdateMessage || page2.Data == nil || len(page2.Data.Embeds) != 1 {
		t.Fatalf("next page answered %+v", page2)
	}
	if !strings.Contains(page2.Data.Embeds[0].Footer.Text, "Page 2 of 3") || !strings.Contains(page2.Data.Embeds[0].Description, "number 15") {
		t.Errorf("second page = %q / %q", page2.Data.Embeds[0].Footer.Text, page2.Data.Embeds[0].Description)
	}

	t.Run("PersonalPagesShowThePressersOwnMemory", func(t *testing.T) {
		bob := tb.fake.NewUser("bob")
		testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopePersonal, UserID: alice.ID, Content: "Alice's secret hobby"})
		click := tb.fake.ComponentClick(guild, channel, bob, 0, "mem:page:personal:0::n", nil)
		tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: click})
		resps := tb.fake.InteractionResponses()
		got := resps[len(resps)-1]
		if got.Data == nil || strings.Contains(string(got.JSON), "secret hobby") {
			t.Errorf("bob's page press answered %s", got.JSON)
		}
	})
}

func buttonsOf(m *fakediscord.SentMessage) []*discordgo.Button {
	var out []*discordgo.Button
	for _, c := range m.Components {
		if row, ok := c.(*discordgo.ActionsRow); ok {
			for _, b := range row.Components {
				if btn, ok := b.(*discordgo.Button); ok {
					out = append(out, btn)
				}
			}
		}
	}
	return out
}

func TestImportLimits(t *testing.T) {
	tb := newTestBot(t, func(c *bot.Config) { c.MaxImportBytes = 200 })
	alice := tb.fake.NewUser("alice")
	importOf := func(att *discordgo.MessageAttachment) string {
		data := discordgo.ApplicationCommandInteractionData{Name: "memory",
			Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "import", Type: discordgo.ApplicationCommandOptionSubCommand,
				Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "file", Type: discordgo.ApplicationCommandOptionAttachment, Value: att.ID}}}},
			Resolved: &discordgo.ApplicationCommandInteractionDataResolved{Attachments: map[string]*discordgo.MessageAttachment{att.ID: att}}}
		msg, _ := tb.interact(t, tb.fake.SlashCommand("", "800", alice, 0, data))
		return msg.Content
	}
	big := []byte(`{"format":"kioku.memories.v1","memories":[{"content":"` + strings.Repeat("x", 300) + `"}]}`)

	t.Run("DeclaredSizeTooLarge", func(t *testing.T) {
		before := len(tb.fake.Requests())
		got := importOf(tb.fake.AddAttachment("800", "big.json", "application/json", big))
		if !strings.Contains(got, "at most 200 bytes") {
			t.Errorf("answer = %q", got)
		}
		for _, r := range tb.fake.Requests()[before:] {
			if strings.HasPrefix(r.URLPath, "/attachments/") {
				t.Error("an oversized attachment was downloaded")
			}
		}
	})

	t.Run("ActualSizeTooLarge", func(t *testing.T) {
		att := tb.fake.AddAttachment("800", "liar.json", "application/json", big)
		att.Size = 10
		if got := importOf(att); !strings.Contains(got, "larger than 200 bytes") {
			t.Errorf("answer = %q", got)
		}
	})

	t.Run("NotJSON", func(t *testing.T) {
		if got := importOf(tb.fake.AddAttachment("800", "notes.txt", "text/plain", []byte("hello"))); !strings.Contains(got, "not a kioku export") {
			t.Errorf("answer = %q", got)
		}
	})

	t.Run("FullPrivacyCannotImport", func(t *testing.T) {
		if err := tb.store.Settings.SetPrivacy(context.Background(), alice.ID, memory.PrivacyFull); err != nil {
			t.Fatal(err)
		}
		ok := []byte(`{"format":"kioku.memories.v1","memories":[{"content":"fine"}]}`)
		if got := importOf(tb.fake.AddAttachment("800", "ok.json", "application/json", ok)); !strings.Contains(got, "privacy level is full") {
			t.Errorf("answer = %q", got)
		}
	})
	mems, _, err := tb.store.Memories.List(context.Background(), memory.PersonalOwner(alice.ID), memory.ListOptions{})
	if err != nil || len(mems) != 0 {
		t.Errorf("refused imports wrote %d memories (%v)", len(mems), err)
	}
}

// TestHistoryShowsPipelineChanges: what the background pipeline changed in full mode is
// in /memory history as a change by the pipeline, with its reason and the old content
// struck through; what it only proposed or flagged is shown as such, never as a change.
func TestHistoryShowsPipelineChanges(t *testing.T) {
	tb := newTestBot(t)
	const guild, channel = "600", "601"
	alice := tb.fake.NewUser("alice")
	g := memory.ServerOwner(guild)
	raid := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: "Raid night is Tuesday at 20:00"})
	bank := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: "The guild bank is open to everyone"})
	if _, err := tb.store.Facts.ApplyPipelineBatch(t.Context(), memory.PipelineBatch{GuildID: guild, ChannelID: channel, CursorTo: 3, Proposals: []memory.Proposal{
		{Action: memory.ProposeUpdate, Owner: g, TargetID: raid.ID, Memory: memory.Memory{Content: "Raid night is Wednesday at 20:00"}, Reason: "moved by the officers", MayEditServer: true},
		{Action: memory.ProposeUpdate, Owner: g, TargetID: raid.ID, Memory: memory.Memory{Content: "Raid night is Thursday"}, Record: memory.ActionShadow, Reason: "shadow mode"},
		{Action: memory.ProposeAdd, Owner: g, Memory: memory.Memory{Content: "The guild bank is not open to everyone anymore"}, Contradicts: []int64{bank.ID}, Reason: "new rule"},
	}}); err != nil {
		t.Fatal(err)
	}
	history := func(id int64) string {
		t.Helper()
		data := discordgo.ApplicationCommandInteractionData{Name: "memory", Options: []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: "history", Type: discordgo.ApplicationCommandOptionSubCommand, Options: []*discordgo.ApplicationCommandInteractionDataOption{
				{Name: "scope", Type: discordgo.ApplicationCommandOptionString, Value: "server"},
				{Name: "id", Type: discordgo.ApplicationCommandOptionInteger, Value: float64(id)}}}}}
		msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, channel, alice, 0, data))
		if len(msg.Embeds) != 1 {
			t.Fatalf("history of #%d answered %+v", id, msg)
		}
		return msg.Embeds[0].Description
	}

	raidHistory := history(raid.ID)
	for _, want := range []string{
		"**v2 update** by kioku's background pipeline", "(moved by the officers)",
		"> ~~Raid night is Tuesday at 20:00~~\n> Raid night is Wednesday at 20:00",
		"**v2 shadow** by kioku's background pipeline", "> not applied: Raid night is Thursday",
	} {
		if !strings.Contains(raidHistory, want) {
			t.Errorf("raid history lacks %q:\n%s", want, raidHistory)
		}
	}
	if strings.Contains(raidHistory, "~~Raid night is Wednesday") {
		t.Errorf("the shadow proposal reads as an applied change:\n%s", raidHistory)
	}
	bankHistory := history(bank.ID)
	if !strings.Contains(bankHistory, "review_needed** by kioku's background pipeline") ||
		!strings.Contains(bankHistory, "> may contradict: The guild bank is not open to everyone anymore") ||
		strings.Contains(bankHistory, "~~The guild bank is open") {
		t.Errorf("bank history does not show the contradiction as a flag:\n%s", bankHistory)
	}
}

// TestMemorySearchCountsAccess: /memory show shows the importance decayed since the memory
// was last recalled, with its base; /memory search is a member recalling memories, so it
// counts the access and the importance is back at its base.
func TestMemorySearchCountsAccess(t *testing.T) {
	store := testkit.MustOpenStore(t)
	clock := testkit.NewClock(time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC))
	store.Now = clock.Now
	tb := newTestBotOn(t, store)
	const guild, channel = "700", "701"
	alice := tb.fake.NewUser("alice")
	m := testkit.MustRemember(t, store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: "The ferry leaves at noon", Importance: 0.8})
	clock.Advance(20 * 24 * time.Hour)

	command := func(sub string, opts ...*discordgo.ApplicationCommandInteractionDataOption) *fakediscord.SentMessage {
		t.Helper()
		opts = append(opts, &discordgo.ApplicationCommandInteractionDataOption{Name: "scope", Type: discordgo.ApplicationCommandOptionString, Value: "server"})
		data := discordgo.ApplicationCommandInteractionData{Name: "memory", Options: []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: sub, Type: discordgo.ApplicationCommandOptionSubCommand, Options: opts}}}
		msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, channel, alice, 0, data))
		if len(msg.Embeds) != 1 {
			t.Fatalf("/memory %s answered %+v", sub, msg)
		}
		return msg
	}
	importance := func() string {
		t.Helper()
		msg := command("show", &discordgo.ApplicationCommandInteractionDataOption{Name: "id", Type: discordgo.ApplicationCommandOptionInteger, Value: float64(m.ID)})
		for _, f := range msg.Embeds[0].Fields {
			if f.Name == "Importance" {
				return f.Value
			}
		}
		t.Fatalf("/memory show has no importance: %+v", msg.Embeds[0].Fields)
		return ""
	}

	// 0.8 × 0.95^20 ≈ 0.287.
	if got := importance(); got != "0.29 (decayed from 0.80)" {
		t.Fatalf("importance after 20 days without recall = %q", got)
	}
	if err := store.Recall.FlushAccess(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, err := store.Memories.Get(t.Context(), memory.ServerOwner(guild), m.ID); err != nil || got.AccessCount != 0 {
		t.Fatalf("/memory show counted as access: %+v %v", got, err)
	}
	msg := command("search", &discordgo.ApplicationCommandInteractionDataOption{Name: "query", Type: discordgo.ApplicationCommandOptionString, Value: "ferry"})
	if !strings.Contains(msg.Embeds[0].Description, "#"+strconv.FormatInt(m.ID, 10)) {
		t.Fatalf("/memory search did not find #%d: %s", m.ID, msg.Embeds[0].Description)
	}
	if err := store.Recall.FlushAccess(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := store.Memories.Get(t.Context(), memory.ServerOwner(guild), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessCount != 1 || !got.AccessedAt.Equal(clock.Now()) {
		t.Fatalf("after /memory search: access count %d, last access %v; want 1 at %v", got.AccessCount, got.AccessedAt, clock.Now())
	}
	if got := importance(); got != "0.80" {
		t.Fatalf("importance right after /memory search = %q, want the base 0.80", got)
	}
}
