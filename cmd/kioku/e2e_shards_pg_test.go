package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/memory"
)

// isPipelineRequest reports whether a model request is the background pipeline's (an
// extraction or a decision) rather than a chat turn's.
func isPipelineRequest(req openai.ChatCompletionRequest) bool {
	if len(req.Messages) == 0 {
		return false
	}
	first := req.Messages[0].Content
	return strings.HasPrefix(first, "You extract") || strings.HasPrefix(first, "You maintain the long-term memory")
}

// raidDecision is what the members of a channel decide in the PostgreSQL shards test, and
// the fact the extraction model finds in it.
var raidDecision = regexp.MustCompile(`decided that channel (\d+) raids on Fridays`)

// pipelineEchoModel answers chat turns as echoModel does, and extractions with one server
// fact per channel whose decision the conversation holds.
func pipelineEchoModel(ai *fakeopenai.Server) {
	ai.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		var all, last strings.Builder
		for _, m := range req.Messages {
			all.WriteString(m.Content + "\n")
			if m.Role == openai.ChatMessageRoleUser {
				last.Reset()
				last.WriteString(m.Content)
			}
		}
		if !isPipelineRequest(req) {
			return fakeopenai.Text("ok: " + last.String())
		}
		facts := []map[string]any{}
		seen := map[string]bool{}
		for _, m := range raidDecision.FindAllStringSubmatch(all.String(), -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				facts = append(facts, map[string]any{"content": "Channel " + m[1] + " raids on Fridays",
					"type": "decision", "confidence": 0.9, "scope": "server"})
			}
		}
		b, _ := json.Marshal(map[string]any{"facts": facts})
		return fakeopenai.Text(string(b))
	})
}

// chatPrompts joins the messages of every chat-turn request p's model got.
func chatPrompts(p *shardProc) []string {
	var out []string
	for _, r := range p.ai.ChatRequests() {
		if isPipelineRequest(r) {
			continue
		}
		var sb strings.Builder
		for _, m := range r.Messages {
			sb.WriteString(m.Content + "\n")
		}
		out = append(out, sb.String())
	}
	return out
}

// lastChatPrompt is the newest chat turn's prompt of p's model.
func lastChatPrompt(t *testing.T, p *shardProc) string {
	t.Helper()
	prompts := chatPrompts(p)
	if len(prompts) == 0 {
		t.Fatal("the model was never asked a chat turn")
	}
	return prompts[len(prompts)-1]
}

// TestRunTwoShardProcessesPostgres runs two `kioku run` processes as shards 0 and 1 of 2
// against one fake Discord and one PostgreSQL database, each with its background pipeline
// running. Every message is answered once, by the process of its guild's shard; every
// extraction job is leased and run by exactly one process and stores its fact once; a
// memory saved through both is stored once; a forget-me done through one process is honoured
// by the other on its very next turn; and each process reports the store on /metrics.
func TestRunTwoShardProcessesPostgres(t *testing.T) {
	t.Parallel()
	url := testPostgresURL(t)
	h, channels := shardedSetup(t)
	procs := [2]*shardProc{}
	for id := range procs {
		procs[id] = launchShardProc(t, h.fake, url, map[string]string{"KIOKU_SHARD_ID": fmt.Sprint(id), "KIOKU_SHARD_COUNT": "2",
			"KIOKU_PIPELINE_MODE": "full"})
		pipelineEchoModel(procs[id].ai)
	}
	waitShardsUp(t, h, procs[:]...)
	store, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	alice, bob := h.fake.NewUser("alice"), h.fake.NewUser("bob")
	all := append(append([]string{}, channels[0]...), channels[1]...)

	t.Run("EachMessageAnsweredOnceByItsShard", func(t *testing.T) {
		texts := []string{"first question", "second question"}
		chatAll(t, h.in(t), all, alice, texts)
		for shard, p := range procs {
			seen := strings.Join(chatPrompts(p), "\n")
			for s, chs := range channels {
				for _, ch := range chs {
					if asked := strings.Contains(seen, "in "+ch); asked != (s == shard) {
						t.Errorf("process of shard %d asked its model about channel %s of shard %d: %v", shard, ch, s, asked)
					}
				}
			}
		}
		if a, b := len(chatPrompts(procs[0])), len(chatPrompts(procs[1])); a+b != len(texts)*len(all) || a == 0 || b == 0 {
			t.Errorf("chat turns %d + %d, want %d split over both processes", a, b, len(texts)*len(all))
		}
	})

	t.Run("EachJobRunOnceEachFactStoredOnce", func(t *testing.T) {
		h := h.in(t)
		me := h.fake.BotUser()
		for _, ch := range all {
			h.chat(h.fake.GuildMessage(guildOf(ch), ch, alice, "<@"+me.ID+"> we decided that channel "+ch+" raids on Fridays", me))
		}
		facts := func() map[string]int {
			out := map[string]int{}
			for _, ch := range all {
				mems, _, err := store.Memories.List(t.Context(), memory.ServerOwner(guildOf(ch)), memory.ListOptions{Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range mems {
					if m.Source == memory.SourcePipeline {
						out[m.Content]++
					}
				}
			}
			return out
		}
		waitFor(t, h, "both pipelines to store every channel's decision", func() bool { return len(facts()) == len(all) })
		for content, n := range facts() {
			if n != 1 {
				t.Errorf("%q stored %d times, want once", content, n)
			}
		}
		// Every extraction job ran once: done on its first attempt, and the two models
		// together got one extraction request per job (each job reads its channel's turns).
		jobs, err := store.Jobs.FindJobs(t.Context(), memory.JobFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, j := range jobs {
			if j.Attempts > 1 {
				t.Errorf("job %d (%s) ran %d times", j.ID, j.Kind, j.Attempts)
			}
			if j.State == "done" {
				done++
			}
		}
		extractions := 0
		for _, p := range procs {
			for _, r := range p.ai.ChatRequests() {
				if isPipelineRequest(r) {
					extractions++
				}
			}
		}
		if extractions == 0 || extractions > done {
			t.Errorf("%d extraction requests for %d finished jobs: a job ran in both processes", extractions, done)
		}
	})

	t.Run("SameMemoryThroughBothIsStoredOnce", func(t *testing.T) {
		h := h.in(t)
		r := h.command("", "200000000000000061", alice, 0, slash("privacy", "",
			&discordgo.ApplicationCommandInteractionDataOption{Name: "cross_server", Type: discordgo.ApplicationCommandOptionBoolean, Value: true}))
		mustContain(t, "privacy cross_server", r.Text(), "Level: normal")
		r = h.command("", "200000000000000061", alice, 0, slash("memory", "add",
			strOpt("content", "My lucky fruit is the pineapple"), strOpt("scope", "personal")))
		mustContain(t, "memory add in a DM", r.Text(), "pineapple")
		ch1 := channels[1][0]
		r = h.command(guildOf(ch1), ch1, alice, permMember, slash("memory", "add",
			strOpt("content", "My lucky fruit is the pineapple"), strOpt("scope", "personal")))
		mustContain(t, "memory add in shard 1", r.Text(), "pineapple")
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
		h.chat(h.fake.GuildMessage(guildOf(ch1), ch1, alice, "<@"+me.ID+"> I grow mangosteen on my balcony", me))
		h.chat(h.fake.GuildMessage(guildOf(ch1), ch1, alice, "<@"+me.ID+"> what is my lucky fruit?", me))
		mustContain(t, "shard 1's prompt before forget-me", lastChatPrompt(t, procs[1]), "pineapple", "mangosteen")
		r := h.command(guildOf(ch1), ch1, alice, permMember, slash("memory", "search", strOpt("query", "lucky fruit"), strOpt("scope", "personal")))
		mustContain(t, "search in shard 1 before forget-me", r.Text(), "pineapple")

		// Forget-me in a DM: DMs go to shard 0, the other process.
		const aliceDM = "200000000000000071"
		preview := h.command("", aliceDM, alice, 0, slash("memory", "forget-me"))
		mustContain(t, "forget-me", h.press(preview, alice, 0, button(t, preview, "forgetme:confirm:")).Text(), "Done")

		// The very next turns in process 1, with no wait: nothing of alice's in either prompt.
		h.chat(h.fake.GuildMessage(guildOf(ch1), ch1, bob, "<@"+me.ID+"> what did people say here?", me))
		mustNotContain(t, "shard 1's prompt for bob after alice's forget-me", lastChatPrompt(t, procs[1]), "mangosteen", "pineapple")
		h.chat(h.fake.GuildMessage(guildOf(ch1), ch1, alice, "<@"+me.ID+"> what is my lucky fruit?", me))
		mustNotContain(t, "shard 1's prompt for alice after her forget-me", lastChatPrompt(t, procs[1]), "mangosteen", "pineapple")
		r = h.command(guildOf(ch1), ch1, alice, permMember, slash("memory", "search", strOpt("query", "lucky fruit"), strOpt("scope", "personal")))
		mustNotContain(t, "search in shard 1 after forget-me", r.Text(), "pineapple")
	})

	t.Run("MetricsNameTheStore", func(t *testing.T) {
		for shard, p := range procs {
			resp, err := http.Get("http://" + p.addr + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mustContain(t, fmt.Sprintf("/metrics of shard %d", shard), string(body),
				`kioku_store_info{store="postgres"} 1`, "kioku_db_pool_max_connections", `kioku_db_pool_connections{state="in_use"}`)
		}
	})
}
