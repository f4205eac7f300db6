package main

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

// Item 12 through the real wiring: a pinned memory forgotten with /memory forget is gone
// from the very next turn's prompt (the command path never tells the chat engine; the
// engine's cache notices the store's pinned change counter).
func TestRunForgottenPinnedMemoryLeavesPrompt(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	admin := h.fake.NewUser("admin")
	bot := h.fake.BotUser()
	pinned := &discordgo.ApplicationCommandInteractionDataOption{Name: "pinned", Type: discordgo.ApplicationCommandOptionBoolean, Value: true}
	r := h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", "House rule: no spoilers before Friday"), pinned))
	id := rememberedID(t, r)

	h.ai.Script(fakeopenai.Text("hello"))
	h.chat(h.fake.GuildMessage(guildA, channelA, admin, "<@"+bot.ID+"> hi", bot))
	mustContain(t, "prompt with the pinned memory", lastPrompt(t, h.ai), "no spoilers before Friday")

	r = h.command(guildA, channelA, admin, permAdmin, slash("memory", "forget", intOpt("id", id)))
	mustContain(t, "forget", r.Text(), "Forgot (server)")

	h.ai.Script(fakeopenai.Text("hello again"))
	h.chat(h.fake.GuildMessage(guildA, channelA, admin, "<@"+bot.ID+"> hi again", bot))
	mustNotContain(t, "prompt after forget", lastPrompt(t, h.ai), "no spoilers before Friday")
}
