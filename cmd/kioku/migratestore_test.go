package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/pgstore"
	"github.com/kioku-bot/kioku/pgstore/pgtest"
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
	out := mustRun("migrate-store", "--from", db, "--to", to)
	for _, want := range []string{"memories", "memory_history", "verified", "not copied:", "ids kept"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "postgres@") && strings.Contains(to, ":@") {
		t.Errorf("summary shows the password: %s", out)
	}

	pg, err := pgstore.Open(context.Background(), to)
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
}
