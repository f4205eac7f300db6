package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// docFiles are the docs whose command lines TestDocs runs.
var docFiles = []string{"README.md", "docs/commands.md"}

// docModel is what the fake model answers to the conversations the docs show: the reply
// to a message (after saving a memory with a tool, when remember is set), and the fact the
// pipeline extracts from a remark. Messages not listed get "OK." and yield no fact.
var docModel = map[string]struct {
	reply, remember, fact string
}{
	"By the way, I moved to Osaka last spring.": {reply: "Osaka! How are you settling in?", fact: "local moved to Osaka last spring"},
	"Remember that I'm allergic to peanuts.":    {reply: "Noted: no peanuts for you.", remember: "local is allergic to peanuts"},
}

// docSession is one doc file's run: its scratch database, fakes, the environment its export
// lines built, and what earlier commands printed.
type docSession struct {
	t       *testing.T
	dir, db string
	ai      *fakeopenai.Server
	env     map[string]string
	last    string // stdout of the last command
	seeded  map[string]string
	bots    []*docBot // running in the background until the block ends
}

func newDocSession(t *testing.T) *docSession {
	dir := t.TempDir()
	s := &docSession{t: t, dir: dir, db: filepath.Join(dir, "kioku.db"), ai: fakeopenai.New(t), seeded: map[string]string{}}
	s.ai.ServeModels("gpt-4o-mini", "llama3.1")
	s.ai.Default(docModelReply)
	s.env = map[string]string{"KIOKU_DB": s.db, "KIOKU_LLM_BASE_URL": s.ai.URL(), "KIOKU_LLM_API_KEY": fakeopenai.APIKey, "KIOKU_HTTP_ADDR": ""}
	return s
}

// docModelReply answers as docModel says: extraction, decisions (nothing is ever
// contradicted), and chat turns with the tool call that saves a memory first.
func docModelReply(req openai.ChatCompletionRequest) fakeopenai.Response {
	var said strings.Builder
	for _, m := range req.Messages[1:] {
		said.WriteString(m.Content + "\n")
	}
	switch {
	case isExtraction(req):
		facts := []map[string]any{}
		for msg, a := range docModel {
			if a.fact != "" && strings.Contains(said.String(), msg) {
				facts = append(facts, map[string]any{"content": a.fact, "type": "fact", "confidence": 0.9, "scope": "personal", "subject": "local"})
			}
		}
		b, _ := json.Marshal(map[string]any{"facts": facts})
		return fakeopenai.Text(string(b))
	case isDecision(req):
		return fakeopenai.Text(`{"action":"NONE","target_id":0,"content":"","confidence":0.9,"reason":"already known"}`)
	}
	last := req.Messages[len(req.Messages)-1]
	for msg, a := range docModel {
		if !strings.Contains(said.String(), msg) {
			continue
		}
		if a.remember != "" && last.Role != openai.ChatMessageRoleTool {
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: tools.NameCreateLTM,
				Arguments: fmt.Sprintf(`{"memory_content":%q,"memory_scope":"target_user"}`, a.remember)})
		}
		return fakeopenai.Text(a.reply)
	}
	return fakeopenai.Text("OK.")
}

// TestDocs runs the kioku command lines of the README and docs/commands.md: every
// `kioku …` (and `go run ./cmd/kioku …`) line of their sh, console and bare fenced blocks,
// with the synopsis' [optional] parts left out and its placeholders filled in by
// (*docSession).placeholder, against a scratch database per file, a fake model and, for
// `kioku run`, a fake Discord (stopped once /readyz answers). A command that fails, or whose
// output differs from what a console block shows, fails the test. `go install` and `go build`
// lines are checked to name this module's command; other tools (go test, docker, ollama) are
// not run.
func TestDocs(t *testing.T) {
	for _, file := range docFiles {
		t.Run(file, func(t *testing.T) {
			blocks, err := readDocBlocks(file)
			if err != nil {
				t.Fatal(err)
			}
			s := newDocSession(t)
			for _, b := range blocks {
				s.runBlock(b)
			}
		})
	}
}

// runBlock runs one block's commands in order; background ones stop when it ends.
func (s *docSession) runBlock(b docBlock) {
	t := s.t
	var cmds []docCommand
	var err error
	switch b.lang {
	case "text":
		return // outputs shown for their own sake (the golden embeds, checked by the bot's tests)
	case "console":
		cmds, err = parseConsoleBlock(b)
	default:
		cmds, err = parseShellBlock(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.stopBots()
	for _, c := range cmds {
		maps.Copy(s.env, c.export)
		switch c.tool {
		case "":
		case "kioku":
			t.Run(strings.Join(append([]string{c.where}, c.args...), " "), func(sub *testing.T) {
				s.t = sub
				defer func() { s.t = t }()
				s.runKioku(c)
			})
		case "go":
			checkGoLine(t, c)
		default:
			if b.lang == "sh" { // a bare block's other lines are not commands (the architecture)
				t.Logf("%s: %s is not kioku; not run", c.where, c.tool)
			}
		}
	}
}

// checkGoLine checks that a go install or go build line names this module's command.
func checkGoLine(t *testing.T, c docCommand) {
	t.Helper()
	module := regexp.MustCompile(`(?m)^module (\S+)$`).FindStringSubmatch(readRepoFile(t, "go.mod"))[1]
	switch c.args[0] {
	case "install":
		if want := module + "/cmd/kioku@latest"; c.args[len(c.args)-1] != want {
			t.Errorf("%s: go install %v, want %s", c.where, c.args[1:], want)
		}
	case "build", "run":
		pkg := c.args[len(c.args)-1]
		if pkg != "./cmd/kioku" || !strings.Contains(readRepoFile(t, "cmd/kioku/main.go"), "package main") {
			t.Errorf("%s: go %s of %s, want ./cmd/kioku", c.where, c.args[0], pkg)
		}
	case "test":
		// The command running this test.
	default:
		t.Errorf("%s: go %s is not checked by TestDocs", c.where, c.args[0])
	}
}

// runKioku runs one kioku command line in-process.
func (s *docSession) runKioku(c docCommand) {
	t := s.t
	env := maps.Clone(s.env)
	for k, v := range c.env {
		env[k] = v
	}
	// Settings that point at real places point at the fakes and the scratch database.
	env["KIOKU_DB"], env["KIOKU_LLM_BASE_URL"], env["KIOKU_LLM_API_KEY"] = s.db, s.ai.URL(), fakeopenai.APIKey
	args := withoutOptional(c.args)
	for i, a := range args {
		args[i] = s.placeholder(args, i, a)
	}
	args = append(args, docExtraArgs(s, args)...)
	if len(args) == 0 || args[0] == "run" || strings.HasPrefix(args[0], "-") {
		s.startBot(c, env, args)
		return
	}
	if args[0] == "healthcheck" {
		bot := s.startBot(docCommand{where: c.where, background: true}, env, []string{"run"})
		env["KIOKU_HTTP_ADDR"] = bot.addr
	}
	code, out, stderr := runApp(t, env, strings.Join(c.stdin, "\n")+"\n", args...)
	s.last = out
	if code != 0 {
		t.Fatalf("%s: kioku %s exited %d:\n%s%s", c.where, strings.Join(args, " "), code, out, stderr)
	}
	if len(c.output) > 0 {
		if err := outputMatches(out, c.output); err != nil {
			t.Errorf("%s: kioku %s: %v", c.where, strings.Join(args, " "), err)
		}
	}
}

// placeholder fills the synopsis' placeholders, by word and, where a word means several
// things, by command.
func (s *docSession) placeholder(args []string, i int, a string) string {
	cmd := strings.Join(args[:min(2, len(args))], " ")
	switch {
	case a == "G":
		return "g1"
	case a == "G2":
		return "g2"
	case a == "U":
		return "local"
	case a == "QUERY":
		return "raid"
	case a == "TEXT":
		return "Minecraft"
	case a == "TOKEN":
		m := regexp.MustCompile(`--confirm (\S+)`).FindStringSubmatch(s.last)
		if m == nil {
			s.t.Fatalf("no token in the previous command's output:\n%s", s.last)
		}
		return m[1]
	case a == "ID" && strings.HasPrefix(cmd, "memories"):
		return s.seed("memory")
	case a == "ID" && strings.HasPrefix(cmd, "guilds"):
		return s.seed("guild")
	case a == "ID" && strings.HasPrefix(cmd, "jobs"):
		return s.seed("job")
	case a == "PATH":
		return filepath.Join(s.dir, "backup.db")
	case a == "g.json":
		return filepath.Join(s.dir, "g.json")
	case a == "FILE" || a == "/var/lib/kioku/kioku.db":
		return s.db
	case strings.HasPrefix(a, "postgres://") || strings.HasPrefix(a, "'postgres://"):
		return testPostgresURL(s.t)
	case strings.HasPrefix(a, "testdata/eval/"):
		return s.evalDataset(a)
	}
	return a
}

// evalDataset is the doc's eval dataset cut to its first scope: the command and the file's
// format are the same, and the whole set is the measurements' job (-tags measure), which
// takes half a minute under -race.
func (s *docSession) evalDataset(path string) string {
	raw, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		s.t.Fatal(err)
	}
	var set map[string]json.RawMessage
	var scopes []json.RawMessage
	if err := json.Unmarshal(raw, &set); err != nil {
		s.t.Fatalf("%s: %v", path, err)
	}
	if err := json.Unmarshal(set["scopes"], &scopes); err != nil || len(scopes) == 0 {
		s.t.Fatalf("%s has no scopes: %v", path, err)
	}
	if set["scopes"], err = json.Marshal(scopes[:1]); err != nil {
		s.t.Fatal(err)
	}
	out := filepath.Join(s.dir, filepath.Base(path))
	if raw, err = json.Marshal(set); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(out, raw, 0o600); err != nil {
		s.t.Fatal(err)
	}
	return out
}

// docExtraArgs keeps the commands whose defaults measure for minutes to a few seconds.
func docExtraArgs(s *docSession, args []string) []string {
	if len(args) == 0 || args[0] != "bench" {
		return nil
	}
	extra := []string{"--memories", "300", "--queries", "30", "--dims", "16"}
	if len(args) > 2 && args[1] == "--store" && args[2] == "postgres" {
		extra = append(extra, "--postgres", pgtest.URL(s.t))
	}
	return extra
}

// seed makes, once per file, what the Operating commands act on: two memories of server g1
// (a memory ID is the first), the memories of server g3 (a guild ID), and a job that failed
// for good (a job ID).
func (s *docSession) seed(what string) string {
	if v, ok := s.seeded[what]; ok {
		return v
	}
	ctx := context.Background()
	store := openBackend(s.t, s.db)
	defer store.Close()
	switch what {
	case "memory", "guild":
		owner := memory.ServerOwner(map[string]string{"memory": "g1", "guild": "g3"}[what])
		var first int64
		for _, text := range []string{"The raid is on Fridays", "Minecraft night is Saturday"} {
			res, err := store.Memories.Remember(ctx, memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID, Content: text, Type: memory.TypeFact}, memory.ActorCLI)
			if err != nil {
				s.t.Fatal(err)
			}
			if first == 0 {
				first = res.Memory.ID
			}
		}
		s.seeded[what] = fmt.Sprint(first)
		if what == "guild" {
			s.seeded[what] = owner.GuildID
		}
	case "job":
		id, _, err := store.Jobs.Enqueue(ctx, pipeline.KindExtract, "g1/c1", map[string]string{"guild_id": "g1", "channel_id": "c1"}, memory.EnqueueOptions{MaxAttempts: 1})
		if err != nil {
			s.t.Fatal(err)
		}
		if _, err := store.Jobs.Lease(ctx, "docs", nil, time.Minute); err != nil {
			s.t.Fatal(err)
		}
		if _, err := store.Jobs.Fail(ctx, id, "docs", fmt.Errorf("provider returned 503"), time.Minute); err != nil {
			s.t.Fatal(err)
		}
		s.seeded[what] = fmt.Sprint(id)
	}
	return s.seeded[what]
}

// docBot is a `kioku run` the docs start, against a fake Discord.
type docBot struct {
	addr   string
	cancel context.CancelFunc
	done   chan int
	stderr *syncBuffer
	where  string
}

// startBot runs `kioku run` (args) against a fake Discord until /readyz answers 200; a
// background line (&) keeps running until its block ends, any other is stopped at once.
func (s *docSession) startBot(c docCommand, env map[string]string, args []string) *docBot {
	t := s.t
	fake := fakediscord.New(t, fakediscord.WithRecommendedShards(2))
	fake.SetGuild(&discordgo.Guild{ID: guildA, Name: "guild A", OwnerID: "1"})
	env = maps.Clone(env)
	env["KIOKU_DISCORD_TOKEN"], env["KIOKU_DISCORD_API_URL"] = "fake-discord-token", fake.URL()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &docBot{addr: ln.Addr().String(), done: make(chan int, 1), stderr: &syncBuffer{}, where: c.where}
	app := &App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: b.stderr, httpListener: ln,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	go func() { b.done <- app.Main(ctx, args) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + b.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case code := <-b.done:
			t.Fatalf("%s: kioku %v exited %d before it was ready:\n%s", c.where, args, code, b.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("%s: kioku %v was not ready after 30 s:\n%s", c.where, args, b.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c.background {
		s.bots = append(s.bots, b)
		// The session must leave before the fake closes, and the fake's cleanup runs last.
		t.Cleanup(func() { b.stop(t) })
	} else {
		b.stop(t)
	}
	return b
}

// stop ends a bot and checks it stopped cleanly; a second call does nothing.
func (b *docBot) stop(t *testing.T) {
	if b.cancel == nil {
		return
	}
	b.cancel()
	b.cancel = nil
	select {
	case code := <-b.done:
		if code != 0 {
			t.Errorf("%s: kioku run exited %d when stopped:\n%s", b.where, code, b.stderr.String())
		}
	case <-time.After(45 * time.Second):
		t.Errorf("%s: kioku run did not stop within 45 s", b.where)
	}
}

// stopBots stops the block's background bots.
func (s *docSession) stopBots() {
	for _, b := range s.bots {
		b.stop(s.t)
	}
	s.bots = nil
}

// TestQuickStart: the README's quick start takes a newcomer from the binary to a
// conversation in which a passing remark becomes a memory. Its install and build lines name
// this module's command; its second step is two commands, the settings line naming the
// model's endpoint and the model; and following them against the fake OpenAI server in
// place of Ollama (the placeholders of TestDocs), the remark said in the console example is
// a memory of the member when `kioku chat` has exited, learned by the background pipeline.
func TestQuickStart(t *testing.T) {
	raw := readRepoFile(t, "README.md")
	start := strings.Index(raw, "## Quick start")
	end := strings.Index(raw[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README has no Quick start section")
	}
	if head := strings.Index(raw, "\n## "); head != start-1 {
		t.Errorf("the Quick start is not the README's first section")
	}
	blocks, err := readDocBlocks("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lineOf := func(offset int) int { return strings.Count(raw[:offset], "\n") + 1 }
	var quick []docBlock
	for _, b := range blocks {
		if b.line > lineOf(start) && b.line < lineOf(start+1+end) {
			quick = append(quick, b)
		}
	}
	if len(quick) != 3 || quick[0].lang != "sh" || quick[1].lang != "sh" || quick[2].lang != "console" {
		t.Fatalf("the Quick start's blocks are %+v; want the binary (sh), the two commands (sh) and a conversation (console)", quick)
	}
	binary, _ := parseShellBlock(quick[0])
	if len(binary) != 2 || binary[0].args[0] != "install" || binary[1].args[0] != "build" {
		t.Fatalf("the binary's block has %+v; want go install and go build", binary)
	}
	for _, c := range binary {
		checkGoLine(t, c)
	}
	two, _ := parseShellBlock(quick[1])
	if len(two) != 2 || two[0].export["KIOKU_LLM_BASE_URL"] == "" || two[0].export["KIOKU_CHAT_MODEL"] == "" ||
		two[1].tool != "kioku" || strings.Join(two[1].args, " ") != "chat" {
		t.Fatalf("step 2 is %+v; want the model's settings exported, then kioku chat", two)
	}
	s := newDocSession(t)
	for _, b := range quick[1:] {
		s.runBlock(b)
	}
	store := openBackend(t, s.db)
	mems, _, err := store.Memories.List(context.Background(), memory.PersonalOwner("local"), memory.ListOptions{})
	if err != nil || len(mems) != 1 || mems[0].Source != memory.SourcePipeline || !strings.Contains(mems[0].Content, "Osaka") {
		t.Fatalf("after the quick start, local's memories are %+v (%v); want the remark, learned by the pipeline", mems, err)
	}
}
