package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// reindexBatch is the most memories one transaction of a reindex reads or rewrites.
const reindexBatch = 500

// reindexAll rebuilds search from the rows (`kioku reindex`, ltm.Maintenance.Reindex): it
// recomputes every memory's search text from its content and author, then rebuilds the
// word index in batches of id ranges (each batch deletes whatever the index holds for its
// range and re-inserts the range's live rows, so the index is complete outside the batch
// being written and a concurrent writer never sees it half empty), then the trigram index
// in one transaction, for the memories whose text goes beyond ASCII. It is safe to run
// while the bot serves. On error (a cancelled ctx included) it returns what was done so
// far; running it again starts over.
func (u upkeep) reindexAll(ctx context.Context, batch int) (maintenance.ReindexReport, error) {
	var rep maintenance.ReindexReport
	// What single writes left waiting goes in first, so the rebuilt indexes hold every live
	// memory.
	if err := u.indexPending(ctx); err != nil {
		return rep, err
	}
	for after, more := int64(0), true; more; {
		err := u.writeTx(ctx, func(tx *sql.Tx) error {
			var (
				read, changed int
				err           error
			)
			after, more, read, changed, err = ltm.FillSearchText(ctx, tx, &dialect, after, batch)
			rep.Memories, rep.SearchText = rep.Memories+read, rep.SearchText+changed
			return err
		})
		if err != nil {
			return rep, fmt.Errorf("couldn't recompute search text: %w", err)
		}
	}
	for after, more := int64(0), true; more; {
		err := u.writeTx(ctx, func(tx *sql.Tx) error {
			var err error
			after, more, err = rebuildWords(ctx, tx, after, batch, &rep.Words)
			return err
		})
		if err != nil {
			return rep, fmt.Errorf("couldn't rebuild the word index: %w", err)
		}
	}
	err := u.writeTx(ctx, func(tx *sql.Tx) error {
		// Not the 'rebuild' command: it would index every row of memories, forgotten ones
		// too, and the triggers never remove a forgotten row's entry again.
		// Rebuilt by the content rule alone: the entries older memories kept when plain
		// ASCII left the index (migration 0018) go.
		for _, stmt := range []string{
			`INSERT INTO ` + trigramIndex + ` (` + trigramIndex + `) VALUES ('delete-all')`,
			`UPDATE ` + trigramLegacyTable + ` SET max_id = 0`,
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		n, err := execCount(ctx, tx, `INSERT INTO `+trigramIndex+` (rowid, content)
			SELECT id, content FROM memories m WHERE deleted_at IS NULL AND `+trigramHolds)
		if err != nil {
			return err
		}
		rep.Trigrams = n
		return optimizeFullText(ctx, tx, wordIndex, trigramIndex)
	})
	if err != nil {
		return rep, fmt.Errorf("couldn't rebuild the trigram index: %w", err)
	}
	return rep, nil
}

// rebuildWords rewrites the word index for the next limit memories after the id after: it
// deletes every entry in their id range and inserts the live ones from their columns. The
// last range is open-ended, so entries of rows that no longer exist go too.
func rebuildWords(ctx context.Context, tx *sql.Tx, after int64, limit int, count *int) (int64, bool, error) {
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM (SELECT id FROM memories WHERE id > ? ORDER BY id LIMIT ?)`,
		after, limit).Scan(&last); err != nil {
		return 0, false, fmt.Errorf("couldn't read memories: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE id > ? AND id <= ?`, after, last.Int64).Scan(&n); err != nil {
		return 0, false, fmt.Errorf("couldn't read memories: %w", err)
	}
	more := n == limit
	upper := `rowid > ?`
	args := []any{after}
	if more {
		upper, args = `rowid > ? AND rowid <= ?`, []any{after, last.Int64}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+wordIndex+` WHERE `+upper, args...); err != nil {
		return 0, false, err
	}
	inserted, err := execCount(ctx, tx, `INSERT INTO `+wordIndex+` (rowid, content, author_name)
		SELECT id, CASE WHEN search_text <> '' THEN search_text ELSE content END,
			CASE WHEN search_author <> '' THEN search_author ELSE author_name END
		FROM memories m WHERE deleted_at IS NULL AND `+wordHolds+` AND `+strings.ReplaceAll(upper, "rowid", "id"), args...)
	if err != nil {
		return 0, false, err
	}
	*count += inserted
	return last.Int64, more, nil
}
