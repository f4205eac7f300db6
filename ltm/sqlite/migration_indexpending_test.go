package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestIndexPendingRule: after 0019 a memory written with index_pending = 1 is in neither
// full-text index, whatever happens to it while it waits (edits across the ASCII line,
// forget, recover, hard delete), and enters both as the rule says when index_pending is
// cleared; an indexed memory behaves as before. After every step both indexes equal ones
// built afresh from the rule, term instance by term instance, totals included.
func TestIndexPendingRule(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	db.SetMaxOpenConns(1) // the expected indexes are temp tables of the one connection
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0019")); err != nil {
		t.Fatal(err)
	}
	insert := func(id int, content string, pending bool) {
		t.Helper()
		cols, vals := "", ""
		if pending {
			cols, vals = ", index_pending", ", 1"
		}
		if _, err := db.Exec(`INSERT INTO memories (id, scope, scope_key, guild_id, type, content, normalized, content_hash,
			source, created_at, updated_at`+cols+`) VALUES (?, 'server', 'g:1', '1', 'fact', ?, ?, ?, 'command', 1, 1`+vals+`)`,
			id, content, content, fmt.Sprint("hash", id)); err != nil {
			t.Fatal(err)
		}
	}
	insert(1, "Raid night is Friday", false) // before the upgrade
	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	flush := func() { exec(`UPDATE memories SET index_pending = 0 WHERE index_pending <> 0`) }
	for _, step := range []struct {
		name         string
		do           func()
		words, grams []int64
	}{
		{"upgraded", func() {}, []int64{1}, nil}, // plain ASCII: the word index only
		{"written waiting", func() {
			insert(2, "Backups run nightly", true)
			insert(3, "明日のdeployは15時から", true)
			insert(4, "A plain indexed rule", false)
		}, []int64{1, 4}, nil},
		{"waiting ASCII edited to CJK", func() { exec(`UPDATE memories SET content = '週末の予定' WHERE id = 2`) }, []int64{1, 4}, nil},
		{"waiting memory forgotten", func() { exec(`UPDATE memories SET deleted_at = 9 WHERE id = 3`) }, []int64{1, 4}, nil},
		{"flushed: the live waiting one goes in", flush, []int64{1, 2, 4}, []int64{2}},
		{"forgotten one recovered", func() { exec(`UPDATE memories SET deleted_at = NULL WHERE id = 3`) }, []int64{1, 2, 3, 4}, []int64{2, 3}},
		{"indexed CJK edited to ASCII", func() { exec(`UPDATE memories SET content = 'weekend plans' WHERE id = 2`) }, []int64{1, 2, 3, 4}, []int64{3}},
		{"waiting rows hard deleted", func() {
			insert(5, "Temporary café note", true)
			insert(6, "Another waiting note", true)
			exec(`DELETE FROM memories WHERE id IN (5, 6)`)
		}, []int64{1, 2, 3, 4}, []int64{3}},
		{"indexed row made to wait again", func() { exec(`UPDATE memories SET index_pending = 1 WHERE id = 3`) }, []int64{1, 2, 4}, nil},
		{"flushed again", flush, []int64{1, 2, 3, 4}, []int64{3}},
		{"indexed rows deleted", func() { exec(`DELETE FROM memories WHERE id IN (1, 3)`) }, []int64{2, 4}, nil},
	} {
		step.do()
		if got := indexDocs(t, db, "memories_fts"); !slices.Equal(got, step.words) {
			t.Errorf("%s: word index holds %v, want %v", step.name, got, step.words)
		}
		if got := indexDocs(t, db, "memories_tri"); !slices.Equal(got, step.grams) {
			t.Errorf("%s: trigram index holds %v, want %v", step.name, got, step.grams)
		}
		if n := wordDifference(t, db); n != 0 {
			t.Errorf("%s: word index differs from one built afresh in %d entries", step.name, n)
		}
		if n := trigramDifference(t, db); n != 0 {
			t.Errorf("%s: trigram index differs from one built afresh in %d entries", step.name, n)
		}
	}
	for _, table := range []string{"memories_fts", "memories_tri"} {
		if _, err := db.Exec(`INSERT INTO ` + table + ` (` + table + `) VALUES ('integrity-check')`); err != nil {
			t.Errorf("%s integrity: %v", table, err)
		}
	}
}

// indexDocs lists the ids a full-text index holds.
func indexDocs(t *testing.T, db *sql.DB, table string) []int64 {
	t.Helper()
	rows, err := db.Query(`SELECT id FROM ` + table + `_docsize ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// wordDifference counts the term instances the word index and one built afresh from the
// live memories that are not waiting do not share (indexDifference).
func wordDifference(t *testing.T, db *sql.DB) int {
	t.Helper()
	return indexDifference(t, db, "memories_fts",
		`CREATE VIRTUAL TABLE temp.want USING fts5 (content, author_name, tokenize = 'porter unicode61 remove_diacritics 2')`,
		`INSERT INTO temp.want (rowid, content, author_name) SELECT id,
			CASE WHEN search_text <> '' THEN search_text ELSE content END,
			CASE WHEN search_author <> '' THEN search_author ELSE author_name END
			FROM memories WHERE deleted_at IS NULL AND index_pending = 0`)
}

// trigramDifference counts the term instances the trigram index and one built afresh from
// the live memories by 0018's rule (and 0019's: not waiting) do not share.
func trigramDifference(t *testing.T, db *sql.DB) int {
	t.Helper()
	return indexDifference(t, db, "memories_tri",
		`CREATE VIRTUAL TABLE temp.want USING fts5 (content, tokenize = 'trigram')`,
		`INSERT INTO temp.want (rowid, content) SELECT id, content FROM memories WHERE deleted_at IS NULL AND index_pending = 0
			AND (length(CAST(content AS BLOB)) > length(content) OR id <= (SELECT max_id FROM memories_tri_legacy))`)
}

// indexDifference counts the term instances (term, memory, column, position) that the
// full-text index table and temp.want (made by create and filled by fill) do not share: an
// entry the triggers failed to remove, or one added twice, shows here. A removal of an
// entry that was never there leaves no term behind but miscounts the index's totals (rows
// and tokens, which BM25 reads: record 1 of the data table), which adds one. An index built
// afresh from nothing has an empty record; one emptied keeps its, all zeros.
func indexDifference(t *testing.T, db *sql.DB, table, create, fill string) int {
	t.Helper()
	for _, q := range []string{
		`DROP TABLE IF EXISTS temp.want`,
		`DROP TABLE IF EXISTS temp.got_terms`,
		`DROP TABLE IF EXISTS temp.want_terms`,
		create,
		fill,
		`CREATE VIRTUAL TABLE temp.got_terms USING fts5vocab(main, ` + table + `, instance)`,
		`CREATE VIRTUAL TABLE temp.want_terms USING fts5vocab(temp, want, instance)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT
		(SELECT count(*) FROM (SELECT term, doc, col, offset FROM temp.got_terms EXCEPT SELECT term, doc, col, offset FROM temp.want_terms)) +
		(SELECT count(*) FROM (SELECT term, doc, col, offset FROM temp.want_terms EXCEPT SELECT term, doc, col, offset FROM temp.got_terms))`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var same bool
	if err := db.QueryRow(`SELECT got IS want OR (coalesce(length(want), 0) = 0 AND replace(hex(got), '0', '') = '')
		FROM (SELECT (SELECT block FROM ` + table + `_data WHERE id = 1) AS got, (SELECT block FROM temp.want_data WHERE id = 1) AS want)`).Scan(&same); err != nil {
		t.Fatal(err)
	}
	if !same {
		n++
	}
	return n
}
