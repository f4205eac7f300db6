package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestMemoryIDsUpgrade: 0022 rebuilds memories with AUTOINCREMENT and changes nothing else.
// Every index and trigger of the table reads exactly as before, the table's columns and
// constraints too but for the keyword; the rows are the same; both full-text indexes equal
// ones built afresh and keep following writes; and a new memory's id is above every id the
// database named before the upgrade, a purged memory's included, and above any id deleted
// after it.
func TestMemoryIDsUpgrade(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	db.SetMaxOpenConns(1) // indexDifference's temp tables live on the one connection
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0022")); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	insert := func(id any, content string) {
		t.Helper()
		exec(`INSERT INTO memories (id, scope, scope_key, guild_id, type, content, normalized, content_hash,
			source, channel_id, pinned, created_at, updated_at) VALUES (?, 'server', 'g:1', '1', 'fact', ?, ?, ?, 'command', 'c1', 1, 1, 1)`,
			id, content, strings.ToLower(content), "hash "+content)
	}
	insert(1, "Raid night is Friday")
	insert(2, "明日のdeployは15時から")
	insert(3, "Backups run nightly")
	insert(4, "A forgotten rule")
	exec(`UPDATE memories SET deleted_at = 5 WHERE id = 4`)
	insert(8, "The newest memory, purged")
	exec(`INSERT INTO memory_evidence (memory_id, message_id, user_id) VALUES (8, 'm1', 'u1')`)
	exec(`DELETE FROM memories WHERE id = 8`)
	// A memory purged long ago that only its history still names.
	exec(`INSERT INTO memory_history (memory_id, scope_key, action, actor, created_at) VALUES (12, 'g:1', 'create', 'test', 1)`)

	schemaBefore, tableBefore := memoriesSchema(t, db)
	rowsBefore := tableRows(t, db, "memories")
	countsBefore := tableRows(t, db, "memory_counts")
	// Up to 0022 only: later migrations may add columns, which is not 0022's doing.
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0023")); err != nil {
		t.Fatal(err)
	}
	schemaAfter, tableAfter := memoriesSchema(t, db)
	if !maps.Equal(schemaBefore, schemaAfter) {
		for name := range maps.Keys(schemaBefore) {
			if schemaBefore[name] != schemaAfter[name] {
				t.Errorf("%s before:\n%s\nafter:\n%s", name, schemaBefore[name], schemaAfter[name])
			}
		}
		t.Errorf("indexes and triggers before %v, after %v", slices.Sorted(maps.Keys(schemaBefore)), slices.Sorted(maps.Keys(schemaAfter)))
	}
	if !strings.Contains(tableAfter, "AUTOINCREMENT") {
		t.Errorf("memories after 0022 has no AUTOINCREMENT: %s", tableAfter)
	}
	if squeeze(strings.Replace(tableAfter, "AUTOINCREMENT", "", 1)) != squeeze(tableBefore) {
		t.Errorf("memories changed beyond AUTOINCREMENT:\n%s\nwas\n%s", tableAfter, tableBefore)
	}
	if got := tableRows(t, db, "memories"); !slices.Equal(got, rowsBefore) {
		t.Errorf("memories rows after the upgrade:\n%v\nbefore:\n%v", got, rowsBefore)
	}
	if got := tableRows(t, db, "memory_counts"); !slices.Equal(got, countsBefore) {
		t.Errorf("memory counts after the upgrade %v, before %v", got, countsBefore)
	}
	checkIndexes := func(step string) {
		t.Helper()
		if n := wordDifference(t, db); n != 0 {
			t.Errorf("%s: word index differs from one built afresh in %d entries", step, n)
		}
		if n := trigramDifference(t, db); n != 0 {
			t.Errorf("%s: trigram index differs from one built afresh in %d entries", step, n)
		}
	}
	checkIndexes("upgraded")
	if got := indexDocs(t, db, "memories_fts"); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("word index holds %v, want the live 1, 2, 3", got)
	}

	newID := func(content string) int64 {
		t.Helper()
		insert(nil, content)
		var id int64
		if err := db.QueryRow(`SELECT id FROM memories WHERE content = ?`, content).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	if id := newID("First write after the upgrade"); id != 13 {
		t.Errorf("first id after the upgrade = %d, want 13 (above the purged #12 its history names)", id)
	}
	exec(`DELETE FROM memories WHERE id = 13`)
	if id := newID("Second write after the upgrade"); id != 14 {
		t.Errorf("id after the newest memory was deleted = %d, want 14 (never 13 again)", id)
	}
	exec(`UPDATE memories SET content = '週末の予定' WHERE id = 3`)
	exec(`UPDATE memories SET deleted_at = 9 WHERE id = 1`)
	checkIndexes("written after the upgrade")
	var changes, pinned int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM memory_changes WHERE memory_id IN (13, 14, 3, 1)),
		(SELECT version FROM pinned_changes WHERE scope_key = 'g:1')`).Scan(&changes, &pinned); err != nil {
		t.Fatal(err)
	}
	if changes < 5 || pinned < 10 {
		t.Errorf("the triggers stopped: %d change log rows, pinned version %d", changes, pinned)
	}
	var live int
	if err := db.QueryRow(`SELECT live FROM memory_counts WHERE scope_key = 'g:1'`).Scan(&live); err != nil || live != 3 {
		t.Errorf("live count = %d (%v), want 3 (#2, #3, #14)", live, err)
	}
	for _, table := range []string{"memories_fts", "memories_tri"} {
		exec(`INSERT INTO ` + table + ` (` + table + `) VALUES ('integrity-check')`)
	}
	var fk int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&fk); err != nil || fk != 0 {
		t.Errorf("foreign key check: %d problems (%v)", fk, err)
	}
}

// memoriesSchema returns the SQL of every index and trigger on memories, by name, and the
// table's own.
func memoriesSchema(t *testing.T, db *sql.DB) (map[string]string, string) {
	t.Helper()
	rows, err := db.Query(`SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'memories'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	var table string
	for rows.Next() {
		var typ, name string
		var text sql.NullString
		if err := rows.Scan(&typ, &name, &text); err != nil {
			t.Fatal(err)
		}
		if typ == "table" {
			table = text.String
			continue
		}
		out[typ+" "+name] = text.String
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out, table
}

// tableRows renders every row of table, every column, ordered by its first column.
func tableRows(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT * FROM ` + table + ` ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// squeeze drops every space, so two texts of one statement compare equal however their
// lines were laid out.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
