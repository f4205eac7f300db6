package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/kioku-bot/kioku/memory/maintenance"
	"github.com/kioku-bot/kioku/migrations"
)

// upkeep is SQLite's side of maintenance (ltm.Upkeep): one file with its free pages, FTS5
// indexes kept by triggers, quick_check, VACUUM and VACUUM INTO. The service's retention,
// repairs, audit and diagnostics run over it as they do over PostgreSQL's.
type upkeep struct{ *db }

// Names of the full-text indexes (migrations 0001 and 0004): the word index and the
// trigram index. Each keeps one row per indexed memory in its %_docsize shadow table,
// which is what the diagnostics count: counting the trigram table itself would read the
// memories table it takes its content from.
const (
	wordIndex    = "memories_fts"
	trigramIndex = "memories_tri"
)

// wordHolds is the condition under which the word index holds a live memory m (migration
// 0019): it is not waiting to be indexed (indexwrite.go).
const wordHolds = `m.index_pending = 0`

// trigramRuleHolds is migration 0018's condition under which the trigram index holds a
// live memory m: its content has a character beyond ASCII (more bytes than characters), or
// the memory was written before the index left plain ASCII to the word index.
const trigramRuleHolds = `(length(CAST(m.content AS BLOB)) > length(m.content) OR m.id <= (SELECT max_id FROM ` + trigramLegacyTable + `))`

// trigramHolds is the condition since 0019: the word index holds m, and 0018's rule holds.
// The triggers test the same condition.
const trigramHolds = wordHolds + ` AND ` + trigramRuleHolds

// trigramLegacyTable holds the highest id of the memories written before migration 0018.
const trigramLegacyTable = "memories_tri_legacy"

// Integrity runs SQLite's quick_check, a read of the whole file.
func (u upkeep) Integrity(ctx context.Context) (string, error) {
	var check string
	if err := u.read.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil {
		return "", fmt.Errorf("couldn't check database integrity: %w", err)
	}
	if check == "ok" {
		return "", nil
	}
	return check, nil
}

// SizeBytes is the size of the database file (the log beside it not included).
func (u upkeep) SizeBytes(context.Context) (int64, error) {
	fi, err := os.Stat(u.path)
	if err != nil {
		return 0, nil // a store without a file (or one just removed) has no size to report
	}
	return fi.Size(), nil
}

func (u upkeep) HasSchema(ctx context.Context, table, column string) (bool, error) {
	var n int
	var err error
	if column == "" {
		err = u.read.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n)
	} else {
		err = u.read.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n)
	}
	if err != nil {
		return false, fmt.Errorf("couldn't read the schema of %s: %w", table, err)
	}
	return n > 0, nil
}

func (u upkeep) DiagnoseStorage(ctx context.Context, st *maintenance.Storage) error {
	free, mode, err := freeBytes(ctx, u.read)
	if err != nil {
		return err
	}
	st.FreeBytes, st.AutoVacuum = free, mode
	if st.FileBytes, err = u.SizeBytes(ctx); err != nil {
		return err
	}
	state, err := migrations.Inspect(ctx, u.read, Migrations())
	if err != nil {
		return err
	}
	st.PendingMigrations = state.Pending
	return nil
}

// freeBytes reads the bytes in free pages and the auto_vacuum mode on q: the writer, to
// see its own changes at once, or a reader.
func freeBytes(ctx context.Context, q *sql.DB) (int64, string, error) {
	var pageSize, free int64
	var mode int
	for _, p := range []struct {
		pragma string
		dst    any
	}{{"page_size", &pageSize}, {"freelist_count", &free}, {"auto_vacuum", &mode}} {
		if err := q.QueryRowContext(ctx, `PRAGMA `+p.pragma).Scan(p.dst); err != nil {
			return 0, "", fmt.Errorf("couldn't read %s: %w", p.pragma, err)
		}
	}
	return free * pageSize, autoVacuumMode(mode), nil
}

// autoVacuumMode names SQLite's auto_vacuum setting.
func autoVacuumMode(n int) string {
	switch n {
	case 1:
		return "full"
	case 2:
		return "incremental"
	}
	return "none"
}

// DiagnoseSearch compares each FTS5 index's rows (its %_docsize shadow table: counting the
// trigram table itself would read the memories table it takes its content from) with the
// live memories it should hold.
func (u upkeep) DiagnoseSearch(ctx context.Context, x *maintenance.Index) error {
	// A database a migration or two behind (read, not migrated, by `kioku doctor`): before
	// 0019 no memory waits to be indexed, before 0018 the trigram index holds every live one.
	pendingKnown, err := u.HasSchema(ctx, "memories", "index_pending")
	if err != nil {
		return err
	}
	ruleKnown, err := u.HasSchema(ctx, trigramLegacyTable, "")
	if err != nil {
		return err
	}
	wordsHold, triHolds := wordHolds, trigramHolds
	switch {
	case !ruleKnown:
		wordsHold, triHolds = "1", "1"
	case !pendingKnown:
		wordsHold, triHolds = "1", trigramRuleHolds
	}
	for _, idx := range []struct {
		table string
		holds string // the condition under which the index holds live memory m
		dst   *maintenance.IndexSync
	}{{wordIndex, wordsHold, &x.Words}, {trigramIndex, triHolds, &x.Trigrams}} {
		idx.dst.Table = idx.table
		docs := idx.table + "_docsize"
		err := u.read.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM `+docs+`),
			(SELECT count(*) FROM memories m WHERE m.deleted_at IS NULL AND `+idx.holds+`
				AND NOT EXISTS (SELECT 1 FROM `+docs+` d WHERE d.id = m.id)),
			(SELECT count(*) FROM `+docs+` d WHERE NOT EXISTS (
				SELECT 1 FROM memories m WHERE m.id = d.id AND m.deleted_at IS NULL AND `+idx.holds+`))`).Scan(&idx.dst.Rows, &idx.dst.Missing, &idx.dst.Extra)
		if err != nil {
			return fmt.Errorf("couldn't compare %s with the memories: %w", idx.table, err)
		}
	}
	return nil
}

// Reindex rebuilds search from the rows (reindexAll).
func (u upkeep) Reindex(ctx context.Context) (maintenance.ReindexReport, error) {
	return u.reindexAll(ctx, reindexBatch)
}

// RepairSearch rebuilds the full-text indexes from the rows and returns how many live
// memories the word index holds afterwards.
func (u upkeep) RepairSearch(ctx context.Context) (int, error) {
	rep, err := u.Reindex(ctx)
	return rep.Words, err
}

// MergeSearch merges the word index's segments: until then it still holds the purged
// memories' words as deleted entries.
func (u upkeep) MergeSearch(ctx context.Context) error {
	return u.writeTx(ctx, func(tx *sql.Tx) error { return optimizeFullText(ctx, tx, wordIndex) })
}

// Compact gives the database's free pages back to the file system. With auto_vacuum
// incremental that is `PRAGMA incremental_vacuum`; with none (kioku's databases: nothing
// ever set it) incremental_vacuum does nothing, so it is a plain VACUUM, which rewrites the
// file and holds the write lock while it does: the caller runs it only when many pages are
// free (maintenance.VacuumWorthwhile). With full, SQLite frees pages at every commit and
// there is nothing to do.
func (u upkeep) Compact(ctx context.Context) (int64, error) {
	before, mode, err := freeBytes(ctx, u.write)
	if err != nil {
		return 0, err
	}
	var stmt string
	switch mode {
	case "full":
		return 0, nil
	case "incremental":
		stmt = `PRAGMA incremental_vacuum`
	default:
		stmt = `VACUUM`
	}
	if err := u.freePages(ctx, stmt); err != nil {
		return 0, fmt.Errorf("couldn't compact the database: %w", err)
	}
	after, _, err := freeBytes(ctx, u.write)
	if err != nil {
		return 0, err
	}
	return max(before-after, 0), nil
}

// EraseDeleted merges both full-text indexes, which drops the entries of deleted rows, and
// rebuilds the file without its freed pages, which versions before secure_delete left
// holding deleted text.
func (u upkeep) EraseDeleted(ctx context.Context) error {
	if err := u.writeTx(ctx, func(tx *sql.Tx) error {
		return optimizeFullText(ctx, tx, wordIndex, trigramIndex)
	}); err != nil {
		return err
	}
	if err := u.freePages(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("couldn't vacuum the database: %w", err)
	}
	return nil
}

// freePages runs stmt, VACUUM or PRAGMA incremental_vacuum (neither can run inside a
// transaction, so alone on the writer), and checkpoints the log, where the freed pages stay
// until then. The copy VACUUM builds is a temporary database, which the writer's temp_store
// (memory) would hold in memory whole: it goes to a file for the duration.
func (d *db) freePages(ctx context.Context, stmt string) error {
	conn, err := d.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA temp_store = file`); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, stmt)
	if err == nil {
		_, err = conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	if _, restore := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA temp_store = memory`); err == nil {
		err = restore
	}
	return err
}

// optimizeFullText merges each named full-text index into one segment, which drops the
// entries of deleted rows for good. The contentless word index (memories_fts) needs it:
// deleting from it only records the row id until its segments merge. The trigram index
// gets the deleted text with each delete, so its secure-delete option removes the entries
// at once.
func optimizeFullText(ctx context.Context, q *sql.Tx, tables ...string) error {
	for _, table := range tables {
		if _, err := q.ExecContext(ctx, `INSERT INTO `+table+` (`+table+`) VALUES ('optimize')`); err != nil {
			return fmt.Errorf("couldn't merge full-text index %s: %w", table, err)
		}
	}
	return nil
}
