package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// End-to-end tests: each starts the real `kioku run` wiring in-process
// against a fake Discord (REST + gateway on loopback) and a fake OpenAI
// server, and drives it only through gateway dispatches, asserting on the
// REST bodies the bot sent.

// Fixture ids. Snowflake-looking numbers keep discordgo happy; they never
// collide with the fake's own sequence, which starts in 2025.
const (
	guildA   = "100000000000000001"
	channelA = "100000000000000011"
	guildB   = "100000000000000002"
	channelB = "100000000000000022"
)

// Member permissions as Discord computes them for interactions.
const (
	permAdmin  = discordgo.PermissionManageGuild | discordgo.PermissionSendMessages | discordgo.PermissionViewChannel
	permMember = discordgo.PermissionSendMessages | discordgo.PermissionViewChannel
)

// syncBuffer is a bytes.Buffer safe for the logger and the test at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// e2e is one running bot with its fakes.
type e2e struct {
	t      *testing.T
	fake   *fakediscord.Fake
	ai     *fakeopenai.Server
	db     string
	stderr *syncBuffer
	// httpAddr serves /healthz and /metrics.
	httpAddr string
	// webAddr serves the web dashboard, when KIOKU_WEB_ADDR is set.
	webAddr string
	cancel  context.CancelFunc
	done    chan int
	appID   string
}

// startBot runs `kioku run` against new fakes and waits until it is
// connected and has registered its commands. Stopping it (and checking the
// clean exit) happens in the test's cleanup. The background pipeline is off:
// its worker would otherwise take model replies these tests script for turns.
func startBot(t *testing.T) *e2e {
	t.Helper()
	return startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "off"})
}

// startBotWith is startBot with extra or replaced environment settings, and
// setup functions that shape the fake Discord (roles, channels) before the bot
// connects.
func startBotWith(t *testing.T, overrides map[string]string, setup ...func(*fakediscord.Fake)) *e2e {
	t.Helper()
	h := launchBotHooked(t, overrides, nil, setup...)
	h.waitConnected()
	return h
}

// startBotHooked is startBotWith that also hands the store `kioku run` opened to
// storeOpened, when not nil, before the bot uses it.
func startBotHooked(t *testing.T, overrides map[string]string, storeOpened func(*ltm.Store), setup ...func(*fakediscord.Fake)) *e2e {
	t.Helper()
	h := launchBotHooked(t, overrides, storeOpened, setup...)
	h.waitConnected()
	return h
}

// launchBot is startBotWith without the wait: `kioku run` is started and may still be
// connecting when it returns. The setup functions run before the environment is read.
func launchBot(t *testing.T, overrides map[string]string, setup ...func(*fakediscord.Fake)) *e2e {
	t.Helper()
	return launchBotHooked(t, overrides, nil, setup...)
}

// launchBotHooked is launchBot with startBotHooked's storeOpened.
func launchBotHooked(t *testing.T, overrides map[string]string, storeOpened func(*ltm.Store), setup ...func(*fakediscord.Fake)) *e2e {
	t.Helper()
	fake := fakediscord.New(t)
	fake.SetGuild(&discordgo.Guild{ID: guildA, Name: "guild A", OwnerID: "1"})
	fake.SetGuild(&discordgo.Guild{ID: guildB, Name: "guild B", OwnerID: "1"})
	fake.SetChannel(&discordgo.Channel{ID: channelA, GuildID: guildA, Type: discordgo.ChannelTypeGuildText, Name: "general"})
	fake.SetChannel(&discordgo.Channel{ID: channelB, GuildID: guildB, Type: discordgo.ChannelTypeGuildText, Name: "general"})
	for _, f := range setup {
		f(fake)
	}
	ai := fakeopenai.New(t)
	h := &e2e{
		t:      t,
		fake:   fake,
		ai:     ai,
		db:     filepath.Join(t.TempDir(), "kioku.db"),
		stderr: &syncBuffer{},
		done:   make(chan int, 1),
		appID:  fake.ApplicationID(),
	}
	env := map[string]string{
		"KIOKU_DISCORD_TOKEN":   "fake-discord-token",
		"KIOKU_DISCORD_API_URL": fake.URL(),
		"KIOKU_LLM_BASE_URL":    ai.URL(),
		"KIOKU_LLM_API_KEY":     fakeopenai.APIKey,
		"KIOKU_DB":              h.db,
		"KIOKU_HTTP_ADDR":       "127.0.0.1:0",
		"KIOKU_LOG_LEVEL":       "debug",
		// Self-repair requeues dead jobs and rebuilds indexes on its own, which would
		// change what a test crafted behind its back; tests of it turn it on.
		"KIOKU_MAINTENANCE_MODE": "off",
	}
	maps.Copy(env, overrides)
	// The health server's listener is opened here, so the test knows its address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	h.httpAddr = ln.Addr().String()
	app := &App{
		Stdin:  strings.NewReader(""),
		Stdout: io.Discard,
		Stderr: h.stderr,
		LookupEnv: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		},
		httpListener: ln,
		storeOpened:  storeOpened,
	}
	if env["KIOKU_WEB_ADDR"] != "" {
		// And the dashboard's, likewise.
		wl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { wl.Close() })
		h.webAddr, app.webListener = wl.Addr().String(), wl
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- app.Main(ctx, []string{"run"}) }()
	// Registered after fakediscord.New, so it runs before the fake closes:
	// the session must leave before its gateway disappears.
	t.Cleanup(h.stop)
	return h
}

// waitConnected waits until the bot is connected and has registered its commands.
func (h *e2e) waitConnected() {
	h.t.Helper()
	wctx := h.ctx()
	if err := h.fake.WaitReady(wctx); err != nil {
		h.t.Fatalf("bot never became ready: %v\n%s", err, h.stderr.String())
	}
	if _, err := h.fake.WaitFor(wctx, fakediscord.Match("PUT", "/applications/"+h.appID+"/commands")); err != nil {
		h.t.Fatalf("commands were never registered: %v", err)
	}
}

// in returns h reporting to t, for subtests: a failure helper must stop the
// goroutine of the test it runs in, not its parent's.
func (h *e2e) in(t *testing.T) *e2e {
	c := *h
	c.t = t
	return &c
}

// stop cancels the run context and checks that kioku exits cleanly.
func (h *e2e) stop() {
	h.cancel()
	select {
	case code := <-h.done:
		if h.t.Failed() {
			h.t.Logf("kioku's log:\n%s", h.stderr.String())
		}
		if code != 0 {
			h.t.Errorf("kioku run exited with %d:\n%s", code, h.stderr.String())
		} else if wal, err := os.Stat(h.db + "-wal"); err == nil && wal.Size() > 0 {
			// A clean shutdown closes the store, which checkpoints the WAL into the
			// database file: the file is complete on its own.
			h.t.Errorf("kioku run exited without closing the database (%d bytes left in its WAL):\n%s", wal.Size(), h.stderr.String())
		}
	case <-time.After(45 * time.Second):
		h.t.Errorf("kioku run did not stop within 45s after cancel")
	}
}

func (h *e2e) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

// reply is what the bot finally showed for an interaction.
type reply struct {
	// Type is the callback type (4 message, 5 deferred, 7 update message).
	Type discordgo.InteractionResponseType
	// Msg is the message content as last sent (the callback's data, or the
	// edit of a deferred original).
	Msg *fakediscord.SentMessage
	// Ephemeral reports the ephemeral flag of the response.
	Ephemeral bool
	// Interaction is the interaction answered.
	Interaction *discordgo.Interaction
}

// Text joins the content and every embed's text, for assertions.
func (r reply) Text() string {
	var sb strings.Builder
	sb.WriteString(r.Msg.Content)
	for _, e := range r.Msg.Embeds {
		sb.WriteString("\n" + e.Title + "\n" + e.Description)
		for _, f := range e.Fields {
			sb.WriteString("\n" + f.Name + ": " + f.Value)
		}
		if e.Footer != nil {
			sb.WriteString("\n" + e.Footer.Text)
		}
	}
	return sb.String()
}

// Buttons returns the custom IDs of the message's buttons.
func (r reply) Buttons() []string {
	var ids []string
	for _, c := range r.Msg.Components {
		row, ok := c.(*discordgo.ActionsRow)
		if !ok {
			continue
		}
		for _, b := range row.Components {
			if btn, ok := b.(*discordgo.Button); ok {
				ids = append(ids, btn.CustomID)
			}
		}
	}
	return ids
}

// interact dispatches an interaction and waits for the bot's final answer:
// the callback, and for a deferred one the edit of the original.
func (h *e2e) interact(i *discordgo.Interaction) reply {
	h.t.Helper()
	mark := h.fake.Mark()
	if err := h.fake.DispatchInteraction(i); err != nil {
		h.t.Fatal(err)
	}
	ctx := h.ctx()
	cb, err := h.fake.WaitForSince(ctx, mark, fakediscord.Match("POST", "/interactions/"+i.ID+"/"+i.Token+"/callback"))
	if err != nil {
		h.t.Fatalf("no answer to interaction: %v\n%s", err, h.stderr.String())
	}
	var body struct {
		Type discordgo.InteractionResponseType `json:"type"`
		Data struct {
			Flags discordgo.MessageFlags `json:"flags"`
		} `json:"data"`
	}
	if err := cb.Decode(&body); err != nil {
		h.t.Fatal(err)
	}
	r := reply{Type: body.Type, Msg: cb.Message, Ephemeral: body.Data.Flags&discordgo.MessageFlagsEphemeral != 0, Interaction: i}
	if body.Type == discordgo.InteractionResponseDeferredChannelMessageWithSource ||
		body.Type == discordgo.InteractionResponseDeferredMessageUpdate {
		edit, err := h.fake.WaitForSince(ctx, mark, fakediscord.Match("PATCH", "/webhooks/"+h.appID+"/"+i.Token+"/messages/@original"))
		if err != nil {
			h.t.Fatalf("deferred interaction never answered: %v\n%s", err, h.stderr.String())
		}
		r.Msg = edit.Message
	}
	if r.Msg == nil {
		h.t.Fatalf("interaction answered without a message: %s", cb.JSON)
	}
	return r
}

// slash builds a /name sub command with options.
func slash(name, sub string, opts ...*discordgo.ApplicationCommandInteractionDataOption) discordgo.ApplicationCommandInteractionData {
	if sub == "" {
		return discordgo.ApplicationCommandInteractionData{Name: name, Options: opts}
	}
	return discordgo.ApplicationCommandInteractionData{Name: name, Options: []*discordgo.ApplicationCommandInteractionDataOption{
		{Name: sub, Type: discordgo.ApplicationCommandOptionSubCommand, Options: opts},
	}}
}

func strOpt(name, v string) *discordgo.ApplicationCommandInteractionDataOption {
	return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: discordgo.ApplicationCommandOptionString, Value: v}
}

func intOpt(name string, v int) *discordgo.ApplicationCommandInteractionDataOption {
	return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: discordgo.ApplicationCommandOptionInteger, Value: float64(v)}
}

// command runs a slash command in a guild (guildID set) or a DM and returns
// the answer.
func (h *e2e) command(guildID, channelID string, user *discordgo.User, perms int64, data discordgo.ApplicationCommandInteractionData) reply {
	h.t.Helper()
	return h.interact(h.fake.SlashCommand(guildID, channelID, user, perms, data))
}

// press clicks a button on the message r shows.
func (h *e2e) press(r reply, user *discordgo.User, perms int64, customID string) reply {
	h.t.Helper()
	msg, ok := h.fake.OriginalResponse(r.Interaction)
	if !ok {
		h.t.Fatalf("no original response for the interaction to click on")
	}
	i := h.fake.ComponentClick(r.Interaction.GuildID, r.Interaction.ChannelID, user, perms, customID, msg)
	return h.interact(i)
}

// chat dispatches a message and waits for the bot's reply in the channel.
func (h *e2e) chat(m *discordgo.Message) *fakediscord.SentMessage {
	h.t.Helper()
	mark := h.fake.Mark()
	if err := h.fake.DispatchMessage(m); err != nil {
		h.t.Fatal(err)
	}
	r, err := h.fake.WaitForSince(h.ctx(), mark, fakediscord.Match("POST", "/channels/"+m.ChannelID+"/messages"))
	if err != nil {
		h.t.Fatalf("no reply to message: %v\n%s", err, h.stderr.String())
	}
	return r.Message
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s = %q, want it to contain %q", what, got, w)
		}
	}
}

// button returns the custom id of r's button whose id starts with prefix,
// failing the test when there is none.
func button(t *testing.T, r reply, prefix string) string {
	t.Helper()
	for _, id := range r.Buttons() {
		if strings.HasPrefix(id, prefix) {
			return id
		}
	}
	t.Fatalf("no %s… button in %v", prefix, r.Buttons())
	return ""
}

func mustNotContain(t *testing.T, what, got string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(got, w) {
			t.Errorf("%s = %q, want it not to contain %q", what, got, w)
		}
	}
}

// TestRunGuildMention covers done-criterion 1, plus the typing indicator,
// the reply reference, health and metrics.
func TestRunGuildMention(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	h.ai.Script(fakeopenai.Text("Hello! Nice to meet you."))
	alice := h.fake.NewUser("alice")
	bot := h.fake.BotUser()

	m := h.fake.GuildMessage(guildA, channelA, alice, "<@"+bot.ID+"> hi there", bot)
	got := h.chat(m)
	if got.Content != "Hello! Nice to meet you." {
		t.Errorf("reply = %q", got.Content)
	}
	if got.Reference == nil || got.Reference.MessageID != m.ID {
		t.Errorf("reply reference = %+v, want a reply to %s", got.Reference, m.ID)
	}
	if h.fake.TypingCount(channelA) == 0 {
		t.Error("no typing indicator while the model worked")
	}
	// The model saw the message without the bot's mention markup.
	reqs := h.ai.ChatRequests()
	if len(reqs) == 0 {
		t.Fatal("the model was never called")
	}
	last := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	mustContain(t, "last prompt message", last, "hi there")
	mustNotContain(t, "last prompt message", last, "<@"+bot.ID+">")

	t.Run("UnaddressedMessageIsIgnored", func(t *testing.T) {
		h := h.in(t)
		calls := h.ai.ChatCount()
		quiet := h.fake.GuildMessage(guildA, channelA, alice, "just talking among ourselves")
		if err := h.fake.DispatchMessage(quiet); err != nil {
			t.Fatal(err)
		}
		// A mention dispatched after it is answered only after it was
		// processed (the gateway is read in order).
		h.ai.Script(fakeopenai.Text("second answer"))
		if r := h.chat(h.fake.GuildMessage(guildA, channelA, alice, "<@"+bot.ID+"> again", bot)); r.Content != "second answer" {
			t.Errorf("reply = %q", r.Content)
		}
		if n := h.ai.ChatCount() - calls; n != 1 {
			t.Errorf("%d model calls for one addressed and one unaddressed message, want 1", n)
		}
	})

	t.Run("AutoReplyChannel", func(t *testing.T) {
		h := h.in(t)
		admin := h.fake.NewUser("admin")
		r := h.command(guildB, channelB, admin, permAdmin, slash("kioku", "config",
			&discordgo.ApplicationCommandInteractionDataOption{Name: "auto_reply_add", Type: discordgo.ApplicationCommandOptionChannel, Value: channelB}))
		mustContain(t, "config", r.Text(), "Saved", "<#"+channelB+">")
		h.ai.Script(fakeopenai.Text("auto reply"))
		if got := h.chat(h.fake.GuildMessage(guildB, channelB, alice, "no mention here")); got.Content != "auto reply" {
			t.Errorf("auto reply = %q", got.Content)
		}
	})

	t.Run("HealthAndMetrics", func(t *testing.T) {
		h := h.in(t)
		resp, err := http.Get("http://" + h.httpAddr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"gateway":"connected"`) {
			t.Errorf("/healthz = %d %s", resp.StatusCode, body)
		}
		resp, err = http.Get("http://" + h.httpAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		mustContain(t, "/metrics", string(body), "# TYPE kioku_turns_total counter", "kioku_turns_total 3\n", "kioku_gateway_connected 1\n")
	})
}

// TestRunPersonalMemoryInDM covers done-criterion 2.
func TestRunPersonalMemoryInDM(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice, bob := h.fake.NewUser("alice"), h.fake.NewUser("bob")
	h.ai.Script(
		fakeopenai.ToolCalls(fakeopenai.Call{Name: "create_long_term_memory",
			Arguments: `{"memory_content":"Alice's cat is called Miso","memory_scope":"target_user"}`}),
		fakeopenai.Text("I'll remember that your cat is called Miso."),
	)
	got := h.chat(h.fake.DMMessage("200000000000000001", alice, "remember that my cat is called Miso"))
	mustContain(t, "DM reply", got.Content, "I'll remember", "📌 Remembered (personal) #", "Miso")

	r := h.command("", "200000000000000001", alice, 0, slash("memory", "list", strOpt("scope", "personal")))
	if !r.Ephemeral {
		t.Error("personal list is not ephemeral")
	}
	mustContain(t, "alice's list", r.Text(), "Miso")

	r = h.command("", "200000000000000002", bob, 0, slash("memory", "list", strOpt("scope", "personal")))
	if !r.Ephemeral {
		t.Error("personal list is not ephemeral")
	}
	mustNotContain(t, "bob's list", r.Text(), "Miso")
	mustContain(t, "bob's list", r.Text(), "no memories")

	// Bob can't reach it in a guild either, or by id.
	r = h.command(guildA, channelA, bob, permAdmin, slash("memory", "show", intOpt("id", 1), strOpt("scope", "personal")))
	mustNotContain(t, "bob's show", r.Text(), "Miso")
	r = h.command("", "200000000000000002", bob, 0, slash("memory", "list", strOpt("scope", "server")))
	mustContain(t, "server scope in a DM", r.Text(), "only your personal memory")
}

// TestRunForgetByQuery covers done-criterion 3.
func TestRunForgetByQuery(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	admin := h.fake.NewUser("admin")
	r := h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", "The raid is on Friday at 20:00")))
	mustContain(t, "add", r.Text(), "📌 Remembered (server) #1")
	h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", "The guild bank is run by Kenji")))

	preview := h.command(guildA, channelA, admin, permAdmin, slash("memory", "forget", strOpt("query", "raid")))
	mustContain(t, "preview", preview.Text(), "Forget 1 memory", "raid is on Friday")
	mustNotContain(t, "preview", preview.Text(), "Kenji")
	confirm := button(t, preview, "mem:forget:server:")
	// Nothing is forgotten before the button is pressed.
	mustContain(t, "list before confirm", h.command(guildA, channelA, admin, permAdmin, slash("memory", "list")).Text(), "raid")

	done := h.press(preview, admin, permAdmin, confirm)
	if done.Type != discordgo.InteractionResponseUpdateMessage {
		t.Errorf("confirm answered with type %d, want an update of the preview", done.Type)
	}
	mustContain(t, "confirm", done.Text(), "Forgot 1 memory", "#1")
	// The confirm and cancel buttons are gone; an Undo of the forget takes their place.
	if b := done.Buttons(); len(b) != 1 || b[0] != "kioku:undo:s:1:2" {
		t.Errorf("buttons after confirming: %v, want only the forget's Undo", b)
	}
	list := h.command(guildA, channelA, admin, permAdmin, slash("memory", "list")).Text()
	mustNotContain(t, "list after forget", list, "raid")
	mustContain(t, "list after forget", list, "Kenji")

	// The token is single-use.
	again := h.press(preview, admin, permAdmin, confirm)
	mustContain(t, "second confirm", again.Text(), "already used")

	r = h.command(guildA, channelA, admin, permAdmin, slash("memory", "recover", intOpt("id", 1)))
	mustContain(t, "recover", r.Text(), "Recovered (server) #1", "raid")
	mustContain(t, "list after recover", h.command(guildA, channelA, admin, permAdmin, slash("memory", "list")).Text(), "raid", "Kenji")

	r = h.command(guildA, channelA, admin, permAdmin, slash("memory", "history", intOpt("id", 1)))
	mustContain(t, "history", r.Text(), "create", "delete", "recover")
}

// TestRunPermissions covers done-criterion 4.
func TestRunPermissions(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	admin, member := h.fake.NewUser("admin"), h.fake.NewUser("member")
	h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", "Server rules are pinned in #rules")))

	for name, data := range map[string]discordgo.ApplicationCommandInteractionData{
		"add":     slash("memory", "add", strOpt("content", "Members can write here")),
		"forget":  slash("memory", "forget", intOpt("id", 1)),
		"query":   slash("memory", "forget", strOpt("query", "rules")),
		"edit":    slash("memory", "edit", intOpt("id", 1), strOpt("content", "No rules")),
		"config":  slash("kioku", "config", strOpt("persona", "You are a pirate.")),
		"export":  slash("memory", "export"),
		"recover": slash("memory", "recover", intOpt("id", 1)),
	} {
		r := h.command(guildA, channelA, member, permMember, data)
		if !r.Ephemeral {
			t.Errorf("%s: refusal is not ephemeral", name)
		}
		mustContain(t, name+" refusal", r.Text(), "Manage Server")
	}
	list := h.command(guildA, channelA, member, permMember, slash("memory", "list")).Text()
	mustContain(t, "list after refusals", list, "Server rules are pinned", "1 memories")
	mustNotContain(t, "list after refusals", list, "Members can write")

	// A member may keep personal memories in the same guild.
	r := h.command(guildA, channelA, member, permMember, slash("memory", "add", strOpt("content", "I prefer tea"), strOpt("scope", "personal")))
	mustContain(t, "personal add", r.Text(), "Remembered (personal)")

	// The editor role grants server memory edits.
	h.command(guildA, channelA, admin, permAdmin, slash("kioku", "config",
		&discordgo.ApplicationCommandInteractionDataOption{Name: "editor_role", Type: discordgo.ApplicationCommandOptionRole, Value: "300000000000000001"}))
	i := h.fake.SlashCommand(guildA, channelA, member, permMember, slash("memory", "add", strOpt("content", "Editors can write here")))
	i.Member.Roles = []string{"300000000000000001"}
	mustContain(t, "editor add", h.interact(i).Text(), "Remembered (server)")

	t.Run("RememberThis", func(t *testing.T) {
		h := h.in(t)
		target := h.fake.GuildMessage(guildA, channelA, admin, "The server's birthday is March 3rd")
		r := h.interact(h.fake.MessageCommand(guildA, channelA, admin, permAdmin, "Remember this", target))
		mustContain(t, "admin remember this", r.Text(), "Remembered (server)", "March 3rd")
		target = h.fake.GuildMessage(guildA, channelA, admin, "Bring snacks on Fridays")
		r = h.interact(h.fake.MessageCommand(guildA, channelA, member, permMember, "Remember this", target))
		mustContain(t, "member remember this", r.Text(), "Remembered (personal)", "snacks")
	})
}

// TestRunExportImport covers done-criterion 5.
func TestRunExportImport(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	admin := h.fake.NewUser("admin")
	contents := []string{"The raid is on Friday", "Kenji runs the guild bank", "新人は月曜日に自己紹介する"}
	for _, c := range contents {
		h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", c)))
	}
	exp := h.command(guildA, channelA, admin, permAdmin, slash("memory", "export"))
	if !exp.Ephemeral {
		t.Error("export is not ephemeral")
	}
	if len(exp.Msg.Files) != 1 {
		t.Fatalf("export sent %d files, want 1", len(exp.Msg.Files))
	}
	file := exp.Msg.Files[0]
	if !strings.HasSuffix(file.Name, ".json") {
		t.Errorf("export file name %q", file.Name)
	}
	f, err := memory.ParseExport(file.Data)
	if err != nil {
		t.Fatalf("export is not a valid export file: %v", err)
	}
	if len(f.Memories) != len(contents) {
		t.Fatalf("export holds %d memories, want %d", len(f.Memories), len(contents))
	}

	importFile := func(data []byte) reply {
		att := h.fake.AddAttachment(channelB, "export.json", "application/json", data)
		cmd := slash("memory", "import", &discordgo.ApplicationCommandInteractionDataOption{
			Name: "file", Type: discordgo.ApplicationCommandOptionAttachment, Value: att.ID})
		cmd.Resolved = &discordgo.ApplicationCommandInteractionDataResolved{
			Attachments: map[string]*discordgo.MessageAttachment{att.ID: att}}
		return h.command(guildB, channelB, admin, permAdmin, cmd)
	}

	t.Run("InvalidFileWritesNothing", func(t *testing.T) {
		h := h.in(t)
		bad := strings.Replace(string(file.Data), contents[1], "password=hunter2hunter2", 1)
		r := importFile([]byte(bad))
		mustContain(t, "bad import", r.Text(), "Nothing was imported")
		mustContain(t, "guild B list", h.command(guildB, channelB, admin, permAdmin, slash("memory", "list")).Text(), "no memories")
		r = importFile([]byte(`{"format":"something else"}`))
		mustContain(t, "foreign import", r.Text(), "not a kioku export")
	})

	r := importFile(file.Data)
	mustContain(t, "import", r.Text(), "Imported 3 memories")
	again := h.command(guildB, channelB, admin, permAdmin, slash("memory", "export"))
	g, err := memory.ParseExport(again.Msg.Files[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, m := range f.Memories {
		want = append(want, m.Content)
	}
	for _, m := range g.Memories {
		got = append(got, m.Content)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("guild B holds %q after import, want %q", got, want)
	}
}

// TestRunForgetMe covers done-criterion 6.
func TestRunForgetMe(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice, bob := h.fake.NewUser("alice"), h.fake.NewUser("bob")
	const aliceDM, bobDM = "200000000000000011", "200000000000000012"
	for _, u := range []struct {
		user *discordgo.User
		dm   string
	}{{alice, aliceDM}, {bob, bobDM}} {
		h.command("", u.dm, u.user, 0, slash("memory", "add", strOpt("content", u.user.Username+" likes hiking")))
		h.ai.Script(fakeopenai.Text("Nice!"))
		h.chat(h.fake.DMMessage(u.dm, u.user, "I went hiking today"))
	}
	h.ai.Script(fakeopenai.Text("Sure."))
	h.chat(h.fake.GuildMessage(guildA, channelA, alice, "<@"+h.fake.BotUser().ID+"> the weather is nice", h.fake.BotUser()))

	preview := h.command("", aliceDM, alice, 0, slash("memory", "forget-me"))
	mustContain(t, "preview", preview.Text(), "1 personal memory", "4 conversation turns", "2 short-term memory entries")
	confirm := button(t, preview, "forgetme:confirm:")
	// Bob pressing alice's button (had he seen it) erases nothing.
	r := h.press(preview, bob, 0, confirm)
	mustContain(t, "bob pressing", r.Text(), "not valid")

	done := h.press(preview, alice, 0, confirm)
	mustContain(t, "forget-me", done.Text(), "erased 1 personal memory, 0 memories about you, 0 memories learned from your messages, 4 conversation turns, 2 short-term memory entries")

	mustContain(t, "alice's list", h.command("", aliceDM, alice, 0, slash("memory", "list")).Text(), "no memories")
	mustContain(t, "alice's stm", h.command("", aliceDM, alice, 0, slash("stm", "show")).Text(), "no short-term memory")
	after := h.command("", aliceDM, alice, 0, slash("memory", "forget-me")).Text()
	mustContain(t, "alice's second preview", after, "0 personal memories", "0 conversation turns")

	mustContain(t, "bob's list", h.command("", bobDM, bob, 0, slash("memory", "list")).Text(), "bob likes hiking")
	mustContain(t, "bob's stm", h.command("", bobDM, bob, 0, slash("stm", "show")).Text(), "hiking")
	mustContain(t, "bob's preview", h.command("", bobDM, bob, 0, slash("memory", "forget-me")).Text(), "1 personal memory", "2 conversation turns")
}

// TestRunNoMassMentions covers done-criterion 7.
func TestRunNoMassMentions(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice := h.fake.NewUser("alice")
	bot := h.fake.BotUser()
	h.ai.Script(fakeopenai.Text("@everyone @here <@&300000000000000009> <@42> listen up, <@" + alice.ID + ">!"))
	mark := h.fake.Mark()
	got := h.chat(h.fake.GuildMessage(guildA, channelA, alice, "<@"+bot.ID+"> ping everyone", bot))
	mustContain(t, "reply", got.Content, "@everyone", "@here", "<@&300000000000000009>")
	am := got.AllowedMentions
	if am == nil {
		t.Fatal("reply has no allowed_mentions")
	}
	if len(am.Parse) != 0 || len(am.Roles) != 0 || !slices.Equal(am.Users, []string{alice.ID}) {
		t.Errorf("allowed_mentions = %+v, want no parse, no roles, users = [author]", am)
	}
	req, err := h.fake.WaitForSince(h.ctx(), mark, fakediscord.Match("POST", "/channels/"+channelA+"/messages"))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		AllowedMentions map[string]json.RawMessage `json:"allowed_mentions"`
	}
	if err := req.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if p := string(raw.AllowedMentions["parse"]); p != "[]" {
		t.Errorf(`allowed_mentions.parse = %s on the wire, want [] (null or absent lets Discord parse mentions)`, p)
	}
}

// TestRunRequiresToken checks the one-line failure without a token.
func TestRunRequiresToken(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	app := &App{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, LookupEnv: func(k string) (string, bool) {
		if k == "KIOKU_DB" {
			return filepath.Join(t.TempDir(), "kioku.db"), true
		}
		return "", false
	}}
	code := app.Main(context.Background(), []string{"run"})
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if code == 0 || len(lines) != 1 || !strings.Contains(lines[0], "KIOKU_DISCORD_TOKEN") {
		t.Errorf("kioku run without token: exit %d, stderr %q; want a failure naming KIOKU_DISCORD_TOKEN in one line", code, stderr.String())
	}
}

// TestRunShutdownFinishesInFlightTurns: cancelling the run context while a
// turn waits for the model does not cut it off; the reply is still posted
// and kioku then exits cleanly.
func TestRunShutdownFinishesInFlightTurns(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice := h.fake.NewUser("alice")
	started, release := make(chan struct{}), make(chan struct{})
	h.ai.Script(fakeopenai.Handle(func(openai.ChatCompletionRequest) fakeopenai.Response {
		close(started)
		<-release
		return fakeopenai.Text("finished after shutdown began")
	}))
	mark := h.fake.Mark()
	if err := h.fake.DispatchMessage(h.fake.DMMessage("200000000000000021", alice, "a slow question")); err != nil {
		t.Fatal(err)
	}
	<-started
	h.cancel()
	h.waitRefusingWork(alice, "200000000000000022")
	select {
	case code := <-h.done:
		h.done <- code
		t.Fatalf("kioku exited (%d) with a turn in flight", code)
	default:
	}
	close(release)
	r, err := h.fake.WaitForSince(h.ctx(), mark, fakediscord.Match("POST", "/channels/200000000000000021/messages"))
	if err != nil {
		t.Fatalf("the in-flight turn was never answered: %v\n%s", err, h.stderr.String())
	}
	if r.Message.Content != "finished after shutdown began" {
		t.Errorf("reply = %q", r.Message.Content)
	}
}

// waitRefusingWork waits until the bot refuses new work, the first step of its shutdown:
// a cheap command in a DM channel is answered with the restart notice instead of running.
func (h *e2e) waitRefusingWork(user *discordgo.User, dmChannel string) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := h.command("", dmChannel, user, 0, slash("memory", "list"))
		if strings.Contains(r.Text(), "kioku is restarting") {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the bot never began refusing work; its last answer was %q", r.Text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
