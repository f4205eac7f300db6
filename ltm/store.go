// Package ltm is kioku's long-term store on SQLite: memories with their full-text indexes,
// embeddings, history, settings, transcripts and the job queue, plus hybrid recall.
//
// Writes go through one connection (SQLite allows one writer at a time, so serialising them
// in Go avoids busy errors entirely); reads use a separate pool and never wait for writes
// thanks to WAL. Every query that touches memories filters on the caller's scope key in SQL.
package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kioku-bot/kioku/migrations"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver
)

// Defaults copied into a Store by Open.
const (
	// DefaultRecoverWindow is how long a forgotten memory can be recovered; the retention
	// worker hard-deletes tombstones after it.
	DefaultRecoverWindow = 30 * 24 * time.Hour
	// DefaultBusyTimeout lets another process (the CLI next to a running bot) wait for the
	// write lock instead of failing.
	DefaultBusyTimeout = 5 * time.Second
	// DefaultConfirmTTL is how long a forget preview's token stays valid.
	DefaultConfirmTTL = 10 * time.Minute
)

// Store is the SQLite long-term store, one small type per aggregate over one shared database
// handle. Create it with Open; it is safe for concurrent use. Its tunables (Now,
// RecoverWindow, ConfirmTTL, the embedding timeouts, Alpha, AccessFlushInterval) belong to
// the shared handle, so setting one on the Store sets it for every aggregate.
type Store struct {
	*db

	// Memories are the memories themselves with their history: write, read, forget,
	// recover and revert, for a person or on someone's behalf.
	Memories *Memories
	// Recall finds memories for a query and keeps their embeddings and access counts.
	Recall *Recall
	// Facts applies the background pipeline's decisions.
	Facts *Facts
	// Jobs is the durable queue of background jobs and the record of scheduled runs.
	Jobs *Jobs
	// Transcripts are what people said per channel and how far extraction has read it.
	Transcripts *Transcripts
	// Settings are members' and guilds' choices.
	Settings *Settings
	// Confirmations are the destructive actions that need a preview and a token: forget
	// by query and forget-me.
	Confirmations *Confirmations
	// Transfer exports and imports memories as files.
	Transfer *Transfer
	// Channels is the remembered shape of each guild's channels and their permissions.
	Channels *Channels
	// Guilds are the servers the bot left and the purge of their data.
	Guilds *Guilds
	// Budgets count model calls per server (or member's DMs) and day, for the daily budget.
	Budgets *Budgets
	// Maintenance keeps the database healthy: retention, repairs, reindexing, compaction
	// and backups.
	Maintenance *Maintenance
	// Health reports what the database holds and how healthy it is (stats and
	// diagnostics), and keeps the audit of self-repair.
	Health *Health
	// Graph is the knowledge graph: the entities memories mention and their relations.
	Graph *Graph
}

// db is the handle every aggregate shares: the single writer connection, the reader pool,
// the clock and the in-process recall state. Helpers that more than one aggregate needs
// inside a write transaction (history, forgetting, the vector index) are its methods.
// Aggregates hold it as a named field rather than embedding it, so these helpers stay out
// of their method sets; only Store embeds it, to expose the tunables.
type db struct {
	path string
	// eng is the SQL engine under the store (engine.go).
	eng     Engine
	dialect *Dialect // eng.Dialect()
	// graphSQL are the statements that link memories to entities, in dialect.
	graphSQL *graphSQL
	write    *pool // SQLite: exactly one connection, all writes are serialised here
	read     *pool // a pool of read-only connections
	// readOnly is set by OpenReadOnly: the file is opened read-only, so even the writer
	// cannot write and Close does not checkpoint.
	readOnly bool
	// prepared keeps the single writes' statements prepared on the one writer connection
	// (SQLite's).
	prepared bool
	// checkpoints copies the log into the database file in the background (nil for a
	// read-only store).
	checkpoints *checkpointer
	// stmts are the single-write statements kept prepared on write.
	stmts writeStmts
	// indexWrites puts single writes' memories in the full-text indexes in the background
	// (not started for a read-only store).
	indexWrites indexWriter

	// upkeep is the maintenance the engine does its own way (upkeep.go).
	upkeep Upkeep

	// Tunables are the settings every aggregate reads; an engine's store shares them with
	// the parts it still keeps itself.
	*Tunables

	writeDepth atomic.Int32 // >0 while a write transaction is open (see InWriteTx)
	closeOnce  sync.Once
	closeErr   error
	recall     recallState

	// vectors and writes are this handle seen by two of its responsibilities: keeping
	// memories' embeddings and the vector index, and writing memories with their history,
	// caps and graph links. Both are views over the same db, set by newStore.
	vectors vectorStore
	writes  memoryWriter
}

// Memories are the memories with their history. See Store.Memories.
type Memories struct{ db *db }

// Recall finds memories and keeps their embeddings and access counts. See Store.Recall.
type Recall struct {
	db *db
	// searcher runs the legs, graph boost and ranking of one search (recall.go).
	searcher searcher
}

// newRecall returns the Recall over d.
func newRecall(d *db) *Recall {
	r := &Recall{db: d}
	r.searcher = searcher{r}
	return r
}

// Facts applies the pipeline's decisions. See Store.Facts.
type Facts struct{ db *db }

// Jobs is the job queue and the run ledger. See Store.Jobs.
type Jobs struct{ db *db }

// Transcripts are the stored conversation. See Store.Transcripts.
type Transcripts struct{ db *db }

// Settings are members' and guilds' choices. See Store.Settings.
type Settings struct{ db *db }

// Confirmations are previewed destructive actions. See Store.Confirmations.
type Confirmations struct {
	db *db
	// recaller is the recall forget by query previews with and whose cached queries
	// forget-me empties: the service's Recall, or the engine's own (Store.UseRecall).
	recaller RecallSearcher
}

// Transfer exports and imports memories. See Store.Transfer.
type Transfer struct{ db *db }

// Channels is the remembered shape of guild channels. See Store.Channels.
type Channels struct{ db *db }

// Guilds are departed servers and their purge. See Store.Guilds.
type Guilds struct{ db *db }

// Maintenance is retention, repairs, reindexing, compaction and backups. See
// Store.Maintenance.
type Maintenance struct{ db *db }

// Health is stats, diagnostics and the repair audit. See Store.Health.
type Health struct{ db *db }

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
func Open(ctx context.Context, path string) (*Store, error) {
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
	if _, err := migrations.Apply(ctx, write, migrations.FS()); err != nil {
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
	s := newStore(path, sqliteEngine{}, write, read, DefaultTunables())
	s.checkpoints = cp
	s.prepared = true
	// What a process that stopped without closing left waiting for the full-text indexes
	// goes in now: at most a few hundred memories, found by their own index.
	if err := s.indexPending(ctx); err != nil {
		slog.Warn("couldn't index memories left waiting; the next write's flush tries again", slog.Any("err", err))
	}
	s.indexWrites.start(s.indexPending, func() time.Duration { return s.IndexWriteDelay })
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

// newStore builds a Store over its writer and reader pools on eng with the settings t.
func newStore(path string, eng Engine, write, read *sql.DB, t *Tunables) *Store {
	d := &db{
		path:     path,
		eng:      eng,
		dialect:  eng.Dialect(),
		graphSQL: newGraphSQL(eng.Dialect()),
		write:    &pool{write, eng},
		read:     &pool{read, eng},
		Tunables: t,
	}
	d.upkeep = upkeepOf(eng, d)
	d.vectors = vectorStore{d}
	d.writes = memoryWriter{d}
	recall := newRecall(d)
	d.recall.init(d, recall.FlushAccess)
	return &Store{
		db:            d,
		Memories:      &Memories{d},
		Recall:        recall,
		Facts:         &Facts{d},
		Jobs:          &Jobs{d},
		Transcripts:   &Transcripts{d},
		Settings:      &Settings{d},
		Confirmations: &Confirmations{db: d, recaller: recall},
		Transfer:      &Transfer{d},
		Channels:      &Channels{d},
		Guilds:        &Guilds{d},
		Budgets:       &Budgets{d},
		Maintenance:   &Maintenance{d},
		Health:        &Health{d},
		Graph:         &Graph{d},
	}
}

// RecallFeed is how an engine's change feed tells the store's recall of other processes'
// writes.
func (s *Store) RecallFeed() RecallFeed { return RecallFeed{s.db} }

// OpenEngine returns a Store over conns, a pool of eng's database that the engine has
// migrated, with the settings t (DefaultTunables when nil); eng implements Upkeep too.
// Reads and writes share the pool: the engine's database runs them concurrently. Close
// stops the store's background work; the engine closes conns.
func OpenEngine(eng Engine, conns *sql.DB, t *Tunables) *Store {
	if t == nil {
		t = DefaultTunables()
	}
	return newStore("", eng, conns, conns, t)
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

// Close closes both connection pools after checkpointing the WAL, so the database file is
// complete on its own after a clean shutdown.
// A second Close returns the first one's result and does nothing else.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.indexWrites.stop()
		s.recall.close()
		s.stmts.close()
		if s.eng.Name() != (sqliteEngine{}).Name() {
			return // the engine owns its pool and closes it
		}
		s.checkpoints.close()
		if !s.readOnly {
			_, _ = s.write.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		}
		s.closeErr = errors.Join(s.read.db.Close(), s.write.db.Close())
	})
	return s.closeErr
}

// Path returns the database file path.
func (s *Store) Path() string { return s.path }

// InWriteTx reports whether a write transaction is open right now, other than the store's
// own background bookkeeping (withBookkeepingTx). Tests use it to prove that no model or
// embedding call happens while the write lock is held.
func (s *db) InWriteTx() bool { return s.writeDepth.Load() > 0 }

// withWriteTx runs fn inside a write transaction on the single writer connection and
// commits when fn returns nil. Keep fn short and free of network calls. A write the
// database refused for its own state (full, read-only, locked) is an EUNAVAILABLE error.
func (s *db) withWriteTx(ctx context.Context, fn func(tx *txn) error) error {
	return s.writeTx(ctx, true, fn)
}

// withBookkeepingTx is withWriteTx for the store's own background writes (access counts,
// vectors waiting to be stored), whose fixed statements never call out: they are not
// counted by InWriteTx, which proves that no caller holds the write lock while it calls a
// model or an embedder, and would otherwise see them at any moment.
func (s *db) withBookkeepingTx(ctx context.Context, fn func(tx *txn) error) error {
	return s.writeTx(ctx, false, fn)
}

// prepareBulk prepares the statements of a bulk write's full batches (bulkQueries) on the
// writer; call it outside any transaction.
func (s *db) prepareBulk(ctx context.Context) {
	if !s.prepared {
		return // engines other than SQLite have their driver prepare statements (pgx's statement cache)
	}
	s.stmts.prepare(ctx, s.write)
	s.stmts.prepareBulk(ctx, s.write)
}

func (s *db) writeTx(ctx context.Context, counted bool, fn func(tx *txn) error) error {
	if s.prepared {
		s.stmts.prepare(ctx, s.write)
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return s.eng.StorageError(fmt.Errorf("couldn't begin write: %w", err))
	}
	if counted {
		s.writeDepth.Add(1)
		defer s.writeDepth.Add(-1)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return s.eng.StorageError(err)
	}
	if err := tx.Commit(); err != nil {
		return s.eng.StorageError(fmt.Errorf("couldn't commit: %w", err))
	}
	s.eng.Committed()
	return nil
}

// freePages runs stmt, VACUUM or PRAGMA incremental_vacuum (neither can run inside a
// transaction, so alone on the writer), and checkpoints the log, where the freed pages stay
// until then. The copy VACUUM builds is a temporary database, which the writer's temp_store
// (memory) would hold in memory whole: it goes to a file for the duration.
func (s *db) freePages(ctx context.Context, stmt string) error {
	s.writeDepth.Add(1)
	defer s.writeDepth.Add(-1)
	conn, err := s.write.db.Conn(ctx)
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

func (s *db) nowMillis() int64 { return s.Now().UnixMilli() }

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
