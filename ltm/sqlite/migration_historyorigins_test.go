package sqlite_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// historyOriginsSeed is history as a kioku before 0021 left it: memory 1 learned in
// #general and never moved (its creation, an edit, a "may contradict" row quoting memory
// 2 of #mods, a shadow proposal whose words came from some batch); memory 3 moved from
// #general to #mods by a pipeline update (recorded in its metadata), edited after; a row
// of a memory that is gone.
const historyOriginsSeed = `
INSERT INTO memories (id, scope, scope_key, guild_id, channel_id, type, content, normalized, content_hash, source, created_at, updated_at)
VALUES (1, 'server', 'g:1', '1', 'general', 'fact', 'Raid night is Friday', 'x1', 'h1', 'command', 1, 1),
       (2, 'server', 'g:1', '1', 'mods', 'fact', 'The ban list is in the wiki', 'x2', 'h2', 'command', 1, 1),
       (3, 'server', 'g:1', '1', 'mods', 'fact', 'Mods meet on Sunday', 'x3', 'h3', 'pipeline', 1, 1);
INSERT INTO memory_history (id, memory_id, scope_key, action, old_content, new_content, version, actor, metadata, created_at)
VALUES (1, 1, 'g:1', 'create', '', 'Raid night is Thursday', 1, 'user:1', '{}', 1),
       (2, 2, 'g:1', 'create', '', 'The ban list is in the wiki', 1, 'user:1', '{}', 1),
       (3, 1, 'g:1', 'update', 'Raid night is Thursday', 'Raid night is Friday', 2, 'user:1', '{}', 2),
       (4, 1, 'g:1', 'review_needed', 'Raid night is Friday', 'The ban list is in the wiki', 2, 'pipeline', '{"conflicts_with":2,"job":7}', 3),
       (5, 1, 'g:1', 'shadow', 'Raid night is Friday', 'Raid night is cancelled', 2, 'pipeline', '{"proposed":"UPDATE"}', 4),
       (6, 3, 'g:1', 'create', '', 'Mods meet on Saturday', 1, 'pipeline', '{}', 5),
       (7, 3, 'g:1', 'update', 'Mods meet on Saturday', 'Mods meet on Monday', 2, 'pipeline', '{"channel_id":["general","mods"]}', 6),
       (8, 3, 'g:1', 'update', 'Mods meet on Monday', 'Mods meet on Sunday', 3, 'user:2', '{}', 7),
       (9, 99, 'g:1', 'delete', 'A memory purged since', '', 2, 'user:1', '{}', 8);
`

// historyOriginsWant is each seeded row's origins after the upgrade, "-" for unknown:
// only what the recorded data makes certain is filled in.
var historyOriginsWant = map[int64][2]string{
	1: {"1/general", "1/general"}, // never moved: all its own texts were said in #general
	2: {"1/mods", "1/mods"},
	3: {"1/general", "1/general"},
	4: {"1/general", "1/mods"}, // quotes memory 2, which never moved
	5: {"1/general", "-"},      // the proposal's words came from a batch no row names
	6: {"-", "-"},              // before the move
	7: {"-", "1/mods"},         // the move: its new text is where the memory is now
	8: {"1/mods", "1/mods"},
	9: {"-", "-"}, // the memory is gone
}

// TestHistoryOriginsBackfill: 0021 adds the origin columns and fills them only where the
// recorded data makes the origin certain; everything else stays unknown (NULL).
func TestHistoryOriginsBackfill(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0021")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(historyOriginsSeed); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	checkHistoryOrigins(t, db, historyOriginsWant)
}

func checkHistoryOrigins(t *testing.T, db *sql.DB, want map[int64][2]string) {
	t.Helper()
	rows, err := db.Query(`SELECT id, coalesce(old_origin_guild || '/' || old_origin_channel, '-'),
		coalesce(new_origin_guild || '/' || new_origin_channel, '-') FROM memory_history ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var (
			id       int64
			old, new string
		)
		if err := rows.Scan(&id, &old, &new); err != nil {
			t.Fatal(err)
		}
		seen++
		if w := want[id]; w != [2]string{old, new} {
			t.Errorf("history row %d: origins %s, %s; want %s, %s", id, old, new, w[0], w[1])
		}
	}
	if err := rows.Err(); err != nil || seen != len(want) {
		t.Fatalf("%d rows (%v), want %d", seen, err, len(want))
	}
}
