package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestTrigramIndexUpgrade: after 0018 the trigram index holds the live memories with text
// beyond ASCII and, untouched, those written before it. Every write afterwards (insert,
// edit across the ASCII line both ways, forget, recover, hard delete) leaves exactly those
// entries: the index equals one built afresh from the rule, term by term.
func TestTrigramIndexUpgrade(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	db.SetMaxOpenConns(1) // the expected index is a temp table of the one connection
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0018")); err != nil {
		t.Fatal(err)
	}
	insert := func(id int, content string, deleted any) {
		t.Helper()
		if _, err := db.Exec(`INSERT INTO memories (id, scope, scope_key, guild_id, type, content, normalized, content_hash,
			source, created_at, updated_at, deleted_at) VALUES (?, 'server', 'g:1', '1', 'fact', ?, ?, ?, 'command', 1, 1, ?)`,
			id, content, content, fmt.Sprint("hash", id), deleted); err != nil {
			t.Fatal(err)
		}
	}
	insert(1, "Raid night is Friday", nil)
	insert(2, "Backups run nightly", nil)
	insert(3, "明日のdeployは15時から", nil)
	insert(4, "An old forgotten rule", 5)
	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	var legacy int
	if err := db.QueryRow(`SELECT max_id FROM memories_tri_legacy`).Scan(&legacy); err != nil || legacy != 4 {
		t.Fatalf("legacy max id %d (%v), want 4", legacy, err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, step := range []struct {
		name string
		do   func()
		want []int64
	}{
		{"upgraded: older live rows keep their entries", func() {}, []int64{1, 2, 3}},
		{"new ASCII memory is left to the word index", func() { insert(5, "Plain words only", nil) }, []int64{1, 2, 3}},
		{"new memory beyond ASCII", func() { insert(6, "café on Sunday", nil) }, []int64{1, 2, 3, 6}},
		{"older ASCII memory edited keeps an entry", func() {
			exec(`UPDATE memories SET content = 'Raid night moved to Saturday' WHERE id = 1`)
		}, []int64{1, 2, 3, 6}},
		{"older memory forgotten", func() { exec(`UPDATE memories SET deleted_at = 9 WHERE id = 2`) }, []int64{1, 3, 6}},
		{"ASCII edited to CJK", func() { exec(`UPDATE memories SET content = '週末の予定' WHERE id = 5`) }, []int64{1, 3, 5, 6}},
		{"edited back to ASCII", func() { exec(`UPDATE memories SET content = 'cafe on Sunday' WHERE id = 6`) }, []int64{1, 3, 5}},
		{"older memory recovered", func() { exec(`UPDATE memories SET deleted_at = NULL WHERE id = 2`) }, []int64{1, 2, 3, 5}},
		{"new ASCII memory recovered stays out", func() {
			exec(`UPDATE memories SET deleted_at = 9 WHERE id = 6`)
			exec(`UPDATE memories SET deleted_at = NULL WHERE id = 6`)
		}, []int64{1, 2, 3, 5}},
		{"rows deleted", func() { exec(`DELETE FROM memories WHERE id IN (3, 5, 6)`) }, []int64{1, 2}},
	} {
		step.do()
		if got := indexDocs(t, db, "memories_tri"); !slices.Equal(got, step.want) {
			t.Errorf("%s: trigram index holds %v, want %v", step.name, got, step.want)
		}
		if n := trigramDifference(t, db); n != 0 {
			t.Errorf("%s: trigram index differs from one built afresh in %d entries", step.name, n)
		}
	}
	if _, err := db.Exec(`INSERT INTO memories_tri (memories_tri) VALUES ('integrity-check')`); err != nil {
		t.Errorf("trigram index integrity: %v", err)
	}
}
