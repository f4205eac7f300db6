package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// Fault tests: the real `kioku run` wiring against a database that refuses writes, a
// Discord that rate-limits and drops the gateway, a model that does not answer in time and
// an embedding provider that is down; and a process killed in the middle of a turn. Each
// checks what the member sees, that nothing stored is harmed and that kioku recovers.

// storeFromRun starts the bot with the pipeline off and returns it with the store `kioku
// run` opened, through which a test puts the database in a fault state.
func storeFromRun(t *testing.T, overrides map[string]string) (*e2e, *ltm.Store) {
	t.Helper()
	opened := make(chan *ltm.Store, 1)
	env := map[string]string{"KIOKU_PIPELINE_MODE": "off"}
	for k, v := range overrides {
		env[k] = v
	}
	h := startBotHooked(t, env, func(s *ltm.Store) { opened <- s })
	return h, <-opened
}

// checkIntegrity runs SQLite's integrity check on the file on a connection of its own.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check = %q, %v; want ok", res, err)
	}
}

// longText is n characters of distinct words: a row this long does not fit in the free
// room of a page the database already has.
func longText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n-12; i++ {
		fmt.Fprintf(&b, "word%d ", i)
	}
	return strings.TrimSpace(b.String())
}

// leaks are words of SQLite, Go or kioku's internals that a member must never read.
var leaks = []string{"sqlite", "SQLITE", "(13)", "(8)", "(5)", "couldn't", "goroutine", "panic", "INSERT", "BEGIN", "disk image"}

// TestRunStorageFaults: with the database full, read-only or locked by another process, a
// /memory add and a chat message each get a clear answer naming the state, the model is
// not asked (the message could not be stored first), reads keep working, the operator's log
// has the cause, the file stays intact, and the next write after the fault works without
// a restart.
func TestRunStorageFaults(t *testing.T) {
	t.Parallel()
	h, store := storeFromRun(t, nil)
	admin, alice := h.fake.NewUser("admin"), h.fake.NewUser("alice")
	const aliceDM = "200000000000000301"
	add := func(h *e2e, content string) reply {
		return h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", content)))
	}
	mustContain(t, "first add", add(h, "The raid is on Friday at 20:00").Text(), "Remembered (server) #1")
	h.ai.Script(fakeopenai.Text("Hello!"))
	h.chat(h.fake.DMMessage(aliceDM, alice, "hello"))

	var other *sql.DB // the other process of the Locked case
	var otherTx *sql.Tx
	faults := []struct {
		name        string
		start, stop func(t *testing.T)
		says, cause string
	}{
		{
			name: "DiskFull",
			start: func(t *testing.T) {
				if free, _ := sqlite.WriterPragma(context.Background(), store, "freelist_count"); free != "0" {
					t.Fatalf("%s free pages: capping the file would not make it full", free)
				}
				pages, err := sqlite.WriterPragma(context.Background(), store, "page_count")
				if err == nil {
					_, err = sqlite.WriterPragma(context.Background(), store, "max_page_count = "+pages)
				}
				if err != nil {
					t.Fatal(err)
				}
			},
			stop: func(t *testing.T) {
				if _, err := sqlite.WriterPragma(context.Background(), store, "max_page_count = 1073741823"); err != nil {
					t.Fatal(err)
				}
			},
			says: "The database is full", cause: "database or disk is full",
		},
		{
			name: "ReadOnly",
			start: func(t *testing.T) {
				if _, err := sqlite.WriterPragma(context.Background(), store, "query_only = 1"); err != nil {
					t.Fatal(err)
				}
			},
			stop: func(t *testing.T) {
				if _, err := sqlite.WriterPragma(context.Background(), store, "query_only = 0"); err != nil {
					t.Fatal(err)
				}
			},
			says: "The database is read-only", cause: "readonly",
		},
		{
			name: "Locked",
			start: func(t *testing.T) {
				// A short wait keeps the test quick; the default is sqlite.DefaultBusyTimeout.
				if _, err := sqlite.WriterPragma(context.Background(), store, "busy_timeout = 100"); err != nil {
					t.Fatal(err)
				}
				var err error
				if other, err = sql.Open("sqlite", sqlite.DSN(h.db)+"&_txlock=immediate"); err != nil {
					t.Fatal(err)
				}
				if otherTx, err = other.Begin(); err != nil {
					t.Fatal(err)
				}
				if _, err := otherTx.Exec(`UPDATE memories SET importance = importance WHERE id = 1`); err != nil {
					t.Fatal(err)
				}
			},
			stop: func(t *testing.T) {
				if err := otherTx.Commit(); err != nil {
					t.Fatal(err)
				}
				other.Close()
				if _, err := sqlite.WriterPragma(context.Background(), store, fmt.Sprintf("busy_timeout = %d", sqlite.DefaultBusyTimeout.Milliseconds())); err != nil {
					t.Fatal(err)
				}
			},
			says: "The database is busy", cause: "database is locked",
		},
	}
	for i, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			h := h.in(t)
			f.start(t)
			r := add(h, longText(1990))
			mustContain(t, "add during the fault", r.Text(), f.says, "nothing was saved")
			mustNotContain(t, "add during the fault", r.Text(), leaks...)

			calls := h.ai.ChatCount()
			got := h.chat(h.fake.DMMessage(aliceDM, alice, longText(3990)))
			mustContain(t, "chat during the fault", got.Content, f.says, "nothing was saved")
			mustNotContain(t, "chat during the fault", got.Content, leaks...)
			if n := h.ai.ChatCount() - calls; n != 0 {
				t.Errorf("the model was asked %d times about a message that could not be stored", n)
			}

			list := h.command(guildA, channelA, admin, permAdmin, slash("memory", "list")).Text()
			mustContain(t, "list during the fault", list, "The raid is on Friday", fmt.Sprintf("%d memories", 1+i))
			mustContain(t, "kioku's log", h.stderr.String(), f.cause)

			f.stop(t)
			checkIntegrity(t, h.db)
			mustContain(t, "add after the fault", add(h, fmt.Sprintf("Fault %s is over", f.name)).Text(), "Remembered (server)")
			h.ai.Script(fakeopenai.Text("Welcome back."))
			if got := h.chat(h.fake.DMMessage(aliceDM, alice, "are you there?")); got.Content != "Welcome back." {
				t.Errorf("chat after the fault = %q", got.Content)
			}
		})
	}
}

// postsTo returns the message POSTs to a channel recorded since mark, with their status.
func (h *e2e) postsTo(channelID string, mark int) []fakediscord.Request {
	var out []fakediscord.Request
	for _, r := range h.fake.Requests()[mark:] {
		if r.Method == "POST" && r.Path == "/channels/"+channelID+"/messages" {
			out = append(out, r)
		}
	}
	return out
}

// repliesTo counts the replies delivered (answered 200) to each message id.
func repliesTo(posts []fakediscord.Request) map[string]int {
	n := map[string]int{}
	for _, p := range posts {
		if p.Status == http.StatusOK && p.Message != nil && p.Message.Reference != nil {
			n[p.Message.Reference.MessageID]++
		}
	}
	return n
}

// TestRunReplyRateLimited: Discord answers the reply's POST with 429 and a retry_after;
// discordgo sends it again after the delay (the POSTs are answered 429, then 200), and the
// member gets the reply once.
func TestRunReplyRateLimited(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice := h.fake.NewUser("alice")
	const dm = "200000000000000311"
	const retryAfter = 300 * time.Millisecond
	h.fake.RateLimitNext(1, fakediscord.Match("POST", "/channels/"+dm+"/messages"), retryAfter)
	h.ai.Script(fakeopenai.Text("Here is your answer."), fakeopenai.Text("And another."))

	mark := h.fake.Mark()
	m := h.fake.DMMessage(dm, alice, "a question")
	if err := h.fake.DispatchMessage(m); err != nil {
		t.Fatal(err)
	}
	delivered := func(r fakediscord.Request) bool {
		return fakediscord.Match("POST", "/channels/"+dm+"/messages")(r) && r.Status == http.StatusOK
	}
	r, err := h.fake.WaitForSince(h.ctx(), mark, delivered)
	if err != nil {
		t.Fatalf("the reply was never delivered: %v\n%s", err, h.stderr.String())
	}
	if r.Message.Content != "Here is your answer." {
		t.Errorf("reply = %q", r.Message.Content)
	}
	// A second turn in the same channel is answered at once; by then any stray resend of
	// the first reply would be recorded.
	if got := h.chat(h.fake.DMMessage(dm, alice, "another question")); got.Content != "And another." {
		t.Errorf("second reply = %q", got.Content)
	}
	posts := h.postsTo(dm, mark)
	var statuses []int
	for _, p := range posts {
		statuses = append(statuses, p.Status)
	}
	if want := []int{http.StatusTooManyRequests, http.StatusOK, http.StatusOK}; !slices.Equal(statuses, want) {
		t.Errorf("reply POSTs answered %v, want %v", statuses, want)
	}
	if n := repliesTo(posts)[m.ID]; n != 1 {
		t.Errorf("the rate-limited reply was delivered %d times, want once", n)
	}
	if n := len(h.fake.Messages(dm)); n != 2 {
		t.Errorf("%d messages in the DM, want the 2 replies", n)
	}
}

// TestRunGatewayDropped: Discord drops the gateway connection while a turn waits for the
// model, and a message arrives while the bot is away. discordgo reconnects and resumes;
// the turn in flight finishes, the missed message is replayed and answered, a message
// after the resume is answered, and each is answered and stored exactly once.
func TestRunGatewayDropped(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice := h.fake.NewUser("alice")
	const dm = "200000000000000321"
	started, release := make(chan struct{}), make(chan struct{})
	h.ai.Script(fakeopenai.Handle(func(openai.ChatCompletionRequest) fakeopenai.Response {
		close(started)
		<-release
		return fakeopenai.Text("answer to: first question")
	}))
	// Later turns are answered by what they asked, whatever order they reach the model in.
	h.ai.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		last := req.Messages[len(req.Messages)-1].Content
		for _, q := range []string{"second question", "third question"} {
			if strings.Contains(last, q) {
				return fakeopenai.Text("answer to: " + q)
			}
		}
		return fakeopenai.Text("answer to something else")
	})

	mark := h.fake.Mark()
	first := h.fake.DMMessage(dm, alice, "first question")
	if err := h.fake.DispatchMessage(first); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := h.fake.DropGateway(4000); err != nil {
		t.Fatal(err)
	}
	second := h.fake.DMMessage(dm, alice, "second question")
	if err := h.fake.DispatchMessage(second); err != nil {
		t.Fatalf("dispatch while the gateway is down: %v", err)
	}
	ctx := h.ctx()
	if err := h.fake.WaitUntil(ctx, func() bool { return h.fake.Resumes() == 1 }); err != nil {
		t.Fatalf("the bot never resumed: %v\n%s", err, h.stderr.String())
	}
	if err := h.fake.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	third := h.fake.DMMessage(dm, alice, "third question")
	if err := h.fake.DispatchMessage(third); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{first.ID: "answer to: first question", second.ID: "answer to: second question", third.ID: "answer to: third question"}
	if err := h.fake.WaitUntil(ctx, func() bool { return len(repliesTo(h.postsTo(dm, mark))) == len(want) }); err != nil {
		t.Fatalf("not every message was answered: %v; replies %v\n%s", err, repliesTo(h.postsTo(dm, mark)), h.stderr.String())
	}
	// The gateway is read in order: once a probe is answered, a duplicate dispatch of an
	// earlier message would have been answered too.
	h.ai.Script(fakeopenai.Text("probe answered"))
	h.chat(h.fake.DMMessage(dm, alice, "probe"))

	posts := h.postsTo(dm, mark)
	counts := repliesTo(posts)
	for _, p := range posts {
		if p.Message == nil || p.Message.Reference == nil {
			continue
		}
		if w, ok := want[p.Message.Reference.MessageID]; ok && p.Message.Content != w {
			t.Errorf("reply to %s = %q, want %q", p.Message.Reference.MessageID, p.Message.Content, w)
		}
	}
	for id := range want {
		if counts[id] != 1 {
			t.Errorf("message %s answered %d times, want once", id, counts[id])
		}
	}
	if n := h.fake.Replayed(); n != 1 {
		t.Errorf("%d events replayed on the resume, want the message sent while the bot was away", n)
	}
	if n := len(h.fake.Identifies()); n != 1 {
		t.Errorf("%d identifies, want 1: the session resumed rather than starting over", n)
	}
	_, db := h.openDB()
	for id := range want {
		if turns := turnsOf(t, db, id); len(turns) != 1 {
			t.Errorf("message %s stored %d times in the transcript, want once", id, len(turns))
		}
	}
}

// turnGoroutines lists the goroutines still inside a chat turn or a model call.
func turnGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, frame := range []string{"kioku/chat.(*Engine).Turn", "kioku/tools.Run", "kioku/llm.(*Client)", "go-openai.(*Client)"} {
			if strings.Contains(g, frame) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// TestRunModelTooSlow: the model holds every call past KIOKU_LLM_TIMEOUT. The member is
// told the model did not answer in time, their message is in the transcript all the
// same (raw-first), and no goroutine of the turn or of its model calls is left behind.
// Not parallel: the goroutine check must not see other tests' turns.
func TestRunModelTooSlow(t *testing.T) {
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "off", "KIOKU_LLM_TIMEOUT": "100ms"})
	h.ai.Default(func(openai.ChatCompletionRequest) fakeopenai.Response { return fakeopenai.Hang() })
	alice := h.fake.NewUser("alice")
	m := h.fake.DMMessage("200000000000000331", alice, "what did we decide about the raid?")
	got := h.chat(m)
	mustContain(t, "reply", got.Content, "didn't answer in time", "Your message is saved")
	mustNotContain(t, "reply", got.Content, leaks...)
	mustNotContain(t, "reply", got.Content, "deadline", "context")

	_, db := h.openDB()
	if turns := turnsOf(t, db, m.ID); len(turns) != 1 || turns[0] != "what did we decide about the raid?" {
		t.Errorf("transcript holds %q for the message, want it once", turns)
	}
	// Every attempt was cut off by the client, none answered.
	for _, r := range h.ai.Requests() {
		if r.Status != 0 {
			t.Errorf("a model call was answered %d; the fake holds every call", r.Status)
		}
	}
	waitFor(t, h, "the turn's goroutines to end", func() bool { return len(turnGoroutines()) == 0 })
}

// TestRunEmbeddingOutage: the embeddings endpoint answers 500 to everything. A memory is
// still saved, a chat turn still gets it from the keyword leg of recall, the store's
// embedder status says the provider is down, and `kioku doctor` reports the outage as a
// warning that recall has fallen back to keywords.
func TestRunEmbeddingOutage(t *testing.T) {
	t.Parallel()
	h, store := storeFromRun(t, map[string]string{"KIOKU_EMBED_MODEL": "embed-model"})
	h.ai.FailEmbeddings(http.StatusInternalServerError, 1000)
	admin, alice := h.fake.NewUser("admin"), h.fake.NewUser("alice")

	r := h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", "The raid is on Friday at 20:00")))
	mustContain(t, "add with embeddings down", r.Text(), "Remembered (server) #1")
	if h.ai.EmbeddingCount() == 0 {
		t.Fatal("the memory's vector was never asked for")
	}
	st := store.Recall.EmbedStatus()
	if !st.Down || !strings.Contains(st.LastError, "500") || st.Vectors != 0 {
		t.Errorf("embed status = %+v, want down after a 500 and no vectors", st)
	}

	h.ai.Script(fakeopenai.Text("The raid is on Friday at 20:00."))
	bot := h.fake.BotUser()
	got := h.chat(h.fake.GuildMessage(guildA, channelA, alice, "<@"+bot.ID+"> when is the raid?", bot))
	if got.Content != "The raid is on Friday at 20:00." {
		t.Errorf("reply = %q", got.Content)
	}
	reqs := h.ai.ChatRequests()
	var prompt strings.Builder
	for _, m := range reqs[len(reqs)-1].Messages {
		prompt.WriteString(m.Content + "\n")
	}
	mustContain(t, "the turn's prompt", prompt.String(), "The raid is on Friday at 20:00")

	h.ai.ServeModels("gpt-4o-mini", "embed-model")
	env := map[string]string{"KIOKU_DB": h.db, "KIOKU_LLM_BASE_URL": h.ai.URL(), "KIOKU_LLM_API_KEY": fakeopenai.APIKey,
		"KIOKU_EMBED_MODEL": "embed-model", "KIOKU_DISCORD_TOKEN": "fake-discord-token"}
	code, out, stderr := runApp(t, env, "", "doctor")
	if code != 0 {
		t.Errorf("doctor exited %d with the embedding provider down; it is a warning\n%s%s", code, out, stderr)
	}
	mustContain(t, "doctor", out, "warn  recall     embedding model embed-model failed (", "500",
		"recall falls back to keywords", "ok    llm")

	h.ai.FailEmbeddings(http.StatusInternalServerError, 0)
	_, out, _ = runApp(t, env, "", "doctor")
	mustContain(t, "doctor once the provider answers", out, "ok    recall     hybrid recall with embedding model embed-model (it answers,")
}

// childEnv marks the test binary re-executed as `kioku run` by TestRunKilledMidTurn.
const childEnv = "KIOKU_TEST_CHILD"

// TestFaultChildProcess is not a test of its own: it is the `kioku run` process that
// TestRunKilledMidTurn starts from this test binary (as the os/exec tests do) and kills.
func TestFaultChildProcess(t *testing.T) {
	if os.Getenv(childEnv) != "run" {
		t.Skip("the child process of TestRunKilledMidTurn")
	}
	app := &App{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv}
	os.Exit(app.Main(context.Background(), []string{"run"}))
}

// TestRunKilledMidTurn: `kioku run` is killed with SIGKILL while a turn waits for the
// model, after the model saved a memory and heard back that it was saved. The database,
// reopened, is intact and holds the member's message (raw-first) and the saved memory.
func TestRunKilledMidTurn(t *testing.T) {
	t.Parallel()
	fake := fakediscord.New(t)
	ai := fakeopenai.New(t)
	db := filepath.Join(t.TempDir(), "kioku.db")
	followUp := make(chan openai.ChatCompletionRequest, 1)
	ai.Script(
		fakeopenai.ToolCalls(fakeopenai.Call{Name: "create_long_term_memory",
			Arguments: `{"memory_content":"Alice's cat is called Miso","memory_scope":"target_user"}`}),
		// The call that carries the tool's result back never returns.
		fakeopenai.Handle(func(req openai.ChatCompletionRequest) fakeopenai.Response {
			followUp <- req
			return fakeopenai.Hang()
		}),
	)

	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultChildProcess$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KIOKU_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"=run", "KIOKU_DB="+db, "KIOKU_DISCORD_TOKEN=fake-discord-token",
		"KIOKU_DISCORD_API_URL="+fake.URL(), "KIOKU_LLM_BASE_URL="+ai.URL(), "KIOKU_LLM_API_KEY="+fakeopenai.APIKey,
		"KIOKU_HTTP_ADDR=", "KIOKU_PIPELINE_MODE=off", "KIOKU_LOG_LEVEL=debug")
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Registered after the fakes, so it runs first: the process is gone before they close.
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("kioku's log:\n%s", stderr.String())
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := fake.WaitReady(ctx); err != nil {
		t.Fatalf("the child never connected: %v", err)
	}
	if _, err := fake.WaitFor(ctx, fakediscord.Match("PUT", "/applications/"+fake.ApplicationID()+"/commands")); err != nil {
		t.Fatalf("the child never registered its commands: %v", err)
	}
	alice := fake.NewUser("alice")
	m := fake.DMMessage("200000000000000341", alice, "remember that my cat is called Miso")
	if err := fake.DispatchMessage(m); err != nil {
		t.Fatal(err)
	}
	var req openai.ChatCompletionRequest
	select {
	case req = <-followUp:
	case <-ctx.Done():
		t.Fatal("the model never heard back from its tool call")
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != openai.ChatMessageRoleTool || !strings.Contains(last.Content, `"ok":true`) {
		t.Fatalf("the model's follow-up ends with %s %q, want the tool's report that the memory was saved", last.Role, last.Content)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	exited <- err // for the cleanup
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("kioku ended with %v, want killed by SIGKILL", err)
	}
	if n := len(fake.Messages(m.ChannelID)); n != 0 {
		t.Errorf("%d replies from a process killed before it answered", n)
	}

	checkIntegrity(t, db)
	store, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer store.Close()
	turns, err := store.Transcripts.RecentTurns(context.Background(), "", m.ChannelID, alice.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 1 || turns[0].Content != m.Content || turns[0].MessageID != m.ID {
		t.Errorf("transcript after SIGKILL = %+v, want the member's message alone", turns)
	}
	mems, _, err := store.Memories.List(context.Background(), memory.PersonalOwner(alice.ID), memory.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) != 1 || mems[0].Content != "Alice's cat is called Miso" {
		t.Errorf("alice's memories after SIGKILL = %v, want the one reported saved", mems)
	}
}
