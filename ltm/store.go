// Package ltm is kioku's long-term memory service: memories with their embeddings,
// history, settings, transcripts and the job queue, plus hybrid recall, written once over
// an SQL engine (Engine: SQLite in package ltm/sqlite, PostgreSQL in ltm/postgres), which
// opens the database and hands its connections to OpenEngine.
//
// Every query that touches memories filters on the caller's scope key in SQL.
package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults copied into a Store by OpenEngine (DefaultTunables).
const (
	// DefaultRecoverWindow is how long a forgotten memory can be recovered; the retention
	// worker hard-deletes tombstones after it.
	DefaultRecoverWindow = 30 * 24 * time.Hour
	// DefaultConfirmTTL is how long a forget preview's token stays valid.
	DefaultConfirmTTL = 10 * time.Minute
)

// Store is the long-term store, one small type per aggregate over one shared database
// handle. An engine creates it (sqlite.Open, postgres.Open: OpenEngine); it is safe for
// concurrent use. Its tunables (Now,
// RecoverWindow, ConfirmTTL, the embedding timeouts, Alpha, AccessFlushInterval) belong to
// the shared handle, so setting one on the Store sets it for every aggregate.
type Store struct {
	*db

	// Memories are the memories themselves with their history: write, read, forget,
	// recover and revert, for a person or on someone's behalf.
	Memories *Memories
	// Duplicates find the memory a content says again in other words (near-duplicates),
	// among what a writer may see.
	Duplicates *Duplicates
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
	// Review keeps memory current: the lifecycle states people and the pipeline give
	// memories (superseded, disputed, archived) and the queue of what waits for a person.
	Review *Review
	// Sessions are the web dashboard's sign-ins and signed-in browsers.
	Sessions *Sessions
	// Overview adds up what a scope or a member holds, for the dashboard's pages: a
	// server's memories by channel and author, the memories about a member.
	Overview *Overview
}

// db is the handle every aggregate shares: the single writer connection, the reader pool,
// the clock and the in-process recall state. Helpers that more than one aggregate needs
// inside a write transaction (history, forgetting, the vector index) are its methods.
// Aggregates hold it as a named field rather than embedding it, so these helpers stay out
// of their method sets; only Store embeds it, to expose the tunables.
type db struct {
	// path is the database's file, "" when it has none (Conns.Path).
	path string
	// eng is the SQL engine under the store (engine.go).
	eng     Engine
	dialect *Dialect // eng.Dialect()
	// graphSQL are the statements that link memories to entities, in dialect.
	graphSQL *graphSQL
	// markWords is markWordsSQL in dialect, built once: every single write runs it.
	markWords string
	// wordsMu lets one flushWordCompany run at a time.
	wordsMu sync.Mutex
	write   *pool // SQLite: exactly one connection, all writes are serialised here
	read    *pool // reads; the same pool as write where the engine runs both at once
	// prepared keeps the single writes' statements prepared on write (Conns.PrepareWrites).
	prepared bool
	// stmts are the single-write statements kept prepared on write.
	stmts writeStmts

	// upkeep is the maintenance the engine does its own way (upkeep.go).
	upkeep Upkeep
	// keywords answers the keyword leg from the database while the in-memory keyword
	// indexes can't (KeywordFallback).
	keywords KeywordFallback

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

// Duplicates find the memory a content says again in other words. See Store.Duplicates.
type Duplicates struct {
	db *db
	// recall finds the candidates the near-duplicate check judges.
	recall *Recall
}

// Review keeps memory current. See Store.Review.
type Review struct{ db *db }

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

// Overview adds up what a scope or a member holds, for the dashboard. See Store.Overview.
type Overview struct{ db *db }

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
type Transfer struct {
	db *db
	// dups finds the memories an import says again in other words, for the review queue.
	dups *Duplicates
}

// Channels is the remembered shape of guild channels. See Store.Channels.
type Channels struct{ db *db }

// Guilds are departed servers and their purge. See Store.Guilds.
type Guilds struct{ db *db }

// Maintenance is retention, repairs, reindexing, compaction and backups. See
// Store.Maintenance.
type Maintenance struct{ db *db }

// Health is stats, diagnostics and the repair audit. See Store.Health.
type Health struct{ db *db }

// newStore builds a Store over the connections c of eng with the settings t.
func newStore(eng Engine, c Conns, t *Tunables) *Store {
	d := &db{
		path:      c.Path,
		eng:       eng,
		dialect:   eng.Dialect(),
		graphSQL:  newGraphSQL(eng.Dialect()),
		markWords: markWordsSQL(eng.Dialect()),
		write:     &pool{c.Write, eng},
		read:      &pool{c.Read, eng},
		prepared:  c.PrepareWrites,
		upkeep:    upkeepOf(eng),
		keywords:  keywordFallbackOf(eng),
		Tunables:  t,
	}
	d.vectors = vectorStore{d}
	d.writes = memoryWriter{d}
	recall := newRecall(d)
	d.recall.init(d, recall.FlushAccess)
	dups := &Duplicates{db: d, recall: recall}
	return &Store{
		db:            d,
		Memories:      &Memories{d},
		Review:        &Review{d},
		Duplicates:    dups,
		Recall:        recall,
		Facts:         &Facts{d},
		Jobs:          &Jobs{d},
		Transcripts:   &Transcripts{d},
		Settings:      &Settings{d},
		Confirmations: &Confirmations{db: d, recaller: recall},
		Transfer:      &Transfer{db: d, dups: dups},
		Channels:      &Channels{d},
		Guilds:        &Guilds{d},
		Budgets:       &Budgets{d},
		Maintenance:   &Maintenance{d},
		Health:        &Health{d},
		Graph:         &Graph{d},
		Sessions:      &Sessions{d},
		Overview:      &Overview{d},
	}
}

// RecallFeed is how an engine's change feed tells the store's recall of other processes'
// writes.
func (s *Store) RecallFeed() RecallFeed { return RecallFeed{s.db} }

// Conns are the connections a Store runs its statements on, as its engine opened them.
type Conns struct {
	// Write runs the write transactions and Read the reads. They may be one pool, where the
	// database runs both at once on any connection (PostgreSQL); SQLite's Write is its one
	// writer connection, which serialises every write, and Read a pool of readers.
	Write, Read *sql.DB
	// Path is the database's file, which Store.Path reports; "" when it has none.
	Path string
	// PrepareWrites keeps the statements of single writes, and those of a bulk write's full
	// batches, prepared on Write: worth it when Write is one connection that keeps them
	// (SQLite compiles a statement with its triggers, which cost as much as running it);
	// not where the driver prepares each statement itself (pgx).
	PrepareWrites bool
}

// OpenEngine returns a Store over the connections c of eng's database, which the engine
// has migrated, with the settings t (DefaultTunables when nil); eng implements Upkeep and
// KeywordFallback too. Close stops the store's background work and then closes eng if it
// is an io.Closer; otherwise the engine closes its connections itself.
func OpenEngine(eng Engine, c Conns, t *Tunables) *Store {
	if t == nil {
		t = DefaultTunables()
	}
	return newStore(eng, c, t)
}

// Engine returns the engine the store runs on, through which the engine's package reaches
// what only it keeps (sqlite.WriterPragma).
func (s *Store) Engine() Engine { return s.eng }

// Close stops the store's background work, writing what it gathered (access counts,
// vectors), and then closes the engine when it is an io.Closer (SQLite's, which checkpoints
// its log and closes its connections). A second Close returns the first one's result and
// does nothing else.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.recall.close()
		s.stmts.close()
		if c, ok := s.eng.(io.Closer); ok {
			s.closeErr = c.Close()
		}
	})
	return s.closeErr
}

// Path returns the database's file, "" for an engine without one.
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
	if tx.wordsMarked {
		s.recall.wordCompany.Wake()
	}
	return nil
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
