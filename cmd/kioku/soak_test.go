//go:build soak

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// The soak test runs the real `kioku run` wiring under sustained load: concurrent
// conversations across several guilds (and some DMs) through the fake Discord gateway, the
// fake OpenAI server answering turns (some with a create_long_term_memory call) and the
// background pipeline's extraction and decisions, for a set time. It checks correctness
// bounds, never timings: no error, no lost or duplicated reply, no duplicated memory, no
// goroutine or open-file growth beyond a constant after warm-up, and no heap growth that the
// memories stored meanwhile do not explain. The heap is sampled through the run, so the
// report shows its trend beside the memories' (a leak grows the heap without them). It is
// outside the default test path; CI runs a short one:
//
//	go test -tags soak -run TestSoak ./cmd/kioku/ -soak.duration 1m -v
var (
	soakDuration      = flag.Duration("soak.duration", time.Minute, "how long the soak runs after warm-up")
	soakConversations = flag.Int("soak.conversations", 50, "concurrent conversations")
	soakGuilds        = flag.Int("soak.guilds", 5, "guilds the conversations are spread over")
	soakHeapProfile   = flag.String("soak.heapprofile", "", "write heap profiles at the baseline (FILE.start) and the end (FILE), to find what grew")
)

const (
	// soakModelDelay is the fake model's scripted latency per chat call. It is subtracted
	// from a turn's time to give the bot's own overhead.
	soakModelDelay = 2 * time.Millisecond
	// soakWarmupTurns are the turns each conversation makes before the baseline is taken.
	soakWarmupTurns = 5
	// soakToolEvery: every n-th turn of a conversation the model saves a memory.
	soakToolEvery = 3
	// soakReplyWait bounds the wait for one reply; a reply later than this is counted as
	// late, and one that never comes as lost. Far above any turn the soak produces.
	soakReplyWait = 2 * time.Minute
	// soakDrainWait bounds the wait for the pipeline to finish the jobs that are due.
	soakDrainWait = 3 * time.Minute
	// soakOverhead is the most the run takes beyond -soak.duration: warm-up, two drains
	// and a shutdown.
	soakOverhead = soakDrainWait*2 + 2*time.Minute
	// soakForgetEvery is how many fake-Discord requests the collector looks at between
	// dropping them, so the fakes' records do not grow with the run.
	soakForgetEvery = 100
	// soakGoroutineSlack and soakFDSlack are the growth bounds of goroutines and open files
	// between the baseline after warm-up and the end.
	soakGoroutineSlack = 20
	soakFDSlack        = 10
	// soakHeapPerMemory and soakHeapSlack bound the heap's growth from the baseline: what
	// the memories stored meanwhile may take (the in-memory keyword index holds about 140
	// bytes a memory, docs/recall.md; this leaves room for the caches that grow with them),
	// plus a constant for what settles into use once. A heap that grows with time rather
	// than with what is stored passes it only as long as it stays under the constant, and
	// shows in the samples' trend (unexplained_heap_mb).
	soakHeapPerMemory = 2048
	soakHeapSlack     = 16 << 20
	// soakSamples is how many times the heap is sampled through the run.
	soakSamples = 8
)

// soakToken finds the "topic C-K" token that names a conversation's turn.
var soakToken = regexp.MustCompile(`topic (\d+-\d+)\b`)

// soakFact is the memory saved for a turn, by the chat model's tool call and by the
// pipeline's extraction alike: the same content twice, so only dedup keeps it single.
func soakFact(conv int, token string) string {
	return fmt.Sprintf("Soak member %d likes topic %s", conv, token)
}

// soakReport is the result line of a soak run.
type soakReport struct {
	Conversations int     `json:"conversations"`
	Guilds        int     `json:"guilds"`
	DurationS     float64 `json:"duration_s"`
	Turns         int     `json:"turns"`
	TurnsPerS     float64 `json:"turns_per_s"`
	OverheadP50Ms float64 `json:"overhead_p50_ms"`
	OverheadP99Ms float64 `json:"overhead_p99_ms"`
	LatencyP50Ms  float64 `json:"latency_p50_ms"`
	LatencyP99Ms  float64 `json:"latency_p99_ms"`
	HeapStartMB   float64 `json:"heap_inuse_start_mb"`
	HeapEndMB     float64 `json:"heap_inuse_end_mb"`
	// HeapPerMemoryB is the heap's growth from the baseline over the memories stored since.
	HeapPerMemoryB float64 `json:"heap_per_memory_b"`
	// UnexplainedHeapMB is, at each sample, the heap's growth from the baseline beyond
	// HeapPerMemoryB times the memories stored by then: flat when the heap grows with what
	// is stored, rising with time when something leaks.
	UnexplainedHeapMB []float64 `json:"unexplained_heap_mb"`
	GoroutinesStart   int       `json:"goroutines_start"`
	GoroutinesEnd     int       `json:"goroutines_end"`
	FDsStart          int       `json:"open_files_start"`
	FDsEnd            int       `json:"open_files_end"`
	DBBytes           int64     `json:"db_bytes"`
	DBBytesPerMemory  float64   `json:"db_bytes_per_memory"`
	MemoriesStart     int       `json:"memories_start"`
	Memories          int       `json:"memories"`
	MemoriesTool      int       `json:"memories_tool"`
	MemoriesPipeline  int       `json:"memories_pipeline"`
	ChatCalls         int64     `json:"model_chat_calls"`
	ExtractCalls      int64     `json:"model_extract_calls"`
	DecideCalls       int64     `json:"model_decide_calls"`
	Errors            int       `json:"errors"`
	Warnings          int       `json:"warnings"`
	Lost              int       `json:"lost"`
	Late              int       `json:"late"`
	DuplicateReplies  int       `json:"duplicate_replies"`
	DuplicateMemories int       `json:"duplicate_memories"`
}

// soakPending is one dispatched message waiting for its reply.
type soakPending struct {
	token   string
	sent    time.Time
	measure bool
	done    chan struct{}
	late    bool // the sender stopped waiting before the reply came
}

// soak is the state of one run shared by the conversations, the collector and the model.
type soak struct {
	t    *testing.T
	fake *fakediscord.Fake
	ai   *fakeopenai.Server
	log  *soakLog

	mu      sync.Mutex
	pending map[string]*soakPending // message id → waiting for its reply
	delays  map[string]time.Duration
	// Histograms, not samples: the test's own bookkeeping must not grow with the run, or
	// it would count against the heap bound.
	overhead, latency soakHistogram
	turns             int
	duplicates        int
	errs              map[string]int // what went wrong → how often
	late              int

	chatCalls, extractCalls, decideCalls atomic.Int64
	// seen is the mark up to which the collector has looked at the fake Discord's requests.
	seen atomic.Int64
}

// settle drops every record the fakes hold, which the collector has looked at, and returns
// the heap in use and the goroutine count after a full collection: the fakes' records are
// test scaffolding, not the bot's memory.
func (s *soak) settle() (heap uint64, goroutines int) {
	s.fake.Forget(int(s.seen.Load()))
	s.ai.ResetRequests()
	return soakMemStats()
}

func (s *soak) fail(what string) {
	s.mu.Lock()
	s.errs[what]++
	s.mu.Unlock()
}

// TestSoak runs the soak; see the comment on soakDuration for the command.
func TestSoak(t *testing.T) {
	convs, guildCount, duration := *soakConversations, *soakGuilds, *soakDuration
	if convs < 1 || guildCount < 1 || duration <= 0 {
		t.Fatalf("bad flags: %d conversations, %d guilds, %v", convs, guildCount, duration)
	}
	if *soakHeapProfile != "" {
		runtime.MemProfileRate = 4096 // fine enough to see small growth
	}
	// Warm-up, the drains and the shutdown come on top of the soak itself.
	if dl, ok := t.Deadline(); ok && time.Until(dl) < duration+soakOverhead {
		t.Fatalf("-soak.duration %v needs a test timeout of at least %v: add -timeout %v", duration, duration+soakOverhead,
			(duration + soakOverhead + 5*time.Minute).Round(time.Minute))
	}
	fake := fakediscord.New(t)
	s := &soak{t: t, fake: fake, ai: fakeopenai.New(t), log: &soakLog{levels: map[string]int{}, byMsg: map[string]int{}},
		pending: map[string]*soakPending{}, delays: map[string]time.Duration{}, errs: map[string]int{}}
	s.ai.Default(s.model)

	// Guilds with two channels each; conversation c talks in guild c%guilds, in one of its
	// channels, and every tenth one in a DM.
	type place struct{ guild, channel string }
	var guilds []string
	channels := map[int][2]string{}
	for g := range guildCount {
		id := fmt.Sprintf("3%017d", g+1)
		guilds = append(guilds, id)
		fake.SetGuild(&discordgo.Guild{ID: id, Name: fmt.Sprintf("soak %d", g), OwnerID: "1"})
		var chans [2]string
		for k := range chans {
			chans[k] = fmt.Sprintf("4%015d%02d", g+1, k)
			fake.SetChannel(&discordgo.Channel{ID: chans[k], GuildID: id, Type: discordgo.ChannelTypeGuildText, Name: fmt.Sprintf("general-%d", k)})
		}
		channels[g] = chans
	}
	places := make([]place, convs)
	users := make([]*discordgo.User, convs)
	for c := range convs {
		users[c] = fake.NewUser(fmt.Sprintf("member%d", c))
		if c%10 == 9 {
			places[c] = place{channel: fmt.Sprintf("5%017d", c)}
			continue
		}
		g := c % guildCount
		places[c] = place{guild: guilds[g], channel: channels[g][(c/guildCount)%2]}
	}

	db := filepath.Join(t.TempDir(), "kioku.db")
	seed, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range guilds {
		if err := seed.Settings.SaveGuildSettings(context.Background(), memory.GuildSettings{GuildID: g, SelfTeaching: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := seed.Close(); err != nil {
		t.Fatal(err)
	}

	env := map[string]string{
		"KIOKU_DISCORD_TOKEN":   "fake-discord-token",
		"KIOKU_DISCORD_API_URL": fake.URL(),
		"KIOKU_LLM_BASE_URL":    s.ai.URL(),
		"KIOKU_LLM_API_KEY":     fakeopenai.APIKey,
		"KIOKU_DB":              db,
		"KIOKU_HTTP_ADDR":       "",
		"KIOKU_LOG_LEVEL":       "info",
		"KIOKU_LOG_FORMAT":      "json",
		"KIOKU_PIPELINE_MODE":   "full",
		// The soak is about the pipeline keeping up and staying correct, not its budget.
		"KIOKU_PIPELINE_BUDGET":       "1000000",
		"KIOKU_PIPELINE_SERVER_SHARE": "1",
		"KIOKU_TURNS_PER_MINUTE":      "1000000",
		// The soak measures turns, not the abuse limits (limits_test.go proves those).
		"KIOKU_GUILD_TURNS_PER_MINUTE": "1000000",
		"KIOKU_GUILD_DAILY_LLM_CALLS":  "0",
	}
	app := &App{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: s.log,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	exited := make(chan int, 1)
	go func() { exited <- app.Main(runCtx, []string{"run"}) }()
	stopped := false
	stopBot := func() {
		if stopped {
			return
		}
		stopped = true
		stopRun()
		select {
		case code := <-exited:
			if code != 0 {
				t.Errorf("kioku run exited with %d; errors: %s", code, s.log.errorLines())
			}
		case <-time.After(time.Minute):
			t.Errorf("kioku run did not stop within a minute")
		}
	}
	// Runs before the fakes close (registered after them): the session leaves first.
	t.Cleanup(stopBot)
	ready, cancelReady := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelReady()
	if err := fake.WaitReady(ready); err != nil {
		t.Fatalf("bot never became ready: %v; errors: %s", err, s.log.errorLines())
	}
	if _, err := fake.WaitFor(ready, fakediscord.Match("PUT", "/applications/"+fake.ApplicationID()+"/commands")); err != nil {
		t.Fatalf("commands were never registered: %v", err)
	}

	collectCtx, stopCollect := context.WithCancel(context.Background())
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		s.collect(collectCtx)
	}()
	defer func() { stopCollect(); <-collected }()

	bot := fake.BotUser()
	var deadline time.Time
	var warm, finished sync.WaitGroup
	release, finish := make(chan struct{}), make(chan struct{})
	releaseOnce, finishOnce := sync.OnceFunc(func() { close(release) }), sync.OnceFunc(func() { close(finish) })
	// A test stopped early still lets its conversations end.
	defer func() { releaseOnce(); finishOnce() }()
	warm.Add(convs)
	finished.Add(convs)
	for c := range convs {
		go func() {
			turn := func(k int, measure bool) {
				token := fmt.Sprintf("%d-%d", c, k)
				text := fmt.Sprintf("I like topic %s a lot", token)
				var m *discordgo.Message
				if places[c].guild == "" {
					m = fake.DMMessage(places[c].channel, users[c], text)
				} else {
					m = fake.GuildMessage(places[c].guild, places[c].channel, users[c], "<@"+bot.ID+"> "+text, bot)
				}
				s.send(token, m, measure)
			}
			k := 0
			for ; k < soakWarmupTurns; k++ {
				turn(k, false)
			}
			warm.Done()
			<-release
			for ; time.Now().Before(deadline); k++ {
				turn(k, true)
			}
			finished.Done()
			<-finish
		}()
	}

	warm.Wait()
	s.drain(db)
	heapStart, goStart := s.settle()
	memStart, fdStart := soakLiveMemories(t, db), soakOpenFiles()
	if *soakHeapProfile != "" {
		writeHeapProfile(t, *soakHeapProfile+".start")
	}
	began := time.Now()
	deadline = began.Add(duration)
	releaseOnce()
	samples := s.sample(db, duration/soakSamples, finished.Wait)
	elapsed := time.Since(began)
	s.drain(db)
	heapEnd, goEnd := s.settle()
	memEnd, fdEnd := soakLiveMemories(t, db), soakOpenFiles()
	samples = append(samples, soakSample{heap: heapEnd, memories: memEnd})
	if *soakHeapProfile != "" {
		writeHeapProfile(t, *soakHeapProfile)
	}
	finishOnce()
	stopBot()
	stopCollect()
	<-collected

	r := soakReport{Conversations: convs, Guilds: guildCount, DurationS: elapsed.Seconds(),
		HeapStartMB: mb(heapStart), HeapEndMB: mb(heapEnd), GoroutinesStart: goStart, GoroutinesEnd: goEnd,
		FDsStart: fdStart, FDsEnd: fdEnd, MemoriesStart: memStart,
		ChatCalls: s.chatCalls.Load(), ExtractCalls: s.extractCalls.Load(), DecideCalls: s.decideCalls.Load()}
	grown := float64(heapEnd) - float64(heapStart)
	if stored := memEnd - memStart; stored > 0 {
		r.HeapPerMemoryB = grown / float64(stored)
	}
	for _, sm := range samples {
		unexplained := float64(sm.heap) - float64(heapStart) - r.HeapPerMemoryB*float64(sm.memories-memStart)
		r.UnexplainedHeapMB = append(r.UnexplainedHeapMB, math.Round(unexplained/(1<<20)*100)/100)
	}
	s.mu.Lock()
	r.Turns = s.turns
	r.TurnsPerS = float64(s.turns) / elapsed.Seconds()
	r.OverheadP50Ms, r.OverheadP99Ms = s.overhead.quantileMs(0.50), s.overhead.quantileMs(0.99)
	r.LatencyP50Ms, r.LatencyP99Ms = s.latency.quantileMs(0.50), s.latency.quantileMs(0.99)
	r.Lost = len(s.pending)
	r.Late = s.late
	r.DuplicateReplies = s.duplicates
	errs := maps.Clone(s.errs)
	s.mu.Unlock()

	for what, n := range s.checkDatabase(db, &r) {
		errs[what] += n
	}
	levels, warnings := s.log.counts()
	if n := levels["ERROR"]; n > 0 {
		errs["kioku logged an error"] += n
	}
	r.Warnings = levels["WARN"]
	for _, n := range errs {
		r.Errors += n
	}

	line, _ := json.Marshal(r)
	fmt.Println(string(line))
	t.Log(string(line))
	if len(errs) > 0 {
		t.Errorf("errors: %v; kioku's error lines: %s", errs, s.log.errorLines())
	}
	if len(warnings) > 0 {
		t.Logf("warnings by message: %v", warnings)
	}
	if r.Lost > 0 || r.DuplicateReplies > 0 || r.DuplicateMemories > 0 {
		t.Errorf("%d lost messages, %d duplicate replies, %d duplicate memories", r.Lost, r.DuplicateReplies, r.DuplicateMemories)
	}
	if r.Turns == 0 {
		t.Errorf("no turn was made after warm-up")
	}
	if goEnd > goStart+soakGoroutineSlack {
		t.Errorf("goroutines grew from %d to %d (bound +%d)", goStart, goEnd, soakGoroutineSlack)
	}
	if fdEnd > fdStart+soakFDSlack {
		t.Errorf("open files grew from %d to %d (bound +%d)", fdStart, fdEnd, soakFDSlack)
	}
	if bound := float64(soakHeapSlack) + soakHeapPerMemory*float64(max(0, memEnd-memStart)); grown > bound {
		t.Errorf("heap in use grew by %.1f MB (from %.1f MB) while %d memories were stored: more than %.1f MB (%d bytes a memory + %d MB)",
			grown/(1<<20), mb(heapStart), memEnd-memStart, bound/(1<<20), soakHeapPerMemory, soakHeapSlack>>20)
	}
}

// soakSample is the heap in use (after a full collection) and the live memories at one
// moment of the run.
type soakSample struct {
	heap     uint64
	memories int
}

// sample takes a soakSample every every until wait returns.
func (s *soak) sample(db string, every time.Duration, wait func()) []soakSample {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	var out []soakSample
	tick := time.NewTicker(max(every, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return out
		case <-tick.C:
			heap, _ := soakMemStats()
			out = append(out, soakSample{heap: heap, memories: soakLiveMemories(s.t, db)})
		}
	}
}

// soakLiveMemories counts the live memories of the database at path.
func soakLiveMemories(t *testing.T, path string) int {
	db := soakOpenDB(t, path)
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM memories WHERE deleted_at IS NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// soakOpenFiles counts the process's open file descriptors (Linux), -1 where it cannot.
func soakOpenFiles() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds)
}

// send dispatches the message of the turn named token and waits for its reply.
func (s *soak) send(token string, m *discordgo.Message, measure bool) {
	p := &soakPending{token: token, measure: measure, done: make(chan struct{})}
	s.mu.Lock()
	s.pending[m.ID] = p
	p.sent = time.Now()
	s.mu.Unlock()
	if err := s.fake.DispatchMessage(m); err != nil {
		s.fail("dispatch failed: " + err.Error())
		s.mu.Lock()
		delete(s.pending, m.ID)
		s.mu.Unlock()
		return
	}
	select {
	case <-p.done:
	case <-time.After(soakReplyWait):
		s.mu.Lock()
		p.late = true
		s.mu.Unlock()
	}
}

// collect follows every request the bot makes to the fake Discord, matches replies to the
// messages they answer, and drops what it has looked at from the fakes' records.
func (s *soak) collect(ctx context.Context) {
	forgotAt := 0
	_, _ = s.fake.WaitForSince(ctx, 0, func(r fakediscord.Request) bool {
		if r.Status >= 400 {
			s.fail(fmt.Sprintf("Discord answered %d to %s %s", r.Status, r.Method, routeOf(r.Path)))
		}
		if r.Method == "POST" && strings.HasPrefix(r.Path, "/channels/") && strings.HasSuffix(r.Path, "/messages") && r.Message != nil {
			s.reply(r)
		}
		s.seen.Store(int64(r.Index + 1))
		if r.Index+1-forgotAt >= soakForgetEvery {
			forgotAt = r.Index + 1
			s.fake.Forget(forgotAt)
			s.ai.ResetRequests()
		}
		return false
	})
}

// snowflakeID matches the ids in an API path.
var snowflakeID = regexp.MustCompile(`\d{5,}`)

// routeOf replaces the ids in an API path, so errors group by route.
func routeOf(path string) string { return snowflakeID.ReplaceAllString(path, "{id}") }

// reply records a reply the bot posted.
func (s *soak) reply(r fakediscord.Request) {
	ref := r.Message.Reference
	if ref == nil || ref.MessageID == "" {
		s.fail("reply without a message reference")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[ref.MessageID]
	if !ok {
		// Every message is pending from before its dispatch until its first reply, so
		// this is a second reply (or one to a message the soak never sent).
		s.duplicates++
		return
	}
	delete(s.pending, ref.MessageID)
	if !strings.Contains(r.Message.Content, "topic "+p.token) {
		s.errs["reply does not answer its own message"]++
	}
	if p.late {
		s.late++
	}
	latency := r.At.Sub(p.sent)
	delay := s.delays[p.token]
	delete(s.delays, p.token)
	if p.measure {
		s.turns++
		s.latency.add(latency)
		s.overhead.add(latency - delay)
	}
	close(p.done)
}

// model is the fake provider: chat turns answer at once after soakModelDelay (every
// soakToolEvery-th turn first saves a memory), extraction returns the turns' facts, and
// decisions always add, so that only the store's dedup keeps a fact single.
func (s *soak) model(req openai.ChatCompletionRequest) fakeopenai.Response {
	system := req.Messages[0].Content
	switch {
	case strings.HasPrefix(system, "You extract"):
		s.extractCalls.Add(1)
		return s.extract(req)
	case strings.HasPrefix(system, "You maintain the long-term memory"):
		s.decideCalls.Add(1)
		b, _ := json.Marshal(map[string]any{"action": "ADD", "target_id": 0, "confidence": 0.9, "reason": "The fact is new."})
		return fakeopenai.Text(string(b))
	}
	s.chatCalls.Add(1)
	var user string
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			user = m.Content
		}
	}
	match := soakToken.FindStringSubmatch(user)
	if match == nil {
		s.fail("chat request without a turn token")
		return fakeopenai.Text("I don't know which turn this is.")
	}
	token := match[1]
	began := time.Now()
	time.Sleep(soakModelDelay)
	slept := time.Since(began)
	s.mu.Lock()
	s.delays[token] += slept
	s.mu.Unlock()

	if last := req.Messages[len(req.Messages)-1]; last.Role == openai.ChatMessageRoleTool {
		return fakeopenai.Text("Saved topic " + token + ".")
	}
	conv, k := splitToken(token)
	offered := slices.ContainsFunc(req.Tools, func(t openai.Tool) bool { return t.Function.Name == tools.NameCreateLTM })
	if k%soakToolEvery == soakToolEvery-1 && offered {
		args, _ := json.Marshal(map[string]string{"memory_content": soakFact(conv, token), "memory_scope": tools.ScopeTargetUser})
		return fakeopenai.ToolCalls(fakeopenai.Call{Name: tools.NameCreateLTM, Arguments: string(args)})
	}
	return fakeopenai.Text("Noted topic " + token + ".")
}

func splitToken(token string) (conv, k int) {
	a, b, _ := strings.Cut(token, "-")
	conv, _ = strconv.Atoi(a)
	k, _ = strconv.Atoi(b)
	return conv, k
}

// extract answers an extraction request with one personal fact per member turn, at most
// the 20 the pipeline accepts.
func (s *soak) extract(req openai.ChatCompletionRequest) fakeopenai.Response {
	body := req.Messages[len(req.Messages)-1].Content
	start, end := strings.Index(body, "<conversation>\n"), strings.LastIndex(body, "\n</conversation>")
	var records []struct {
		N         int    `json:"n"`
		SpeakerID string `json:"speaker_id"`
		Bot       bool   `json:"bot"`
		Text      string `json:"text"`
	}
	if start < 0 || end < start {
		s.fail("extraction request without a conversation block")
		return fakeopenai.Text(`{"facts":[],"entities":[]}`)
	}
	if err := json.Unmarshal([]byte(body[start+len("<conversation>\n"):end]), &records); err != nil {
		s.fail("extraction conversation is not JSON")
		return fakeopenai.Text(`{"facts":[],"entities":[]}`)
	}
	facts := []map[string]any{}
	for _, r := range records {
		match := soakToken.FindStringSubmatch(r.Text)
		if r.Bot || match == nil || len(facts) == 20 {
			continue
		}
		conv, _ := splitToken(match[1])
		facts = append(facts, map[string]any{"content": soakFact(conv, match[1]), "type": "preference", "confidence": 0.9,
			"scope": "personal", "subject_id": r.SpeakerID, "evidence": []int{r.N}})
	}
	b, _ := json.Marshal(map[string]any{"facts": facts, "entities": []any{}})
	return fakeopenai.Text(string(b))
}

// drain waits until no pipeline job is due or running, so measurements and checks see a
// settled pipeline. Jobs waiting for a later batch (idle conversations) stay queued.
func (s *soak) drain(path string) {
	s.t.Helper()
	db := soakOpenDB(s.t, path)
	defer db.Close()
	deadline := time.Now().Add(soakDrainWait)
	for {
		var busy int
		err := db.QueryRow(`SELECT COUNT(*) FROM memory_jobs WHERE state = 'leased' OR (state = 'queued' AND run_after <= ?)`,
			time.Now().UnixMilli()).Scan(&busy)
		if err != nil {
			s.t.Fatal(err)
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.fail(fmt.Sprintf("pipeline still had %d jobs due after %v", busy, soakDrainWait))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkDatabase fills in the database's part of the report and returns what is wrong in
// it: duplicate memories and dead jobs.
func (s *soak) checkDatabase(path string, r *soakReport) map[string]int {
	s.t.Helper()
	errs := map[string]int{}
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			r.DBBytes += fi.Size()
		}
	}
	defer func() {
		if r.Memories > 0 {
			r.DBBytesPerMemory = math.Round(float64(r.DBBytes) / float64(r.Memories))
		}
	}()
	db := soakOpenDB(s.t, path)
	defer db.Close()
	rows, err := db.Query(`SELECT scope_key, COUNT(*) FROM memories WHERE deleted_at IS NULL
		GROUP BY scope_key, content_hash HAVING COUNT(*) > 1`)
	if err != nil {
		s.t.Fatal(err)
	}
	for rows.Next() {
		var key string
		var n int
		if err := rows.Scan(&key, &n); err != nil {
			s.t.Fatal(err)
		}
		r.DuplicateMemories += n - 1
	}
	if err := rows.Close(); err != nil {
		s.t.Fatal(err)
	}
	err = db.QueryRow(`SELECT COUNT(*), COUNT(*) FILTER (WHERE source = 'tool'), COUNT(*) FILTER (WHERE source = 'pipeline')
		FROM memories WHERE deleted_at IS NULL`).Scan(&r.Memories, &r.MemoriesTool, &r.MemoriesPipeline)
	if err != nil {
		s.t.Fatal(err)
	}
	var dead int
	if err := db.QueryRow(`SELECT COUNT(*) FROM memory_jobs WHERE state = 'dead'`).Scan(&dead); err != nil {
		s.t.Fatal(err)
	}
	if dead > 0 {
		errs["dead pipeline jobs"] = dead
	}
	return errs
}

func soakOpenDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// soakMemStats returns the heap in use and the goroutine count after a full collection.
func soakMemStats() (heap uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, runtime.NumGoroutine()
}

func writeHeapProfile(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// soakHistogram counts durations in buckets 1% wide from 10 µs to about 10 minutes, so
// quantiles are exact to 1% in fixed memory.
type soakHistogram struct {
	buckets [1800]int
	n       int
}

const (
	histogramBase   = 10 * time.Microsecond
	histogramGrowth = 1.01
)

func (h *soakHistogram) add(d time.Duration) {
	i := 0
	if d > histogramBase {
		i = int(math.Log(float64(d)/float64(histogramBase)) / math.Log(histogramGrowth))
	}
	h.buckets[min(i, len(h.buckets)-1)]++
	h.n++
}

// quantileMs returns the upper edge of the bucket holding the q-quantile, in
// milliseconds (0 when empty).
func (h *soakHistogram) quantileMs(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank, seen := int(math.Ceil(q*float64(h.n))), 0
	for i, c := range h.buckets {
		if seen += c; seen >= max(rank, 1) {
			upper := float64(histogramBase) * math.Pow(histogramGrowth, float64(i+1))
			return math.Round(upper/float64(time.Millisecond)*100) / 100
		}
	}
	return 0
}

// soakLog is kioku's stderr during the soak: JSON log lines are counted by level, and
// warnings and errors by message, instead of kept, so a long run holds no growing log.
type soakLog struct {
	mu      sync.Mutex
	partial []byte
	levels  map[string]int
	byMsg   map[string]int
	errors  []string // the first error lines, whole
}

func (l *soakLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.line(l.partial[:i])
		l.partial = l.partial[i+1:]
	}
	l.partial = slices.Clip(l.partial)
	return len(p), nil
}

func (l *soakLog) line(line []byte) {
	var rec struct {
		Level string `json:"level"`
		Msg   string `json:"msg"`
	}
	if !bytes.Contains(line, []byte(`"level":"WARN"`)) && !bytes.Contains(line, []byte(`"level":"ERROR"`)) {
		l.levels["INFO"]++ // debug is off
		return
	}
	if err := json.Unmarshal(line, &rec); err != nil {
		rec.Level, rec.Msg = "ERROR", "unparsable log line"
	}
	l.levels[rec.Level]++
	l.byMsg[rec.Level+": "+rec.Msg]++
	if rec.Level == "ERROR" && len(l.errors) < 20 {
		l.errors = append(l.errors, string(line))
	}
}

// counts returns the lines per level and the warnings and errors per message.
func (l *soakLog) counts() (map[string]int, map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.levels), maps.Clone(l.byMsg)
}

func (l *soakLog) errorLines() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errors) == 0 {
		return "none"
	}
	var b strings.Builder
	for _, e := range l.errors {
		fmt.Fprintf(&b, "\n\t%s", e)
	}
	return b.String()
}
