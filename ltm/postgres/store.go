// Package postgres is the PostgreSQL engine of kioku's long-term memory service (package
// ltm): the same aggregates, written once in ltm and opened over this package's pgx pool
// with ltm.OpenEngine, for a bot that runs as several processes against one shared database
// (docs/postgres.md, docs/engines.md).
//
// What it holds is what PostgreSQL does differently (engine.go): numbered placeholders,
// transaction-scoped advisory locks for the writes that must not race (dedup in a scope, a
// job's dedup key), SELECT … FOR UPDATE SKIP LOCKED for leases, jsonb where a statement looks
// inside JSON text, its own migrations (migrations/), a change feed (changes.go) that tells the
// in-memory keyword and vector indexes of other processes' writes, the database's tsvector
// and pg_trgm as the keyword leg's fallback while a scope's index builds
// (keywordfallback.go), and its upkeep (upkeep.go). Rows keep SQLite's shapes (times in Unix
// milliseconds, flags as integers, tags and metadata as JSON text) so that they copy between
// the two engines unchanged.
package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory/recall"
)

// Store is the PostgreSQL long-term store, one small type per aggregate over one shared
// handle, as ltm.Store. Create it with Open; it is safe for concurrent use, and several
// processes may open the same database.
type Store struct {
	*db

	// Memories are the memories with their history.
	Memories *ltm.Memories
	// Review keeps memory current: lifecycle states and the review queue.
	Review *ltm.Review
	// Duplicates find the memory a content says again in other words.
	Duplicates *ltm.Duplicates
	// Recall finds memories for a query: the service's, whose keyword leg falls back on
	// the database's own indexes (keywordfallback.go).
	Recall *ltm.Recall
	// Jobs is the durable queue of background jobs.
	Jobs *ltm.Jobs
	// Transcripts are what people said per channel.
	Transcripts *ltm.Transcripts
	// Settings are members' and guilds' choices.
	Settings *ltm.Settings
	// Confirmations are forget by query and forget-me, the service's, previewing with this
	// store's Recall.
	Confirmations *ltm.Confirmations
	// Graph is the knowledge graph.
	Graph *ltm.Graph
	// Facts applies the background pipeline's decisions.
	Facts *ltm.Facts
	// Channels is the remembered shape of each guild's channels.
	Channels *ltm.Channels
	// Guilds are the servers the bot left or welcomed.
	Guilds *ltm.Guilds
	// Budgets counts model calls for the daily model budget.
	Budgets *ltm.Budgets
	// Transfer exports and imports memories as files.
	Transfer *ltm.Transfer
	// Maintenance is retention, repairs and the store's side of self-repair: the
	// service's, with PostgreSQL's upkeep (upkeep.go).
	Maintenance *ltm.Maintenance
	// Health is stats, diagnostics and the repair audit, the service's.
	Health *ltm.Health
	// Sessions are the web dashboard's sign-ins and signed-in browsers.
	Sessions *ltm.Sessions
	// Overview adds up what a scope or a member holds, for the dashboard.
	Overview *ltm.Overview
}

// db is the handle every aggregate shares: the pool, the clock and the tunables.
type db struct {
	pool *pgxpool.Pool
	// sql is the pool seen through database/sql, which the statements shared with ltm use.
	sql  *sql.DB
	read *pool // reads and writes share one pool: PostgreSQL runs them concurrently

	// Tunables are the settings, shared with core: setting one on the Store sets it for
	// every aggregate, the service's and this package's.
	*ltm.Tunables
	// core is the long-term memory service over this database (ltm.OpenEngine): the
	// aggregates written once for both engines.
	core *ltm.Store
	// trigramsCJK is set when pg_trgm indexes CJK characters (a UTF-8 ctype); without it,
	// large scopes are scanned for CJK text instead of narrowed by the trigram index.
	trigramsCJK bool
	// cjkScanMax is the largest scope whose rows are scanned for CJK bigrams; larger scopes
	// are narrowed by trigrams first. Default ltm.CJKScanMax.
	cjkScanMax int

	// stats is when the planner's statistics of memories were last checked (plannerstats.go).
	stats plannerStats
	// changes is the LISTEN connection that keeps recall's in-process state current with
	// what other processes write (changes.go).
	changes *changeFeed
	// notices are the feed's memory notices as the keyword indexes' change log
	// (keywords.go).
	notices *noticeLog

	writeDepth atomic.Int32 // >0 while a write transaction is open (see InWriteTx)
}

// Open connects to the database at url (postgres://…), applies pending migrations and
// returns a ready store. Close releases the pool.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("couldn't open PostgreSQL store: %w", err)
	}
	return OpenConfig(ctx, cfg)
}

// OpenConfig is Open with a parsed pool configuration, for callers that set connection
// parameters (a search_path, pool sizes) themselves.
func OpenConfig(ctx context.Context, cfg *pgxpool.Config) (*Store, error) {
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("couldn't open PostgreSQL store: %w", err)
	}
	if err := p.Ping(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("couldn't reach PostgreSQL at %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	if err := checkEncoding(ctx, p); err != nil {
		p.Close()
		return nil, err
	}
	if err := migrate(ctx, p); err != nil {
		p.Close()
		return nil, err
	}
	s := newStore(p)
	// pg_trgm keeps only the characters the database's ctype calls alphanumeric: under a C
	// ctype it drops every Japanese character, and the trigram index finds nothing.
	if err := p.QueryRow(ctx, `SELECT cardinality(show_trgm('東京タワー')) > 0`).Scan(&s.trigramsCJK); err != nil {
		s.Close()
		return nil, fmt.Errorf("couldn't check pg_trgm: %w", err)
	}
	if err := s.db.listen(ctx, cfg.ConnConfig); err != nil {
		s.Close()
		return nil, err
	}
	// A notice of its own must come back: behind a pooler that hands each transaction
	// another server session, LISTEN succeeds and hears nothing.
	check, cancel := context.WithTimeout(ctx, feedCheckWait)
	defer cancel()
	if err := s.SyncChanges(check); err != nil {
		s.Close()
		return nil, fmt.Errorf("the change feed heard nothing back from PostgreSQL within %s (%w): kioku needs a session for LISTEN, so connect directly or through a pooler in session mode", feedCheckWait, err)
	}
	return s, nil
}

// checkEncoding refuses a database that does not store UTF-8: memories are written in every
// language, and another encoding would fail on (or mangle) the first one it can't hold.
func checkEncoding(ctx context.Context, p *pgxpool.Pool) error {
	var enc string
	if err := p.QueryRow(ctx, `SHOW server_encoding`).Scan(&enc); err != nil {
		return fmt.Errorf("couldn't read the database encoding: %w", err)
	}
	if enc != "UTF8" {
		return fmt.Errorf("the PostgreSQL database uses the %s encoding; kioku needs UTF8 (create it with ENCODING 'UTF8' and a UTF-8 locale such as C.UTF-8)", enc)
	}
	return nil
}

func newStore(p *pgxpool.Pool) *Store {
	sqldb := stdlib.OpenDBFromPool(p)
	t := ltm.DefaultTunables()
	t.Alpha = recall.DefaultAlpha
	notices := newNoticeLog()
	d := &db{
		pool:       p,
		sql:        sqldb,
		read:       &pool{sqldb},
		Tunables:   t,
		notices:    notices,
		cjkScanMax: ltm.CJKScanMax,
	}
	d.core = ltm.OpenEngine(engine{d}, ltm.Conns{Write: sqldb, Read: sqldb}, t)
	return &Store{
		db:            d,
		Memories:      d.core.Memories,
		Review:        d.core.Review,
		Duplicates:    d.core.Duplicates,
		Recall:        d.core.Recall,
		Jobs:          d.core.Jobs,
		Transcripts:   d.core.Transcripts,
		Settings:      d.core.Settings,
		Confirmations: d.core.Confirmations,
		Graph:         d.core.Graph,
		Channels:      d.core.Channels,
		Guilds:        d.core.Guilds,
		Budgets:       d.core.Budgets,
		Transfer:      d.core.Transfer,
		Facts:         d.core.Facts,
		Maintenance:   d.core.Maintenance,
		Health:        d.core.Health,
		Sessions:      d.core.Sessions,
		Overview:      d.core.Overview,
	}
}

// Close releases every connection of the pool.
func (s *Store) Close() error {
	s.changes.stop()
	_ = s.core.Close()
	err := s.sql.Close()
	s.pool.Close()
	return err
}

// Pool returns the connection pool, for health checks and metrics.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// InWriteTx reports whether a write transaction of this process is open right now, as
// ltm's. Tests use it to prove that no model or embedding call happens while a transaction
// holds row and advisory locks that other writers, in this process or another, wait for.
// The single-statement writes on the pool (access counts) hold no lock across a call and
// are not counted, like ltm's bookkeeping; the service's writes count in core.
func (s *db) InWriteTx() bool { return s.writeDepth.Load() > 0 || s.core.InWriteTx() }

// withWriteTx runs fn inside a transaction and commits when fn returns nil. Keep fn short
// and free of network calls other than the database's. A write the database refused for
// its own state (full, read-only, out of connections, shutting down) is an EUNAVAILABLE
// error (storage.go).
func (s *db) withWriteTx(ctx context.Context, fn func(tx *txn) error) error {
	t, err := s.sql.BeginTx(ctx, nil)
	if err != nil {
		return storageError(fmt.Errorf("couldn't begin write: %w", err))
	}
	s.writeDepth.Add(1)
	defer s.writeDepth.Add(-1)
	if err := fn(&txn{t}); err != nil {
		_ = t.Rollback()
		return storageError(err)
	}
	if err := t.Commit(); err != nil {
		return storageError(fmt.Errorf("couldn't commit: %w", err))
	}
	s.notices.committed()
	return nil
}

// pool runs statements written with ? placeholders on the pool.
type pool struct{ db *sql.DB }

func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.db.QueryRowContext(ctx, rebind(query), args...)
}

func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.db.QueryContext(ctx, rebind(query), args...)
}

func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.db.ExecContext(ctx, rebind(query), args...)
}

// txn runs statements written with ? placeholders in a transaction.
type txn struct{ tx *sql.Tx }

func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, rebind(query), args...)
}

func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, rebind(query), args...)
}

func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, rebind(query), args...)
}

// rebind numbers a statement's placeholders for PostgreSQL: each ? becomes the next $n,
// and ?n (a placeholder SQLite lets a statement repeat) becomes $n. Question marks inside
// quoted strings and identifiers are left alone.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteString("$" + query[i+1:j])
				i = j - 1
				continue
			}
			n++
			fmt.Fprintf(&b, "$%d", n)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func execCount(ctx context.Context, tx *txn, query string, args ...any) (int, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
