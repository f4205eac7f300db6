package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// Tests of SQLite's migration series (migrations/): each upgrade applies the files before
// a migration, writes rows as the kioku of that time did, then applies the rest.

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	t.Run("SchemaAppliesThenIsANoOp", func(t *testing.T) {
		db := openDB(t)
		first, err := sqlite.Migrate(ctx, db, sqlite.Migrations())
		if err != nil {
			t.Fatal(err)
		}
		if len(first.Applied) == 0 || first.Current != len(first.Applied) {
			t.Fatalf("first run = %+v", first)
		}
		second, err := sqlite.Migrate(ctx, db, sqlite.Migrations())
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
}

// TestSearchTextUpgrade: a database written before migration 0004 gets its word index
// rebuilt from each live memory's search text, so an English query finds full-width Latin
// and Latin words inside Japanese text; forgotten memories stay out of the index, and
// writes after the upgrade keep it in step.
func TestSearchTextUpgrade(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	before := migrationsBefore(t, "0004")
	if res, err := sqlite.Migrate(ctx, db, before); err != nil || res.Current != 3 {
		t.Fatalf("applying 0001–0003: %+v %v", res, err)
	}
	insert := func(id int, content string, deleted bool) {
		t.Helper()
		var deletedAt any
		if deleted {
			deletedAt = 1
		}
		if _, err := db.Exec(`INSERT INTO memories (id, scope, scope_key, guild_id, type, content, normalized, content_hash,
			source, created_at, updated_at, deleted_at) VALUES (?, 'server', 'g:1', '1', 'fact', ?, ?, ?, 'command', 1, 1, ?)`,
			id, content, strings.ToLower(content), fmt.Sprint("hash", id), deletedAt); err != nil {
			t.Fatal(err)
		}
	}
	insert(1, "ＡＰＩの上限は毎分60回", false)
	insert(2, "明日のdeployは15時から", false)
	insert(3, "The old API key was rotated", true)
	match := func(query string) []int {
		t.Helper()
		rows, err := db.Query(`SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid`, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []int
		for rows.Next() {
			var id int
			rows.Scan(&id)
			ids = append(ids, id)
		}
		return ids
	}
	if got := match("api OR deploy"); len(got) != 0 {
		t.Fatalf("before the upgrade an English query found %v; the test no longer shows the difference", got)
	}

	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	if got := match("api"); fmt.Sprint(got) != "[1]" {
		t.Errorf(`"api" matches %v, want [1] (full-width, live only)`, got)
	}
	if got := match("deploy"); fmt.Sprint(got) != "[2]" {
		t.Errorf(`"deploy" matches %v, want [2]`, got)
	}
	if _, err := db.Exec(`UPDATE memories SET content = 'The release moved to Friday' WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	if got := match("deploy OR release"); fmt.Sprint(got) != "[2]" {
		t.Errorf("after an edit: %v", got)
	}
	if got := match("deploy"); len(got) != 0 {
		t.Errorf("the edited-away word still matches %v", got)
	}
	if _, err := db.Exec(`UPDATE memories SET deleted_at = 2 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if got := match("api"); len(got) != 0 {
		t.Errorf("a forgotten memory still matches: %v", got)
	}
	if _, err := db.Exec(`DELETE FROM memories WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	if got := match("release"); len(got) != 0 {
		t.Errorf("a purged memory still matches: %v", got)
	}
}

// TestSearchTextColumns: since 0007 the schema calls no function of kioku's. The word index
// takes a memory's stored search text, or its raw text when a client wrote none; a client
// that changes the text without its search text gets the raw text indexed and the stale
// search text cleared, so the index never holds words the row no longer has.
func TestSearchTextColumns(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE sql LIKE '%kioku_search_text%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d schema objects still call kioku_search_text (%v)", n, err)
	}
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := db.Exec(query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	match := func(query string) string {
		t.Helper()
		rows, err := db.Query(`SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid`, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []int
		for rows.Next() {
			var id int
			rows.Scan(&id)
			ids = append(ids, id)
		}
		return fmt.Sprint(ids)
	}
	column := func(id int) string {
		t.Helper()
		var s string
		if err := db.QueryRow(`SELECT search_text FROM memories WHERE id = ?`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	insert := `INSERT INTO memories (id, scope, scope_key, guild_id, type, content, normalized, content_hash, source,
		author_name, search_text, search_author, created_at, updated_at) VALUES (?, 'server', 'g:1', '1', 'fact', ?, '', ?, 'import', ?, ?, ?, 1, 1)`
	exec(insert, 1, "ＡＰＩの上限は毎分60回", "h1", "Ｍａｒｉ", "api の上限は毎分 60 回", "mari")
	exec(`INSERT INTO memories (id, scope, scope_key, guild_id, type, content, normalized, content_hash, source, author_name,
		created_at, updated_at) VALUES (2, 'server', 'g:1', '1', 'fact', 'Café opens at nine', '', 'h2', 'import', 'Ｋｅｎ', 1, 1)`)
	if got := match("api AND mari"); got != "[1]" {
		t.Errorf("stored search text: api AND mari matches %s", got)
	}
	if got := match("cafe AND nine"); got != "[2]" {
		t.Errorf("raw text of a row without search text: %s", got)
	}
	exec(`UPDATE memories SET content = 'The VPN moved' WHERE id = 1`)
	if got := match("api"); got != "[]" {
		t.Errorf("after an edit without search text the old words still match %s", got)
	}
	if got := match("vpn AND mari"); got != "[1]" {
		t.Errorf("after an edit without search text: vpn AND mari matches %s", got)
	}
	if s := column(1); s != "" {
		t.Errorf("stale search text kept: %q", s)
	}
	exec(`UPDATE memories SET content = 'ＶＰＮは移動した', search_text = 'vpn は移動した' WHERE id = 1`)
	if got := match("vpn"); got != "[1]" {
		t.Errorf("after an edit with search text: vpn matches %s", got)
	}
	exec(`UPDATE memories SET deleted_at = 5 WHERE id = 1`)
	exec(`UPDATE memories SET deleted_at = NULL WHERE id = 1`)
	if got := match("vpn AND mari"); got != "[1]" || column(1) != "vpn は移動した" {
		t.Errorf("after forget and recover: %s, %q", got, column(1))
	}
}

// migrationsBefore is the embedded migrations whose names sort before first: a database as
// an older kioku left it, for upgrade tests.
func migrationsBefore(t *testing.T, first string) fstest.MapFS {
	t.Helper()
	before := fstest.MapFS{}
	all, err := fs.Glob(sqlite.Migrations(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range all {
		if name < first {
			data, err := fs.ReadFile(sqlite.Migrations(), name)
			if err != nil {
				t.Fatal(err)
			}
			before[name] = &fstest.MapFile{Data: data}
		}
	}
	return before
}
