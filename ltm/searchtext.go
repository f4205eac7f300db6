package ltm

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory/maintenance"
)

// A memory's search text (memory.SearchText) is computed here on every write and stored in
// the plain columns search_text and search_author, in the form the engine's full-text
// search reads (Dialect.SearchText): SQLite's triggers copy them into its word index, and
// PostgreSQL generates its tsvector from them. Nothing in the schema calls back into Go, so
// any client can read and write the database; what it writes without search text is
// indexed as raw text until Reindex computes it.

// searchTextColumn is the value of a search-text column for s in dialect d (see
// Dialect.SearchText).
func (d *Dialect) searchTextColumn(s string) string { return d.SearchText(s) }

// repairSearchText fills the search-text columns of rows written before migration 0007.
const repairSearchText = "fill-search-text"

// fillSearchText returns a phase that fills the search-text columns (FillSearchText),
// counting the rows it changed: the repair of rows written before the columns were
// (SQLite's migration 0007).
func fillSearchText(changed *int) repairPhase {
	return func(ctx context.Context, tx *txn, after int64, limit int) (int64, bool, error) {
		last, more, _, n, err := FillSearchText(ctx, tx, tx.eng.Dialect(), after, limit)
		*changed += n
		return last, more, err
	}
}

// SearchTextTx is the transaction a search-text fill runs in, with ? placeholders.
type SearchTextTx interface {
	Querier
	Execer
}

// FillSearchText sets the search-text columns of the next limit memories after the id
// after (live or forgotten, since a recovered memory is indexed from them) to what their
// content and author give in dialect d, and returns the last id it read, whether more may
// follow, and how many rows it read and changed. On SQLite an update fires the index
// trigger, so a changed row's word-index entry is rewritten in the same transaction.
func FillSearchText(ctx context.Context, tx SearchTextTx, d *Dialect, after int64, limit int) (last int64, more bool, read, changed int, err error) {
	type row struct {
		id                                        int64
		content, author, searchText, searchAuthor string
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, content, author_name, search_text, search_author FROM memories
		WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return 0, false, 0, 0, fmt.Errorf("couldn't read memories: %w", err)
	}
	var batch []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.content, &r.author, &r.searchText, &r.searchAuthor); err != nil {
			rows.Close()
			return 0, false, 0, 0, fmt.Errorf("couldn't read memories: %w", err)
		}
		batch = append(batch, r)
	}
	if err := rows.Close(); err != nil {
		return 0, false, 0, 0, fmt.Errorf("couldn't read memories: %w", err)
	}
	for _, r := range batch {
		text, author := d.SearchText(r.content), d.SearchText(r.author)
		if text == r.searchText && author == r.searchAuthor {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET search_text = ?, search_author = ? WHERE id = ?`,
			text, author, r.id); err != nil {
			return 0, false, len(batch), changed, fmt.Errorf("couldn't store the search text of memory %d: %w", r.id, err)
		}
		changed++
	}
	return lastID(batch, func(r row) int64 { return r.id }), len(batch) == limit, len(batch), changed, nil
}

// Reindex rebuilds the full-text search from the rows (`kioku reindex`), the engine's way
// (Upkeep.Reindex): on SQLite it recomputes every memory's search text and rebuilds both
// FTS5 indexes, on PostgreSQL it rewrites the search columns its indexes are generated
// from. It is safe to run while the bot serves. On error (a cancelled ctx included) it
// returns what was done so far; running it again starts over.
func (s *Maintenance) Reindex(ctx context.Context) (maintenance.ReindexReport, error) {
	return s.db.upkeep.Reindex(ctx)
}
