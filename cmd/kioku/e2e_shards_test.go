package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
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

// shardGuild returns the id of a guild Discord's formula puts on shard of count, and a
// channel id in it; n tells guilds of one shard apart.
func shardGuild(n, shard, count int) (guildID, channelID string) {
	g := uint64(n*count+shard) << 22
	return fmt.Sprint(g), fmt.Sprint(g + 1)
}

// shardProc is one `kioku run` process of a sharded bot: its own fake model provider (so a
// test sees which process answered what) and, once it opened it, its store.
type shardProc struct {
	ai     *fakeopenai.Server
	stderr *syncBuffer
	cancel context.CancelFunc
	done   chan int
	// addr is where the process serves /healthz and /metrics.
	addr string

	mu    sync.Mutex
	store *ltm.Store
}

// echoModel answers every chat call with "ok: " and the last user message, so answers can
// be matched to the messages that asked.
func echoModel(ai *fakeopenai.Server) {
	ai.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		last := ""
		for _, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleUser {
				last = m.Content
			}
		}
		return fakeopenai.Text("ok: " + last)
	})
}

// launchShardProc starts `kioku run` against fake and db with env on top of the test
// defaults. It stops in the test's cleanup and must exit cleanly.
func launchShardProc(t *testing.T, fake *fakediscord.Fake, db string, env map[string]string) *shardProc {
	t.Helper()
	p := &shardProc{ai: fakeopenai.New(t), stderr: &syncBuffer{}, done: make(chan int, 1)}
	echoModel(p.ai)
	full := map[string]string{
		"KIOKU_DISCORD_TOKEN":    "fake-discord-token",
		"KIOKU_DISCORD_API_URL":  fake.URL(),
		"KIOKU_LLM_BASE_URL":     p.ai.URL(),
		"KIOKU_LLM_API_KEY":      fakeopenai.APIKey,
		"KIOKU_DB":               db,
		"KIOKU_LOG_LEVEL":        "debug",
		"KIOKU_PIPELINE_MODE":    "off",
		"KIOKU_MAINTENANCE_MODE": "off",
		"KIOKU_EMBED_MODEL":      "text-embedding-3-small",
	}
	for k, v := range env {
		full[k] = v
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p.addr = ln.Addr().String()
	app := &App{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: p.stderr,
		LookupEnv:    func(k string) (string, bool) { v, ok := full[k]; return v, ok },
		httpListener: ln,
		storeOpened: func(s *ltm.Store) {
			p.mu.Lock()
			p.store = s
			p.mu.Unlock()
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() { p.done <- app.Main(ctx, []string{"run"}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-p.done:
			if code != 0 || t.Failed() {
				t.Logf("kioku's log:\n%s", p.stderr.String())
			}
			if code != 0 {
				t.Errorf("kioku run exited with %d", code)
			}
		case <-time.After(45 * time.Second):
			t.Errorf("kioku run did not stop within 45s after cancel")
		}
	})
	return p
}

// shardedSetup is a fake Discord with guilds on both shards of 2 and the e2e helpers
// pointed at it; h.ai is unused (each process has its own).
func shardedSetup(t *testing.T, opts ...fakediscord.Option) (*e2e, [2][]string) {
	fake := fakediscord.New(t, opts...)
	var channels [2][]string // by shard
	for n := range 2 {
		for shard := range 2 {
			g, ch := shardGuild(10+n, shard, 2)
			fake.SetGuild(&discordgo.Guild{ID: g, Name: fmt.Sprintf("guild %d of shard %d", n, shard), OwnerID: "1"})
			fake.SetChannel(&discordgo.Channel{ID: ch, GuildID: g, Type: discordgo.ChannelTypeGuildText, Name: "general"})
			channels[shard] = append(channels[shard], ch)
		}
	}
	h := &e2e{t: t, fake: fake, db: filepath.Join(t.TempDir(), "kioku.db"), stderr: &syncBuffer{}, appID: fake.ApplicationID()}
	return h, channels
}

// guildOf returns the guild of a channel made by shardedSetup.
func guildOf(channelID string) string {
	var c uint64
	fmt.Sscan(channelID, &c)
	return fmt.Sprint(c - 1)
}

// waitShardsUp waits until the fake saw every shard connect and the commands registered.
func waitShardsUp(t *testing.T, h *e2e, procs ...*shardProc) {
	t.Helper()
	if err := h.fake.WaitReady(h.ctx()); err != nil {
		for _, p := range procs {
			t.Logf("kioku's log:\n%s", p.stderr.String())
		}
		t.Fatalf("shards never became ready: %v", err)
	}
	if _, err := h.fake.WaitFor(h.ctx(), fakediscord.Match("PUT", "/applications/"+h.appID+"/commands")); err != nil {
		t.Fatalf("commands were never registered: %v", err)
	}
}

// chatAll sends each of texts as a mention in each channel and checks that every message got
// exactly one answer, in its channel, echoing it.
func chatAll(t *testing.T, h *e2e, channels []string, author *discordgo.User, texts []string) {
	t.Helper()
	me := h.fake.BotUser()
	for _, ch := range channels {
		before := len(h.fake.Messages(ch))
		for _, text := range texts {
			got := h.chat(h.fake.GuildMessage(guildOf(ch), ch, author, "<@"+me.ID+"> "+text+" in "+ch, me))
			mustContain(t, "answer", got.Content, text+" in "+ch)
		}
		if n := len(h.fake.Messages(ch)) - before; n != len(texts) {
			t.Errorf("channel %s: %d answers to %d messages, want exactly one each", ch, n, len(texts))
		}
	}
}

// promptsOf returns every user message the model of p was asked about.
func promptsOf(p *shardProc) string {
	var sb strings.Builder
	for _, r := range p.ai.ChatRequests() {
		for _, m := range r.Messages {
			sb.WriteString(m.Content + "\n")
		}
	}
	return sb.String()
}

// TestRunTwoShardProcesses runs two `kioku run` processes as shards 0 and 1 of 2 against one
// fake Discord and one SQLite file. Every message is answered once, by the process of its
// guild's shard; a memory saved through both is stored once; and a forget-me done through one
// process is honoured by the other on its very next turn: no memory of the member and none of
// their words from its short-term memory reach its model.
func TestRunTwoShardProcesses(t *testing.T) {
	t.Parallel()
	h, channels := shardedSetup(t)
	procs := [2]*shardProc{}
	for id := range procs {
		procs[id] = launchShardProc(t, h.fake, h.db, map[string]string{"KIOKU_SHARD_ID": fmt.Sprint(id), "KIOKU_SHARD_COUNT": "2"})
	}
	waitShardsUp(t, h, procs[:]...)
	for _, id := range h.fake.Identifies() {
		if id.Shard == nil || id.Shard[1] != 2 {
			t.Errorf("IDENTIFY with shard %v, want one of 2", id.Shard)
		}
	}
	alice, bob := h.fake.NewUser("alice"), h.fake.NewUser("bob")

	t.Run("EachMessageAnsweredOnceByItsShard", func(t *testing.T) {
		texts := []string{"first question", "second question"}
		chatAll(t, h.in(t), append(channels[0], channels[1]...), alice, texts)
		for shard, p := range procs {
			seen := promptsOf(p)
			for s, chs := range channels {
				for _, ch := range chs {
					if asked := strings.Contains(seen, "in "+ch); asked != (s == shard) {
						t.Errorf("process of shard %d asked its model about channel %s of shard %d: %v", shard, ch, s, asked)
					}
				}
			}
		}
		if a, b := procs[0].ai.ChatCount(), procs[1].ai.ChatCount(); a+b != 2*len(texts)*2 || a == 0 || b == 0 {
			t.Errorf("model calls %d + %d, want %d split over both processes", a, b, 2*len(texts)*2)
		}
	})

	t.Run("SameMemoryThroughBothIsStoredOnce", func(t *testing.T) {
		h := h.in(t)
		// Cross-server personal memory, set through shard 0 (a DM), lets a save in a guild of
		// shard 1 see the one saved in a guild of shard 0: the other process reads the
		// setting from the database, not from a copy of its own.
		r := h.command("", "200000000000000061", alice, 0, slash("privacy", "",
			&discordgo.ApplicationCommandInteractionDataOption{Name: "cross_server", Type: discordgo.ApplicationCommandOptionBoolean, Value: true}))
		mustContain(t, "privacy cross_server", r.Text(), "Level: normal")
		// Once in a DM (shard 0), once in a guild of shard 1.
		r = h.command("", "200000000000000061", alice, 0, slash("memory", "add",
			strOpt("content", "My lucky fruit is the pineapple"), strOpt("scope", "personal")))
		mustContain(t, "memory add in a DM", r.Text(), "pineapple")
		ch1 := channels[1][0]
		r = h.command(guildOf(ch1), ch1, alice, permMember, slash("memory", "add",
			strOpt("content", "My lucky fruit is the pineapple"), strOpt("scope", "personal")))
		mustContain(t, "memory add in shard 1", r.Text(), "pineapple")
		procs[0].mu.Lock()
		store := procs[0].store
		procs[0].mu.Unlock()
		mems, _, err := store.Memories.List(t.Context(), memory.PersonalOwner(alice.ID), memory.ListOptions{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(mems) != 1 {
			t.Errorf("alice has %d personal memories after saving one content through both shards, want 1", len(mems))
		}
	})

	t.Run("ForgetMeThroughOneIsHonouredByTheOther", func(t *testing.T) {
		h := h.in(t)
		me := h.fake.BotUser()
		ch1 := channels[1][0]
		// Alice talks in a guild of shard 1: process 1 holds her words in short-term memory
		// and recalls her memory for her.
		h.chat(h.fake.GuildMessage(guildOf(ch1), ch1, alice, "<@"+me.ID+"> I grow mangosteen on my balcony", me))
		h.chat(h.fake.GuildMessage(guildOf(ch1), ch1, alice, "<@"+me.ID+"> what is my lucky fruit?", me))
		mustContain(t, "shard 1's prompt before forget-me", lastPrompt(t, procs[1].ai), "pineapple", "mangosteen")
		r := h.command(guildOf(ch1), ch1, alice, permMember, slash("memory", "search", strOpt("query", "lucky fruit"), strOpt("scope", "personal")))
		mustContain(t, "search in shard 1 before forget-me", r.Text(), "pineapple")

		// Forget-me in a DM: DMs go to shard 0, the other process.
		const aliceDM = "200000000000000071"
		calls0 := procs[0].ai.ChatCount()
		preview := h.command("", aliceDM, alice, 0, slash("memory", "forget-me"))
		mustContain(t, "forget-me", h.press(preview, alice, 0, button(t, preview, "forgetme:confirm:")).Text(), "Done")
		if procs[0].ai.ChatCount() != calls0 {
			t.Errorf("forget-me called the model")
		}

		// The very next turn in process 1, by bob in the channel alice spoke in, and alice's
		// own question there: neither prompt holds anything of hers.
		h.chat(h.fake.GuildMessage(guildOf(ch1), ch1, bob, "<@"+me.ID+"> what did people say here?", me))
		mustNotContain(t, "shard 1's prompt for bob after alice's forget-me", lastPrompt(t, procs[1].ai), "mangosteen", "pineapple")
		h.chat(h.fake.GuildMessage(guildOf(ch1), ch1, alice, "<@"+me.ID+"> what is my lucky fruit?", me))
		mustNotContain(t, "shard 1's prompt for alice after her forget-me", lastPrompt(t, procs[1].ai), "mangosteen", "pineapple")
		r = h.command(guildOf(ch1), ch1, alice, permMember, slash("memory", "search", strOpt("query", "lucky fruit"), strOpt("scope", "personal")))
		mustNotContain(t, "search in shard 1 after forget-me", r.Text(), "pineapple")
	})
}

// TestRunShardsAuto runs one process with KIOKU_SHARDS=auto against a gateway that
// recommends 2 shards: it connects both, and every message of both shards' guilds is
// answered once.
func TestRunShardsAuto(t *testing.T) {
	t.Parallel()
	h, channels := shardedSetup(t, fakediscord.WithRecommendedShards(2))
	p := launchShardProc(t, h.fake, h.db, map[string]string{"KIOKU_SHARDS": "auto"})
	waitShardsUp(t, h, p)
	if got := h.fake.Shards(); len(got) != 2 || got[0] != 2 || got[1] != 2 {
		t.Fatalf("connected shards = %v, want 0 and 1 of 2", got)
	}
	alice := h.fake.NewUser("alice")
	texts := []string{"hello", "again"}
	chatAll(t, h.in(t), append(channels[0], channels[1]...), alice, texts)
	if n := p.ai.ChatCount(); n != len(texts)*4 {
		t.Errorf("%d model calls for %d messages, want one each", n, len(texts)*4)
	}
	// A DM goes to shard 0 and is answered once too.
	const dm = "200000000000000081"
	got := h.chat(h.fake.DMMessage(dm, alice, "a direct question"))
	mustContain(t, "DM answer", got.Content, "a direct question")
	if n := len(h.fake.Messages(dm)); n != 1 {
		t.Errorf("%d answers to one DM, want 1", n)
	}
}
