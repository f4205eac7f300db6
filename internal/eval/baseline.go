package eval

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// baseline is the reference ranking: plain SQLite FTS5 BM25 over the same messages, each
// indexed as "Author: content" in its own database with the porter tokenizer kioku's word
// index uses, and queried with the question's words quoted and OR-ed. It owes nothing to
// kioku: no search-text folding, no phrases, author weight, dates, CJK n-grams or dedup.
type baseline struct {
	db  *sql.DB
	ids []string // the dataset id of each row, at rowid-1
}

func openBaseline(ctx context.Context, path string) (*baseline, error) {
	db, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		return nil, fmt.Errorf("couldn't open the baseline database: %w", err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE messages USING fts5 (
		text, scope UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')`); err != nil {
		db.Close()
		return nil, fmt.Errorf("couldn't create the baseline index: %w", err)
	}
	return &baseline{db: db}, nil
}

func (b *baseline) Close() error { return b.db.Close() }

// add indexes a scope's messages.
func (b *baseline) add(ctx context.Context, scope string, entries []MemoryEntry) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("couldn't index the baseline: %w", err)
	}
	defer tx.Rollback()
	for _, e := range entries {
		text := e.Content
		if e.Author != "" {
			text = e.Author + ": " + e.Content
		}
		b.ids = append(b.ids, e.ID)
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (rowid, text, scope) VALUES (?, ?, ?)`,
			len(b.ids), text, scope); err != nil {
			return fmt.Errorf("couldn't index the baseline: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("couldn't index the baseline: %w", err)
	}
	return nil
}

// search ranks a scope's messages for text, best first, each as its one dataset id.
func (b *baseline) search(ctx context.Context, scope, text string, limit int) ([][]string, error) {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) == 0 {
		return nil, nil
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	rows, err := b.db.QueryContext(ctx, `SELECT rowid FROM messages WHERE messages MATCH ? AND scope = ?
		ORDER BY bm25(messages) LIMIT ?`, strings.Join(words, " OR "), scope, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ranked [][]string
	for rows.Next() {
		var row int
		if err := rows.Scan(&row); err != nil {
			return nil, err
		}
		ranked = append(ranked, []string{b.ids[row-1]})
	}
	return ranked, rows.Err()
}
