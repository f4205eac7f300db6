package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/memory"
)

// More end-to-end tests of issue 5, on the harness of run_test.go: the
// gateway handshake and command registration, which messages are answered,
// that personal memory never reaches another user through any /memory view
// or button, and that every remaining command works through the real wiring.

// rememberedID reads the memory number from a "📌 Remembered (scope) #N: …"
// answer, failing the test when the answer is anything else.
func rememberedID(t *testing.T, r reply) int {
	t.Helper()
	m := regexp.MustCompile(`Remembered \((?:server|personal)\) #(\d+)`).FindStringSubmatch(r.Text())
	if m == nil {
		t.Fatalf("answer %q is not a new memory", r.Text())
	}
	id, _ := strconv.Atoi(m[1])
	return id
}

// lastPrompt joins every message of the newest chat request, for checking
// what the model was shown.
func lastPrompt(t *testing.T, ai *fakeopenai.Server) string {
	t.Helper()
	reqs := ai.ChatRequests()
	if len(reqs) == 0 {
		t.Fatal("the model was never called")
	}
	var sb strings.Builder
	for _, m := range reqs[len(reqs)-1].Messages {
		sb.WriteString(m.Content + "\n")
	}
	return sb.String()
}

// exportContents runs /memory export and returns the exported contents.
func (h *e2e) exportContents(guildID, channelID string, user *discordgo.User, perms int64, scope string) []string {
	h.t.Helper()
	r := h.command(guildID, channelID, user, perms, slash("memory", "export", strOpt("scope", scope)))
	if len(r.Msg.Files) != 1 {
		h.t.Fatalf("export answered %q with %d files, want 1", r.Text(), len(r.Msg.Files))
	}
	f, err := memory.ParseExport(r.Msg.Files[0].Data)
	if err != nil {
		h.t.Fatalf("export is not a valid export file: %v", err)
	}
	var out []string
	for _, m := range f.Memories {
		out = append(out, m.Content)
	}
	return out
}

// TestRunGatewayAndRegistration: kioku identifies with the intents it needs
// to read messages (a missing Message Content intent means empty messages)
// and registers every command of SPEC §6 in one global bulk overwrite.
func TestRunGatewayAndRegistration(t *testing.T) {
	t.Parallel()
	h := startBot(t)

	ids := h.fake.Identifies()
	if len(ids) == 0 {
		t.Fatal("no IDENTIFY recorded")
	}
	for _, want := range []struct {
		name   string
		intent discordgo.Intent
	}{
		{"guilds", discordgo.IntentsGuilds},
		{"guild messages", discordgo.IntentsGuildMessages},
		{"message content", discordgo.IntentsMessageContent},
		{"direct messages", discordgo.IntentsDirectMessages},
	} {
		if ids[0].Intents&want.intent == 0 {
			t.Errorf("IDENTIFY intents %b lack %s", ids[0].Intents, want.name)
		}
	}

	var puts int
	for _, r := range h.fake.Requests() {
		if r.Method == "PUT" && strings.HasPrefix(r.Path, "/applications/") {
			puts++
			if r.Path != "/applications/"+h.appID+"/commands" {
				t.Errorf("commands registered at %s, want the global %s", r.Path, "/applications/"+h.appID+"/commands")
			}
		}
	}
	if puts != 1 {
		t.Errorf("%d command registrations, want one bulk overwrite", puts)
	}

	want := map[string][]string{
		"memory":        {"list", "search", "show", "add", "edit", "forget", "recover", "history", "undo", "export", "import", "review", "forget-me"},
		"privacy":       nil,
		"stm":           {"show", "clear"},
		"kioku":         {"config", "status", "jobs"},
		"Remember this": nil,
	}
	got := map[string][]string{}
	for _, c := range h.fake.Commands() {
		var subs []string
		for _, o := range c.Options {
			if o.Type == discordgo.ApplicationCommandOptionSubCommand {
				subs = append(subs, o.Name)
			}
		}
		got[c.Name] = subs
		if c.Name == "Remember this" && c.Type != discordgo.MessageApplicationCommand {
			t.Errorf("Remember this has type %d, want a message context menu", c.Type)
		}
	}
	for name, subs := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("command %q was not registered", name)
			continue
		}
		if !slices.Equal(g, subs) {
			t.Errorf("/%s subcommands = %q, want %q", name, g, subs)
		}
	}
	if len(got) != len(want) {
		t.Errorf("registered %d commands, want %d", len(got), len(want))
	}
}

// TestRunWhichMessagesAreAnswered: a reply to one of the bot's messages is
// answered without a mention; replies to people, other bots' mentions and
// partial events (no member, no author) are not answered and crash nothing.
// Gateway handlers run concurrently, so every ignored message is followed by
// an addressed one whose scripted answer must arrive: an ignored message
// that reached the model would have taken that answer instead.
func TestRunWhichMessagesAreAnswered(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice, bob := h.fake.NewUser("alice"), h.fake.NewUser("bob")
	me := h.fake.BotUser()

	h.ai.Script(fakeopenai.Text("The meetup is at six."))
	first := h.chat(h.fake.GuildMessage(guildA, channelA, alice, "<@"+me.ID+"> when is the meetup?", me))
	botMsg, ok := h.fake.StoredMessage(first.ID)
	if !ok {
		t.Fatalf("the bot's reply %s is not stored", first.ID)
	}

	t.Run("ReplyToBot", func(t *testing.T) {
		h := h.in(t)
		h.ai.Script(fakeopenai.Text("Yes, bring snacks."))
		m := fakediscord.ReplyTo(h.fake.GuildMessage(guildA, channelA, alice, "should I bring anything?"), botMsg)
		got := h.chat(m)
		if got.Content != "Yes, bring snacks." {
			t.Errorf("reply = %q", got.Content)
		}
		mustContain(t, "prompt", lastPrompt(t, h.ai), "should I bring anything?")
	})

	t.Run("NotAddressed", func(t *testing.T) {
		h := h.in(t)
		calls := h.ai.ChatCount()
		humanMsg := h.fake.GuildMessage(guildA, channelA, bob, "I'll be late")
		if err := h.fake.DispatchMessage(humanMsg); err != nil {
			t.Fatal(err)
		}
		otherBot := &discordgo.User{ID: h.fake.NewSnowflake(), Username: "otherbot", Bot: true}
		noAuthor := h.fake.GuildMessage(guildA, channelA, alice, "<@"+me.ID+"> who am I?", me)
		noAuthor.Author = nil
		for _, m := range []*discordgo.Message{
			fakediscord.ReplyTo(h.fake.GuildMessage(guildA, channelA, alice, "me too"), humanMsg),
			h.fake.GuildMessage(guildA, channelA, otherBot, "<@"+me.ID+"> hello fellow bot", me),
			noAuthor,
		} {
			if err := h.fake.DispatchMessage(m); err != nil {
				t.Fatal(err)
			}
		}
		// A partial member (no user, no nick) is normal for guild messages;
		// none at all must not stop the answer either.
		noMember := h.fake.GuildMessage(guildA, channelA, bob, "<@"+me.ID+"> still here?", me)
		noMember.Member = nil
		h.ai.Script(fakeopenai.Text("Still here."))
		if got := h.chat(noMember); got.Content != "Still here." {
			t.Errorf("reply to a message without member = %q", got.Content)
		}
		if n := h.ai.ChatCount() - calls; n != 1 {
			t.Errorf("%d model calls, want 1 (only the addressed message)", n)
		}
		// An ignored message that reached the model anyway would have got
		// the fake's default answer, posted in the channel.
		for _, m := range h.fake.Messages(channelA) {
			mustNotContain(t, "bot message", m.Content, fakeopenai.DefaultReply)
		}
	})
}

// TestRunPersonalMemoryStaysPrivate: nothing of one user's personal memory
// reaches another user through list, search, show, history, export, edit,
// forget, recover or a confirm button, in DMs or in a guild, even for an
// admin; "Remember this" on someone else's message makes a memory of the
// invoker only.
func TestRunPersonalMemoryStaysPrivate(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice, bob := h.fake.NewUser("alice"), h.fake.NewUser("bob")
	const aliceDM, bobDM = "200000000000000031", "200000000000000032"

	r := h.command("", aliceDM, alice, 0, slash("memory", "add", strOpt("content", "My cat is called Miso")))
	miso := rememberedID(t, r)
	r = h.command(guildA, channelA, alice, permMember, slash("memory", "add",
		strOpt("content", "I am allergic to peanuts"), strOpt("scope", "personal")))
	if !r.Ephemeral {
		t.Error("personal add in a guild is not ephemeral")
	}
	peanuts := rememberedID(t, r)
	r = h.command("", aliceDM, alice, 0, slash("memory", "add", strOpt("content", "My locker code hint is the blue door")))
	locker := rememberedID(t, r)
	r = h.command("", aliceDM, alice, 0, slash("memory", "forget", intOpt("id", locker)))
	mustContain(t, "alice forgets", r.Text(), "Forgot (personal)")

	secrets := []string{"Miso", "peanuts", "blue door"}
	where := []struct {
		name           string
		guild, channel string
		perms          int64
	}{
		{"DM", "", bobDM, 0},
		{"GuildAsAdmin", guildA, channelA, permAdmin},
	}
	for _, w := range where {
		t.Run(w.name, func(t *testing.T) {
			h := h.in(t)
			cmd := func(sub string, opts ...*discordgo.ApplicationCommandInteractionDataOption) reply {
				t.Helper()
				r := h.command(w.guild, w.channel, bob, w.perms, slash("memory", sub, opts...))
				if !r.Ephemeral {
					t.Errorf("/memory %s is not ephemeral", sub)
				}
				// The answer may echo bob's own query back; only what
				// is left can leak.
				text := r.Text()
				for _, o := range opts {
					if o.Name == "query" {
						text = strings.ReplaceAll(text, o.Value.(string), "")
					}
				}
				mustNotContain(t, "bob's /memory "+sub, text, secrets...)
				return r
			}
			personal := strOpt("scope", "personal")
			mustContain(t, "list", cmd("list", personal).Text(), "no memories")
			mustContain(t, "search", cmd("search", strOpt("query", "Miso cat"), personal).Text(), "Nothing")
			for _, id := range []int{miso, peanuts, locker} {
				mustContain(t, "show", cmd("show", intOpt("id", id), personal).Text(), "no memory #"+strconv.Itoa(id))
				mustContain(t, "history", cmd("history", intOpt("id", id), personal).Text(), "no memory #"+strconv.Itoa(id))
				mustContain(t, "edit", cmd("edit", intOpt("id", id), strOpt("content", "bob was here"), personal).Text(), "no memory")
				mustContain(t, "forget", cmd("forget", intOpt("id", id), personal).Text(), "no memory")
				mustContain(t, "recover", cmd("recover", intOpt("id", id), personal).Text(), "no memory")
			}
			mustContain(t, "forget by query", cmd("forget", strOpt("query", "Miso"), personal).Text(), "No memory")
			if got := h.exportContents(w.guild, w.channel, bob, w.perms, "personal"); len(got) != 0 {
				t.Errorf("bob's personal export holds %q", got)
			}
			if w.guild != "" {
				// The guild's server memory is not a back door either.
				cmd("list")
				cmd("search", strOpt("query", "peanuts"))
				for _, id := range []int{miso, peanuts, locker} {
					mustContain(t, "server show", cmd("show", intOpt("id", id)).Text(), "no memory")
					mustContain(t, "server history", cmd("history", intOpt("id", id)).Text(), "no memory")
				}
				if got := h.exportContents(w.guild, w.channel, bob, w.perms, "server"); len(got) != 0 {
					t.Errorf("guild A's server export holds %q", got)
				}
			}
		})
	}

	t.Run("ConfirmButtonOfAnotherUser", func(t *testing.T) {
		h := h.in(t)
		preview := h.command("", aliceDM, alice, 0, slash("memory", "forget", strOpt("query", "Miso"), strOpt("scope", "personal")))
		mustContain(t, "alice's preview", preview.Text(), "Miso")
		confirm := button(t, preview, "mem:forget:personal:")
		// Had bob seen the button, his press acts on his own scope, where
		// the token means nothing.
		r := h.interact(h.fake.ComponentClick("", bobDM, bob, 0, confirm, nil))
		mustNotContain(t, "bob's press", r.Text(), "Forgot")
		h.press(preview, alice, 0, "mem:cancel")
	})

	// Alice still has everything, unchanged: the refusals above were real
	// refusals and not no-ops on the wrong ids.
	show := h.command("", aliceDM, alice, 0, slash("memory", "show", intOpt("id", miso), strOpt("scope", "personal"))).Text()
	mustContain(t, "alice's show", show, "My cat is called Miso", "Version: 1")
	list := h.command(guildA, channelA, alice, permMember, slash("memory", "list", strOpt("scope", "personal"))).Text()
	mustContain(t, "alice's list", list, "Miso", "peanuts", "2 memories")
	r = h.command("", aliceDM, alice, 0, slash("memory", "recover", intOpt("id", locker)))
	mustContain(t, "alice recovers", r.Text(), "Recovered (personal)", "blue door")

	t.Run("RememberThisOnSomeoneElsesMessage", func(t *testing.T) {
		h := h.in(t)
		bobsMsg := h.fake.GuildMessage(guildA, channelA, bob, "Bob's birthday is on June 9th")
		r := h.interact(h.fake.MessageCommand(guildA, channelA, alice, permMember, "Remember this", bobsMsg))
		if !r.Ephemeral {
			t.Error("Remember this answer is not ephemeral")
		}
		if r.Type != discordgo.InteractionResponseDeferredChannelMessageWithSource {
			t.Errorf("Remember this was answered with type %d, want a deferred response first", r.Type)
		}
		id := rememberedID(t, r)
		mustContain(t, "remember this", r.Text(), "Remembered (personal)", "June 9th")

		// It is alice's: she sees it, with bob credited as the author.
		show := h.command(guildA, channelA, alice, permMember, slash("memory", "show", intOpt("id", id), strOpt("scope", "personal"))).Text()
		mustContain(t, "alice's show", show, "June 9th", "<@"+bob.ID+">")
		// Bob, whose words they were, does not hold it, and neither does
		// the server.
		mustNotContain(t, "bob's personal list",
			h.command("", bobDM, bob, 0, slash("memory", "list", strOpt("scope", "personal"))).Text(), "June 9th")
		mustContain(t, "bob's show",
			h.command("", bobDM, bob, 0, slash("memory", "show", intOpt("id", id), strOpt("scope", "personal"))).Text(), "no memory")
		mustNotContain(t, "server list",
			h.command(guildA, channelA, bob, permAdmin, slash("memory", "list")).Text(), "June 9th")

		// In a DM, on the bot's own message, it is the invoker's as well.
		dmMsg := h.fake.DMMessage(aliceDM, h.fake.BotUser(), "Your dentist appointment is on Tuesday")
		r = h.interact(h.fake.MessageCommand("", aliceDM, alice, 0, "Remember this", dmMsg))
		mustContain(t, "remember this in a DM", r.Text(), "Remembered (personal)", "dentist")
		dmList := h.command("", aliceDM, alice, 0, slash("memory", "list")).Text()
		mustContain(t, "alice's list", dmList, "dentist", "June 9th", "from a server")
		// Seen from a DM no server is "another" one.
		mustNotContain(t, "alice's list", dmList, "from another server")
	})
}

// TestRunMemoryCommands drives the commands the done-criteria tests do not
// reach (search, show, edit, history, privacy, stm, kioku config) through
// the gateway, and checks that the slow ones are deferred.
func TestRunMemoryCommands(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	admin, alice := h.fake.NewUser("admin"), h.fake.NewUser("alice")
	const aliceDM = "200000000000000041"

	r := h.command(guildA, channelA, admin, permAdmin, slash("memory", "add",
		strOpt("content", "Raid night is Friday at 20:00"), strOpt("type", "event"), strOpt("tags", "raid, schedule")))
	if r.Type != discordgo.InteractionResponseDeferredChannelMessageWithSource {
		t.Errorf("/memory add answered with type %d, want a deferred response first", r.Type)
	}
	raid := rememberedID(t, r)
	h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", "Kenji runs the guild bank")))

	t.Run("Search", func(t *testing.T) {
		h := h.in(t)
		r := h.command(guildA, channelA, alice, permMember, slash("memory", "search", strOpt("query", "raid")))
		if r.Type != discordgo.InteractionResponseDeferredChannelMessageWithSource {
			t.Errorf("/memory search answered with type %d, want a deferred response first", r.Type)
		}
		mustContain(t, "search", r.Text(), "Raid night")
		mustNotContain(t, "search", r.Text(), "Kenji")
	})

	t.Run("Show", func(t *testing.T) {
		h := h.in(t)
		r := h.command(guildA, channelA, alice, permMember, slash("memory", "show", intOpt("id", raid)))
		mustContain(t, "show", r.Text(), "Raid night is Friday at 20:00", "Type: event", "Tags: raid, schedule", "Version: 1")
	})

	t.Run("EditAndHistory", func(t *testing.T) {
		h := h.in(t)
		r := h.command(guildA, channelA, admin, permAdmin, slash("memory", "edit", intOpt("id", raid),
			strOpt("content", "Raid night moved to Saturday at 21:00")))
		mustContain(t, "edit", r.Text(), "Updated (server)", "version 2", "Saturday")
		show := h.command(guildA, channelA, alice, permMember, slash("memory", "show", intOpt("id", raid))).Text()
		mustContain(t, "show after edit", show, "Saturday at 21:00", "Version: 2")
		hist := h.command(guildA, channelA, alice, permMember, slash("memory", "history", intOpt("id", raid))).Text()
		mustContain(t, "history", hist, "v1 create", "v2 update", "~~Raid night is Friday at 20:00~~", "<@"+admin.ID+">")
	})

	t.Run("KiokuConfig", func(t *testing.T) {
		h := h.in(t)
		r := h.command(guildA, channelA, admin, permAdmin, slash("kioku", "config"))
		mustContain(t, "config", r.Text(), "Self-teaching", "Pipeline mode", "Auto-reply channels: none")
		r = h.command(guildA, channelA, admin, permAdmin, slash("kioku", "config",
			&discordgo.ApplicationCommandInteractionDataOption{Name: "self_teaching", Type: discordgo.ApplicationCommandOptionBoolean, Value: true},
			strOpt("persona", "You are a cheerful librarian.")))
		mustContain(t, "config change", r.Text(), "Saved", "on: the model may save", "cheerful librarian")
		h.ai.Script(fakeopenai.Text("Happy to help."))
		h.chat(h.fake.GuildMessage(guildA, channelA, alice, "<@"+h.fake.BotUser().ID+"> hello", h.fake.BotUser()))
		mustContain(t, "prompt after persona", lastPrompt(t, h.ai), "cheerful librarian")
		var offered []string
		reqs := h.ai.ChatRequests()
		for _, tool := range reqs[len(reqs)-1].Tools {
			if tool.Function != nil {
				offered = append(offered, tool.Function.Name)
			}
		}
		if !slices.Contains(offered, "create_long_term_memory") {
			t.Errorf("tools offered with self-teaching on = %q, want create_long_term_memory among them", offered)
		}
		r = h.command(guildA, channelA, alice, permMember, slash("kioku", "config", strOpt("persona", "You are a pirate.")))
		mustContain(t, "member config", r.Text(), "Manage Server")
	})

	t.Run("ShortTermMemory", func(t *testing.T) {
		h := h.in(t)
		h.ai.Script(fakeopenai.Text("Sounds fun!"))
		h.chat(h.fake.DMMessage(aliceDM, alice, "I am going hiking on Mount Takao"))
		mustContain(t, "stm show", h.command("", aliceDM, alice, 0, slash("stm", "show")).Text(), "Mount Takao", "Direct messages")
		r := h.command(guildA, channelA, alice, permMember, slash("stm", "clear",
			strOpt("what", "channel")))
		mustContain(t, "member clearing a channel", r.Text(), "Manage Server")
		mustContain(t, "stm clear", h.command("", aliceDM, alice, 0, slash("stm", "clear")).Text(), "Cleared your short-term memory")
		mustContain(t, "stm after clear", h.command("", aliceDM, alice, 0, slash("stm", "show")).Text(), "no short-term memory")
	})

	t.Run("PrivacyFull", func(t *testing.T) {
		h := h.in(t)
		const bobDM = "200000000000000042"
		bob := h.fake.NewUser("bob")
		h.ai.Script(fakeopenai.Text("Hi Bob."))
		h.chat(h.fake.DMMessage(bobDM, bob, "hello"))
		r := h.command("", bobDM, bob, 0, slash("privacy", "", strOpt("level", "full")))
		mustContain(t, "privacy", r.Text(), "Level: full", "ignore your messages")
		mustContain(t, "stm at full", h.command("", bobDM, bob, 0, slash("stm", "show")).Text(), "no short-term memory")

		// Bob is ignored; alice's later message is answered with the one
		// scripted reply, so bob's message never reached the model.
		calls := h.ai.ChatCount()
		if err := h.fake.DispatchMessage(h.fake.DMMessage(bobDM, bob, "please remember my secret plan")); err != nil {
			t.Fatal(err)
		}
		h.ai.Script(fakeopenai.Text("Hello alice."))
		if got := h.chat(h.fake.DMMessage(aliceDM, alice, "hi")); got.Content != "Hello alice." {
			t.Errorf("alice's reply = %q", got.Content)
		}
		if n := h.ai.ChatCount() - calls; n != 1 {
			t.Errorf("%d model calls, want 1: a full-privacy user's message reached the model", n)
		}
		if n := len(h.fake.Messages(bobDM)); n != 1 {
			t.Errorf("%d bot messages in bob's DM, want only the answer from before full privacy", n)
		}
		// Nothing was captured: the transcript holds the two turns from
		// before, not the ignored message.
		mustContain(t, "bob's forget-me preview", h.command("", bobDM, bob, 0, slash("memory", "forget-me")).Text(), "2 conversation turns")

		mustContain(t, "add at full", h.command("", bobDM, bob, 0, slash("memory", "add", strOpt("content", "x y z"))).Text(), "privacy level is full")
		if got := h.exportContents("", bobDM, bob, 0, "personal"); len(got) != 0 {
			t.Errorf("bob's export = %q", got)
		}
		r = h.command("", bobDM, bob, 0, slash("privacy", "", strOpt("level", "normal")))
		mustContain(t, "privacy back", r.Text(), "Level: normal")
		h.ai.Script(fakeopenai.Text("Welcome back."))
		if got := h.chat(h.fake.DMMessage(bobDM, bob, "I'm back")); got.Content != "Welcome back." {
			t.Errorf("reply after normal = %q", got.Content)
		}
	})
}

// TestRunForgetMeScrubsSharedChannels: after forget-me, the caller's words
// are gone from what the model sees in a guild channel they spoke in (their
// messages, the bot's replies to them, and the channel summary written while
// they took part), while other people's words in the same channel are still
// there.
func TestRunForgetMeScrubsSharedChannels(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice, bob := h.fake.NewUser("alice"), h.fake.NewUser("bob")
	me := h.fake.BotUser()
	h.ai.Script(
		fakeopenai.ToolCalls(fakeopenai.Call{Name: "update_short_term_memory", Arguments: `{"summary":"Alice shared her lucky fruit, the ananas."}`}),
		fakeopenai.Text("Noted, ananas it is."),
		fakeopenai.Text("Got it."))
	h.chat(h.fake.GuildMessage(guildA, channelA, alice, "<@"+me.ID+"> my lucky fruit is pineapple", me))
	h.chat(h.fake.GuildMessage(guildA, channelA, bob, "<@"+me.ID+"> my favourite colour is teal", me))
	h.ai.Script(fakeopenai.Text("Sure."))
	h.chat(h.fake.GuildMessage(guildA, channelA, bob, "<@"+me.ID+"> anything new?", me))
	// Before forget-me the summary stands in for the channel's messages.
	mustContain(t, "prompt before forget-me", lastPrompt(t, h.ai), "ananas")

	const aliceDM = "200000000000000051"
	preview := h.command("", aliceDM, alice, 0, slash("memory", "forget-me"))
	confirm := button(t, preview, "forgetme:confirm:")
	mustContain(t, "forget-me", h.press(preview, alice, 0, confirm).Text(), "Done")

	h.ai.Script(fakeopenai.Text("Sure."))
	h.chat(h.fake.GuildMessage(guildA, channelA, bob, "<@"+me.ID+"> what do you know?", me))
	prompt := lastPrompt(t, h.ai)
	mustContain(t, "prompt after forget-me", prompt, "teal")
	mustNotContain(t, "prompt after forget-me", prompt, "pineapple", "ananas")
}
