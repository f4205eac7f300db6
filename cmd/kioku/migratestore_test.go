package main

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// testPostgresURL is a URL of a fresh schema of the test database (pgtest.Schema), for
// commands that take a URL rather than a pool configuration.
func testPostgresURL(t *testing.T) string {
	t.Helper()
	cfg := pgtest.Schema(t)
	base := os.Getenv(pgtest.EnvURL)
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + url.QueryEscape(cfg.ConnConfig.RuntimeParams["search_path"])
}

// TestMigrateStoreCLI: `kioku migrate-store` copies what the memories CLI wrote on SQLite
// into PostgreSQL under the same ids, prints the verified tables and what it did not copy,
// and refuses to copy into a database that already holds data.
func TestMigrateStoreCLI(t *testing.T) {
	to := testPostgresURL(t)
	db := filepath.Join(t.TempDir(), "k.db")
	env := map[string]string{"KIOKU_DB": db}
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := runApp(t, env, "", args...)
		if code != 0 {
			t.Fatalf("kioku %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	mustRun("memories", "add", "--guild", "g1", "The raid is on Friday")
	mustRun("memories", "add", "--guild", "g1", "Minecraft night is Saturday")
	mustRun("memories", "add", "--user", "u1", "I like green tea")
	mustRun("memories", "forget", "--guild", "g1", "2")

	if code, _, errOut := runApp(t, env, "", "migrate-store"); code != 2 || !strings.Contains(errOut, "--to") {
		t.Errorf("migrate-store without --to: exit %d, %q; want a usage error naming --to", code, errOut)
	}
	out := mustRun("migrate-store", "--from", db, "--to", "POSTGRES"+strings.TrimPrefix(to, "postgres"))
	for _, want := range []string{"memories", "memory_history", "verified", "not copied:", "ids kept"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "postgres@") && strings.Contains(to, ":@") {
		t.Errorf("summary shows the password: %s", out)
	}

	pg, err := postgres.Open(context.Background(), to)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for id, want := range map[int64]string{1: "The raid is on Friday", 3: "I like green tea"} {
		owner := memory.ServerOwner("g1")
		if id == 3 {
			owner = memory.PersonalOwner("u1")
		}
		m, err := pg.Memories.Get(context.Background(), owner, id)
		if err != nil || m.Content != want {
			t.Errorf("memory #%d on PostgreSQL: %+v, %v; want %q", id, m, err, want)
		}
	}

	code, _, errOut := runApp(t, env, "", "migrate-store", "--to", to)
	if code != 1 || !strings.Contains(errOut, "already holds data") {
		t.Errorf("second migrate-store: exit %d, %q; want a refusal", code, errOut)
	}
	// As deploy/compose-postgres.yaml runs it: KIOKU_DB names the PostgreSQL database and
	// only --from is given; the copy goes there (and is refused, since it holds data now).
	code, _, errOut = runApp(t, map[string]string{"KIOKU_DB": to}, "", "migrate-store", "--from", db)
	if code != 1 || !strings.Contains(errOut, "already holds data") {
		t.Errorf("migrate-store --from alone with a PostgreSQL KIOKU_DB: exit %d, %q; want the copy into KIOKU_DB refused", code, errOut)
	}
}

// TestMigrateStoreRefusesBadSources: a missing source, a source behind this kioku's
// migrations, and a SQLite target are refused with a line saying what to do, before any
// PostgreSQL connection is made (the target here does not exist) and without changing the
// source.
func TestMigrateStoreRefusesBadSources(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")
	raw, err := sql.Open("sqlite", sqlite.DSN(old))
	if err != nil {
		t.Fatal(err)
	}
	names, _ := fs.Glob(sqlite.Migrations(), "*.sql")
	slices.Sort(names)
	older := fstest.MapFS{}
	for _, name := range names[:len(names)-1] {
		body, _ := fs.ReadFile(sqlite.Migrations(), name)
		older[name] = &fstest.MapFile{Data: body}
	}
	if _, err := sqlite.Migrate(ctx, raw, older); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before := fileSum(t, old)
	const nowhere = "postgres://kioku@127.0.0.1:1/none?connect_timeout=1"
	for _, tc := range []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"--from", filepath.Join(dir, "missing.db"), "--to", nowhere}, 1, "no database at"},
		{[]string{"--from", old, "--to", nowhere}, 1, "kioku migrate"},
		{[]string{"--from", old, "--to", filepath.Join(dir, "other.db")}, 2, "--to postgres://"},
	} {
		code, _, stderr := runApp(t, map[string]string{"KIOKU_DB": old}, "", append([]string{"migrate-store"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.wantStderr) {
			t.Errorf("migrate-store %v: exit %d, %q; want exit %d naming %q", tc.args, code, stderr, tc.code, tc.wantStderr)
		}
	}
	if fileSum(t, old) != before {
		t.Error("a refused migrate-store changed the source database")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused migrate-store created the missing source: %v", err)
	}
}
