// Package pgtest opens PostgreSQL stores for tests: each in a fresh schema of the database
// that KIOKU_TEST_POSTGRES names, dropped when the test ends. Without the variable the test
// is skipped with one line; with it set but the database unreachable, the test fails, so a
// CI that meant to run the PostgreSQL tests can't pass without them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
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

// URL returns the test database's URL, skipping t when none is configured.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		Skip(t, SkipMessage)
	}
	return url
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
