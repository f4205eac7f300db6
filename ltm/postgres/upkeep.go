package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// PostgreSQL's side of maintenance (ltm.Upkeep): the service's retention, repairs, audit
// and diagnostics run as they do on SQLite, and these are what PostgreSQL does its own
// way. It checks its pages itself as it reads them and reuses the space of deleted rows
// through autovacuum, so there is no file to check whole nor free pages to give back; its
// word index is a GIN index generated from the search columns the store writes, so what
// can go out of step is those columns; and it is backed up with its own tools.

var _ ltm.Upkeep = engine{}

// Names the diagnostics give PostgreSQL's search indexes (0001_schema.sql): the word index
// is a GIN index on a tsvector generated from search_text and search_author, the trigram
// index a GIN index on normalized. PostgreSQL keeps both in step with the rows, and both
// are partial on live rows, so neither can hold a forgotten memory (Extra is always 0). What
// can be out of step is the search columns the store writes and the word index is built
// from: a row written by hand or copied without them is found by nothing.
const (
	wordIndex    = "memories_words"
	trigramIndex = "memories_trigrams"
)

// postgresAutovacuum is what Storage.AutoVacuum says on PostgreSQL: space of deleted rows
// is reused by autovacuum, and no file has free pages to give back (FreeBytes stays 0), so
// the diagnostics never ask for a vacuum.
const postgresAutovacuum = "autovacuum"

// searchRepairBatch is how many memories one transaction of a search column rewrite reads.
const searchRepairBatch = 1000

// kioku's tables with their indexes, not the whole database, which may hold other
// applications' data.
const tablesBytesSQL = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
	JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`

// Integrity checks what PostgreSQL allows cheaply: every index of kioku's tables is valid
// and ready (an index left invalid by an interrupted build answers no query and enforces
// nothing). A full scan such as SQLite's quick_check would cost a read of every table for
// little more.
func (e engine) Integrity(ctx context.Context) (string, error) {
	var invalid string
	err := e.d.read.QueryRowContext(ctx, `SELECT coalesce(string_agg(c.relname, ', ' ORDER BY c.relname), '')
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND NOT (i.indisvalid AND i.indisready)`).Scan(&invalid)
	if err != nil {
		return "", fmt.Errorf("couldn't check the indexes: %w", err)
	}
	if invalid == "" {
		return "", nil
	}
	return "invalid indexes (rebuild each with REINDEX INDEX CONCURRENTLY): " + invalid, nil
}

// SizeBytes is the size of kioku's tables with their indexes (tablesBytesSQL).
func (e engine) SizeBytes(ctx context.Context) (int64, error) {
	var n int64
	if err := e.d.read.QueryRowContext(ctx, tablesBytesSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("couldn't read the size of the tables: %w", err)
	}
	return n, nil
}

// HasSchema looks in the store's schema (the search path's first).
func (e engine) HasSchema(ctx context.Context, table, column string) (bool, error) {
	var ok bool
	err := e.d.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ? AND (? = '' OR column_name = ?))`,
		table, column, column).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("couldn't read the schema of %s: %w", table, err)
	}
	return ok, nil
}

func (e engine) DiagnoseStorage(ctx context.Context, st *maintenance.Storage) error {
	var err error
	if st.FileBytes, err = e.SizeBytes(ctx); err != nil {
		return err
	}
	st.AutoVacuum = postgresAutovacuum
	st.PendingMigrations, err = e.pendingMigrations(ctx)
	return err
}

// pendingMigrations lists the migrations of this binary the database has not applied. Open
// applies them all, so this is empty unless the schema was changed by hand since.
func (e engine) pendingMigrations(ctx context.Context) ([]string, error) {
	files, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("couldn't list migrations: %w", err)
	}
	applied := map[string]bool{}
	rows, err := e.d.read.QueryContext(ctx, `SELECT name FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
		}
		applied[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
	}
	var pending []string
	for _, f := range files {
		if name := path.Base(f); !applied[name] {
			pending = append(pending, name)
		}
	}
	return pending, nil
}

// searchColumnsStale is the SQL condition of a memory whose search columns do not hold what
// the store writes (memory.SearchText of the content and of the author's name), as far as
// SQL can tell without Go's Unicode folding: an empty column beside a non-empty source, or
// ASCII text (which SearchText keeps as it is) that differs. RepairSearch recomputes every
// row in Go.
const searchColumnsStale = `(search_text = ''
	OR (octet_length(content) = char_length(content) AND search_text <> content)
	OR (author_name <> '' AND search_author = '')
	OR (octet_length(author_name) = char_length(author_name) AND search_author <> author_name))`

// DiagnoseSearch counts the live memories whose search columns are stale as missing from
// the word index.
func (e engine) DiagnoseSearch(ctx context.Context, x *maintenance.Index) error {
	var live, stale int
	err := e.d.read.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE `+searchColumnsStale+`)
		FROM memories WHERE deleted_at IS NULL`).Scan(&live, &stale)
	if err != nil {
		return fmt.Errorf("couldn't compare the search columns with the memories: %w", err)
	}
	x.Words = maintenance.IndexSync{Table: wordIndex, Rows: live - stale, Missing: stale}
	x.Trigrams = maintenance.IndexSync{Table: trigramIndex, Rows: live}
	return nil
}

// Reindex is `kioku reindex` on PostgreSQL: the search columns rewritten (RepairSearch),
// reported as SQLite's reindex is. Memories counts the rows read (forgotten ones included,
// so a recovered memory is found), SearchText those rewritten, Words and Trigrams the live
// memories each index finds.
func (e engine) Reindex(ctx context.Context) (maintenance.ReindexReport, error) {
	var rep maintenance.ReindexReport
	var err error
	rep.Memories, rep.SearchText, err = e.rewriteSearchColumns(ctx)
	if err != nil {
		return rep, err
	}
	var x maintenance.Index
	if err := e.DiagnoseSearch(ctx, &x); err != nil {
		return rep, err
	}
	rep.Words, rep.Trigrams = x.Words.Rows, x.Trigrams.Rows
	return rep, nil
}

// RepairSearch rewrites the search columns (search_text and search_author, from which
// PostgreSQL generates the word index) of every memory whose columns differ from what the
// store writes, and returns how many memories it rewrote. PostgreSQL keeps the indexes
// themselves in step with the columns; this mends rows written or copied without them.
func (e engine) RepairSearch(ctx context.Context) (int, error) {
	_, rewritten, err := e.rewriteSearchColumns(ctx)
	return rewritten, err
}

// rewriteSearchColumns recomputes the search columns of every memory in batches by id and
// rewrites those that differ; it returns the rows read and the rows rewritten. A memory
// changed while it runs is left to the change, which writes its own columns.
func (e engine) rewriteSearchColumns(ctx context.Context) (read, rewritten int, err error) {
	type row struct {
		id                 int64
		content, author    string
		text, authorText   string
		oldText, oldAuthor string
	}
	var after int64
	for {
		rows, err := e.d.read.QueryContext(ctx, `SELECT id, content, author_name, search_text, search_author FROM memories
			WHERE id > ? ORDER BY id LIMIT ?`, after, searchRepairBatch)
		if err != nil {
			return read, rewritten, fmt.Errorf("couldn't read the search columns: %w", err)
		}
		var (
			n     int
			stale []row
		)
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.content, &r.author, &r.oldText, &r.oldAuthor); err != nil {
				rows.Close()
				return read, rewritten, fmt.Errorf("couldn't read the search columns: %w", err)
			}
			n++
			after = r.id
			r.text, r.authorText = memory.SearchText(r.content), memory.SearchText(r.author)
			if r.text != r.oldText || r.authorText != r.oldAuthor {
				stale = append(stale, r)
			}
		}
		if err := rows.Close(); err != nil {
			return read, rewritten, fmt.Errorf("couldn't read the search columns: %w", err)
		}
		if err := rows.Err(); err != nil {
			return read, rewritten, fmt.Errorf("couldn't read the search columns: %w", err)
		}
		read += n
		if len(stale) > 0 {
			ids := make([]int64, len(stale))
			contents, authors, texts, authorTexts := make([]string, len(stale)), make([]string, len(stale)),
				make([]string, len(stale)), make([]string, len(stale))
			for i, r := range stale {
				ids[i], contents[i], authors[i], texts[i], authorTexts[i] = r.id, r.content, r.author, r.text, r.authorText
			}
			var changed int
			err := e.d.withWriteTx(ctx, func(tx *txn) error {
				var err error
				changed, err = execCount(ctx, tx, `UPDATE memories m SET search_text = p.text, search_author = p.author_text
					FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[]) AS p(id, content, author, text, author_text)
					WHERE m.id = p.id AND m.content = p.content AND m.author_name = p.author`,
					ids, contents, authors, texts, authorTexts)
				return err
			})
			if err != nil {
				return read, rewritten, fmt.Errorf("couldn't rewrite the search columns: %w", err)
			}
			rewritten += changed
		}
		if n < searchRepairBatch {
			return read, rewritten, nil
		}
	}
}

// MergeSearch has nothing to do: the word index is a GIN index on live rows only, so a
// purged memory's words left it with the row.
func (engine) MergeSearch(context.Context) error { return nil }

// Compact gives free space back. On PostgreSQL that is autovacuum's work: it reclaims the
// space of deleted rows for reuse on its own schedule, without a lock that stops writers,
// and the diagnostics report no free pages (Storage.FreeBytes 0), so self-repair never
// asks for this. A VACUUM FULL would give bytes back to the file system but lock every table
// it rewrites, which a bot serving chat must not do on its own; an operator runs it.
func (engine) Compact(context.Context) (int64, error) { return 0, nil }

// EraseDeleted has nothing to do: the repair it serves is for SQLite files that versions
// before secure_delete wrote, which a PostgreSQL database never has pending
// (0009_store_repairs.sql); the space of its deleted rows is autovacuum's (Compact).
func (engine) EraseDeleted(context.Context) error { return nil }

// ErrBackupOnPostgres is Backup's answer on PostgreSQL: `kioku backup` copies a SQLite
// file, and a PostgreSQL database is backed up with PostgreSQL's own tools.
var ErrBackupOnPostgres = errors.New(`kioku backup copies a SQLite database file; this store is PostgreSQL, which kioku does not back up itself. ` +
	`Back it up with pg_dump, for example pg_dump --format=custom --file=kioku.dump "$KIOKU_DB", and restore with pg_restore; ` +
	`or use the continuous archiving (WAL) or managed snapshots your PostgreSQL already has`)

// Backup refuses: see ErrBackupOnPostgres. Nothing is written to path.
func (engine) Backup(_ context.Context, path string) error {
	return fmt.Errorf("%w (nothing was written to %s)", ErrBackupOnPostgres, path)
}
