// Package pgtest opens PostgreSQL stores for tests: each in a fresh schema of the database
// that KIOKU_TEST_POSTGRES names, dropped when the test ends. Without the variable the test
// is skipped with one line; with it set but the database unreachable, the test fails, so a
// CI that meant to run the PostgreSQL tests can't pass without them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kioku-bot/kioku/ltm/postgres"
)

// EnvURL is the variable that names the test database, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvURL = "KIOKU_TEST_POSTGRES"

// EnvRequire, when set (CI sets it), turns every skip of a PostgreSQL test into a failure:
// a run that was meant to prove both engines cannot pass with one of them left out.
const EnvRequire = "KIOKU_REQUIRE_POSTGRES"

// SkipMessage is the one line a test without a database skips with.
const SkipMessage = EnvURL + " not set: PostgreSQL tests skipped"

// unset counts the tests this test binary skipped because EnvURL is not set, for Main.
var unset atomic.Int64

// URL returns the test database's URL, skipping t when none is configured.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		if os.Getenv(EnvRequire) == "" {
			unset.Add(1)
		}
		Skip(t, SkipMessage)
	}
	return url
}

// Main runs a package's tests (call it from TestMain) and then, when some of them skipped
// because EnvURL is not set, says so in one line where a person sees it: in the default
// mode `go test` shows a passing package as a bare "ok", which reads as if the PostgreSQL
// tests passed, and hides every line the tests print (-v shows them). The line goes to
// stderr, which -v and a failing run show, and to the terminal the tests run in, if any.
func Main(m *testing.M) {
	code := m.Run()
	if n := unset.Load(); n > 0 {
		line := fmt.Sprintf("%s: %d PostgreSQL %s skipped: %s is not set (README, \"PostgreSQL\")\n",
			packagePath(), n, map[bool]string{true: "test", false: "tests"}[n == 1], EnvURL)
		fmt.Fprint(os.Stderr, line)
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			_, _ = tty.WriteString(line)
			_ = tty.Close()
		}
	}
	os.Exit(code)
}

// packagePath names the package under test by its directory below the module root (tests
// run in their package's directory).
func packagePath() string {
	dir, err := os.Getwd()
	if err != nil {
		return "kioku"
	}
	for root := dir; ; {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			if rel, err := filepath.Rel(root, dir); err == nil && rel != "." {
				return filepath.ToSlash(rel)
			}
			return filepath.Base(root)
		}
		parent := filepath.Dir(root)
		if parent == root {
			return filepath.Base(dir)
		}
		root = parent
	}
}

// Skip skips a PostgreSQL test with why, or fails it where EnvRequire is set.
func Skip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvRequire) != "" {
		t.Fatalf("%s is set, so this PostgreSQL test may not skip: %s", EnvRequire, why)
	}
	t.Skip(why)
}

var extensionOnce sync.Once

// Schema creates a fresh, empty schema in the test database, registers its dropping with
// t.Cleanup and returns a pool configuration whose connections use it (search_path: the
// schema, then public, where the extensions live).
func Schema(t testing.TB) *pgxpool.Config {
	t.Helper()
	url := URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("%s is set but PostgreSQL is unreachable: %v", EnvURL, err)
	}
	defer conn.Close(context.Background())
	// Extensions are per database: create pg_trgm once in public, so that concurrent
	// tests' migrations find it rather than race to create it in their own schemas.
	var extErr error
	extensionOnce.Do(func() {
		_, extErr = conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`)
	})
	if extErr != nil {
		t.Fatalf("couldn't create pg_trgm: %v", extErr)
	}
	var raw [6]byte
	if _, err := rand.Read(raw[:]); err != nil {
		t.Fatal(err)
	}
	schema := "kioku_test_" + hex.EncodeToString(raw[:])
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("couldn't create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("couldn't drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("couldn't drop schema %s: %v", schema, err)
		}
	})
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema + ",public"
	cfg.MaxConns = 4
	return cfg
}

// Open opens a store in a fresh schema (see Schema) and closes it with t.Cleanup, before
// the schema is dropped.
func Open(t testing.TB) *postgres.Store {
	t.Helper()
	return OpenConfig(t, Schema(t))
}

// OpenConfig is Open with a configuration from Schema that the test changed first.
func OpenConfig(t testing.TB, cfg *pgxpool.Config) *postgres.Store {
	t.Helper()
	s, err := postgres.OpenConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open PostgreSQL store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return s
}

// ReadOnlySwitch arms cfg's pool with a switch that makes its connections refuse writes, as
// a database set read-only or a standby does (SQLSTATE 25006): while it is on, each
// connection handed out runs with default_transaction_read_only, and once it is off again,
// without. Only this pool's sessions change; the database and other tests' stores don't.
func ReadOnlySwitch(cfg *pgxpool.Config) func(on bool) {
	var want atomic.Bool
	var readOnly sync.Map // *pgx.Conn → bool: the setting the session has now
	cfg.PrepareConn = func(ctx context.Context, conn *pgx.Conn) (bool, error) {
		on := want.Load()
		if cur, _ := readOnly.Load(conn); cur == on || (cur == nil && !on) {
			return true, nil
		}
		if _, err := conn.Exec(ctx, `SELECT set_config('default_transaction_read_only', $1, false)`, strconv.FormatBool(on)); err != nil {
			return false, err
		}
		readOnly.Store(conn, on)
		return true, nil
	}
	return want.Store
}
