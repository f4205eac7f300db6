package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	_ "modernc.org/sqlite" // the baseline opens the benchmark database directly

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// openRaw opens the benchmark database read-only for the baselines: plain SQL on a
// connection of its own, beside the store.
func openRaw(path string) (*sql.DB, error) {
	raw, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
	if err != nil {
		return nil, fmt.Errorf("couldn't open baseline connection: %w", err)
	}
	raw.SetMaxOpenConns(1)
	return raw, nil
}

// ftsOnly is the keyword baseline: the query's words OR-ed in a plain FTS5 BM25 query,
// limited to the rows of scopeKey unless it is empty.
func ftsOnly(ctx context.Context, db *sql.DB, text, scopeKey string) error {
	words := strings.Fields(text)
	for i, w := range words {
		words[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	if len(words) == 0 {
		return nil
	}
	var (
		rows *sql.Rows
		err  error
	)
	if scopeKey == "" {
		rows, err = db.QueryContext(ctx, `SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?
		ORDER BY bm25(memories_fts) LIMIT 10`, strings.Join(words, " OR "))
	} else {
		rows, err = db.QueryContext(ctx, `SELECT f.rowid FROM memories_fts f JOIN memories m ON m.id = f.rowid
		WHERE memories_fts MATCH ? AND m.scope_key = ? AND m.deleted_at IS NULL
		ORDER BY bm25(memories_fts) LIMIT 10`, strings.Join(words, " OR "), scopeKey)
	}
	if err != nil {
		return fmt.Errorf("couldn't run FTS baseline: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
	}
	return rows.Err()
}
