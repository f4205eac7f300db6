package bot_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

// TestEventsTolerateNilAndPartial: delete, update and guild events without the parts a
// handler would like (nil events, no author, no content, no guild) crash nothing and
// change nothing.
func TestEventsTolerateNilAndPartial(t *testing.T) {
	tb := newTestBot(t)
	tb.bot.OnMessageDelete(tb.session, nil)
	tb.bot.OnMessageDelete(tb.session, &discordgo.MessageDelete{})
	tb.bot.OnMessageDelete(tb.session, &discordgo.MessageDelete{Message: &discordgo.Message{ID: "1"}})
	tb.bot.OnMessageDeleteBulk(tb.session, nil)
	tb.bot.OnMessageDeleteBulk(tb.session, &discordgo.MessageDeleteBulk{ChannelID: "2"})
	tb.bot.OnMessageUpdate(tb.session, nil)
	tb.bot.OnMessageUpdate(tb.session, &discordgo.MessageUpdate{})
	tb.bot.OnMessageUpdate(tb.session, &discordgo.MessageUpdate{Message: &discordgo.Message{ID: "1", ChannelID: "2"}})
	tb.bot.OnMessageUpdate(tb.session, &discordgo.MessageUpdate{Message: &discordgo.Message{ID: "1", ChannelID: "2", Content: "x"}})
	tb.bot.OnGuildDelete(tb.session, nil)
	tb.bot.OnGuildDelete(tb.session, &discordgo.GuildDelete{})
	tb.bot.OnGuildDelete(tb.session, &discordgo.GuildDelete{Guild: &discordgo.Guild{ID: "9", Unavailable: true}})
	tb.bot.OnGuildCreate(tb.session, nil)
	tb.bot.OnGuildCreate(tb.session, &discordgo.GuildCreate{})
	guilds, err := tb.store.Guilds.Guilds(context.Background())
	if err != nil || len(guilds) != 0 {
		t.Errorf("guilds after partial events: %+v %v; an outage must record no departure", guilds, err)
	}
	if reqs := tb.fake.Requests(); len(reqs) != 0 {
		t.Errorf("partial events made %d REST calls", len(reqs))
	}
}

// TestMessageDeletedAroundItsTurn: Discord delivers a message and its deletion to
// concurrent handlers. A message deleted before its turn starts gets no turn; one deleted
// while its turn runs is removed again once the turn has captured it (the turn writes the
// transcript first and short-term memory last), so neither place keeps it.
func TestMessageDeletedAroundItsTurn(t *testing.T) {
	short, err := stm.New(stm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tb := newTestBot(t, func(c *bot.Config) { c.STM = short })
	me := tb.fake.BotUser()
	alice := tb.fake.NewUser("alice")
	const guild, channel = "500", "501"

	// The turn stores what the engine stores, in its order; the test decides whether a
	// delete arrives in the middle.
	var deleteDuringTurn bool
	tb.turner.fn = func(req chat.Request) (chat.Reply, error) {
		if _, err := tb.store.Transcripts.AppendTurn(context.Background(), memory.Turn{GuildID: req.GuildID, ChannelID: req.ChannelID,
			UserID: req.UserID, Role: memory.RoleUser, Content: req.Content, MessageID: req.MessageID}); err != nil {
			t.Error(err)
		}
		if deleteDuringTurn {
			tb.bot.OnMessageDelete(tb.session, &discordgo.MessageDelete{Message: &discordgo.Message{ID: req.MessageID,
				ChannelID: req.ChannelID, GuildID: req.GuildID}})
		}
		for _, k := range []stm.Key{stm.UserKey(req.GuildID, req.ChannelID, req.UserID), stm.ChannelKey(req.GuildID, req.ChannelID)} {
			if err := short.Append(k, stm.Message{AuthorID: req.UserID, Role: stm.RoleUser, Content: req.Content,
				MessageID: req.MessageID}); err != nil {
				t.Error(err)
			}
		}
		return chat.Reply{Text: "ok"}, nil
	}
	kept := func(m *discordgo.Message) bool {
		turns, err := tb.store.Transcripts.RecentTurns(context.Background(), guild, channel, "", 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, tu := range turns {
			if tu.MessageID == m.ID {
				return true
			}
		}
		e, _ := short.Get(stm.ChannelKey(guild, channel))
		for _, sm := range e.Messages {
			if sm.MessageID == m.ID {
				return true
			}
		}
		return false
	}

	t.Run("DuringTheTurn", func(t *testing.T) {
		deleteDuringTurn = true
		m := tb.fake.GuildMessage(guild, channel, alice, "<@"+me.ID+"> my locker code is 4412", me)
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: m})
		if len(tb.turner.requests()) != 1 {
			t.Fatal("the message was not answered")
		}
		if kept(m) {
			t.Error("a message deleted during its turn is still stored")
		}
	})

	t.Run("BeforeTheTurn", func(t *testing.T) {
		deleteDuringTurn = false
		m := tb.fake.GuildMessage(guild, channel, alice, "<@"+me.ID+"> my pin is 9876", me)
		tb.bot.OnMessageDelete(tb.session, &discordgo.MessageDelete{Message: &discordgo.Message{ID: m.ID,
			ChannelID: channel, GuildID: guild}})
		before := len(tb.turner.requests())
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: m})
		if len(tb.turner.requests()) != before {
			t.Error("a message deleted before its turn was answered")
		}
		if kept(m) {
			t.Error("a message deleted before its turn was stored")
		}
	})

	t.Run("NotDeleted", func(t *testing.T) {
		m := tb.fake.GuildMessage(guild, channel, alice, "<@"+me.ID+"> hello", me)
		tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: m})
		if !kept(m) {
			t.Error("a message nobody deleted was not stored")
		}
	})
}

// retrySignal is a log handler that calls onRetry at the first record saying an event's
// store update is tried again.
type retrySignal struct{ onRetry func() }

func (h retrySignal) Enabled(context.Context, slog.Level) bool { return true }
func (h retrySignal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "database unavailable; trying again" {
		h.onRetry()
	}
	return nil
}
func (h retrySignal) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h retrySignal) WithGroup(string) slog.Handler      { return h }

// TestMessageEventsWaitForTheDatabase: a message deleted or edited while the database
// refuses writes (read-only here; a PostgreSQL restart or a full disk does the same) is
// applied once it takes them again: Discord sends each event once, and a lost deletion
// would leave the member's deleted words stored.
func TestMessageEventsWaitForTheDatabase(t *testing.T) {
	ctx := context.Background()
	store := testkit.MustOpenStore(t)
	setReadOnly := func(on bool) {
		if _, err := sqlite.WriterPragma(ctx, store, fmt.Sprintf("query_only = %t", on)); err != nil {
			t.Error(err)
		}
	}
	var retried atomic.Int32
	tb := newTestBotOn(t, store, func(c *bot.Config) {
		c.Logger = slog.New(retrySignal{onRetry: func() {
			if retried.Add(1) == 1 {
				setReadOnly(false) // the database is back
			}
		}})
	})
	const guild, channel = "600", "601"
	turn := func(id, content string) {
		if _, err := store.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: guild, ChannelID: channel, UserID: "7",
			Role: memory.RoleUser, Content: content, MessageID: id}); err != nil {
			t.Fatal(err)
		}
	}
	stored := func() []string {
		turns, err := store.Transcripts.RecentTurns(ctx, guild, channel, "", 50)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tr := range turns {
			out = append(out, tr.MessageID+":"+tr.Content)
		}
		return out
	}
	turn("1001", "my locker code is 4412")
	turn("1002", "see you at 7")

	retried.Store(0)
	setReadOnly(true)
	tb.bot.OnMessageDelete(tb.session, &discordgo.MessageDelete{Message: &discordgo.Message{ID: "1001", ChannelID: channel, GuildID: guild}})
	if retried.Load() == 0 {
		t.Fatal("the deletion never met the read-only database")
	}
	if got := stored(); slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "1001:") }) {
		t.Errorf("transcript after the deletion = %q: the deleted message is still stored", got)
	}

	retried.Store(0)
	setReadOnly(true)
	tb.bot.OnMessageUpdate(tb.session, &discordgo.MessageUpdate{Message: &discordgo.Message{ID: "1002", ChannelID: channel,
		GuildID: guild, Content: "see you at 8"}})
	if retried.Load() == 0 {
		t.Fatal("the edit never met the read-only database")
	}
	if got := stored(); !slices.Contains(got, "1002:see you at 8") {
		t.Errorf("transcript after the edit = %q, want the new text", got)
	}
}
