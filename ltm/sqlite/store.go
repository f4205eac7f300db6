// Package sqlite is the SQLite engine of kioku's long-term memory service (package ltm): the
// default, embedded store, one database file that the bot and the CLI beside it share. The
// aggregates are the service's, written once in ltm and opened over this package's
// connections with ltm.OpenEngine (docs/engines.md).
//
// Writes go through one connection (SQLite allows one writer at a time, so serialising them
// in Go avoids busy errors entirely); reads use a separate pool and never wait for writes
// thanks to WAL. What this package holds is what SQLite does its own way (engine.go): its
// connections and their settings (DSN), its numbered migrations (migrations/), FTS5 as the
// keyword leg's fallback while a scope's in-memory index builds (keywordfallback.go), the
// memory_changes table the in-memory keyword indexes follow (changes.go), single writes
// indexed a moment later (indexwrite.go), background checkpoints of the log
// (checkpoint.go), its storage errors (storage.go) and its upkeep: quick_check, VACUUM,
// VACUUM INTO (upkeep.go, backup.go).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"github.com/kioku-bot/kioku/ltm"
)

// DefaultBusyTimeout lets another process (the CLI next to a running bot) wait for the
// write lock instead of failing.
const DefaultBusyTimeout = 5 * time.Second

// writerCacheKiB is the page cache of the one writer connection. SQLite's default of 2 MiB
// holds little more than the root pages of a large database, so a write re-read the same
// index and full-text pages from the file in every transaction; the memories table's
// indexes, the full-text segments being merged and the embeddings index of a busy guild
// fit in this. The readers keep the default: there are several of them.
const writerCacheKiB = 32 << 10

// logFileBytes is the size the log's file is cut back to when the log starts over
// (journal_size_limit): a chat's steady writes fit in it many times over.
const logFileBytes = 64 << 20

// Open opens (creating if needed) the database at path, applies pending migrations and
// returns a ready store.
func Open(ctx context.Context, path string) (*ltm.Store, error) {
	if path == "" {
		return nil, errors.New("couldn't open database: empty path")
	}
	// The writer never checkpoints the log inside a commit: the checkpointer does, in the
	// background (checkpoint.go). When the log starts over, the writer cuts its file back
	// to logFileBytes: a bulk load may have grown it to hundreds of megabytes.
	write, err := sql.Open("sqlite", DSN(path)+"&_txlock=immediate"+fmt.Sprintf("&_pragma=cache_size(-%d)", writerCacheKiB)+
		fmt.Sprintf("&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(%d)", logFileBytes))
	if err != nil {
		return nil, fmt.Errorf("couldn't open database %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	if err := pingWriter(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("couldn't open database %s: %w", path, err)
	}
	if _, err := Migrate(ctx, write, Migrations()); err != nil {
		write.Close()
		return nil, err
	}
	// Once migrated (a migration may copy a whole table through a temporary one), the
	// writer's statement journals (what one statement of a bulk write changed, to undo that
	// statement alone) stay in memory: in a temporary file they were 8% of a bulk write's
	// time, and page images of deleted content went to disk. The one connection keeps it;
	// one opened anew would write them to a file again, which is only slower.
	if _, err := write.ExecContext(ctx, `PRAGMA temp_store = memory`); err != nil {
		write.Close()
		return nil, fmt.Errorf("couldn't open database %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", ReadOnlyDSN(path))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("couldn't open database %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	cp, err := startCheckpointer(path, checkpointInterval)
	if err != nil {
		read.Close()
		write.Close()
		return nil, err
	}
	t := ltm.DefaultTunables()
	e := newEngine(path, write, read, t)
	e.checkpoints = cp
	s := ltm.OpenEngine(e, ltm.Conns{Write: write, Read: read, Path: path, PrepareWrites: true}, t)
	// What a process that stopped without closing left waiting for the full-text indexes
	// goes in now: at most a few hundred memories, found by their own index.
	e.indexWrites.prepare(ctx, write)
	if err := e.indexPending(ctx); err != nil {
		slog.Warn("couldn't index memories left waiting; the next write's flush tries again", slog.Any("err", err))
	}
	e.indexWrites.start(e.indexPending, func() time.Duration { return t.IndexWriteDelay })
	return s, nil
}

// pingWriter opens the writer's connection. Its pragmas switch a new file to WAL, and
// while another process does the same to the same new file SQLite can answer SQLITE_BUSY
// without calling the busy handler (two shards started together on a fresh database). So
// a busy open is tried again, for as long as the busy timeout would have waited.
func pingWriter(ctx context.Context, write *sql.DB) error {
	deadline := time.Now().Add(DefaultBusyTimeout)
	for {
		err := write.PingContext(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// DSN is the data source name every kioku connection to the database at path uses, so the
// store, `kioku migrate` and any other tool open it with the same settings. secure_delete
// makes SQLite overwrite deleted rows with zeros, so forgotten text does not stay readable
// in freed pages of the file (SPEC §2).
func DSN(path string) string {
	return fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(wal)&_pragma=foreign_keys(1)"+
		"&_pragma=synchronous(normal)&_pragma=secure_delete(on)", path, DefaultBusyTimeout.Milliseconds())
}

// ReadOnlyDSN is DSN for a connection that only reads: the store's reader pool and tools
// that read a kioku database beside it (the eval and bench baselines).
func ReadOnlyDSN(path string) string {
	return DSN(path) + "&_pragma=query_only(1)"
}
