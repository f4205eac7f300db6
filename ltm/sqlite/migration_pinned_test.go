package sqlite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestPinnedLookupUsesItsIndex: the pinned memories of a scope (ltm's Memories.List with
// Pinned, which every chat turn's prompt cache runs) are found through 0016's partial index,
// not by walking the scope's rows; the count and the page both. List names the index (later
// indexes on the scope's live rows tie with it for a planner without statistics), so the
// index must stay usable for its conditions: SQLite refuses the query otherwise.
func TestPinnedLookupUsesItsIndex(t *testing.T) {
	db := openDB(t)
	if _, err := sqlite.Migrate(context.Background(), db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	const where = `scope_key = ? AND deleted_at IS NULL AND pinned <> 0`
	for _, q := range []string{
		`SELECT count(*) FROM memories INDEXED BY memories_pinned_live WHERE ` + where,
		`SELECT id FROM memories INDEXED BY memories_pinned_live WHERE ` + where + ` ORDER BY id DESC LIMIT ? OFFSET ?`,
	} {
		rows, err := db.Query(`EXPLAIN QUERY PLAN `+q, "g:1", 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if got := strings.Join(plan, "; "); !strings.Contains(got, "memories_pinned_live") {
			t.Errorf("%s plans as %q, want memories_pinned_live", q, got)
		}
	}
}
