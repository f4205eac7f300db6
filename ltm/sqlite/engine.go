package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// engine is SQLite as the long-term memory service sees it (ltm.Engine): one writer
// connection that serialises every write, so no write needs a lock of its own; a pool of
// readers that WAL never makes wait; JSON1 for the JSON text columns. Its parts are the
// database they share (db) and what they do with it: FTS5 as the keyword leg's fallback
// (keywordSearch, keywordfallback.go) and the upkeep (upkeep, upkeep.go), whose methods are
// the engine's. It owns its connections: the store's Close closes it (io.Closer).
type engine struct {
	*db
	upkeep
	keywordSearch
}

// db is the database as the engine's parts share it: the file, its connections, the store's
// settings, and what only SQLite keeps beside the service: the background checkpoints
// (checkpoint.go), the deferred full-text indexing of single writes (indexwrite.go) and the
// memory_changes change log (changes.go).
type db struct {
	// path is the database file.
	path string
	// write is the one writer connection, the service's and the engine's own writes alike;
	// read is the pool of readers.
	write, read *sql.DB
	// t are the store's settings, shared with the service (IndexWriteDelay, KeywordIndexOff).
	t *ltm.Tunables
	// readOnly is set by OpenReadOnly: the file is opened read-only, so even the writer
	// cannot write, and Close does not checkpoint.
	readOnly bool

	// checkpoints copies the log into the database file in the background (nil for a
	// read-only store).
	checkpoints *checkpointer
	// indexWrites puts single writes' memories in the full-text indexes in the background
	// (not started for a read-only store).
	indexWrites indexWriter
	// changes is the memory_changes table as the keyword indexes' change log.
	changes *changeTable

	closeOnce sync.Once
	closeErr  error
}

var (
	_ ltm.Engine           = (*engine)(nil)
	_ ltm.Upkeep           = (*engine)(nil)
	_ ltm.KeywordFallback  = (*engine)(nil)
	_ ltm.DeferredIndexing = (*engine)(nil)
	_ ltm.BulkBatches      = (*engine)(nil)
	_ io.Closer            = (*engine)(nil)
)

// newEngine is the engine over the database at path, on its writer and reader pools.
func newEngine(path string, write, read *sql.DB, t *ltm.Tunables) *engine {
	d := &db{path: path, write: write, read: read, t: t, changes: &changeTable{read: read}}
	return &engine{db: d, upkeep: upkeep{d}, keywordSearch: keywordSearch{d}}
}

func (*engine) Name() string                                                { return "sqlite" }
func (*engine) Rebind(query string) string                                  { return query }
func (*engine) LockKey(context.Context, ltm.Execer, string) error           { return nil }
func (*engine) StorageError(err error) error                                { return storageError(err) }
func (*engine) Dialect() *ltm.Dialect                                       { return &dialect }
func (*engine) Written(context.Context, []*memory.Memory, []*memory.Memory) {}
func (*engine) Committed()                                                  {}

// Changes is the memory_changes table, which triggers fill on every write by any process.
func (e *engine) Changes() ltm.ChangeLog { return e.changes }

// BatchCommitted lets the background checkpoint catch up with a bulk write whose log has
// grown past its bound (checkpoint.go).
func (e *engine) BatchCommitted(ctx context.Context) { e.checkpoints.afterBulkCommit(ctx) }

// Close stops the background indexing (indexing what waits) and checkpoints, copies the
// whole log into the database file, so that the file is complete on its own after a clean
// shutdown, and closes both pools.
func (e *engine) Close() error {
	e.closeOnce.Do(func() {
		e.indexWrites.stop()
		e.checkpoints.close()
		e.changes.close()
		if !e.readOnly {
			_, _ = e.write.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		}
		e.closeErr = errors.Join(e.read.Close(), e.write.Close())
	})
	return e.closeErr
}

// writeTx runs fn in a transaction on the writer and commits when fn returns nil: the
// engine's own writes (indexing, rebuilding the full-text indexes) wait for the service's
// like any other. A write the database refused for its own state is EUNAVAILABLE.
func (d *db) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.write.BeginTx(ctx, nil)
	if err != nil {
		return storageError(fmt.Errorf("couldn't begin write: %w", err))
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return storageError(err)
	}
	if err := tx.Commit(); err != nil {
		return storageError(fmt.Errorf("couldn't commit: %w", err))
	}
	return nil
}

// execCount runs a statement and returns how many rows it changed.
func execCount(ctx context.Context, tx *sql.Tx, query string, args ...any) (int, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// jobIDsPayload is a job's payload reduced to its ids (Dialect.JobIDsPayload). json_patch
// drops the keys whose value is null, so a payload without a guild id keeps only the
// channel.
const jobIDsPayload = `CASE WHEN json_valid(payload) AND json_type(payload) = 'object' THEN json_patch('{}',
	json_object('guild_id', json_extract(payload, '$.guild_id'), 'channel_id', json_extract(payload, '$.channel_id')))
	ELSE '{}' END`

// dialect is SQLite's SQL for what the engines spell differently.
var dialect = ltm.Dialect{
	ChangeLog: true,
	// NOT INDEXED keeps SQLite from going through the (scope_key, id) index, which costs a
	// second b-tree descent per row and grows with the whole database rather than the
	// scope (ltm's hydrate.go).
	ByKey: "memories m NOT INDEXED",
	IDsIn: func(column string) string { return column + ` IN (SELECT value FROM json_each(?))` },
	Index: func(table, index string) string { return table + " INDEXED BY " + index },
	JSONText: func(column, key string) string {
		return `CASE WHEN json_valid(` + column + `) THEN json_extract(` + column + `, '$.` + key + `') END`
	},
	JobIDsPayload:        jobIDsPayload,
	JobBeyondIDs:         `payload <> ` + jobIDsPayload,
	JobHasCheckpoint:     `(json_valid(payload) AND json_type(payload, '$.checkpoint') IS NOT NULL)`,
	JobWithoutCheckpoint: `json_remove(payload, '$.checkpoint')`,
	JSONArrayTexts:       `json_each(?)`,
	JSONArrayValues:      `json_each(?)`,
	SearchText:           storedSearchText,
	Greatest:             "max",
	Instr:                "instr",
	TagsHold: func(column string) string {
		return `EXISTS (SELECT 1 FROM json_each(` + column + `) WHERE value = ?)`
	},
	// Named: without statistics SQLite sees the pinned rows' partial index and
	// memories_scope_live as equally good and may walk the scope's every live row (30-130
	// ms at 100k memories).
	PinnedLiveMemories: "memories INDEXED BY memories_pinned_live",
	JSONMerge: func(column string) string {
		return `json_patch(` + column + `, ?)`
	},
	JSONMayHold: func(column, _ string) string { return `json_valid(` + column + `)` },
	JSONArrayAt: func(column, key string) string {
		return `json_each(` + column + `, '$.` + key + `')`
	},
	JSONValueText: func(value, key string) string {
		return `json_extract(` + value + `, '$.` + key + `')`
	},
	JSONAgg: func(value string) string { return `json_group_array(json(` + value + `))` },
	JSONSet: func(column, key, value string) string {
		return `json_set(` + column + `, '$.` + key + `', ` + value + `)`
	},
	// Deleting from the contentless word index only marks its entries; merging its
	// segments drops them, so deleted words leave the file. The trigram index gets the
	// deleted text with each delete, and its secure-delete option removes the entries at
	// once.
	PurgeSearch: `INSERT INTO ` + wordIndex + ` (` + wordIndex + `) VALUES ('optimize')`,
}

// storedSearchText is the value of a search-text column for s (Dialect.SearchText): its
// search text (memory.SearchText), or the empty string when that is s itself (plain ASCII),
// which the triggers read as "index the text as it is" (migration 0007).
func storedSearchText(s string) string {
	if t := memory.SearchText(s); t != s {
		return t
	}
	return ""
}
