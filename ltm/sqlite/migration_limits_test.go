package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestMemoryCountsUpgrade: 0009 counts the live memories an existing database already
// holds, per scope, and from then on its triggers keep the counts for any client's writes:
// inserts, forgets, recovers, moves between scopes and erasures. A scope left with nothing
// has no row.
func TestMemoryCountsUpgrade(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	before := migrationsBefore(t, "0009")
	if _, err := sqlite.Migrate(ctx, db, before); err != nil {
		t.Fatal(err)
	}
	insert := func(id int, scopeKey string, deleted bool) {
		t.Helper()
		var deletedAt any
		if deleted {
			deletedAt = 1
		}
		if _, err := db.Exec(`INSERT INTO memories (id, scope, scope_key, guild_id, type, content, normalized, content_hash,
			source, created_at, updated_at, deleted_at) VALUES (?, 'server', ?, '1', 'fact', ?, ?, ?, 'command', 1, 1, ?)`,
			id, scopeKey, fmt.Sprint("fact ", id), fmt.Sprint("fact ", id), fmt.Sprint("hash", id), deletedAt); err != nil {
			t.Fatal(err)
		}
	}
	insert(1, "g:1", false)
	insert(2, "g:1", false)
	insert(3, "g:1", true)
	insert(4, "u:7", false)
	insert(5, "g:2", true)

	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	counts := func() string {
		t.Helper()
		rows, err := db.Query(`SELECT scope_key, live FROM memory_counts ORDER BY scope_key`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := ""
		for rows.Next() {
			var key string
			var n int
			if err := rows.Scan(&key, &n); err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf("%s=%d ", key, n)
		}
		return out
	}
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct{ name, sql, want string }{
		{"backfill", "", "g:1=2 u:7=1 "},
		{"insert", "", "g:1=3 u:7=1 "},
		{"forget", `UPDATE memories SET deleted_at = 2 WHERE id = 1`, "g:1=2 u:7=1 "},
		{"recover", `UPDATE memories SET deleted_at = NULL WHERE id = 3`, "g:1=3 u:7=1 "},
		{"edit", `UPDATE memories SET content = 'changed' WHERE id = 2`, "g:1=3 u:7=1 "},
		{"move", `UPDATE memories SET scope_key = 'g:2' WHERE id = 2`, "g:1=2 g:2=1 u:7=1 "},
		{"recover into another scope", `UPDATE memories SET deleted_at = NULL, scope_key = 'g:3' WHERE id = 5`, "g:1=2 g:2=1 g:3=1 u:7=1 "},
		{"erase a tombstone", `DELETE FROM memories WHERE id = 1`, "g:1=2 g:2=1 g:3=1 u:7=1 "},
		{"erase the last of a scope", `DELETE FROM memories WHERE id = 4`, "g:1=2 g:2=1 g:3=1 "},
	} {
		if step.name == "insert" {
			insert(6, "g:1", false)
		} else if step.sql != "" {
			exec(step.sql)
		}
		if got := counts(); got != step.want {
			t.Errorf("after %s: counts %q, want %q", step.name, got, step.want)
		}
	}
}
