package migrations_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kioku-bot/kioku/migrations"
	_ "modernc.org/sqlite"
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestApply(t *testing.T) {
	ctx := context.Background()
	t.Run("SchemaAppliesThenIsANoOp", func(t *testing.T) {
		db := openDB(t)
		first, err := migrations.Apply(ctx, db, migrations.FS())
		if err != nil {
			t.Fatal(err)
		}
		if len(first.Applied) == 0 || first.Current != len(first.Applied) {
			t.Fatalf("first run = %+v", first)
		}
		second, err := migrations.Apply(ctx, db, migrations.FS())
		if err != nil {
			t.Fatal(err)
		}
		if len(second.Applied) != 0 || second.Current != first.Current {
			t.Fatalf("second run applied %v, want nothing", second.Applied)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'memories_fts'`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("memories_fts missing: n=%d err=%v", n, err)
		}
	})
	t.Run("ErrChangedChecksum", func(t *testing.T) {
		db := openDB(t)
		fsys := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")}}
		if _, err := migrations.Apply(ctx, db, fsys); err != nil {
			t.Fatal(err)
		}
		fsys["0001_a.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE a (x TEXT);")}
		_, err := migrations.Apply(ctx, db, fsys)
		if err == nil || !strings.Contains(err.Error(), "0001_a.sql was changed") {
			t.Fatalf("err = %v, want a changed-checksum refusal", err)
		}
	})
	t.Run("FailedFileIsRolledBackAndNotRecorded", func(t *testing.T) {
		db := openDB(t)
		fsys := fstest.MapFS{
			"0001_ok.sql":  {Data: []byte("CREATE TABLE ok (x INTEGER);")},
			"0002_bad.sql": {Data: []byte("CREATE TABLE half (x INTEGER); THIS IS NOT SQL;")},
		}
		if _, err := migrations.Apply(ctx, db, fsys); err == nil {
			t.Fatal("bad migration applied without error")
		}
		var n int
		db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'half'`).Scan(&n)
		if n != 0 {
			t.Error("a failed migration left a table behind")
		}
		db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n)
		if n != 1 {
			t.Errorf("recorded %d migrations, want 1", n)
		}
	})
	t.Run("AppliesInNameOrder", func(t *testing.T) {
		db := openDB(t)
		fsys := fstest.MapFS{
			"0002_b.sql": {Data: []byte("ALTER TABLE a ADD COLUMN y INTEGER;")},
			"0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")},
		}
		res, err := migrations.Apply(ctx, db, fsys)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.Applied, ",") != "0001_a.sql,0002_b.sql" {
			t.Errorf("applied %v", res.Applied)
		}
	})
}
