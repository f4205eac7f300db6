package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestHashIndexesUpgrade: 0017 replaces the two content-hash indexes with memories_hash_live
// and memories_hash_gone on a database that holds memories, keeping every row, and each
// memory is then found by its hash through the index of its state.
func TestHashIndexesUpgrade(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0017")); err != nil {
		t.Fatal(err)
	}
	for id, deleted := range map[int]any{1: nil, 2: nil, 3: 5} {
		if _, err := db.Exec(`INSERT INTO memories (id, scope, scope_key, guild_id, type, content, normalized, content_hash,
			source, created_at, updated_at, deleted_at) VALUES (?, 'server', 'g:1', '1', 'fact', ?, ?, ?, 'command', 1, 1, ?)`,
			id, fmt.Sprint("fact ", id), fmt.Sprint("fact ", id), fmt.Sprint("hash", id), deleted); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	var indexes string
	if err := db.QueryRow(`SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master
		WHERE type = 'index' AND name IN ('memories_hash', 'memories_live_hash', 'memories_hash_live', 'memories_hash_gone')
		ORDER BY name)`).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if indexes != "memories_hash_gone memories_hash_live" {
		t.Fatalf("content-hash indexes after the upgrade: %q", indexes)
	}
	for _, c := range []struct {
		hash, where, index string
		want               int
	}{
		{"hash1", "deleted_at IS NULL", "memories_hash_live", 1},
		{"hash3", "deleted_at IS NULL", "memories_hash_live", 0},
		{"hash3", "deleted_at IS NOT NULL", "memories_hash_gone", 3},
		{"hash2", "deleted_at IS NOT NULL", "memories_hash_gone", 0},
	} {
		var id int
		err := db.QueryRow(`SELECT coalesce(max(id), 0) FROM memories INDEXED BY `+c.index+
			` WHERE content_hash = ? AND `+c.where, c.hash).Scan(&id)
		if err != nil || id != c.want {
			t.Errorf("%s through %s: memory %d (%v), want %d", c.hash, c.index, id, err, c.want)
		}
	}
}
