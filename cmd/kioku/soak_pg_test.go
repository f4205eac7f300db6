//go:build soak

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm/postgres"
)

// soakShards is how many shard processes the PostgreSQL soak runs.
const soakShards = 2

// soakKilledShard is the shard whose process a fault kills: not shard 0, which also
// answers DMs, so the run's DMs keep going through it.
const soakKilledShard = 1

// TestSoakPostgres is the soak against PostgreSQL with two `kioku run` processes, shards
// 0 and 1 of 2, each a child process with its pipeline on and the change feed, while
// members delete messages and ask to be forgotten (checked through both processes). The
// faults: every connection of the bot's processes terminated at once (pg_terminate_backend:
// what a PostgreSQL restart does to them; the test does not control the server, which
// stays up), one process's change-feed connection dropped, the model endpoint failing for a
// while, and shard 1's process killed with SIGKILL and started again.
func TestSoakPostgres(t *testing.T) {
	convs, guilds, duration := soakFlags(t)
	url := testPostgresURL(t)
	s := newSoak(t, soakShards)
	s.setUp(convs, guilds)
	seed, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	s.settings(seed.Settings.SaveGuildSettings)
	if err := seed.Close(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	p := &soakPG{s: s, url: url, dir: t.TempDir(), host: host, run: fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)}
	for shard := range soakShards {
		if p.procs[shard], err = p.start(shard); err != nil {
			t.Fatal(err)
		}
	}
	// Registered after the fakes, so it runs first: the processes leave before them.
	t.Cleanup(p.stop)
	s.waitUp()

	e := &soakEngine{name: "postgres", processes: soakShards, db: p.openChecks(), usage: p.usage,
		healthy: func(shard int) bool { return healthz(p.proc(shard).ops) }, conns: p.conns,
		deadOwners: p.deadOwners, stop: p.stop}
	e.faults = soakChosen(t, p.terminateAll(), p.dropFeed(soakKilledShard), s.modelOutage(soakOutageFor(duration)), p.kill(soakKilledShard))
	s.run(e, guilds, duration)
}

// soakPG is the PostgreSQL soak's processes and database.
type soakPG struct {
	s    *soak
	url  string // the test schema's database URL
	dir  string
	host string
	run  string // names this run's connections (application_name)

	checks  *soakDB
	mu      sync.Mutex
	procs   [soakShards]*soakProc
	dead    []string // lease owners of killed processes
	stopped bool
}

// soakProc is one `kioku run` child process.
type soakProc struct {
	cmd        *exec.Cmd
	exited     chan struct{}
	ops, usage string // addresses of kioku's health server and the child's /usage
}

func (p *soakPG) proc(shard int) *soakProc {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.procs[shard]
}

// appName is the application_name of shard's connections, which the faults select by.
func (p *soakPG) appName(shard int) string { return fmt.Sprintf("kioku-soak-%s-%d", p.run, shard) }

// start runs the process of shard: this test binary as TestSoakChild, its log counted.
func (p *soakPG) start(shard int) (*soakProc, error) {
	addrs := filepath.Join(p.dir, fmt.Sprintf("addr-%d-%d", shard, time.Now().UnixNano()))
	cmd := exec.Command(os.Args[0], "-test.run=^TestSoakChild$", "-test.timeout=0")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KIOKU_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	env := soakEnv(p.s, p.url+"&application_name="+p.appName(shard))
	env["KIOKU_SHARD_ID"], env["KIOKU_SHARD_COUNT"], env[soakChildEnv] = fmt.Sprint(shard), fmt.Sprint(soakShards), addrs
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, &soakLog{counts: p.s.logs}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	proc := &soakProc{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(proc.exited) }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrs); err == nil {
			if n, _ := fmt.Sscan(string(b), &proc.ops, &proc.usage); n == 2 {
				return proc, nil
			}
		}
		select {
		case <-proc.exited:
			return nil, fmt.Errorf("the process of shard %d exited at start: %v; errors: %s", shard, cmd.ProcessState, p.s.logs.errorLines())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("the process of shard %d never said where it serves", shard)
		}
	}
}

// stop ends every process with SIGTERM, as a supervisor does; each must exit cleanly.
func (p *soakPG) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	for _, proc := range p.procs {
		_ = proc.cmd.Process.Signal(syscall.SIGTERM)
	}
	for shard, proc := range p.procs {
		select {
		case <-proc.exited:
			if code := proc.cmd.ProcessState.ExitCode(); code != 0 {
				p.s.t.Errorf("the process of shard %d exited with %d; errors: %s", shard, code, p.s.logs.errorLines())
			}
		case <-time.After(time.Minute):
			_ = proc.cmd.Process.Kill()
			p.s.t.Errorf("the process of shard %d did not stop within a minute of SIGTERM", shard)
		}
	}
}

// usage sums what the processes report on /usage; ok is false while one does not answer.
func (p *soakPG) usage() (soakUsage, bool) {
	var sum soakUsage
	for shard := range soakShards {
		c := http.Client{Timeout: 30 * time.Second}
		resp, err := c.Get("http://" + p.proc(shard).usage + "/usage")
		if err != nil {
			return sum, false
		}
		var u soakUsage
		err = json.NewDecoder(resp.Body).Decode(&u)
		resp.Body.Close()
		if err != nil {
			return sum, false
		}
		sum.Heap, sum.Goroutines, sum.FDs = sum.Heap+u.Heap, sum.Goroutines+u.Goroutines, sum.FDs+u.FDs
	}
	return sum, true
}

// openChecks opens the checks' own connections, named apart from the bot's.
func (p *soakPG) openChecks() *soakDB {
	t := p.s.t
	db, err := sql.Open("pgx", p.url+"&application_name="+fmt.Sprintf("kioku-soak-%s-checks", p.run))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { db.Close() })
	d := &soakDB{t: t, db: db, postgres: true}
	p.checks = d
	d.bytes = func() int64 {
		return int64(d.count(`SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`))
	}
	return d
}

// backends counts the bot's connections to the database (of shard's process only when
// shard >= 0) that match where; with terminate, it ends them too. It runs in the faults'
// goroutine: an error fails the run without stopping the test there.
func (p *soakPG) backends(shard int, terminate bool, where string, args ...any) int {
	names := []any{p.appName(0), p.appName(1)}
	if shard >= 0 {
		names = []any{p.appName(shard), p.appName(shard)}
	}
	what := "COUNT(*)"
	if terminate {
		// In the select list, so it runs only on the rows the filter kept.
		what = "COUNT(pg_terminate_backend(pid))"
	}
	n, err := p.checks.tryCount(`SELECT `+what+` FROM pg_stat_activity WHERE application_name IN (?, ?)`+where,
		append(names, args...)...)
	if err != nil {
		p.s.fail(err.Error())
	}
	return n
}

func (p *soakPG) conns() int { return p.backends(-1, false, "") }

func (p *soakPG) deadOwners() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.dead...)
}

// terminateAll terminates every connection of the bot's processes at once: what they see
// of a PostgreSQL restart. Only theirs: other tests may share the database.
func (p *soakPG) terminateAll() *soakFault {
	return &soakFault{name: "postgres_backends_terminated", inject: func(run *soakFaultRun) error {
		n := p.backends(-1, true, "")
		run.Detail = fmt.Sprintf("%d connections terminated", n)
		if n == 0 {
			return errors.New("the bot's processes held no connection")
		}
		return nil
	}}
}

// dropFeed terminates the change-feed connection (the one that ran LISTEN) of shard's
// process; it must reconnect, resync and honour what other processes changed meanwhile.
func (p *soakPG) dropFeed(shard int) *soakFault {
	var at time.Time
	return &soakFault{name: "change_feed_dropped",
		inject: func(run *soakFaultRun) error {
			at = time.Now()
			n := p.backends(shard, true, ` AND query LIKE 'LISTEN %'`)
			run.Detail = fmt.Sprintf("shard %d's LISTEN connection terminated", shard)
			if n != 1 {
				return fmt.Errorf("%d LISTEN connections of shard %d, want 1", n, shard)
			}
			return nil
		},
		back: func() bool {
			return p.backends(shard, false, ` AND query LIKE 'LISTEN %' AND backend_start > ?`, at) == 1
		}}
}

// kill kills shard's process with SIGKILL, then starts it again.
func (p *soakPG) kill(shard int) *soakFault {
	return &soakFault{name: "shard_process_killed",
		inject: func(run *soakFaultRun) error {
			proc := p.proc(shard)
			pid := proc.cmd.Process.Pid
			if err := proc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				return err
			}
			<-proc.exited
			if ws, ok := proc.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				return fmt.Errorf("the process ended with %v, not SIGKILL", proc.cmd.ProcessState)
			}
			owner := fmt.Sprintf("%s:%d/", p.host, pid)
			p.mu.Lock()
			p.dead = append(p.dead, owner)
			p.mu.Unlock()
			run.KilledInFlight = p.s.killed(shard)
			leases, err := p.checks.tryCount(`SELECT COUNT(*) FROM memory_jobs WHERE state = 'leased' AND lease_owner LIKE ?`, owner+"%")
			if err != nil {
				return err
			}
			run.Detail = fmt.Sprintf("shard %d's process killed holding %d job leases (they wait for the lease to expire), and started again",
				shard, leases)
			return nil
		},
		heal: func(*soakFaultRun) error {
			proc, err := p.start(shard)
			if err != nil {
				return err
			}
			p.mu.Lock()
			p.procs[shard] = proc
			p.mu.Unlock()
			return nil
		}}
}

// soakChildEnv names the file where a process of TestSoakPostgres (TestSoakChild) writes
// the addresses it serves.
const soakChildEnv = "KIOKU_SOAK_CHILD"

// TestSoakChild is not a test of its own: it is one `kioku run` process of
// TestSoakPostgres, started from this test binary (as TestFaultChildProcess is) so that a
// fault can kill it. Besides kioku's /healthz it serves /usage: the heap in use after a
// full collection, goroutines and open files, for the soak's bounds.
func TestSoakChild(t *testing.T) {
	file := os.Getenv(soakChildEnv)
	if file == "" {
		t.Skip("a process of TestSoakPostgres")
	}
	ops, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	usage, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = http.Serve(usage, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			heap, goroutines := soakMemStats()
			_ = json.NewEncoder(w).Encode(soakUsage{Heap: heap, Goroutines: goroutines, FDs: soakOpenFiles()})
		}))
	}()
	if err := os.WriteFile(file+".tmp", []byte(ops.Addr().String()+" "+usage.Addr().String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".tmp", file); err != nil {
		t.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	app := &App{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: os.Stderr, LookupEnv: os.LookupEnv, httpListener: ops}
	code := app.Main(ctx, []string{"run"})
	stop()
	os.Exit(code)
}
