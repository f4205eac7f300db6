package ltm

import (
	"context"
	"database/sql"
	"errors"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// Engine is what differs between the SQL databases the long-term memory service runs on:
// SQLite (package ltm/sqlite) and PostgreSQL (package ltm/postgres). Everything else, the
// memory semantics, their privacy rules and their SQL where the two agree, is written once
// in this package. An engine implements these methods, Upkeep and KeywordFallback, and
// opens a Store with OpenEngine; the optional hooks below (DeferredIndexing, BulkBatches,
// io.Closer) are what it may do around the service's writes. docs/engines.md lists what
// else an engine brings (migrations, a change feed).
type Engine interface {
	// Name names the engine for logs and errors: "sqlite", "postgres".
	Name() string
	// Rebind turns a statement written with ? placeholders (and ?N for the Nth argument
	// again) into the engine's own; SQLite takes them as they are.
	Rebind(query string) string
	// LockKey serialises the write transactions that name the same key until they end: a
	// check followed by a write (is this job queued already?) must not interleave with
	// another writer's. SQLite's single writer gives that for free.
	LockKey(ctx context.Context, tx Execer, key string) error
	// Dialect holds the SQL fragments the two databases spell differently.
	Dialect() *Dialect
	// StorageError turns a write the database refused for its own state (full, read-only,
	// out of connections) into an EUNAVAILABLE domain error, and returns other errors as
	// they are.
	StorageError(err error) error
	// Written is told, after a write committed, of the memories it stored or changed and of
	// those it forgot, for what the engine keeps beside the service's own state (PostgreSQL:
	// the planner's statistics). SQLite keeps nothing more.
	Written(ctx context.Context, changed, removed []*memory.Memory)
	// Changes is the log of memory changes the in-memory keyword indexes follow: SQLite's
	// memory_changes table, which its triggers fill and every process reads; PostgreSQL's
	// change feed.
	Changes() ChangeLog
	// Committed is told of every write transaction of the service that committed; an
	// engine whose change log arrives asynchronously uses it so that a query after a
	// write of this process waits for that write's changes.
	Committed()
}

// KeywordFallback is the keyword leg answered by the engine's database, its own way, while
// the in-memory keyword indexes can't: while a visible scope's index builds, while the
// change log is down (ErrChangesDown), when the indexes may miss what other processes
// write, and when the store is told to keep them off (Tunables.KeywordIndexOff). Every
// engine passed to OpenEngine implements it (SQLite: FTS5; PostgreSQL: tsvector and
// pg_trgm).
type KeywordFallback interface {
	// KeywordIndexesCurrent reports whether the change log the indexes follow is up, so
	// that they may answer.
	KeywordIndexesCurrent() bool
	// KeywordScores returns the raw keyword scores x ≥ 0 of the best limit memories for
	// plan's words, CJK text and, weighed by lexicon, its expansion, on the scale of the
	// in-memory indexes' BM25; scopes are the keys of the visible scopes, and where and
	// args the scopes and filters over the memories alias m.
	KeywordScores(ctx context.Context, plan *recall.Plan, scopes []string, where string, args []any, limit int, lexicon float64) (map[int64]float64, error)
}

// DeferredIndexing is an Engine whose full-text search may take a single write's memory a
// moment after the write commits, a batch at a time (SQLite: every commit that writes the
// word index adds a segment to it and merges older ones, a third of a single write's time).
// The service's own recall does not wait: its in-memory keyword indexes read the rows.
type DeferredIndexing interface {
	// DeferIndexing is asked inside a single write's transaction, before the memory is
	// inserted: it reports whether the write leaves the memory out of the full-text search
	// (the row is inserted with index_pending = 1) and, when it does, sees to it that the
	// memory is indexed once the write has committed.
	DeferIndexing() bool
	// FlushIndexing indexes now what single writes left waiting.
	FlushIndexing(ctx context.Context) error
}

// BulkBatches is an Engine told between the batches of a bulk write (an import,
// RememberMany): each batch commits and the next begins at once, which a database whose log
// only starts over between writes (SQLite's WAL) may have to make room for.
type BulkBatches interface {
	// BatchCommitted is called after a batch committed, before the next one begins.
	BatchCommitted(ctx context.Context)
}

// ErrChangesDown is wrapped by a ChangeLog's error when the log is unavailable for now (a
// change feed reconnecting): recall then answers from the engine's KeywordFallback.
var ErrChangesDown = errors.New("the change log is unavailable")

// RecallSearcher is the recall that forget by query previews with and whose cache of query
// vectors (keyed by what people searched, which may name the member) forget-me empties.
type RecallSearcher interface {
	Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
	ForgetCachedQueries()
}

// Dialect is the SQL an engine spells its own way, as fragments the service's statements
// are built from.
type Dialect struct {
	// SkipLocked ends a SELECT that picks a row to take in a write transaction, so that
	// concurrent writers each get another row; "" when writers never run at once.
	SkipLocked string
	// LockRows ends a SELECT whose rows a write transaction is about to change from what it
	// read, so that a concurrent writer of the same rows waits; "" when writers never run at
	// once.
	LockRows string
	// JSONText returns an expression reading the text at key of the JSON text in column, or
	// NULL when column holds no valid JSON object.
	JSONText func(column, key string) string
	// JobIDsPayload is a job's payload reduced to its ids (the guild and channel it names,
	// a missing or null one dropped; a payload that is no JSON object keeps nothing), as
	// stored text: what a finished job keeps (SPEC §2).
	JobIDsPayload string
	// JobHasCheckpoint is the condition of a job payload that holds a checkpoint, and
	// JobWithoutCheckpoint the payload with its checkpoint dropped.
	JobHasCheckpoint, JobWithoutCheckpoint string
	// JSONArrayTexts is a table of the elements of the JSON array bound to its one
	// placeholder, one row each, in a column named value that compares as text (a number
	// is cast where it is wanted). It lets a statement take a list in one argument, so its
	// text stays the same however long the list is and it can stay prepared.
	JSONArrayTexts string
	// JSONArrayValues is JSONArrayTexts for an array of arrays: value is each inner array,
	// read with ->> 0, ->> 1.
	JSONArrayValues string
	// SearchText is the value stored in a search-text column (search_text, search_author)
	// for text: what the engine's full-text index reads (searchtext.go).
	SearchText func(text string) string
	// Greatest names the function that returns the larger of two values.
	Greatest string
	// Instr names the function that returns the 1-based position of its second argument
	// in its first, 0 when it is not there.
	Instr string
	// TagsHold returns the condition that the JSON array of tags in column holds the text
	// bound as the next parameter.
	TagsHold func(column string) string
	// PinnedLiveMemories is the memories table as a query of live pinned memories reads it.
	PinnedLiveMemories string
	// JSONMerge returns an expression of column's JSON object with the top-level keys of
	// the JSON object bound as the next parameter set in it.
	JSONMerge func(column string) string
	// LockRow ends a SELECT of a row that the write transaction then changes, so that a
	// concurrent writer of the same row waits for it (a confirmation is used once); ""
	// when writers never run at once.
	LockRow string
	// JSONMayHold returns a condition true of every row whose JSON text in column holds
	// key, which a statement puts before reading column as JSON: the rows it lets through
	// are valid JSON, or (PostgreSQL's cheaper text match) at least name key.
	JSONMayHold func(column, key string) string
	// JSONArrayAt is a table of the elements of the JSON array at key of the JSON object in
	// column, one row each in a column named value, read with JSONValueText.
	JSONArrayAt func(column, key string) string
	// JSONValueText returns an expression reading the text at key of value, a JSON object
	// from JSONArrayAt.
	JSONValueText func(value, key string) string
	// JSONAgg returns the aggregate of the JSON values of value (from JSONArrayAt) into a
	// JSON array, [] over no rows.
	JSONAgg func(value string) string
	// JSONSet returns the JSON text of column's object with key set to value, a JSON
	// expression (JSONAgg's).
	JSONSet func(column, key, value string) string
	// JobBeyondIDs is the condition of a job payload that holds more than its ids
	// (JobIDsPayload), compared as JSON where the engine stores the ids as such.
	JobBeyondIDs string
	// PurgeSearch is the statement after which the full-text search holds nothing of the
	// rows deleted before it in the transaction (forget-me's); "" when a delete takes
	// a row's entries with it.
	PurgeSearch string
	// IDsIn returns the condition that column holds one of the ids bound as one JSON array
	// (idArray), planned as lookups by key: the statement's text is the same however many
	// ids there are.
	IDsIn func(column string) string
	// DriverPrepares is set when the database driver prepares each statement once per
	// connection and keeps it (pgx): recall then keeps no prepared statements of its own,
	// which would cost the driver's bookkeeping twice.
	DriverPrepares bool
	// WholeCandidates is set when a round trip to the database costs more than reading
	// whole rows: recall reads its candidates whole, once, rather than the columns ranking
	// needs and then the results' rows.
	WholeCandidates bool
	// ByKey names how recall reads memory rows by primary key (the ids in one JSON array):
	// "memories m" with whatever keeps the engine from going through another index first.
	ByKey string
	// Index returns the table (with its alias, "memories m") as a query reads it through
	// the named index, where the engine's planner needs telling (its statistics may be
	// missing); the table as it is otherwise.
	Index func(table, index string) string
	// SharedByProcesses is set when several processes share the database: what recall
	// would gather in memory for a later write is written at once (a recall's access
	// counts, the vectors fetched for a write), so that a process that stops loses none of
	// it and the others read it from the database.
	SharedByProcesses bool
	// ChangeLog is set when the engine keeps memory_changes, the log of writes that
	// in-process keyword indexes follow (keywordindex.go), which retention trims.
	ChangeLog bool
}

// Execer runs a statement: a transaction or a pool, as an Engine's LockKey receives it.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// pool runs statements written with ? placeholders on a connection pool in the engine's
// dialect.
type pool struct {
	db  *sql.DB
	eng Engine
}

func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.db.QueryRowContext(ctx, p.eng.Rebind(query), args...)
}

func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.db.QueryContext(ctx, p.eng.Rebind(query), args...)
}

func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.db.ExecContext(ctx, p.eng.Rebind(query), args...)
}

// PrepareContext prepares a statement on the pool, rebound.
func (p *pool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return p.db.PrepareContext(ctx, p.eng.Rebind(query))
}

// BeginTx starts a transaction whose statements are rebound like the pool's.
func (p *pool) BeginTx(ctx context.Context, opts *sql.TxOptions) (*txn, error) {
	t, err := p.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &txn{tx: t, eng: p.eng}, nil
}

// txn runs statements written with ? placeholders in a transaction in the engine's
// dialect.
type txn struct {
	tx  *sql.Tx
	eng Engine
	// wordsMarked says the transaction marked memories to count their words again
	// (markWordsTx): the counting is woken once it commits.
	wordsMarked bool
}

func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.eng.Rebind(query), args...)
}

func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.eng.Rebind(query), args...)
}

func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.eng.Rebind(query), args...)
}

// PrepareContext prepares a statement in the transaction, rebound.
func (t *txn) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, t.eng.Rebind(query))
}

// StmtContext returns the pool's prepared statement st for use in the transaction.
func (t *txn) StmtContext(ctx context.Context, st *sql.Stmt) *sql.Stmt {
	return t.tx.StmtContext(ctx, st)
}

// Commit and Rollback end the transaction.
func (t *txn) Commit() error   { return t.tx.Commit() }
func (t *txn) Rollback() error { return t.tx.Rollback() }
