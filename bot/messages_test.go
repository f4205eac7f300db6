package bot_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

const self = "1200000000000000001"

func TestStripMention(t *testing.T) {
	cases := map[string]string{
		"<@" + self + "> hello":              "hello",
		"hello <@!" + self + ">":             "hello",
		"hey <@" + self + ">, how are you?":  "hey , how are you?",
		"<@" + self + ">   spaced   out":     "spaced out",
		"<@" + self + ">":                    "",
		"ask <@42> about it <@" + self + ">": "ask <@42> about it",
		"no mention at all":                  "no mention at all",
		"<@" + self + "> 覚えておいて：猫はミソ":        "覚えておいて：猫はミソ",
	}
	for in, want := range cases {
		if got := bot.StripMention(in, self); got != want {
			t.Errorf("StripMention(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsAddressed(t *testing.T) {
	me := &discordgo.User{ID: self, Bot: true}
	alice := &discordgo.User{ID: "7"}
	cases := []struct {
		name string
		m    *discordgo.Message
		want bool
	}{
		{"Nil", nil, false},
		{"DM", &discordgo.Message{Author: alice, Content: "hi"}, true},
		{"GuildWithoutMention", &discordgo.Message{GuildID: "1", Author: alice, Content: "hi"}, false},
		{"MentionList", &discordgo.Message{GuildID: "1", Author: alice, Mentions: []*discordgo.User{me}}, true},
		{"MentionMarkupOnly", &discordgo.Message{GuildID: "1", Author: alice, Content: "<@!" + self + "> hi"}, true},
		{"NilMentionEntry", &discordgo.Message{GuildID: "1", Author: alice, Mentions: []*discordgo.User{nil}}, false},
		{"ReplyToBot", &discordgo.Message{GuildID: "1", Author: alice, ReferencedMessage: &discordgo.Message{Author: me}}, true},
		{"ReplyToSomeoneElse", &discordgo.Message{GuildID: "1", Author: alice, ReferencedMessage: &discordgo.Message{Author: alice}}, false},
		{"ReplyWithoutAuthor", &discordgo.Message{GuildID: "1", Author: alice, ReferencedMessage: &discordgo.Message{}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := bot.IsAddressed(c.m, self); got != c.want {
				t.Errorf("IsAddressed = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAuthorName(t *testing.T) {
	u := &discordgo.User{ID: "7", Username: "aiko_92", GlobalName: "Aiko"}
	cases := []struct {
		name string
		m    *discordgo.Message
		want string
	}{
		{"NilMessage", nil, ""},
		{"NilAuthor", &discordgo.Message{}, ""},
		{"Nickname", &discordgo.Message{Author: u, Member: &discordgo.Member{Nick: "Captain"}}, "Captain"},
		// Discord's partial member on guild messages has no user; this must
		// not panic the way Member.DisplayName would.
		{"PartialMemberWithoutNick", &discordgo.Message{Author: u, Member: &discordgo.Member{}}, "Aiko"},
		{"GlobalName", &discordgo.Message{Author: u}, "Aiko"},
		{"Username", &discordgo.Message{Author: &discordgo.User{ID: "8", Username: "bob"}}, "bob"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := bot.AuthorName(c.m); got != c.want {
				t.Errorf("AuthorName = %q, want %q", got, c.want)
			}
		})
	}
}

func TestAllowedMentions(t *testing.T) {
	raw, err := json.Marshal(bot.AllowedMentions("7"))
	if err != nil {
		t.Fatal(err)
	}
	// "parse": [] (not null) is what turns off @everyone, @here and role
	// parsing; only the author may be pinged.
	want := `{"parse":[],"users":["7"],"replied_user":true}`
	if string(raw) != want {
		t.Errorf("allowed mentions = %s, want %s", raw, want)
	}
	raw, _ = json.Marshal(bot.AllowedMentions(""))
	if string(raw) != `{"parse":[],"replied_user":false}` {
		t.Errorf("allowed mentions without author = %s", raw)
	}
}

func TestRenderReply(t *testing.T) {
	got := bot.RenderReply(chat.Reply{
		Text: "Got it.\n",
		Notices: []chat.Notice{
			{Action: tools.NoticeSaved, Scope: memory.ScopeServer, MemoryID: 42, Content: "The raid is on Friday"},
			{Action: tools.NoticeDeleted, Scope: memory.ScopePersonal, MemoryID: 7, Content: "Old fact"},
		},
	})
	want := "Got it.\n\n📌 Remembered (server) #42: The raid is on Friday\n🗑️ Forgot #7: Old fact"
	if got != want {
		t.Errorf("RenderReply =\n%s\nwant\n%s", got, want)
	}
	if got := bot.RenderReply(chat.Reply{Text: "plain"}); got != "plain" {
		t.Errorf("RenderReply without notices = %q", got)
	}
	if strings.TrimSpace(bot.RenderReply(chat.Reply{})) != "" {
		t.Error("empty reply rendered as text")
	}
}
