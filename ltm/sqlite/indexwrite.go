package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kioku-bot/kioku/internal/flushloop"
)

// A single write leaves its memory out of the full-text indexes (index_pending, migration
// 0019; ltm.DeferredIndexing) and the indexes take it a moment later, a batch at a time: every commit that writes
// the word index adds a segment to it and merges older ones, about 60% of the pages a
// single write put in the log and a third of its time. This process's recall does not
// wait, since its in-memory keyword index is kept current on every write from the rows
// themselves; a keyword query answered from the full-text index (a large scope whose
// in-memory index is still building, another process, a CJK query in a scope past the
// trigram threshold) misses the memory for that moment.
//
// The waiting list is the rows themselves (memories_index_pending), not memory: a memory
// forgotten or deleted before its turn simply has no row to index, a crash loses nothing,
// and any process opening the database indexes what another left waiting.
//
// How long a memory waits for others is the store's IndexWriteDelay (ltm.Tunables).

// indexWriteBatch is how many waiting memories one transaction indexes.
const indexWriteBatch = 256

// indexPendingSQL indexes up to indexWriteBatch waiting memories: the update's trigger
// (memories_au) puts each in the indexes the rule says hold it.
var indexPendingSQL = fmt.Sprintf(`UPDATE memories SET index_pending = 0 WHERE id IN (
	SELECT id FROM memories WHERE index_pending <> 0 ORDER BY id LIMIT %d)`, indexWriteBatch)

// indexWriter indexes waiting memories in the background.
type indexWriter struct {
	loop    flushloop.Loop
	flushMu sync.Mutex // one flush at a time
	// waiting is set by a write that leaves its memory waiting and cleared when a flush
	// begins: while it is clear, nothing this process wrote is missing from the indexes.
	waiting  atomic.Bool
	flushAll func(ctx context.Context) error
	// stmt is indexPendingSQL prepared on the writer: SQLite compiles the update with its
	// triggers, which costs about as much as running it. nil runs it unprepared.
	stmt *sql.Stmt
}

// prepare prepares indexPendingSQL on the writer; call it outside any transaction, before
// the first flush.
func (w *indexWriter) prepare(ctx context.Context, write *sql.DB) {
	if st, err := write.PrepareContext(ctx, indexPendingSQL); err == nil {
		w.stmt = st
	}
}

// start runs the loop.
func (w *indexWriter) start(flushAll func(ctx context.Context) error, delay func() time.Duration) {
	w.flushAll = flushAll
	w.loop.Start(w.flush, delay, nil, "couldn't index new memories; the next write, or the next start, tries again")
}

// started reports whether the loop runs (a read-only store has none).
func (w *indexWriter) started() bool { return w.loop.Started() }

// wake asks the loop to index what is waiting after its delay.
func (w *indexWriter) wake() {
	w.waiting.Store(true)
	w.loop.Wake()
}

// stop ends the loop and indexes what is waiting.
func (w *indexWriter) stop() {
	w.loop.Stop()
	if w.stmt != nil {
		w.stmt.Close()
	}
}

// flush indexes every waiting memory. A write that set waiting before it began has
// committed by the time its transaction runs: the writer connection is one.
func (w *indexWriter) flush(ctx context.Context) error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.waiting.Store(false)
	if err := w.flushAll(ctx); err != nil {
		w.waiting.Store(true)
		return err
	}
	return nil
}

// indexPending indexes every waiting memory, indexWriteBatch per transaction.
func (d *db) indexPending(ctx context.Context) error {
	for {
		n, err := d.indexPendingBatch(ctx)
		if err != nil {
			return err
		}
		if n < indexWriteBatch {
			return nil
		}
	}
}

// indexPendingBatch indexes up to indexWriteBatch waiting memories in one transaction and
// says how many.
func (d *db) indexPendingBatch(ctx context.Context) (int64, error) {
	var n int64
	err := d.writeTx(ctx, func(tx *sql.Tx) error {
		var (
			res sql.Result
			err error
		)
		if st := d.indexWrites.stmt; st != nil {
			res, err = tx.StmtContext(ctx, st).ExecContext(ctx)
		} else {
			res, err = tx.ExecContext(ctx, indexPendingSQL)
		}
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't index new memories: %w", err)
	}
	return n, nil
}

// DeferIndexing leaves a single write's memory for the index writer and wakes it; its flush
// waits for the write's transaction, since there is one writer. A store that answers every
// keyword query from the full-text indexes (KeywordIndexOff) indexes at once, and so does
// one whose IndexWriteDelay is zero or less, or that writes nothing (read-only).
func (e *engine) DeferIndexing() bool {
	if e.t.IndexWriteDelay <= 0 || e.t.KeywordIndexOff || !e.indexWrites.started() {
		return false
	}
	e.indexWrites.wake()
	return true
}

// FlushIndexing indexes what single writes left waiting now.
func (e *engine) FlushIndexing(ctx context.Context) error {
	if !e.indexWrites.started() {
		return nil
	}
	return e.indexWrites.flush(ctx)
}

// indexBeforeQuery indexes what this process's writes left waiting before a keyword query
// that reads the full-text indexes, so a memory just written is found there too. It is
// rare: such queries serve a large scope only until its in-memory index is built. A flush
// that fails leaves the query to run without the waiting memories.
func (d *db) indexBeforeQuery(ctx context.Context) {
	if !d.indexWrites.waiting.Load() {
		return
	}
	if err := d.indexWrites.flush(ctx); err != nil {
		slog.Warn("couldn't index new memories before a full-text query", slog.Any("err", err))
	}
}
