package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// End-to-end tests of the abuse limits (README "Limits") through the real `kioku run`
// wiring, on the harness of run_test.go. They wait on state (requests the fakes saw, rows
// in the database, the bot's log), never on time.

// heldModel makes every chat request of h's model wait until release is called, reporting
// each arrival on the returned channel; then they all answer answer. The test's cleanup
// releases them too, so a failing test does not hang the fake's shutdown.
func heldModel(t *testing.T, h *e2e, answer string) (arrived <-chan struct{}, release func()) {
	t.Helper()
	in := make(chan struct{}, 100)
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	h.ai.Default(func(openai.ChatCompletionRequest) fakeopenai.Response {
		in <- struct{}{}
		<-gate
		return fakeopenai.Text(answer)
	})
	return in, release
}

// waitArrivals waits until n held model requests have arrived.
func waitArrivals(t *testing.T, h *e2e, arrived <-chan struct{}, n int) {
	t.Helper()
	ctx := h.ctx()
	for i := range n {
		select {
		case <-arrived:
		case <-ctx.Done():
			t.Fatalf("only %d of %d model requests arrived:\n%s", i, n, h.stderr.String())
		}
	}
}

// waitLog waits until kioku's log holds n lines containing what.
func waitLog(t *testing.T, h *e2e, what string, n int) {
	t.Helper()
	waitFor(t, h, fmt.Sprintf("%d log lines with %q", n, what), func() bool {
		return strings.Count(h.stderr.String(), what) >= n
	})
}

// waitMessages waits until the bot posted n messages in channelID and returns them.
func waitMessages(t *testing.T, h *e2e, channelID string, n int) []*fakediscord.SentMessage {
	t.Helper()
	if err := h.fake.WaitUntil(h.ctx(), func() bool { return len(h.fake.Messages(channelID)) >= n }); err != nil {
		t.Fatalf("%d messages in %s, want %d: %v\n%s", len(h.fake.Messages(channelID)), channelID, n, err, h.stderr.String())
	}
	return h.fake.Messages(channelID)
}

// TestRunTurnCap: with two turns running and one message waiting, a fourth message is
// answered "I'm busy" at once, without a model call; when the model answers, every
// admitted message gets exactly one reply and the refused one nothing more.
func TestRunTurnCap(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "off", "KIOKU_MAX_CONCURRENT_TURNS": "2", "KIOKU_TURN_QUEUE": "1"})
	arrived, release := heldModel(t, h, "answer")
	dms := []string{"200000000000000101", "200000000000000102", "200000000000000103", "200000000000000104"}
	var msgs []*discordgo.Message
	for i, dm := range dms {
		msgs = append(msgs, h.fake.DMMessage(dm, h.fake.NewUser(fmt.Sprint("member", i)), "a question"))
	}
	for _, m := range msgs[:2] {
		if err := h.fake.DispatchMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	waitArrivals(t, h, arrived, 2)
	if err := h.fake.DispatchMessage(msgs[2]); err != nil {
		t.Fatal(err)
	}
	waitLog(t, h, "turn queued", 1)
	if err := h.fake.DispatchMessage(msgs[3]); err != nil {
		t.Fatal(err)
	}
	busy := waitMessages(t, h, dms[3], 1)[0]
	if busy.Content != "I'm busy right now, please try again in a moment." || busy.Reference == nil || busy.Reference.MessageID != msgs[3].ID {
		t.Fatalf("reply to the fourth message: %q (reference %+v)", busy.Content, busy.Reference)
	}
	if n := h.ai.ChatCount(); n != 2 {
		t.Fatalf("%d model requests while two turns run, want 2", n)
	}
	// Operators see the pressure: one message waiting, one turned away.
	fams := h.scrapeMetrics()
	if q, b := metricValue(fams, "kioku_turns_queued"), metricValue(fams, "kioku_turns_busy_total"); q != 1 || b != 1 {
		t.Errorf("kioku_turns_queued = %v, kioku_turns_busy_total = %v; want 1 and 1", q, b)
	}

	release()
	for i, dm := range dms[:3] {
		if got := waitMessages(t, h, dm, 1); got[0].Content != "answer" || got[0].Reference.MessageID != msgs[i].ID {
			t.Errorf("reply to message %d: %q", i+1, got[0].Content)
		}
	}
	// A later message is answered normally: its turn shows the cap has every place back.
	h.ai.Default(nil)
	if got := h.chat(h.fake.DMMessage(dms[3], h.fake.NewUser("member3again"), "again")); got.Content != fakeopenai.DefaultReply {
		t.Errorf("reply after the burst: %q", got.Content)
	}
	for i, dm := range dms[:3] {
		if n := len(h.fake.Messages(dm)); n != 1 {
			t.Errorf("message %d was answered %d times, want once", i+1, n)
		}
	}
	if n := len(h.fake.Messages(dms[3])); n != 2 {
		t.Errorf("%d messages in the fourth DM, want the busy reply and the later answer", n)
	}
	if n := h.ai.ChatCount(); n != 4 {
		t.Errorf("%d model requests, want 4 (three admitted messages and the later one)", n)
	}
}

// TestRunShutdownReleasesQueuedMessages: on shutdown the running turn finishes, and a
// message still waiting for a turn is told to send it again rather than started.
func TestRunShutdownReleasesQueuedMessages(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "off", "KIOKU_MAX_CONCURRENT_TURNS": "1", "KIOKU_TURN_QUEUE": "1"})
	arrived, release := heldModel(t, h, "finished after shutdown began")
	const first, second = "200000000000000111", "200000000000000112"
	if err := h.fake.DispatchMessage(h.fake.DMMessage(first, h.fake.NewUser("alice"), "a slow question")); err != nil {
		t.Fatal(err)
	}
	waitArrivals(t, h, arrived, 1)
	if err := h.fake.DispatchMessage(h.fake.DMMessage(second, h.fake.NewUser("bob"), "a waiting question")); err != nil {
		t.Fatal(err)
	}
	waitLog(t, h, "turn queued", 1)
	h.cancel()
	if got := waitMessages(t, h, second, 1); got[0].Content != "kioku is restarting; please send that again in a minute." {
		t.Fatalf("reply to the waiting message: %q", got[0].Content)
	}
	release()
	if got := waitMessages(t, h, first, 1); got[0].Content != "finished after shutdown began" {
		t.Fatalf("reply to the running turn: %q", got[0].Content)
	}
	if n := h.ai.ChatCount(); n != 1 {
		t.Fatalf("%d model requests, want only the running turn's", n)
	}
}

// TestRunGuildTurnRate: a server over KIOKU_GUILD_TURNS_PER_MINUTE gets a polite reply
// naming the server, whoever writes; another server is answered as usual.
func TestRunGuildTurnRate(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "off", "KIOKU_GUILD_TURNS_PER_MINUTE": "2"})
	bot := h.fake.BotUser()
	for i := range 2 {
		m := h.fake.GuildMessage(guildA, channelA, h.fake.NewUser(fmt.Sprint("member", i)), "<@"+bot.ID+"> hello", bot)
		if got := h.chat(m); got.Content != fakeopenai.DefaultReply {
			t.Fatalf("message %d within the server's rate: %q", i+1, got.Content)
		}
	}
	third := h.chat(h.fake.GuildMessage(guildA, channelA, h.fake.NewUser("member2"), "<@"+bot.ID+"> me too", bot))
	// The wait counts down from 30 seconds (2 turns a minute) while the turns run, so a
	// slow machine may see 29 or less.
	m := regexp.MustCompile(`This server is sending me more messages than I can keep up with\. Please wait about (\d+) seconds`).
		FindStringSubmatch(third.Content)
	wait := -1
	if m != nil {
		wait, _ = strconv.Atoi(m[1])
	}
	if wait < 1 || wait > 30 {
		t.Fatalf("third message = %q, want the server's rate-limit reply with a wait of at most 30 seconds", third.Content)
	}
	if got := h.chat(h.fake.GuildMessage(guildB, channelB, h.fake.NewUser("member3"), "<@"+bot.ID+"> hi", bot)); got.Content != fakeopenai.DefaultReply {
		t.Fatalf("another server: %q", got.Content)
	}
	if n := h.ai.ChatCount(); n != 3 {
		t.Fatalf("%d model requests, want 3 (the refused message asks nothing)", n)
	}
}

// openStore opens the running bot's database beside it, as another process would.
func openStore(t *testing.T, h *e2e) *ltm.Store {
	t.Helper()
	store, err := sqlite.Open(context.Background(), h.db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// routedModel answers the pipeline's extraction with facts, its decisions with ADD, and
// chat turns with chatReply(req).
func routedModel(facts []map[string]any, chatReply func(openai.ChatCompletionRequest) fakeopenai.Response) func(openai.ChatCompletionRequest) fakeopenai.Response {
	return func(req openai.ChatCompletionRequest) fakeopenai.Response {
		first := ""
		if len(req.Messages) > 0 {
			first = req.Messages[0].Content
		}
		switch {
		case strings.HasPrefix(first, "You extract"):
			b, _ := json.Marshal(map[string]any{"facts": facts})
			return fakeopenai.Text(string(b))
		case strings.HasPrefix(first, "You maintain"):
			return fakeopenai.Text(`{"action":"ADD","target_id":0,"content":"","confidence":0.9,"reason":"new information"}`)
		}
		return chatReply(req)
	}
}

func extractionRequests(ai *fakeopenai.Server) int {
	n := 0
	for _, r := range ai.ChatRequests() {
		if len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, "You extract") {
			n++
		}
	}
	return n
}

// TestRunDailyModelBudget: once a server's daily model calls are spent, its next message
// gets the budget reply without a model call, and the extraction its last conversation
// scheduled waits for 00:00 UTC (postponed, no attempt used) instead of calling the model;
// another server has its own budget.
func TestRunDailyModelBudget(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "full", "KIOKU_GUILD_DAILY_LLM_CALLS": "1"})
	h.ai.Default(routedModel([]map[string]any{{"content": "Raids are on Fridays", "type": "decision", "confidence": 0.9, "scope": "server"}},
		func(openai.ChatCompletionRequest) fakeopenai.Response { return fakeopenai.Text("Noted.") }))
	bot := h.fake.BotUser()
	alice := h.fake.NewUser("alice")
	if got := h.chat(h.fake.GuildMessage(guildA, channelA, alice, "<@"+bot.ID+"> We decided to raid on Fridays from now on", bot)); got.Content != "Noted." {
		t.Fatalf("first message: %q", got.Content)
	}
	store := openStore(t, h)
	ctx := context.Background()
	var job *memory.Job
	waitFor(t, h, "the server's extraction to wait for the budget", func() bool {
		jobs, err := store.Jobs.ListJobs(ctx, memory.JobQueued, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.DedupKey == guildA+"/"+channelA && j.RunAfter.After(time.Now()) {
				job = j
			}
		}
		return job != nil
	})
	if job.Attempts != 0 || job.LastError != "" || !job.RunAfter.Equal(job.RunAfter.Truncate(24*time.Hour)) {
		t.Fatalf("waiting job %+v, want it postponed to 00:00 UTC without a failed attempt", job)
	}
	if n := extractionRequests(h.ai); n != 0 {
		t.Fatalf("%d extraction requests over a spent budget", n)
	}

	calls := h.ai.ChatCount()
	got := h.chat(h.fake.GuildMessage(guildA, channelA, h.fake.NewUser("bob"), "<@"+bot.ID+"> are you there?", bot))
	if got.Content != "This server's daily model budget is used up; it resets at 00:00 UTC." {
		t.Fatalf("message over the budget: %q", got.Content)
	}
	if h.ai.ChatCount() != calls {
		t.Fatal("a message over the budget reached the model")
	}
	if got := h.chat(h.fake.GuildMessage(guildB, channelB, alice, "<@"+bot.ID+"> hello", bot)); got.Content != "Noted." {
		t.Fatalf("another server: %q", got.Content)
	}
	if n, err := store.Budgets.ModelCalls(ctx, "g:"+guildA, time.Now().UTC().Format(time.DateOnly)); err != nil || n != 1 {
		t.Fatalf("server A's calls today: %d %v, want 1", n, err)
	}
}

// TestRunMemoryCaps: a server at KIOKU_MAX_MEMORIES_PER_SERVER and a member at
// KIOKU_MAX_MEMORIES_PER_MEMBER refuse new memories with a clear message from every path:
// /memory add, the model's tool (which relays the refusal), the CLI, imports (the whole
// file, nothing written) and the background pipeline (its proposal recorded as blocked).
func TestRunMemoryCaps(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "full", "KIOKU_MAX_MEMORIES_PER_SERVER": "2", "KIOKU_MAX_MEMORIES_PER_MEMBER": "2"})
	admin, alice := h.fake.NewUser("admin"), h.fake.NewUser("alice")
	const aliceDM = "200000000000000121"
	// Chat turns relay what the tool said; the pipeline extracts one server fact.
	h.ai.Default(routedModel([]map[string]any{{"content": "Movie night is on Saturdays", "type": "decision", "confidence": 0.9, "scope": "server"}},
		func(req openai.ChatCompletionRequest) fakeopenai.Response {
			last := req.Messages[len(req.Messages)-1]
			if last.Role == openai.ChatMessageRoleTool {
				return fakeopenai.Text("I couldn't save that: " + last.Content)
			}
			if strings.Contains(last.Content, "remember") {
				return fakeopenai.ToolCalls(fakeopenai.Call{Name: "create_long_term_memory",
					Arguments: `{"memory_content":"Alice's cat is called Miso","memory_scope":"target_user"}`})
			}
			return fakeopenai.Text("Noted.")
		}))
	store := openStore(t, h)
	ctx := context.Background()

	for _, c := range []string{"The raid is on Friday", "Kenji runs the guild bank"} {
		rememberedID(t, h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", c))))
	}
	r := h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", "One memory too many")))
	mustContain(t, "/memory add over the cap", r.Text(), "This server has reached its limit of 2 memories; forget some first.")

	t.Run("CLI", func(t *testing.T) {
		env := map[string]string{"KIOKU_DB": h.db, "KIOKU_MAX_MEMORIES_PER_SERVER": "2"}
		code, _, stderr := runApp(t, env, "", "memories", "add", "Another one too many", "--guild", guildA)
		if code == 0 || !strings.Contains(stderr, "This server has reached its limit of 2 memories") {
			t.Fatalf("kioku memories add over the cap: exit %d, %q", code, stderr)
		}
	})

	t.Run("Tool", func(t *testing.T) {
		for _, c := range []string{"I prefer tea", "I live in Osaka"} {
			rememberedID(t, h.command("", aliceDM, alice, 0, slash("memory", "add", strOpt("content", c))))
		}
		got := h.chat(h.fake.DMMessage(aliceDM, alice, "remember that my cat is called Miso"))
		mustContain(t, "DM reply", got.Content, "I couldn't save that", "a member can keep at most 2 memories")
		mustNotContain(t, "DM reply", got.Content, "📌")
		if n, err := store.Memories.LiveCount(ctx, memory.PersonalOwner(alice.ID)); err != nil || n != 2 {
			t.Fatalf("alice holds %d memories (%v), want 2", n, err)
		}
	})

	t.Run("Pipeline", func(t *testing.T) {
		bot := h.fake.BotUser()
		if got := h.chat(h.fake.GuildMessage(guildA, channelA, alice, "<@"+bot.ID+"> We decided that movie night is on Saturdays", bot)); got.Content != "Noted." {
			t.Fatalf("reply %q", got.Content)
		}
		var blocked *memory.HistoryEvent
		waitFor(t, h, "the pipeline's proposal to be blocked", func() bool {
			evs, err := store.Memories.ScopeHistory(ctx, memory.ServerOwner(guildA), 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Action == memory.ActionBlock {
					blocked = &ev
				}
			}
			return blocked != nil
		})
		if blocked.NewContent != "Movie night is on Saturdays" || !strings.Contains(string(blocked.Metadata), "This server has reached its limit of 2 memories") {
			t.Fatalf("blocked proposal %+v", blocked)
		}
		if n, err := store.Memories.LiveCount(ctx, memory.ServerOwner(guildA)); err != nil || n != 2 {
			t.Fatalf("server A holds %d memories (%v), want 2", n, err)
		}
	})

	t.Run("Import", func(t *testing.T) {
		exp := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, GuildID: guildA}
		for _, c := range []string{"Imported fact one", "Imported fact two", "Imported fact three"} {
			exp.Memories = append(exp.Memories, memory.ExportMemory{Type: memory.TypeFact, Content: c})
		}
		data, err := json.Marshal(exp)
		if err != nil {
			t.Fatal(err)
		}
		r := h.importFile(guildB, channelB, admin, "three.json", data)
		mustContain(t, "import over the cap", r.Text(), "Adding 3 new memories would bring this server to 3, over its limit of 2 memories (it holds 0)", "Nothing was imported.")
		mustContain(t, "guild B list", h.command(guildB, channelB, admin, permAdmin, slash("memory", "list")).Text(), "no memories")
	})
}

// importFile runs /memory import in a server with data as the attached file.
func (h *e2e) importFile(guildID, channelID string, user *discordgo.User, name string, data []byte) reply {
	h.t.Helper()
	att := h.fake.AddAttachment(channelID, name, "application/json", data)
	cmd := slash("memory", "import", &discordgo.ApplicationCommandInteractionDataOption{
		Name: "file", Type: discordgo.ApplicationCommandOptionAttachment, Value: att.ID})
	cmd.Resolved = &discordgo.ApplicationCommandInteractionDataResolved{Attachments: map[string]*discordgo.MessageAttachment{att.ID: att}}
	return h.command(guildID, channelID, user, permAdmin, cmd)
}

// TestRunImportLimits: an import file over 5 MiB, or holding more than 10,000 memories, is
// refused before anything is written, by /memory import and `kioku memories import` alike.
func TestRunImportLimits(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	admin := h.fake.NewUser("admin")
	exp := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, GuildID: guildA}
	for i := range memory.MaxImportMemories + 1 {
		exp.Memories = append(exp.Memories, memory.ExportMemory{Type: memory.TypeFact, Content: fmt.Sprintf("Imported fact number %d", i)})
	}
	tooMany, err := json.Marshal(exp)
	if err != nil {
		t.Fatal(err)
	}
	exp.Memories = exp.Memories[:1]
	exp.Memories[0].Content = strings.Repeat("x", 1500)
	one, _ := json.Marshal(exp)
	// A valid export padded past the size limit with whitespace: 6 MiB.
	tooLarge := append(one[:len(one)-1:len(one)-1], append([]byte(strings.Repeat(" ", 6<<20-len(one))), '}')...)

	r := h.importFile(guildA, channelA, admin, "large.json", tooLarge)
	mustContain(t, "large import", r.Text(), "That file is 6.0 MiB; an import can be at most 5.0 MiB.")
	r = h.importFile(guildA, channelA, admin, "many.json", tooMany)
	mustContain(t, "import of too many", r.Text(), "That file has 10,001 memories; one import takes at most 10,000.", "Nothing was imported.")
	mustContain(t, "list after refused imports", h.command(guildA, channelA, admin, permAdmin, slash("memory", "list")).Text(), "no memories")

	dir := t.TempDir()
	env := map[string]string{"KIOKU_DB": h.db}
	for name, data := range map[string][]byte{"large.json": tooLarge, "many.json": tooMany} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runApp(t, env, "", "memories", "import", path, "--guild", guildB)
		if code == 0 || !strings.Contains(stderr, "Nothing was imported.") {
			t.Errorf("kioku memories import %s: exit %d, %q", name, code, stderr)
		}
	}
	code, _, stderr := runApp(t, env, string(tooLarge), "memories", "import", "-", "--guild", guildB)
	if code == 0 || !strings.Contains(stderr, "That file is larger than 5.0 MiB, the most an import file can be") {
		t.Errorf("kioku memories import - of a large file: exit %d, %q", code, stderr)
	}
	store := openStore(t, h)
	for _, g := range []string{guildA, guildB} {
		if n, err := store.Memories.LiveCount(context.Background(), memory.ServerOwner(g)); err != nil || n != 0 {
			t.Errorf("server %s holds %d memories after refused imports (%v)", g, n, err)
		}
	}
}

// TestLimitSettings: the limits' defaults, 0 where it turns a limit off, and one line naming
// the setting for a bad value.
func TestLimitSettings(t *testing.T) {
	cfg, err := LoadConfig(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	got := []int{cfg.GuildTurnsPerMinute, cfg.MaxConcurrentTurns, cfg.TurnQueue, cfg.GuildDailyLLMCalls, cfg.MaxServerMemories, cfg.MaxMemberMemories}
	if want := []int{60, 16, 64, 2000, 200000, 5000}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("defaults %v, want %v", got, want)
	}
	for name, value := range map[string]string{"KIOKU_TURN_QUEUE": "0", "KIOKU_GUILD_DAILY_LLM_CALLS": "0"} {
		if _, err := LoadConfig(only(name, value)); err != nil {
			t.Errorf("%s=0: %v", name, err)
		}
	}
	for name, value := range map[string]string{
		"KIOKU_GUILD_TURNS_PER_MINUTE": "0", "KIOKU_MAX_CONCURRENT_TURNS": "0", "KIOKU_TURN_QUEUE": "-1",
		"KIOKU_GUILD_DAILY_LLM_CALLS": "lots", "KIOKU_MAX_MEMORIES_PER_SERVER": "0", "KIOKU_MAX_MEMORIES_PER_MEMBER": "-5",
	} {
		if _, err := LoadConfig(only(name, value)); err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s=%s: %v, want one line naming the setting", name, value, err)
		}
	}
}

// TestRunSearchEmbeddingsCountAgainstTheBudget: the embedding calls of /memory search (and of
// /memory add: its words as the near-duplicate check's query, then as the new memory) are
// charged to the server's daily model budget; a repeated query reuses its
// cached vector and costs nothing; once the budget is spent, a search still answers, from
// keywords alone, says so, and asks the provider nothing more. Another server's searches go on.
func TestRunSearchEmbeddingsCountAgainstTheBudget(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "off", "KIOKU_EMBED_MODEL": "embed-model",
		"KIOKU_GUILD_DAILY_LLM_CALLS": "5"})
	store := openStore(t, h)
	ctx := context.Background()
	used := func() int {
		t.Helper()
		n, err := store.Budgets.ModelCalls(ctx, "g:"+guildA, time.Now().UTC().Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	admin, alice := h.fake.NewUser("admin"), h.fake.NewUser("alice")
	h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", "Raid night is Friday at 20:00")))
	if n, u := h.ai.EmbeddingCount(), used(); n != 2 || u != 2 {
		t.Fatalf("after /memory add: %d embedding requests, %d calls counted; want 2 and 2", n, u)
	}
	search := func(guildID, channelID, query string) string {
		t.Helper()
		return h.command(guildID, channelID, alice, permMember, slash("memory", "search", strOpt("query", query))).Text()
	}
	const note = "Matched by keywords only"
	for i, query := range []string{"raid", "raid", "schedule", "friday"} {
		text := search(guildA, channelA, query)
		mustNotContain(t, "search within the budget", text, note)
		want := map[int]int{0: 3, 1: 3, 2: 4, 3: 5}[i] // the repeated "raid" is answered from the cache
		if n, u := h.ai.EmbeddingCount(), used(); n != want || u != want {
			t.Fatalf("after search %d (%q): %d embedding requests, %d calls counted; want %d", i+1, query, n, u, want)
		}
	}
	text := search(guildA, channelA, "night")
	mustContain(t, "search over the budget", text, "Raid night")
	mustContain(t, "search over the budget", text, note)
	if n, u := h.ai.EmbeddingCount(), used(); n != 5 || u != 5 {
		t.Fatalf("over the budget: %d embedding requests, %d calls counted; want 5 and 5", n, u)
	}
	mustNotContain(t, "another server's search", search(guildB, channelB, "night"), note)
	if n := h.ai.EmbeddingCount(); n != 6 {
		t.Fatalf("another server's search made %d embedding requests in all, want 6", n)
	}
}
