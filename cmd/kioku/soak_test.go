//go:build soak

package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// The soak tests run the real `kioku run` wiring under sustained load: concurrent
// conversations across several guilds (and some DMs) through the fake Discord gateway, the
// fake OpenAI server answering turns (some with a create_long_term_memory call) and the
// background pipeline's extraction and decisions, for a set time, with members deleting
// messages and asking to be forgotten meanwhile, and faults injected once each in the
// middle. TestSoak runs one process on SQLite; TestSoakPostgres (soak_pg_test.go) two shard
// processes on PostgreSQL. Each prints one JSON line and checks correctness bounds, never
// timings: no lost or duplicated reply, no memory lost or stored twice, no job's work
// committed twice, nothing of a forgotten member or of a deleted message left, every fault
// recovered within soakRecoveryBound, no error a fault does not explain, no goroutine,
// open-file or connection growth beyond a constant after warm-up, and no heap growth that
// the memories stored meanwhile do not explain. The heap is sampled through the run, so
// the report shows its trend beside the memories' (a leak grows the heap without them).
// They are outside the default test path; CI runs short ones (README, "Soak test"):
//
//	go test -tags soak -run 'TestSoak$' ./cmd/kioku/ -soak.duration 1m -v
//	go test -tags soak -run TestSoakPostgres ./cmd/kioku/ -soak.duration 1m -v
var (
	soakDuration      = flag.Duration("soak.duration", time.Minute, "how long the soak runs after warm-up")
	soakConversations = flag.Int("soak.conversations", 50, "concurrent conversations")
	soakGuilds        = flag.Int("soak.guilds", 5, "guilds the conversations are spread over")
	soakFaults        = flag.String("soak.faults", "all", "the faults to inject during the run: all, none, or their names separated by commas")
	soakHeapProfile   = flag.String("soak.heapprofile", "", "write heap profiles at the baseline (FILE.start) and the end (FILE), to find what grew (SQLite)")
)

const (
	// soakModelDelay is the fake model's scripted latency per chat call. It is subtracted
	// from a turn's time to give the bot's own overhead.
	soakModelDelay = 2 * time.Millisecond
	// soakWarmupTurns are the turns each conversation makes before the baseline is taken.
	soakWarmupTurns = 5
	// soakToolEvery: every n-th turn of a conversation the model saves a memory.
	soakToolEvery = 3
	// soakDeleteEvery and soakDeleteTurn: turn k's message is deleted after its reply when
	// k%soakDeleteEvery == soakDeleteTurn; never a turn whose memory the model saves.
	soakDeleteEvery = 15
	soakDeleteTurn  = 7
	// soakDeleteRisk: a delete sent this shortly before its process is killed may die with it.
	soakDeleteRisk = 5 * time.Second
	// soakReplyWait bounds the wait for one reply; a reply later than this is counted as
	// late, and one that never comes as lost. Far above any turn the soak produces.
	soakReplyWait = 2 * time.Minute
	// soakInteractWait bounds the wait for a command's answer before it is asked again.
	soakInteractWait = 30 * time.Second
	// soakRetryWait is how long a member waits before asking again after a refusal, and
	// soakMaxAttempts and soakStepTries how often they ask before the run fails.
	soakRetryWait   = 250 * time.Millisecond
	soakMaxAttempts = 200
	soakStepTries   = 120
	// soakRecoveryBound is the longest a fault may take to recover: from its end until
	// every process answers /healthz and a turn of its shard is answered.
	soakRecoveryBound = 30 * time.Second
	// soakFaultGrace: what goes wrong this long after a fault recovered is still its doing
	// (turns and jobs under way when it recovered).
	soakFaultGrace = 30 * time.Second
	// soakDrainWait bounds the wait for the pipeline to finish the jobs that are due.
	soakDrainWait = 3 * time.Minute
	// soakOverhead is the most the run takes beyond -soak.duration: warm-up, two drains,
	// the last fault's recovery and a shutdown.
	soakOverhead = soakDrainWait*2 + soakRecoveryBound + 3*time.Minute
	// soakForgetEvery is how many fake-Discord requests the collector looks at between
	// dropping them, so the fakes' records do not grow with the run.
	soakForgetEvery = 100
	// soakGoroutineSlack, soakFDSlack and soakConnSlack are the growth bounds of
	// goroutines, open files and database connections between the baseline after warm-up
	// and the end.
	soakGoroutineSlack = 20
	soakFDSlack        = 10
	soakConnSlack      = 2
	// soakHeapPerMemory and soakHeapSlack bound the heap's growth from the baseline: what
	// the memories stored meanwhile may take (the in-memory keyword index holds about 140
	// bytes a memory, docs/recall.md; this leaves room for the caches that grow with them),
	// plus a constant for what settles into use once. A heap that grows with time rather
	// than with what is stored passes it only as long as it stays under the constant, and
	// shows in the samples' trend (unexplained_mb).
	soakHeapPerMemory = 2048
	soakHeapSlack     = 16 << 20
	// soakSamples is how many times the heap is sampled through the run.
	soakSamples = 8
)

// soakFlags returns the run's flags, failing the test when they or its timeout can't work.
func soakFlags(t *testing.T) (convs, guilds int, duration time.Duration) {
	convs, guilds, duration = *soakConversations, *soakGuilds, *soakDuration
	if convs < 1 || guilds < 1 || duration <= 0 {
		t.Fatalf("bad flags: %d conversations, %d guilds, %v", convs, guilds, duration)
	}
	if dl, ok := t.Deadline(); ok && time.Until(dl) < duration+soakOverhead {
		t.Fatalf("-soak.duration %v needs a test timeout of at least %v: add -timeout %v", duration, duration+soakOverhead,
			(duration + soakOverhead + 5*time.Minute).Round(time.Minute))
	}
	return convs, guilds, duration
}

// soakChosen returns the faults -soak.faults names, in their order.
func soakChosen(t *testing.T, faults ...*soakFault) []*soakFault {
	switch *soakFaults {
	case "all":
		return faults
	case "none", "":
		return nil
	}
	var out []*soakFault
	for _, name := range strings.Split(*soakFaults, ",") {
		i := slices.IndexFunc(faults, func(f *soakFault) bool { return f.name == name })
		if i < 0 {
			t.Fatalf("-soak.faults: no fault %q here", name)
		}
		out = append(out, faults[i])
	}
	return out
}

// soakEnv is the environment of every `kioku run` of the soak.
func soakEnv(s *soak, db string) map[string]string {
	return map[string]string{
		"KIOKU_DISCORD_TOKEN":   "fake-discord-token",
		"KIOKU_DISCORD_API_URL": s.fake.URL(),
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
		// The soak measures turns, not the abuse limits and caps (limits_test.go proves
		// those): an hour's run stores more than a member's default cap.
		"KIOKU_GUILD_TURNS_PER_MINUTE":  "1000000",
		"KIOKU_GUILD_DAILY_LLM_CALLS":   "0",
		"KIOKU_MAX_MEMORIES_PER_SERVER": "100000000",
		"KIOKU_MAX_MEMORIES_PER_MEMBER": "100000000",
	}
}

// soakSettings lets the model save memories in every guild of the run.
func (s *soak) settings(save func(context.Context, memory.GuildSettings) error) {
	for _, g := range s.guilds {
		if err := save(context.Background(), memory.GuildSettings{GuildID: g, SelfTeaching: true}); err != nil {
			s.t.Fatal(err)
		}
	}
}

// waitUp waits until every shard is connected and the commands are registered.
func (s *soak) waitUp() {
	ready, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.fake.WaitReady(ready); err != nil {
		s.t.Fatalf("bot never became ready: %v; errors: %s", err, s.logs.errorLines())
	}
	if _, err := s.fake.WaitFor(ready, fakediscord.Match("PUT", "/applications/"+s.fake.ApplicationID()+"/commands")); err != nil {
		s.t.Fatalf("commands were never registered: %v", err)
	}
}

// healthz reports whether the process serving health at addr answers /healthz.
func healthz(addr string) bool {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestSoak is the soak of one process on SQLite, with the model failing for a while and
// the disk briefly full; see the comment on soakDuration.
func TestSoak(t *testing.T) {
	convs, guilds, duration := soakFlags(t)
	if *soakHeapProfile != "" {
		runtime.MemProfileRate = 4096 // fine enough to see small growth
	}
	s := newSoak(t, 1)
	s.setUp(convs, guilds)
	db := filepath.Join(t.TempDir(), "kioku.db")
	seed, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	s.settings(seed.Settings.SaveGuildSettings)
	if err := seed.Close(); err != nil {
		t.Fatal(err)
	}

	store, addr, stopBot := s.startSQLite(db)
	check := soakOpenSQLite(t, db)
	e := &soakEngine{name: "sqlite", processes: 1, db: check,
		usage: func() (soakUsage, bool) {
			heap, goroutines := s.settle()
			return soakUsage{Heap: heap, Goroutines: goroutines, FDs: soakOpenFiles()}, true
		},
		healthy: func(int) bool { return healthz(addr) },
		stop:    stopBot}
	e.faults = soakChosen(t, soakDiskFull(store, soakDiskFullFor(duration)), s.modelOutage(soakOutageFor(duration)))
	s.run(e, guilds, duration)
}

// startSQLite runs `kioku run` in this process on the database at db and returns the
// store it opened, where it serves /healthz, and a function that stops it (and must see it
// exit cleanly), also registered with the test's cleanup.
func (s *soak) startSQLite(db string) (store *ltm.Store, addr string, stop func()) {
	t := s.t
	env := soakEnv(s, db)
	// Library code that logs through slog's package functions writes to the default
	// logger: counted too, as a child process's stderr is on PostgreSQL.
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&soakLog{counts: s.logs}, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan *ltm.Store, 1)
	app := &App{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &soakLog{counts: s.logs},
		LookupEnv:    func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		httpListener: ln, storeOpened: func(st *ltm.Store) { opened <- st }}
	runCtx, stopRun := context.WithCancel(context.Background())
	exited := make(chan int, 1)
	go func() { exited <- app.Main(runCtx, []string{"run"}) }()
	stop = sync.OnceFunc(func() {
		stopRun()
		select {
		case code := <-exited:
			if code != 0 {
				t.Errorf("kioku run exited with %d; errors: %s", code, s.logs.errorLines())
			}
		case <-time.After(time.Minute):
			t.Errorf("kioku run did not stop within a minute")
		}
	})
	// Runs before the fakes close (registered after them): the session leaves first.
	t.Cleanup(stop)
	s.waitUp()
	return <-opened, ln.Addr().String(), stop
}

// settle drops every record the fakes hold, which the collector has looked at, and returns
// the heap in use and the goroutine count after a full collection: the fakes' records are
// test scaffolding, not the bot's memory.
func (s *soak) settle() (heap uint64, goroutines int) {
	s.fake.Forget(int(s.seen.Load()))
	s.ai.ResetRequests()
	return soakMemStats()
}

// soakOpenSQLite opens the database read-only for the checks, on one connection kept
// through the run (so the open-file counts see it at both ends).
func soakOpenSQLite(t *testing.T, path string) *soakDB {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return &soakDB{t: t, db: db, bytes: func() int64 {
		var n int64
		for _, p := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				n += fi.Size()
			}
		}
		return n
	}}
}

// soakDiskFull caps the database file at the pages it has, as a full disk does, for a
// while (the page-count limit of faults_test.go): writes that need a new page fail.
func soakDiskFull(store *ltm.Store, lasts time.Duration) *soakFault {
	ctx := context.Background()
	return &soakFault{name: "sqlite_disk_full", lasts: lasts,
		inject: func(run *soakFaultRun) error {
			pages, err := sqlite.WriterPragma(ctx, store, "page_count")
			if err != nil {
				return err
			}
			free, err := sqlite.WriterPragma(ctx, store, "freelist_count")
			if err != nil {
				return err
			}
			run.Detail = fmt.Sprintf("capped at %s pages (%s of them free)", pages, free)
			_, err = sqlite.WriterPragma(ctx, store, "max_page_count = "+pages)
			return err
		},
		heal: func(*soakFaultRun) error {
			_, err := sqlite.WriterPragma(ctx, store, "max_page_count = 1073741823")
			return err
		}}
}

// soakDiskFullFor is how long the disk stays full: a twentieth of the run, 3 s to 30 s.
func soakDiskFullFor(d time.Duration) time.Duration {
	return min(max(d/20, 3*time.Second), 30*time.Second)
}
