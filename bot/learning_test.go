package bot_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// TestLearningControls: through the real chat engine, a message in an age-restricted
// channel is answered and stored but not for extraction, and the model may not save from
// it while /memory add still saves; only a manager switches a channel's learning, which
// stops what it has not been learned from yet; an age-restricted channel switched on learns.
func TestLearningControls(t *testing.T) {
	ai := fakeopenai.New(t)
	store := testkit.MustOpenStore(t)
	tb := newTestBotOn(t, store, func(cfg *bot.Config) {
		model, err := llm.New(llm.Config{BaseURL: ai.URL(), APIKey: fakeopenai.APIKey, ChatModel: "test-model"})
		if err != nil {
			t.Fatal(err)
		}
		engine, err := chat.New(chat.Config{}, chat.Deps{Memories: store.Memories, Duplicates: store.Duplicates, Recall: store.Recall, Transcript: store.Transcripts,
			Settings: store.Settings, ShortTerm: cfg.STM, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Turner = engine
	})
	ctx := context.Background()
	const guild, general, nsfw = "810", "811", "812"
	if err := tb.session.State.GuildAdd(&discordgo.Guild{ID: guild, OwnerID: "1", Roles: []*discordgo.Role{
		{ID: guild, Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*discordgo.Channel{
		{ID: general, GuildID: guild, Type: discordgo.ChannelTypeGuildText},
		{ID: nsfw, GuildID: guild, Type: discordgo.ChannelTypeGuildText, NSFW: true},
	} {
		if err := tb.session.State.ChannelAdd(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: guild, SelfTeaching: true}); err != nil {
		t.Fatal(err)
	}
	me, alice, admin := tb.fake.BotUser(), tb.fake.NewUser("alice"), tb.fake.NewUser("admin")
	say := func(channel, text string) {
		t.Helper()
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: tb.fake.GuildMessage(guild, channel, alice, "<@"+me.ID+"> "+text, me)})
	}
	extractable := func(channel string) int {
		t.Helper()
		turns, err := store.Transcripts.TurnsAfter(ctx, guild, channel, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(turns)
	}
	config := func(user *discordgo.User, perms int64, opts ...*discordgo.ApplicationCommandInteractionDataOption) string {
		t.Helper()
		msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, general, user, perms, slashData("kioku", "config", opts...)))
		return msg.Content
	}
	learning := func(on bool, channel string) []*discordgo.ApplicationCommandInteractionDataOption {
		return []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: "learning", Type: discordgo.ApplicationCommandOptionBoolean, Value: on},
			{Name: "learning_channel", Type: discordgo.ApplicationCommandOptionChannel, Value: channel}}
	}

	t.Run("AgeRestrictedChannelStoresButDoesNotLearn", func(t *testing.T) {
		ai.Script(fakeopenai.ToolCalls(fakeopenai.Call{Name: tools.NameCreateLTM,
			Arguments: `{"memory_content":"Alice likes pineapple pizza","memory_scope":"target_user"}`}),
			fakeopenai.Text("I can't keep that here."))
		say(nsfw, "remember that I like pineapple pizza")
		if sent := tb.fake.Messages(nsfw); len(sent) != 1 || sent[0].Content != "I can't keep that here." {
			t.Fatalf("sent %+v, want the model's answer", sent)
		}
		reqs := ai.ChatRequests()
		var offered []string
		for _, tool := range reqs[0].Tools {
			offered = append(offered, tool.Function.Name)
		}
		if slices.Contains(offered, tools.NameCreateLTM) || slices.Contains(offered, tools.NameUpdateLTM) {
			t.Errorf("tools offered in an age-restricted channel: %v", offered)
		}
		last := reqs[len(reqs)-1].Messages
		if res := last[len(last)-1]; res.Role != "tool" || !strings.Contains(res.Content, "/memory add") {
			t.Errorf("the forced save's result %q does not point to /memory add", res.Content)
		}
		turns, err := store.Transcripts.RecentTurns(ctx, guild, nsfw, alice.ID, 10)
		if err != nil || len(turns) != 2 {
			t.Fatalf("stored turns %d, %v; want the message and the answer (raw-first)", len(turns), err)
		}
		if n := extractable(nsfw); n != 0 {
			t.Errorf("extraction reads %d turns of an age-restricted channel", n)
		}
		if mems, _, _ := store.Memories.List(ctx, memory.PersonalOwner(alice.ID), memory.ListOptions{}); len(mems) != 0 {
			t.Errorf("memories saved by the model in an age-restricted channel: %v", mems)
		}
		// What the member saves themselves is saved.
		msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, nsfw, alice, discordgo.PermissionSendMessages, slashData("memory", "add",
			&discordgo.ApplicationCommandInteractionDataOption{Name: "content", Type: discordgo.ApplicationCommandOptionString, Value: "I like pineapple pizza"},
			&discordgo.ApplicationCommandInteractionDataOption{Name: "scope", Type: discordgo.ApplicationCommandOptionString, Value: "personal"})))
		if mems, _, _ := store.Memories.List(ctx, memory.PersonalOwner(alice.ID), memory.ListOptions{}); len(mems) != 1 {
			t.Errorf("/memory add in an age-restricted channel answered %q and saved %d memories, want 1", msg.Content, len(mems))
		}
	})

	t.Run("OnlyManagersSwitchLearning", func(t *testing.T) {
		ai.Script(fakeopenai.Text("ok"))
		say(general, "I had a rough week")
		if n := extractable(general); n != 2 {
			t.Fatalf("extraction reads %d turns of an ordinary channel, want 2", n)
		}
		if got := config(alice, discordgo.PermissionSendMessages, learning(false, general)...); !strings.Contains(got, "Manage Server") {
			t.Errorf("/kioku config learning by a plain member answered %q", got)
		}
		if gs, _ := store.Settings.GuildSettings(ctx, guild); len(gs.LearningChannels) != 0 || extractable(general) != 2 {
			t.Fatalf("a refused switch changed learning: %v", gs.LearningChannels)
		}
		got := config(admin, discordgo.PermissionManageGuild, learning(false, general)...)
		if !strings.Contains(got, "Learning in <#"+general+"> is now off") || !strings.Contains(got, "2 conversation turns") {
			t.Errorf("/kioku config learning:false answered %q", got)
		}
		if gs, _ := store.Settings.GuildSettings(ctx, guild); gs.LearningChannels[general] || len(gs.LearningChannels) != 1 {
			t.Errorf("learning choices %v, want %s off", gs.LearningChannels, general)
		}
		if n := extractable(general); n != 0 {
			t.Errorf("extraction still reads %d turns of the channel switched off", n)
		}
		ai.Script(fakeopenai.Text("ok"))
		say(general, "and it goes on")
		if n := extractable(general); n != 0 {
			t.Errorf("extraction reads %d new turns of the channel switched off", n)
		}
		// Learning without true or false says what is missing.
		if got := config(admin, discordgo.PermissionManageGuild, learning(false, general)[1]); !strings.Contains(got, "True or False") {
			t.Errorf("learning_channel alone answered %q", got)
		}
	})

	t.Run("AgeRestrictedChannelSwitchedOnLearns", func(t *testing.T) {
		got := config(admin, discordgo.PermissionManageGuild, learning(true, nsfw)...)
		if !strings.Contains(got, "Learning in <#"+nsfw+"> is now on") {
			t.Errorf("/kioku config learning:true answered %q", got)
		}
		ai.Script(fakeopenai.Text("ok"))
		say(nsfw, "the art contest ends Sunday")
		if n := extractable(nsfw); n != 2 {
			t.Errorf("extraction reads %d turns after the channel was switched on, want only the 2 new ones", n)
		}
		msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, nsfw, alice, discordgo.PermissionSendMessages, slashData("kioku", "status")))
		if len(msg.Embeds) != 1 || !embedHas(msg.Embeds[0], "Learning in this channel", "on (switched on with /kioku config)") {
			t.Errorf("/kioku status in the switched channel: %+v", msg.Embeds)
		}
	})
}

func embedHas(e *discordgo.MessageEmbed, name, value string) bool {
	for _, f := range e.Fields {
		if f.Name == name && f.Value == value {
			return true
		}
	}
	return false
}
