package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/migrations"
)

// A mistyped path is a clear error, and nothing appears at it.
func TestOpenReadOnlyMissingPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "typo.db")
	_, _, err := sqlite.OpenReadOnly(t.Context(), path)
	if !errors.Is(err, sqlite.ErrNoDatabase) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want ErrNoDatabase naming %s", err, path)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("files appeared: %v", entries)
	}
}

// withoutLast is kioku's migrations minus the newest, and its name.
func withoutLast(t *testing.T) (fs.FS, string) {
	t.Helper()
	names, err := fs.Glob(sqlite.Migrations(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	older := fstest.MapFS{}
	for _, name := range names[:len(names)-1] {
		body, err := fs.ReadFile(sqlite.Migrations(), name)
		if err != nil {
			t.Fatal(err)
		}
		older[name] = &fstest.MapFile{Data: body}
	}
	return older, names[len(names)-1]
}

// A database behind this binary opens read-only, reports what is pending and stays behind;
// nothing can be written through the store.
func TestOpenReadOnlyBehindIsReportedNotMigrated(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	older, newest := withoutLast(t)
	if _, err := sqlite.Migrate(ctx, raw, older); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	s, state, err := sqlite.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(state.Pending, []string{newest}) {
		t.Fatalf("pending %v, want [%s]", state.Pending, newest)
	}
	d, err := s.Health.DiagnoseModel(ctx, "")
	if err != nil {
		t.Fatalf("diagnosing a database one migration behind: %v", err)
	}
	if !slices.Equal(d.Storage.PendingMigrations, []string{newest}) {
		t.Fatalf("diagnostics pending %v", d.Storage.PendingMigrations)
	}
	// The write is refused (by the read-only connection, or earlier by a table of the
	// missing migration), and nothing reaches the file: checked below.
	if _, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g", Content: "a write"}, "cli"); err == nil {
		t.Fatal("a write through a read-only store succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ = sql.Open("sqlite", sqlite.DSN(path))
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM schema_migrations WHERE name = ?`, newest).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%s recorded after a read-only open: %d, %v", newest, n, err)
	}
	if err := raw.QueryRow(`SELECT count(*) FROM memories`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d memories after a write through a read-only store, %v", n, err)
	}
}

func TestOpenReadOnlyRefusesForeignAndNewer(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	foreign := filepath.Join(dir, "other.db")
	raw, _ := sql.Open("sqlite", sqlite.DSN(foreign))
	if _, err := raw.Exec(`CREATE TABLE notes (x)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, _, err := sqlite.OpenReadOnly(ctx, foreign); !errors.Is(err, migrations.ErrNotKioku) {
		t.Fatalf("foreign database: %v", err)
	}

	newer := filepath.Join(dir, "newer.db")
	s, err := sqlite.Open(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, _ = sql.Open("sqlite", sqlite.DSN(newer))
	if _, err := raw.Exec(`INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ('9999_future.sql', 'x', 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, _, err := sqlite.OpenReadOnly(ctx, newer); err == nil || !strings.Contains(err.Error(), "newer kioku") {
		t.Fatalf("newer database: %v", err)
	}
}
