package migrations_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kioku-bot/kioku/migrations"
	_ "modernc.org/sqlite"
)

// sqliteEngine is SQLite to the runner, with no function of kioku's: these tests apply
// files of their own (SQLite's series is ltm/sqlite's, which tests it).
var sqliteEngine = migrations.Engine{Rebind: func(q string) string { return q }}

// apply applies fsys to db, a SQLite database.
func apply(ctx context.Context, db *sql.DB, fsys fs.FS) (migrations.Result, error) {
	return migrations.ApplyEngine(ctx, db, fsys, sqliteEngine)
}

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
	t.Run("ErrChangedChecksum", func(t *testing.T) {
		db := openDB(t)
		fsys := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")}}
		if _, err := apply(ctx, db, fsys); err != nil {
			t.Fatal(err)
		}
		fsys["0001_a.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE a (x TEXT);")}
		_, err := apply(ctx, db, fsys)
		if err == nil || !strings.Contains(err.Error(), "0001_a.sql was changed") {
			t.Fatalf("err = %v, want a changed-checksum refusal", err)
		}
	})
	t.Run("ErrDatabaseFromNewerBinary", func(t *testing.T) {
		db := openDB(t)
		newer := fstest.MapFS{
			"0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")},
			"0002_b.sql": {Data: []byte("CREATE TABLE b (x INTEGER);")},
			"0003_c.sql": {Data: []byte("CREATE TABLE c (x INTEGER);")},
		}
		if _, err := apply(ctx, db, newer); err != nil {
			t.Fatal(err)
		}
		schema := func() string {
			var s string
			if err := db.QueryRow(`SELECT group_concat(name || ':' || sql, ';') FROM (SELECT name, sql FROM sqlite_master ORDER BY name)`).Scan(&s); err != nil {
				t.Fatal(err)
			}
			var recorded string
			if err := db.QueryRow(`SELECT group_concat(name || ':' || checksum || ':' || applied_at, ';') FROM (SELECT * FROM schema_migrations ORDER BY name)`).Scan(&recorded); err != nil {
				t.Fatal(err)
			}
			return s + "|" + recorded
		}
		before := schema()
		// The older binary also has a file the newer one never applied; it must not run either.
		older := fstest.MapFS{
			"0001_a.sql":   newer["0001_a.sql"],
			"0002_old.sql": {Data: []byte("CREATE TABLE old (x INTEGER);")},
		}
		res, err := apply(ctx, db, older)
		if err == nil {
			t.Fatalf("older migrations applied over a newer database: %+v", res)
		}
		for _, want := range []string{"newer kioku (0003_c.sql", "knows up to 0002_old.sql", "upgrade kioku or restore a backup"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("err = %q, want it to mention %q", err, want)
			}
		}
		if len(res.Applied) != 0 {
			t.Errorf("applied %v", res.Applied)
		}
		if after := schema(); after != before {
			t.Errorf("database changed:\nbefore %s\nafter  %s", before, after)
		}
	})
	t.Run("FailedFileIsRolledBackAndNotRecorded", func(t *testing.T) {
		db := openDB(t)
		fsys := fstest.MapFS{
			"0001_ok.sql":  {Data: []byte("CREATE TABLE ok (x INTEGER);")},
			"0002_bad.sql": {Data: []byte("CREATE TABLE half (x INTEGER); THIS IS NOT SQL;")},
		}
		if _, err := apply(ctx, db, fsys); err == nil {
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
	t.Run("PendingOnlyReads", func(t *testing.T) {
		db := openDB(t)
		fsys := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")}}
		pending, err := migrations.Pending(ctx, db, fsys)
		if err != nil || strings.Join(pending, ",") != "0001_a.sql" {
			t.Fatalf("pending on an empty database: %v %v, want 0001_a.sql", pending, err)
		}
		var tables int
		if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil || tables != 0 {
			t.Fatalf("Pending created %d tables (%v), want none", tables, err)
		}
		if _, err := apply(ctx, db, fsys); err != nil {
			t.Fatal(err)
		}
		fsys["0002_b.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE b (x INTEGER);")}
		if pending, err = migrations.Pending(ctx, db, fsys); err != nil || strings.Join(pending, ",") != "0002_b.sql" {
			t.Fatalf("pending after 0001: %v %v, want 0002_b.sql", pending, err)
		}
		if _, err := migrations.Pending(ctx, db, fstest.MapFS{}); err == nil || !strings.Contains(err.Error(), "newer kioku") {
			t.Fatalf("pending for an older binary: %v, want the newer-database refusal", err)
		}
	})
	t.Run("FileConnAppliesTheFilesItTakes", func(t *testing.T) {
		db := openDB(t)
		given := 0
		// A connection with a temporary table of its own: only a file applied on it can
		// write to that table.
		e := sqliteEngine
		e.FileConn = func(ctx context.Context, db *sql.DB, body string) (*sql.Conn, error) {
			if !strings.Contains(body, "temp.marker") {
				return nil, nil
			}
			c, err := db.Conn(ctx)
			if err != nil {
				return nil, err
			}
			if _, err := c.ExecContext(ctx, `CREATE TEMP TABLE marker (x INTEGER)`); err != nil {
				c.Close()
				return nil, err
			}
			given++
			return c, nil
		}
		fsys := fstest.MapFS{
			"0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")},
			"0002_b.sql": {Data: []byte("INSERT INTO temp.marker VALUES (1); CREATE TABLE b (x INTEGER);")},
		}
		res, err := migrations.ApplyEngine(ctx, db, fsys, e)
		if err != nil || strings.Join(res.Applied, ",") != "0001_a.sql,0002_b.sql" || given != 1 {
			t.Fatalf("applied %v (%v) with %d connections given, want both files and one connection", res.Applied, err, given)
		}
	})
	t.Run("AppliesInNameOrder", func(t *testing.T) {
		db := openDB(t)
		fsys := fstest.MapFS{
			"0002_b.sql": {Data: []byte("ALTER TABLE a ADD COLUMN y INTEGER;")},
			"0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")},
		}
		res, err := apply(ctx, db, fsys)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.Applied, ",") != "0001_a.sql,0002_b.sql" {
			t.Errorf("applied %v", res.Applied)
		}
	})
}
