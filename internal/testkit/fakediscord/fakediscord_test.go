package fakediscord_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
)

// harness is a fake Discord with a real discordgo session connected to it.
type harness struct {
	fake    *fakediscord.Fake
	session *discordgo.Session
	// messages and interactions receive what the session's handlers saw.
	messages     chan *discordgo.MessageCreate
	interactions chan *discordgo.InteractionCreate
	guilds       chan *discordgo.GuildCreate
}

// newHarness connects a session built by bot.NewSession to a new fake. setup
// runs before the session opens.
func newHarness(t *testing.T, setup func(*fakediscord.Fake), opts ...fakediscord.Option) *harness {
	t.Helper()
	fake := fakediscord.New(t, opts...)
	if setup != nil {
		setup(fake)
	}
	s, err := bot.NewSession("test-token", fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{
		fake:         fake,
		session:      s,
		messages:     make(chan *discordgo.MessageCreate, 16),
		interactions: make(chan *discordgo.InteractionCreate, 16),
		guilds:       make(chan *discordgo.GuildCreate, 16),
	}
	s.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) { h.messages <- m })
	s.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { h.interactions <- i })
	s.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) { h.guilds <- g })
	if err := s.Open(); err != nil {
		t.Fatalf("Open through the fake gateway: %v", err)
	}
	// Registered after fakediscord.New, so it runs first: the session must
	// leave before the fake goes away or it would reconnect forever.
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("session.Close: %v", err)
		}
	})
	if err := fake.WaitReady(ctx(t)); err != nil {
		t.Fatal(err)
	}
	return h
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx(t).Done():
		var zero T
		t.Fatalf("no %T arrived", zero)
		return zero
	}
}

// roundTrip dispatches a message and waits for the handler. The session
// reads the gateway in order, so anything the fake sent earlier has been
// processed when it returns.
func (h *harness) roundTrip(t *testing.T) {
	t.Helper()
	m := h.fake.GuildMessage("900", "901", h.fake.NewUser("probe"), "probe")
	if err := h.fake.DispatchMessage(m); err != nil {
		t.Fatal(err)
	}
	for got := receive(t, h.messages); got.ID != m.ID; got = receive(t, h.messages) {
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	const guildID = "500"
	h := newHarness(t, func(f *fakediscord.Fake) {
		f.SetGuild(&discordgo.Guild{ID: guildID, Name: "test guild", OwnerID: "1"})
		f.SetChannel(&discordgo.Channel{ID: "501", GuildID: guildID, Type: discordgo.ChannelTypeGuildText, Name: "general"})
	}, fakediscord.WithBotUser("42", "kioku-test"), fakediscord.WithApplicationID("43"))

	if u := h.session.State.User; u == nil || u.ID != "42" || u.Username != "kioku-test" || !u.Bot {
		t.Errorf("State.User = %+v, want the fake's bot", u)
	}
	if app := h.session.State.Application; app == nil || app.ID != "43" {
		t.Errorf("State.Application = %+v, want ID 43", app)
	}

	ids := h.fake.Identifies()
	if len(ids) != 1 {
		t.Fatalf("got %d identifies, want 1", len(ids))
	}
	if ids[0].Intents != bot.GatewayIntents || ids[0].Token != "Bot test-token" {
		t.Errorf("identify intents %b token %q, want %b and the bot token", ids[0].Intents, ids[0].Token, bot.GatewayIntents)
	}

	r, err := h.fake.WaitFor(ctx(t), fakediscord.Match("GET", "/gateway"))
	if err != nil {
		t.Fatal(err)
	}
	if r.APIVersion != "9" || r.Header.Get("Authorization") != "Bot test-token" {
		t.Errorf("GET /gateway: version %q authorization %q", r.APIVersion, r.Header.Get("Authorization"))
	}

	g := receive(t, h.guilds)
	if g.ID != guildID || len(g.Channels) != 1 || g.Channels[0].Name != "general" {
		t.Errorf("GUILD_CREATE = %+v", g.Guild)
	}
	if _, err := h.session.State.Guild(guildID); err != nil {
		t.Errorf("state has no guild after GUILD_CREATE: %v", err)
	}

	me, err := h.session.User("@me")
	if err != nil || me.ID != "42" {
		t.Errorf("GET /users/@me = %+v, %v", me, err)
	}
	if un := h.fake.Unhandled(); len(un) != 0 {
		t.Errorf("unhandled requests: %+v", un)
	}
}

func TestDispatchMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	botUser := h.fake.BotUser()
	alice := h.fake.NewUser("alice")

	t.Run("Guild", func(t *testing.T) {
		m := h.fake.GuildMessage("10", "11", alice, "<@"+botUser.ID+"> remember I like tea", botUser)
		if err := h.fake.DispatchMessage(m); err != nil {
			t.Fatal(err)
		}
		got := receive(t, h.messages)
		if got.ID != m.ID || got.Content != m.Content || got.GuildID != "10" || got.ChannelID != "11" {
			t.Errorf("handler got %+v", got.Message)
		}
		if got.Author == nil || got.Author.ID != alice.ID || got.Member == nil {
			t.Errorf("author %+v member %+v, want alice with a partial member", got.Author, got.Member)
		}
		if len(got.Mentions) != 1 || got.Mentions[0].ID != botUser.ID {
			t.Errorf("mentions = %+v, want the bot", got.Mentions)
		}
		ch, err := h.session.Channel("11")
		if err != nil || ch.Type != discordgo.ChannelTypeGuildText || ch.GuildID != "10" {
			t.Errorf("GET /channels/11 = %+v, %v", ch, err)
		}
	})

	t.Run("DMReply", func(t *testing.T) {
		earlier := h.fake.DMMessage("20", botUser, "noted")
		m := fakediscord.ReplyTo(h.fake.DMMessage("20", alice, "thanks"), earlier)
		if err := h.fake.DispatchMessage(m); err != nil {
			t.Fatal(err)
		}
		got := receive(t, h.messages)
		if got.GuildID != "" || got.Member != nil {
			t.Errorf("DM carries guild %q member %+v", got.GuildID, got.Member)
		}
		if got.ReferencedMessage == nil || got.ReferencedMessage.Author.ID != botUser.ID {
			t.Errorf("referenced message = %+v, want the bot's", got.ReferencedMessage)
		}
		ch, err := h.session.Channel("20")
		if err != nil || ch.Type != discordgo.ChannelTypeDM {
			t.Errorf("GET /channels/20 = %+v, %v", ch, err)
		}
	})

	t.Run("EventsKeepOrderAndSequence", func(t *testing.T) {
		var ids []string
		for i := range 5 {
			m := h.fake.GuildMessage("10", "11", alice, strings.Repeat("x", i+1))
			ids = append(ids, m.ID)
			if err := h.fake.DispatchMessage(m); err != nil {
				t.Fatal(err)
			}
		}
		// Handlers run in goroutines, so only the set is guaranteed.
		got := map[string]bool{}
		for range ids {
			got[receive(t, h.messages).ID] = true
		}
		for _, id := range ids {
			if !got[id] {
				t.Errorf("message %s never reached the handler", id)
			}
		}
	})
}

func TestChannelMessageSendComplex(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(f *fakediscord.Fake) {
		f.SetChannel(&discordgo.Channel{ID: "30", GuildID: "10", Type: discordgo.ChannelTypeGuildText})
	})

	t.Run("AllowedMentions", func(t *testing.T) {
		sent, err := h.session.ChannelMessageSendComplex("30", &discordgo.MessageSend{
			Content:         "hello <@7>",
			AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}},
			Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
				discordgo.Button{Label: "Next", Style: discordgo.PrimaryButton, CustomID: "page:2"},
			}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if sent.ID == "" || sent.ChannelID != "30" || sent.GuildID != "10" || sent.Author.ID != h.fake.BotUser().ID {
			t.Errorf("returned message = %+v", sent)
		}
		if len(sent.Components) != 1 {
			t.Errorf("returned message lost its components: %+v", sent.Components)
		}

		msgs := h.fake.Messages("30")
		if len(msgs) != 1 {
			t.Fatalf("recorded %d messages, want 1", len(msgs))
		}
		m := msgs[0]
		if m.ID != sent.ID || m.Content != "hello <@7>" {
			t.Errorf("recorded %+v", m)
		}
		if m.AllowedMentions == nil || len(m.AllowedMentions.Parse) != 0 || m.AllowedMentions.Parse == nil {
			t.Errorf("allowed_mentions = %+v, want an empty parse list", m.AllowedMentions)
		}
		if !bytes.Contains(m.JSON, []byte(`"allowed_mentions":{"parse":[]`)) {
			t.Errorf("body %s lacks allowed_mentions with an empty parse list", m.JSON)
		}
		row, ok := m.Components[0].(*discordgo.ActionsRow)
		if !ok || row.Components[0].(*discordgo.Button).CustomID != "page:2" {
			t.Errorf("components = %#v", m.Components)
		}
	})

	t.Run("Multipart", func(t *testing.T) {
		mark := h.fake.Mark()
		sent, err := h.session.ChannelMessageSendComplex("30", &discordgo.MessageSend{
			Content: "your export",
			Files:   []*discordgo.File{{Name: "export.json", ContentType: "application/json", Reader: strings.NewReader(`{"memories":[]}`)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		r, err := h.fake.WaitForSince(ctx(t), mark, fakediscord.Match("POST", "/channels/30/messages"))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) != 1 || r.Files[0].Field != "files[0]" || r.Files[0].Name != "export.json" || string(r.Files[0].Data) != `{"memories":[]}` {
			t.Errorf("files = %+v", r.Files)
		}
		if r.Message == nil || r.Message.Content != "your export" {
			t.Errorf("payload_json not decoded: %+v", r.Message)
		}
		if len(sent.Attachments) != 1 {
			t.Fatalf("attachments = %+v", sent.Attachments)
		}
		resp, err := http.Get(sent.Attachments[0].URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if body, _ := io.ReadAll(resp.Body); string(body) != `{"memories":[]}` {
			t.Errorf("attachment download = %q", body)
		}
	})

	t.Run("EditAndDelete", func(t *testing.T) {
		sent, err := h.session.ChannelMessageSend("30", "draft")
		if err != nil {
			t.Fatal(err)
		}
		edited, err := h.session.ChannelMessageEdit("30", sent.ID, "final")
		if err != nil || edited.Content != "final" || edited.EditedTimestamp == nil {
			t.Fatalf("edit = %+v, %v", edited, err)
		}
		if e := h.fake.MessageEdits("30"); len(e) != 1 || e[0].ID != sent.ID || e[0].Content != "final" {
			t.Errorf("edits = %+v", e)
		}
		if err := h.session.ChannelMessageDelete("30", sent.ID); err != nil {
			t.Fatal(err)
		}
		if d := h.fake.DeletedMessages("30"); len(d) != 1 || d[0] != sent.ID {
			t.Errorf("deleted = %v", d)
		}
	})

	t.Run("ErrUnknownChannel", func(t *testing.T) {
		_, err := h.session.ChannelMessageSend("999", "hello")
		if code := restCode(t, err); code != 10003 {
			t.Errorf("code = %d, want Unknown Channel", code)
		}
	})

	t.Run("FailNext", func(t *testing.T) {
		h.fake.FailNext(1, fakediscord.Match("POST", "/channels/30/messages"), http.StatusForbidden, 50013, "Missing Permissions")
		_, err := h.session.ChannelMessageSend("30", "first")
		if code := restCode(t, err); code != 50013 {
			t.Errorf("code = %d, want the injected error", code)
		}
		if _, err := h.session.ChannelMessageSend("30", "second"); err != nil {
			t.Errorf("second send: %v", err)
		}
	})
}

func restCode(t *testing.T, err error) int {
	t.Helper()
	var rest *discordgo.RESTError
	if !errors.As(err, &rest) || rest.Message == nil {
		t.Fatalf("got %v, want a Discord REST error", err)
	}
	return rest.Message.Code
}

func TestChannelTyping(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	m := h.fake.GuildMessage("10", "40", h.fake.NewUser("alice"), "hi")
	for range 2 {
		if err := h.session.ChannelTyping(m.ChannelID); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.fake.TypingCount("40"); n != 2 {
		t.Errorf("typing count = %d, want 2", n)
	}
	r, err := h.fake.WaitFor(ctx(t), fakediscord.Match("POST", "/channels/40/typing"))
	if err != nil || r.Status != http.StatusNoContent {
		t.Errorf("typing request = %+v, %v", r, err)
	}
}

func TestInteractions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	alice := h.fake.NewUser("alice")

	t.Run("DeferEditFollowup", func(t *testing.T) {
		in := h.fake.SlashCommand("10", "50", alice, discordgo.PermissionManageGuild, discordgo.ApplicationCommandInteractionData{
			Name: "memory",
			Options: []*discordgo.ApplicationCommandInteractionDataOption{{
				Name: "export", Type: discordgo.ApplicationCommandOptionSubCommand,
			}},
		})
		if err := h.fake.DispatchInteraction(in); err != nil {
			t.Fatal(err)
		}
		i := receive(t, h.interactions).Interaction
		if i.Type != discordgo.InteractionApplicationCommand || i.ApplicationCommandData().Name != "memory" || i.ApplicationCommandData().Options[0].Name != "export" {
			t.Fatalf("handler got %+v", i)
		}
		if i.Member == nil || i.Member.User.ID != alice.ID || i.Member.Permissions != discordgo.PermissionManageGuild || i.User != nil {
			t.Errorf("guild interaction member %+v user %+v", i.Member, i.User)
		}

		err := h.session.InteractionRespond(i, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral},
		})
		if err != nil {
			t.Fatal(err)
		}
		if orig, ok := h.fake.OriginalResponse(i); !ok || orig.Flags&discordgo.MessageFlagsLoading == 0 {
			t.Errorf("deferred original = %+v, want a loading placeholder", orig)
		}
		content := "Exported 3 memories."
		if _, err := h.session.InteractionResponseEdit(i, &discordgo.WebhookEdit{Content: &content}); err != nil {
			t.Fatal(err)
		}
		follow, err := h.session.FollowupMessageCreate(i, true, &discordgo.WebhookParams{
			Content: "here it is",
			Flags:   discordgo.MessageFlagsEphemeral,
			Files:   []*discordgo.File{{Name: "memories.json", ContentType: "application/json", Reader: strings.NewReader("[]")}},
		})
		if err != nil {
			t.Fatal(err)
		}

		resps := h.fake.InteractionResponses()
		if len(resps) != 1 || resps[0].Type != discordgo.InteractionResponseDeferredChannelMessageWithSource ||
			resps[0].Data == nil || resps[0].Data.Flags != discordgo.MessageFlagsEphemeral || resps[0].Token != i.Token {
			t.Errorf("responses = %+v", resps)
		}
		if e := h.fake.EditedOriginals(); len(e) != 1 || e[0].Content != content || e[0].Token != i.Token {
			t.Errorf("edited originals = %+v", e)
		}
		fs := h.fake.Followups()
		if len(fs) != 1 || fs[0].ID != follow.ID || fs[0].Flags != discordgo.MessageFlagsEphemeral ||
			len(fs[0].Files) != 1 || fs[0].Files[0].Name != "memories.json" || string(fs[0].Files[0].Data) != "[]" {
			t.Errorf("followups = %+v", fs)
		}
		orig, err := h.session.InteractionResponse(i)
		if err != nil || orig.Content != content || orig.Flags&discordgo.MessageFlagsLoading != 0 {
			t.Errorf("GET @original = %+v, %v", orig, err)
		}

		err = h.session.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource})
		if code := restCode(t, err); code != 40060 {
			t.Errorf("second response: code %d, want already acknowledged", code)
		}
	})

	t.Run("DMWithFile", func(t *testing.T) {
		i := h.fake.SlashCommand("", "60", alice, 0, discordgo.ApplicationCommandInteractionData{Name: "stm"})
		if i.User == nil || i.Member != nil || i.Context != discordgo.InteractionContextBotDM {
			t.Errorf("DM interaction user %+v member %+v", i.User, i.Member)
		}
		err := h.session.InteractionRespond(i, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{
				Content:         "short-term memory",
				AllowedMentions: &discordgo.MessageAllowedMentions{},
				Files:           []*discordgo.File{{Name: "stm.txt", Reader: strings.NewReader("notes")}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		r, err := h.fake.WaitFor(ctx(t), fakediscord.Match("POST", "/interactions/"+i.ID+"/"+i.Token+"/callback"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Message == nil || r.Message.Content != "short-term memory" || r.Message.AllowedMentions == nil ||
			len(r.Files) != 1 || r.Files[0].ContentType != "application/octet-stream" {
			t.Errorf("callback = %+v message %+v", r, r.Message)
		}
	})

	t.Run("ComponentClick", func(t *testing.T) {
		page, err := h.session.ChannelMessageSendComplex(h.fake.GuildMessage("10", "70", alice, "x").ChannelID, &discordgo.MessageSend{
			Content: "page 1",
			Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
				discordgo.Button{Label: "Next", CustomID: "page:2", Style: discordgo.SecondaryButton},
			}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.fake.DispatchInteraction(h.fake.ComponentClick("10", "70", alice, 0, "page:2", page)); err != nil {
			t.Fatal(err)
		}
		i := receive(t, h.interactions).Interaction
		if i.Type != discordgo.InteractionMessageComponent || i.MessageComponentData().CustomID != "page:2" {
			t.Fatalf("handler got %+v", i)
		}
		if i.Message == nil || i.Message.ID != page.ID || len(i.Message.Components) != 1 {
			t.Errorf("clicked message = %+v, want the page with its buttons", i.Message)
		}
		err = h.session.InteractionRespond(i, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseUpdateMessage,
			Data: &discordgo.InteractionResponseData{Content: "page 2"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := h.fake.StoredMessage(page.ID); !ok || m.Content != "page 2" {
			t.Errorf("message after update = %+v", m)
		}
	})

	t.Run("ComponentSelectWithLocale", func(t *testing.T) {
		i := fakediscord.WithLocale(h.fake.ComponentSelect("10", "70", alice, 0, "cfg:set:auto_reply",
			discordgo.ChannelSelectMenuComponent, []string{"71", "72"}, nil), discordgo.Japanese, discordgo.Japanese)
		if err := h.fake.DispatchInteraction(i); err != nil {
			t.Fatal(err)
		}
		got := receive(t, h.interactions).Interaction
		data := got.MessageComponentData()
		if data.CustomID != "cfg:set:auto_reply" || data.ComponentType != discordgo.ChannelSelectMenuComponent ||
			len(data.Values) != 2 || data.Values[1] != "72" {
			t.Fatalf("select data = %+v", data)
		}
		if got.Locale != discordgo.Japanese || got.GuildLocale == nil || *got.GuildLocale != discordgo.Japanese {
			t.Errorf("locales = %q / %v", got.Locale, got.GuildLocale)
		}
		if err := h.session.InteractionRespond(got, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}); err != nil {
			t.Errorf("the select press can't be answered: %v", err)
		}
	})

	t.Run("MessageCommand", func(t *testing.T) {
		target := h.fake.GuildMessage("10", "80", alice, "my birthday is in May")
		i := h.fake.MessageCommand("10", "80", alice, 0, "Remember this", target)
		if err := h.fake.DispatchInteraction(i); err != nil {
			t.Fatal(err)
		}
		got := receive(t, h.interactions).Interaction
		data := got.ApplicationCommandData()
		if data.CommandType != discordgo.MessageApplicationCommand || data.Name != "Remember this" || data.TargetID != target.ID {
			t.Fatalf("data = %+v", data)
		}
		if m := data.Resolved.Messages[target.ID]; m == nil || m.Content != target.Content {
			t.Errorf("resolved target = %+v", m)
		}
	})

	t.Run("ErrFollowupBeforeAck", func(t *testing.T) {
		i := h.fake.SlashCommand("10", "50", alice, 0, discordgo.ApplicationCommandInteractionData{Name: "kioku"})
		_, err := h.session.FollowupMessageCreate(i, true, &discordgo.WebhookParams{Content: "too early"})
		if code := restCode(t, err); code != 10015 {
			t.Errorf("code = %d, want Unknown Webhook", code)
		}
	})

	t.Run("ErrUnknownInteraction", func(t *testing.T) {
		i := &discordgo.Interaction{ID: "1", Token: "not-dispatched", AppID: h.fake.ApplicationID()}
		err := h.session.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource})
		if code := restCode(t, err); code != 10062 {
			t.Errorf("code = %d, want Unknown interaction", code)
		}
	})
}

func TestApplicationCommandBulkOverwrite(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	appID := h.fake.ApplicationID()
	cmds := []*discordgo.ApplicationCommand{
		{Name: "memory", Description: "Manage memories", Options: []*discordgo.ApplicationCommandOption{}},
		{Name: "Remember this", Type: discordgo.MessageApplicationCommand, Options: []*discordgo.ApplicationCommandOption{}},
	}
	created, err := h.session.ApplicationCommandBulkOverwrite(appID, "", cmds)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 2 || created[0].ID == "" || created[0].ApplicationID != appID {
		t.Fatalf("echoed commands = %+v", created)
	}
	got := h.fake.Commands()
	if len(got) != 2 || got[0].Name != "memory" || got[1].Type != discordgo.MessageApplicationCommand {
		t.Errorf("recorded commands = %+v", got)
	}
	r, err := h.fake.WaitFor(ctx(t), fakediscord.Match("PUT", "/applications/"+appID+"/commands"))
	if err != nil || !bytes.Contains(r.JSON, []byte(`"options":[]`)) {
		t.Errorf("request = %s, %v", r.JSON, err)
	}

	again, err := h.session.ApplicationCommandBulkOverwrite(appID, "", cmds[:1])
	if err != nil || len(again) != 1 || again[0].ID != created[0].ID {
		t.Errorf("second overwrite = %+v, %v; want the command to keep its ID", again, err)
	}
	if i := h.fake.SlashCommand("10", "11", h.fake.NewUser("alice"), 0, discordgo.ApplicationCommandInteractionData{Name: "memory"}); i.ApplicationCommandData().ID != created[0].ID {
		t.Errorf("interaction command ID = %q, want %q", i.ApplicationCommandData().ID, created[0].ID)
	}

	if _, err := h.session.ApplicationCommandBulkOverwrite(appID, "10", cmds); err != nil {
		t.Fatal(err)
	}
	if g := h.fake.GuildCommands("10"); len(g) != 2 || g[0].GuildID != "10" {
		t.Errorf("guild commands = %+v", g)
	}
}

func TestHeartbeatsAcknowledged(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	// discordgo heartbeats as soon as it connects; once that ack and a
	// dispatch after it are through, the session has seen the ack.
	if err := h.fake.WaitUntil(ctx(t), func() bool { return h.fake.HeartbeatAcks() >= 1 }); err != nil {
		t.Fatal(err)
	}
	h.roundTrip(t)
	h.session.RLock()
	before := h.session.LastHeartbeatAck
	h.session.RUnlock()

	if err := h.fake.RequestHeartbeat(); err != nil {
		t.Fatal(err)
	}
	if err := h.fake.WaitUntil(ctx(t), func() bool { return h.fake.HeartbeatAcks() >= 2 }); err != nil {
		t.Fatal(err)
	}
	h.roundTrip(t)
	h.session.RLock()
	after := h.session.LastHeartbeatAck
	h.session.RUnlock()
	if !after.After(before) {
		t.Errorf("LastHeartbeatAck did not advance (%v, then %v)", before, after)
	}
	if n := h.fake.Connections(); n != 1 {
		t.Errorf("%d gateway connections, want 1 (no reconnect)", n)
	}
}

func TestResumeAfterDrop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.roundTrip(t)
	if err := h.fake.DropGateway(4000); err != nil {
		t.Fatal(err)
	}
	if err := h.fake.WaitUntil(ctx(t), func() bool { return h.fake.Resumes() == 1 }); err != nil {
		t.Fatal(err)
	}
	// Also keeps the session's Close from racing its first heartbeat.
	if err := h.fake.WaitReady(ctx(t)); err != nil {
		t.Fatal(err)
	}
	h.roundTrip(t)
	if n := len(h.fake.Identifies()); n != 1 {
		t.Errorf("%d identifies, want 1 (the session resumed)", n)
	}
}

func TestUnhandledRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, fakediscord.AllowUnhandled())
	_, err := h.session.GuildEmojis("10")
	if code := restCode(t, err); code != 0 {
		t.Errorf("code = %d, want Discord's unknown-route 0", code)
	}
	un := h.fake.Unhandled()
	if len(un) != 1 || un[0].Method != "GET" || un[0].Path != "/guilds/10/emojis" || un[0].Status != http.StatusNotFound {
		t.Errorf("unhandled = %+v", un)
	}
}

func TestSessionClose(t *testing.T) {
	t.Parallel()
	fake := fakediscord.New(t)
	s, err := bot.NewSession("test-token", fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitReady(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitUntil(ctx(t), func() bool { return !fake.Connected() }); err != nil {
		t.Fatal(err)
	}
	if err := fake.Dispatch("MESSAGE_CREATE", struct{}{}); err == nil {
		t.Error("dispatch without a client succeeded")
	}
}

// TestRawGateway checks the frames themselves, which discordgo would
// tolerate being slightly wrong, and that closing the fake disconnects
// clients.
func TestRawGateway(t *testing.T) {
	t.Parallel()
	fake := fakediscord.New(t, fakediscord.WithHeartbeatInterval(45*time.Second))
	ws, _, err := websocket.DefaultDialer.DialContext(ctx(t), fake.GatewayURL()+"/?v=9&encoding=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()

	type frame struct {
		Op   int             `json:"op"`
		Seq  *int64          `json:"s"`
		Type *string         `json:"t"`
		Data json.RawMessage `json:"d"`
	}
	read := func() frame {
		t.Helper()
		mt, raw, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if mt != websocket.TextMessage {
			t.Fatalf("frame type %d, want text", mt)
		}
		var f frame
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		return f
	}

	hello := read()
	if hello.Op != 10 || string(hello.Data) != `{"heartbeat_interval":45000}` {
		t.Errorf("hello = op %d %s", hello.Op, hello.Data)
	}
	if err := ws.WriteJSON(map[string]any{"op": 2, "d": map[string]any{"token": "Bot test-token", "intents": 513}}); err != nil {
		t.Fatal(err)
	}
	ready := read()
	if ready.Op != 0 || ready.Type == nil || *ready.Type != "READY" || ready.Seq == nil || *ready.Seq != 1 {
		t.Fatalf("ready = %+v", ready)
	}
	var r struct {
		V           int    `json:"v"`
		SessionID   string `json:"session_id"`
		ResumeURL   string `json:"resume_gateway_url"`
		Application struct {
			ID string `json:"id"`
		} `json:"application"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	if err := json.Unmarshal(ready.Data, &r); err != nil {
		t.Fatal(err)
	}
	if r.SessionID == "" || r.ResumeURL != fake.GatewayURL() || r.Application.ID != fake.ApplicationID() || r.User.ID != fake.BotUser().ID {
		t.Errorf("READY = %s", ready.Data)
	}
	if ids := fake.Identifies(); len(ids) != 1 || ids[0].Intents != 513 {
		t.Errorf("identifies = %+v", ids)
	}

	if err := ws.WriteJSON(map[string]any{"op": 1, "d": 1}); err != nil {
		t.Fatal(err)
	}
	if ack := read(); ack.Op != 11 {
		t.Errorf("heartbeat answered with op %d, want 11", ack.Op)
	}
	if err := fake.WaitReady(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := fake.Dispatch("TEST_EVENT", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if ev := read(); ev.Seq == nil || *ev.Seq != 2 || *ev.Type != "TEST_EVENT" {
		t.Errorf("event = %+v, want sequence 2", ev)
	}

	fake.Close()
	_, _, err = ws.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("after Close the client read %v, want going-away close", err)
	}
}

// errorsTB captures Errorf so a test can check the fake fails its test.
type errorsTB struct {
	testing.TB
	errors []string
}

func (e *errorsTB) Errorf(format string, args ...any) {
	e.errors = append(e.errors, fmt.Sprintf(format, args...))
}

func TestUnhandledRouteFailsTest(t *testing.T) {
	t.Parallel()
	tb := &errorsTB{TB: t}
	fake := fakediscord.New(tb)
	resp, err := http.Get(fake.URL() + "api/v9/users/123/profile")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || string(body) != `{"code":0,"message":"404: Not Found"}` {
		t.Errorf("unknown route answered %d %s", resp.StatusCode, body)
	}
	fake.Close()
	if len(tb.errors) != 1 || !strings.Contains(tb.errors[0], "GET /api/v9/users/123/profile") {
		t.Errorf("errors at close = %q, want the unhandled route named", tb.errors)
	}
}

// TestForget: Forget drops the recorded requests and messages up to a mark, so a long test
// keeps the fake's memory bounded, while Mark, Index, WaitForSince and the unhandled-route
// report keep working across it.
func TestForget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, fakediscord.AllowUnhandled())
	m := h.fake.GuildMessage("10", "40", h.fake.NewUser("alice"), "hi")
	if err := h.fake.DispatchMessage(m); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if _, err := h.session.ChannelMessageSend("40", "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.session.GuildEmojis("10"); err == nil {
		t.Fatal("an unhandled route answered without an error")
	}
	mark := h.fake.Mark()
	if mark < 2 || len(h.fake.Messages("40")) != 1 {
		t.Fatalf("mark %d, %d messages before Forget", mark, len(h.fake.Messages("40")))
	}
	h.fake.Forget(mark)
	if n := len(h.fake.Requests()); n != 0 || h.fake.Mark() != mark || len(h.fake.Messages("40")) != 0 {
		t.Fatalf("after Forget: %d requests, mark %d (want %d), %d messages", n, h.fake.Mark(), mark, len(h.fake.Messages("40")))
	}
	if _, ok := h.fake.StoredMessage(m.ID); ok {
		t.Error("the dispatched message is still stored")
	}
	if un := h.fake.Unhandled(); len(un) != 1 || un[0].Path != "/guilds/10/emojis" {
		t.Errorf("unhandled after Forget = %+v, want the emoji route still reported", un)
	}

	if _, err := h.session.ChannelMessageSend("40", "second"); err != nil {
		t.Fatal(err)
	}
	r, err := h.fake.WaitForSince(ctx(t), mark, fakediscord.Match("POST", "/channels/40/messages"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Index != mark || r.Message.Content != "second" || r.At.Before(before) {
		t.Errorf("request after Forget: index %d (want %d), content %q, at %v (after %v)", r.Index, mark, r.Message.Content, r.At, before)
	}
	if reqs := h.fake.Requests(); len(reqs) != 1 || reqs[0].Index != mark {
		t.Errorf("requests after Forget = %+v, want only the new one", reqs)
	}
	// A mark below what was already forgotten drops nothing more.
	h.fake.Forget(mark - 1)
	if n := len(h.fake.Requests()); n != 1 {
		t.Errorf("Forget with an old mark dropped newer requests: %d left", n)
	}
}
