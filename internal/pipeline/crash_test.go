package pipeline_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/intent"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/sashabaranov/go-openai"
)

// The crash test runs the worker in a child process (this test binary re-executed, as the
// standard library's os/exec tests do), kills it with SIGKILL in the middle of a job,
// restarts it, and checks that the database ends exactly as after an uninterrupted run.

// Environment of the child worker.
const (
	childMode  = "KIOKU_PIPELINE_TEST_CHILD" // "worker" runs crashChild instead of the tests
	childDB    = "KIOKU_PIPELINE_TEST_DB"
	childLLM   = "KIOKU_PIPELINE_TEST_LLM"
	childNow   = "KIOKU_PIPELINE_TEST_NOW"   // unix ms; the child's clock stands still there
	childPause = "KIOKU_PIPELINE_TEST_PAUSE" // "before-commit": announce and hang before the commit
)

// Lines the child prints on stdout.
const (
	childPaused = "PAUSED"
	childDone   = "DONE"
)

// crashLease is the child's lease; the restarted child runs after it expired.
const crashLease = time.Minute

func TestMain(m *testing.M) {
	if os.Getenv(childMode) == "worker" {
		os.Exit(crashChild())
	}
	os.Exit(m.Run())
}

// crashChild is the worker process: reap stale leases, then run jobs until none is due.
func crashChild() int {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, os.Getenv(childDB))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer store.Close()
	ms, _ := strconv.ParseInt(os.Getenv(childNow), 10, 64)
	now := time.UnixMilli(ms).UTC()
	store.Now = func() time.Time { return now }
	client, err := llm.New(llm.Config{BaseURL: os.Getenv(childLLM), APIKey: fakeopenai.APIKey, ChatModel: "m", MaxRetries: llm.NoRetries})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := pipeline.Config{
		WorkerID: "child",
		LeaseFor: crashLease,
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if os.Getenv(childPause) == "before-commit" {
		cfg.BeforeCommit = func(context.Context, *memory.Job) error {
			fmt.Println(childPaused)
			time.Sleep(time.Hour) // hang here until the parent kills the process
			return nil
		}
	}
	p, err := pipeline.New(cfg, storeDeps(store, client))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := p.Reap(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for range 20 {
		r, err := p.Tick(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if r.Retried+r.Dead > 0 {
			fmt.Fprintf(os.Stderr, "a job failed: %+v\n", r)
			return 1
		}
		if r == (pipeline.TickResult{}) {
			break
		}
	}
	fmt.Println(childDone)
	return 0
}

// crashScenario writes the same starting state into a fresh database at path: memories the
// turns will update and delete, and the turns, scheduled through OnTurn.
func crashScenario(t *testing.T, path string, fake *fakeopenai.Server) {
	t.Helper()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	store.Now = func() time.Time { return epoch }
	client, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: fakeopenai.APIKey, ChatModel: "m"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{}, storeDeps(store, client))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"Raid night is Tuesday", "The guild bank is open to everyone"} {
		if _, err := store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: c}, "user:admin"); err != nil {
			t.Fatal(err)
		}
	}
	for _, turn := range []struct{ user, name, text string }{
		{"u1", "Alice", "Raid night is Wednesday instead"},
		{"u1", "Alice", "The guild bank is no longer open to everyone"},
		{"u2", "Bob", "I prefer green tea over coffee"},
		{"u2", "Bob", "Movie night happens on Saturdays"},
	} {
		// Both may edit server memory, so the run applies its updates and deletes.
		tr := memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: turn.user, AuthorName: turn.name, Role: memory.RoleUser,
			Content: turn.text, CanEditServer: true}
		if tr.ID, err = store.Transcripts.AppendTurn(ctx, tr); err != nil {
			t.Fatal(err)
		}
		if err := p.OnTurn(ctx, tr, intent.HighSignal(tr.Content)); err != nil {
			t.Fatal(err)
		}
	}
}

// child starts the worker process on db with the clock at now.
type child struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *bytes.Buffer
}

func startChild(t *testing.T, db, llmURL string, now time.Time, pause string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childMode+"=worker", childDB+"="+db, childLLM+"="+llmURL,
		childNow+"="+strconv.FormatInt(now.UnixMilli(), 10), childPause+"="+pause)
	c := &child{cmd: cmd, lines: make(chan string, 16), stderr: &bytes.Buffer{}}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		io.Copy(io.Discard, out)
		close(c.lines)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return c
}

// expect waits for the child to print want; it fails if the child exits first.
func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	for line := range c.lines {
		if line == want {
			return
		}
	}
	c.cmd.Wait()
	t.Fatalf("worker exited (%v) without printing %s; its log:\n%s", c.cmd.ProcessState, want, c.stderr)
}

func (c *child) wait(t *testing.T) {
	t.Helper()
	c.expect(t, childDone)
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("worker: %v; its log:\n%s", err, c.stderr)
	}
}

func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil { // SIGKILL: no deferred cleanup runs
		t.Fatal(err)
	}
	c.cmd.Wait()
}

func readState(t *testing.T, path string) state {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return snapshot(t, s)
}

func TestWorkerProcessKilledMidJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	fake := fakeopenai.New(t)
	var hangDecision atomic.Bool
	hanging := make(chan struct{}, 1)
	fake.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		if !isExtraction(req) && hangDecision.CompareAndSwap(true, false) {
			hanging <- struct{}{}
			return fakeopenai.Hang()
		}
		return defaultBrain(req)
	})
	dir := t.TempDir()

	clean := filepath.Join(dir, "clean.db")
	crashScenario(t, clean, fake)
	startChild(t, clean, fake.URL(), epoch, "").wait(t)
	want := readState(t, clean)
	if len(want.memories) != 3 || !strings.Contains(want.String(), "update Raid night is Tuesday") || !strings.Contains(want.String(), "delete The guild bank") {
		t.Fatalf("the uninterrupted run did not exercise ADD, UPDATE and DELETE:\n%v", want)
	}

	for _, tc := range []struct {
		name  string
		pause string
		crash func(t *testing.T, c *child)
	}{
		{"KilledBeforeCommit", "before-commit", func(t *testing.T, c *child) { c.expect(t, childPaused) }},
		{"KilledDuringAModelCall", "", func(t *testing.T, c *child) {
			select {
			case <-hanging:
			case line, ok := <-c.lines:
				t.Fatalf("worker printed %q (open %v) before reaching the model call; its log:\n%s", line, ok, c.stderr)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(dir, tc.name+".db")
			crashScenario(t, db, fake)
			hangDecision.Store(tc.pause == "")
			c := startChild(t, db, fake.URL(), epoch, tc.pause)
			tc.crash(t, c)
			c.kill(t)

			mid := readState(t, db)
			if want.equal(mid) {
				t.Fatal("the killed worker had already committed; the test killed it too late")
			}
			restart := epoch.Add(crashLease + time.Second) // the dead worker's lease has expired
			startChild(t, db, fake.URL(), restart, "").wait(t)
			if got := readState(t, db); !got.equal(want) {
				t.Fatalf("after a crash and a restart:\n%v\nwant as an uninterrupted run:\n%v", got, want)
			}
			s, err := sqlite.Open(t.Context(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			jobs, _ := s.Jobs.ListJobs(t.Context(), "", 10)
			if len(jobs) != 1 || jobs[0].State != memory.JobDone || jobs[0].Attempts != 1 {
				t.Fatalf("jobs %+v, want the one job done after one reaped attempt", jobs)
			}
		})
	}
}
