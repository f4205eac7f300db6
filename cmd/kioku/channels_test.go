package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

// Channel-aware memory (SPEC §2) through the real Discord path: a memory learned in a
// channel reaches only replies and views whose readers can all read that channel.

const (
	modsChannel    = "100000000000000012"
	privateChannel = "100000000000000013"
	modRole        = "100000000000000091"
	aliceID        = "300000000000000001"
)

// hidden is a channel @everyone may not view, opened to the given overwrites.
func hidden(guildID, id, name string, open ...*discordgo.PermissionOverwrite) *discordgo.Channel {
	ows := append([]*discordgo.PermissionOverwrite{{ID: guildID, Type: discordgo.PermissionOverwriteTypeRole,
		Deny: discordgo.PermissionViewChannel}}, open...)
	return &discordgo.Channel{ID: id, GuildID: guildID, Type: discordgo.ChannelTypeGuildText, Name: name, PermissionOverwrites: ows}
}

func modsOnly() *discordgo.Channel {
	return hidden(guildA, modsChannel, "mods", &discordgo.PermissionOverwrite{ID: modRole,
		Type: discordgo.PermissionOverwriteTypeRole, Allow: discordgo.PermissionViewChannel})
}

func TestRunChannelAwareMemory(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "off"}, func(f *fakediscord.Fake) {
		f.SetGuild(&discordgo.Guild{ID: guildA, Name: "guild A", OwnerID: "1", Roles: []*discordgo.Role{
			{ID: guildA, Name: "@everyone", Permissions: fakediscord.EveryonePermissions},
			{ID: modRole, Name: "mods", Permissions: fakediscord.EveryonePermissions},
		}})
		f.SetChannel(modsOnly())
		f.SetChannel(hidden(guildA, privateChannel, "alice-private", &discordgo.PermissionOverwrite{ID: aliceID,
			Type: discordgo.PermissionOverwriteTypeMember, Allow: discordgo.PermissionViewChannel}))
	})
	bot := h.fake.BotUser()
	mod, bob := h.fake.NewUser("mod"), h.fake.NewUser("bob")
	alice := &discordgo.User{ID: aliceID, Username: "alice", GlobalName: "alice", Discriminator: "0"}
	modRoles := []string{modRole}
	none := []string{} // Discord sends an empty list for a member without roles

	// command runs a slash command as a member holding roles, as Discord sends it.
	command := func(channel string, user *discordgo.User, roles []string, perms int64, data discordgo.ApplicationCommandInteractionData) reply {
		t.Helper()
		i := h.fake.SlashCommand(guildA, channel, user, perms, data)
		i.Member.Roles = roles
		return h.interact(i)
	}
	// ask mentions the bot in a channel and returns everything the chat model was shown.
	ask := func(t *testing.T, channel string, user *discordgo.User, roles []string) string {
		t.Helper()
		h.ai.Script(fakeopenai.Text("noted"))
		m := h.fake.GuildMessage(guildA, channel, user, "<@"+bot.ID+"> what do we know about Globex?", bot)
		m.Member.Roles = roles
		h.in(t).chat(m)
		return lastPrompt(t, h.ai)
	}
	pinned := &discordgo.ApplicationCommandInteractionDataOption{Name: "pinned", Type: discordgo.ApplicationCommandOptionBoolean, Value: true}

	banned := rememberedID(t, command(modsChannel, mod, modRoles, permAdmin, slash("memory", "add",
		strOpt("content", "Moderators decided: Globex is banned for fraud"))))
	rememberedID(t, command(modsChannel, mod, modRoles, permAdmin, slash("memory", "add",
		strOpt("content", "Moderators meet on Sundays about Globex"), pinned)))
	rememberedID(t, command(channelA, mod, modRoles, permAdmin, slash("memory", "add",
		strOpt("content", "The Globex picnic is on Friday"))))
	rememberedID(t, command(privateChannel, alice, none, permMember, slash("memory", "add",
		strOpt("content", "Globex pays my salary"), strOpt("scope", "personal"))))
	modsWords := []string{"banned for fraud", "meet on Sundays"}

	t.Run("ModsDecisionStaysOutOfGeneral", func(t *testing.T) {
		// Even a moderator asking in #general: everyone there reads the answer.
		prompt := ask(t, channelA, mod, modRoles)
		mustContain(t, "prompt in #general", prompt, "picnic is on Friday")
		mustNotContain(t, "prompt in #general", prompt, modsWords...)
	})
	t.Run("ModsDecisionUsedInMods", func(t *testing.T) {
		mustContain(t, "prompt in #mods", ask(t, modsChannel, mod, modRoles), append(modsWords, "picnic is on Friday")...)
	})
	t.Run("PrivateChannelPersonalMemoryStaysThere", func(t *testing.T) {
		prompt := ask(t, channelA, alice, none)
		mustContain(t, "alice's prompt in #general", prompt, "picnic is on Friday")
		mustNotContain(t, "alice's prompt in #general", prompt, "salary")
		mustContain(t, "alice's prompt in her channel", ask(t, privateChannel, alice, none), "salary", "picnic is on Friday")
	})
	t.Run("ViewsFollowTheCaller", func(t *testing.T) {
		list := command(channelA, bob, none, permMember, slash("memory", "list")).Text()
		mustContain(t, "bob's list", list, "picnic")
		mustNotContain(t, "bob's list", list, modsWords...)
		search := command(channelA, bob, none, permMember, slash("memory", "search", strOpt("query", "Globex fraud"))).Text()
		mustNotContain(t, "bob's search", search, modsWords...)
		show := command(channelA, bob, none, permMember, slash("memory", "show", intOpt("id", banned))).Text()
		mustContain(t, "bob's show", show, "no memory #"+strconv.Itoa(banned))
		mustNotContain(t, "bob's show", show, modsWords...)
		history := command(channelA, bob, none, permAdmin, slash("memory", "history", intOpt("id", banned))).Text()
		mustNotContain(t, "bob's history", history, modsWords...)
		// The moderator's ephemeral view is theirs alone, and names where each was learned.
		modList := command(channelA, mod, modRoles, permAdmin, slash("memory", "list")).Text()
		mustContain(t, "moderator's list", modList, "banned for fraud", "<#"+modsChannel+">", "<#"+channelA+">")
		modShow := command(channelA, mod, modRoles, permAdmin, slash("memory", "show", intOpt("id", banned))).Text()
		mustContain(t, "moderator's show", modShow, "banned for fraud", "Learned in: <#"+modsChannel+">")
	})

	t.Run("PrivateThreadStaysInItself", func(t *testing.T) {
		const thread = "100000000000000014"
		if err := h.fake.Dispatch("THREAD_CREATE", &discordgo.Channel{ID: thread, GuildID: guildA, ParentID: channelA,
			Type: discordgo.ChannelTypeGuildPrivateThread, Name: "alice and the bot", OwnerID: aliceID,
			ThreadMetadata: &discordgo.ThreadMetadata{}}); err != nil {
			t.Fatal(err)
		}
		h.fake.SetChannel(&discordgo.Channel{ID: thread, GuildID: guildA, ParentID: channelA, Type: discordgo.ChannelTypeGuildPrivateThread})
		rememberedID(t, command(thread, alice, none, permMember, slash("memory", "add",
			strOpt("content", "Globex interviewed me in secret"), strOpt("scope", "personal"))))
		mustNotContain(t, "alice's prompt in #general", ask(t, channelA, alice, none), "interviewed me")
		mustContain(t, "alice's prompt in the thread", ask(t, thread, alice, none), "interviewed me")
		// Alone with her (a DM, her own /memory list) it is hers to see: she created the thread.
		const aliceDM = "200000000000000041"
		h.ai.Script(fakeopenai.Text("noted"))
		h.in(t).chat(h.fake.DMMessage(aliceDM, alice, "what do you know about Globex?"))
		mustContain(t, "alice's DM prompt", lastPrompt(t, h.ai), "interviewed me", "salary")
		list := command(channelA, alice, none, permMember, slash("memory", "list", strOpt("scope", "personal"))).Text()
		mustContain(t, "alice's own list", list, "interviewed me", "salary")
		mustNotContain(t, "bob's DM", h.command("", "200000000000000042", bob, 0, slash("memory", "list", strOpt("scope", "personal"))).Text(), "interviewed")
	})

	t.Run("ChannelMadePublic", func(t *testing.T) {
		open := modsOnly()
		open.PermissionOverwrites = []*discordgo.PermissionOverwrite{}
		h.fake.SetChannel(open)
		if err := h.fake.Dispatch("CHANNEL_UPDATE", open); err != nil {
			t.Fatal(err)
		}
		mustContain(t, "prompt in #general after #mods opened", ask(t, channelA, bob, none), modsWords...)
	})

	t.Run("DeletedChannelKeepsItsRule", func(t *testing.T) {
		closed := modsOnly()
		h.fake.SetChannel(closed)
		if err := h.fake.Dispatch("CHANNEL_UPDATE", closed); err != nil {
			t.Fatal(err)
		}
		mustNotContain(t, "prompt in #general after #mods closed", ask(t, channelA, bob, none), modsWords...)
		if err := h.fake.Dispatch("CHANNEL_DELETE", closed); err != nil {
			t.Fatal(err)
		}
		// The bot records the deletion in the background; a channel gone from the state
		// keeps the rule the store holds for it, so the prompts below wait for that row.
		store, _ := h.in(t).openDB()
		waitFor(t, h, "the deleted channel to be recorded", func() bool {
			chans, err := store.Channels.GuildChannels(context.Background(), guildA)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range chans {
				if c.ChannelID == modsChannel && !c.DeletedAt.IsZero() {
					return true
				}
			}
			return false
		})
		prompt := ask(t, channelA, mod, modRoles)
		mustContain(t, "prompt in #general after #mods was deleted", prompt, "picnic is on Friday")
		mustNotContain(t, "prompt in #general after #mods was deleted", prompt, modsWords...)
		list := command(channelA, bob, none, permMember, slash("memory", "list")).Text()
		mustNotContain(t, "bob's list after #mods was deleted", list, modsWords...)
		modList := command(channelA, mod, modRoles, permAdmin, slash("memory", "list")).Text()
		mustContain(t, "moderator's list after #mods was deleted", modList, "banned for fraud")
	})
}
