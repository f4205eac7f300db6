package ltm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Access tracking: a recall a person asked for (memory.SearchQuery.CountAccess) counts the
// memories it returned and moves their last access, which their importance decays from. The
// counts are written in batches (one UPDATE statement per flush), never one write per
// recalled row, so recall stays a read-only path that never waits for the write lock.
const (
	// DefaultAccessFlushInterval is how often pending access counts are written.
	DefaultAccessFlushInterval = 15 * time.Second
	// accessFlushBatch pending memories trigger an early flush, bounding what a crash loses.
	// It is one write batch (accessWriteBatch): a flush is then one small transaction about
	// every chat turn, not eight of them every thirty turns. The work is the same (each
	// count rewrites its memory's row), but no turn waits behind much of it: with 512 the
	// turn that met a flush took twice as long as the others, which set the turn's p99, and
	// 16 rows instead of 64 took a further fifth off a turn's own p99 (chat BenchmarkTurn).
	accessFlushBatch = accessWriteBatch
)

type accessTracker struct {
	mu      sync.Mutex
	pending map[int64]int
	last    int64 // latest access time (ms) among pending
	kick    chan struct{}
	quit    chan struct{}
	done    chan struct{}
	flush   func(ctx context.Context) error // writes the pending counts (Recall.FlushAccess)
}

func (a *accessTracker) start(every time.Duration, flush func(ctx context.Context) error) {
	a.flush = flush
	a.pending = map[int64]int{}
	a.kick = make(chan struct{}, 1)
	a.quit = make(chan struct{})
	a.done = make(chan struct{})
	go a.loop(every)
}

func (a *accessTracker) loop(every time.Duration) {
	defer close(a.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-a.quit:
			return
		case <-t.C:
		case <-a.kick:
		}
		if err := a.flush(context.Background()); err != nil {
			slog.Warn("couldn't record memory access", slog.Any("err", err))
		}
	}
}

func (a *accessTracker) stop() {
	close(a.quit)
	<-a.done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.flush(ctx); err != nil {
		slog.Warn("couldn't record memory access", slog.Any("err", err))
	}
}

// record counts one access of each id at time now.
func (a *accessTracker) record(ids []int64, now int64) {
	if len(ids) == 0 {
		return
	}
	a.mu.Lock()
	for _, id := range ids {
		a.pending[id]++
	}
	a.last = max(a.last, now)
	full := len(a.pending) >= accessFlushBatch
	a.mu.Unlock()
	if full {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

// FlushAccess writes the access counts and times recall has gathered since the last flush,
// in one statement. The store does it in the background and on Close; tests call it to
// observe counts deterministically.
func (s *Recall) FlushAccess(ctx context.Context) error {
	a := &s.db.recall.access
	a.mu.Lock()
	if len(a.pending) == 0 {
		a.mu.Unlock()
		return nil
	}
	pending, last := a.pending, a.last
	a.pending, a.last = make(map[int64]int, len(pending)), 0
	a.mu.Unlock()

	// The counts go in transactions of accessWriteBatch memories: the write lock is then
	// free between them, so a chat turn's transcript write waits for one small UPDATE at
	// most, not for all of them (512 rows held it for 10-20 ms).
	ids := make([]int64, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	// In id order, a batch's rows are met in the table's order: neighbours share pages.
	slices.Sort(ids)
	for start := 0; start < len(ids); start += accessWriteBatch {
		batch := ids[start:min(start+accessWriteBatch, len(ids))]
		if err := s.writeAccess(ctx, pending, batch, last); err != nil {
			// Put back the counts not written yet, so the next flush retries them.
			a.mu.Lock()
			for _, id := range ids[start:] {
				a.pending[id] += pending[id]
			}
			a.last = max(a.last, last)
			a.mu.Unlock()
			return fmt.Errorf("couldn't record memory access: %w", err)
		}
	}
	return nil
}

// accessWriteBatch is how many memories' access counts one transaction writes.
const accessWriteBatch = 16

// writeAccess adds the pending counts of ids and moves their last access to last, in one
// statement.
func (s *Recall) writeAccess(ctx context.Context, pending map[int64]int, ids []int64, last int64) error {
	obj := make(map[string]int, len(ids))
	for _, id := range ids {
		obj[strconv.FormatInt(id, 10)] = pending[id]
	}
	body, _ := json.Marshal(obj) // a map of ints always marshals
	return s.db.withBookkeepingTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `UPDATE memories SET access_count = access_count + a.n,
			accessed_at = max(accessed_at, ?)
			FROM (SELECT CAST(key AS INTEGER) AS id, value AS n FROM json_each(?)) AS a
			WHERE memories.id = a.id AND memories.deleted_at IS NULL`, last, string(body))
		return err
	})
}

// countAccessNow counts one access of each of ids at now in one statement, for an engine
// that runs as several processes (Dialect.SharedByProcesses): no count then waits in a process
// that may stop.
func countAccessNow(ctx context.Context, d *db, ids []int64, now int64) error {
	_, err := d.read.ExecContext(ctx, `UPDATE memories SET access_count = access_count + 1,
		accessed_at = `+d.dialect.Greatest+`(accessed_at, ?) WHERE `+d.dialect.IDsIn("id")+` AND deleted_at IS NULL`,
		now, idArray(ids))
	if err != nil {
		return d.eng.StorageError(fmt.Errorf("couldn't count recalled memories: %w", err))
	}
	return nil
}
