package ltm

import (
	"context"
	"database/sql"
	"maps"
	"sync"
)

// writeStmts keeps the statements that every single write runs, and those of a bulk
// write's full batches once one has run (bulkQueries), prepared on the writer connection. SQLite compiles a statement's triggers with it, and the memories INSERT has
// seven (two full-text indexes, the change log, counts, pinned versions): compiling it
// anew cost about as much as running it. They are prepared before the first write
// transaction, since the one writer connection is busy during one; a statement that could
// not be prepared (a read-only store) is simply run unprepared.
type writeStmts struct {
	once     sync.Once
	bulkOnce sync.Once
	mu       sync.Mutex
	m        map[string]*sql.Stmt
}

// preparedQueries are the statements writeStmts keeps, in dialect d.
func preparedQueries(d *Dialect) []string {
	return append([]string{
		findLiveByHashSQL,
		liveCountSQL,
		insertMemorySQL(1),
		insertPendingMemorySQL,
		addHistorySQL,
		crossServerSQL,
		storeVectorSQL,
		storeLiveVectorSQL,
		appendTurnSQL,
		markWordsSQL(d),
	}, newGraphSQL(d).queries()...)
}

// bulkQueries are the statements of a bulk write's full batches: one INSERT of
// insertRowsPerStatement memories and one of their history rows. Compiling the 1,000-row
// INSERT with its triggers, and the history's, for every batch was 6% of a 100k load's
// CPU. They are prepared by the first bulk write, not with the others: a process that never
// writes in bulk keeps no such statement.
func bulkQueries() []string {
	return []string{insertMemorySQL(insertRowsPerStatement), importHistorySQL(insertRowsPerStatement)}
}

// prepareBulk adds bulkQueries to the kept statements, once; call it outside any
// transaction, after prepare.
func (w *writeStmts) prepareBulk(ctx context.Context, write *pool) {
	w.bulkOnce.Do(func() {
		w.mu.Lock()
		kept := w.m != nil
		w.mu.Unlock()
		if !kept {
			return // closed
		}
		added := prepareEach(ctx, write, bulkQueries())
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.m == nil { // closed meanwhile
			for _, st := range added {
				st.Close()
			}
			return
		}
		// on hands out the map without a copy: replace it rather than write to it.
		m := make(map[string]*sql.Stmt, len(w.m)+len(added))
		maps.Copy(m, w.m)
		maps.Copy(m, added)
		w.m = m
	})
}

// prepare prepares the statements on write, once; call it outside any transaction.
func (w *writeStmts) prepare(ctx context.Context, write *pool) {
	w.once.Do(func() {
		m := prepareEach(ctx, write, preparedQueries(write.eng.Dialect()))
		w.mu.Lock()
		w.m = m
		w.mu.Unlock()
	})
}

// prepareEach prepares queries on write, leaving out any that cannot be prepared.
func prepareEach(ctx context.Context, write *pool, queries []string) map[string]*sql.Stmt {
	m := make(map[string]*sql.Stmt, len(queries))
	for _, q := range queries {
		if st, err := write.PrepareContext(context.WithoutCancel(ctx), q); err == nil {
			m[q] = st
		}
	}
	return m
}

// on returns a querier over tx that runs the kept statements prepared.
func (w *writeStmts) on(tx *txn) querier {
	w.mu.Lock()
	m := w.m
	w.mu.Unlock()
	return preparedTx{tx: tx, stmts: m}
}

// close closes the kept statements; later writes run unprepared.
func (w *writeStmts) close() {
	w.once.Do(func() {}) // a store closed before its first write prepares nothing after
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, st := range w.m {
		st.Close()
	}
	w.m = nil
}

// preparedTx is a write transaction that runs the statements writeStmts keeps through their
// prepared form, and any other statement as the transaction would.
type preparedTx struct {
	tx    *txn
	stmts map[string]*sql.Stmt
}

func (p preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.stmts[query]; st != nil {
		return p.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return p.tx.QueryRowContext(ctx, query, args...)
}

func (p preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.stmts[query]; st != nil {
		return p.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return p.tx.QueryContext(ctx, query, args...)
}

func (p preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.stmts[query]; st != nil {
		return p.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return p.tx.ExecContext(ctx, query, args...)
}
