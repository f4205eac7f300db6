package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Checkpoints. In WAL mode SQLite copies the log back into the database file (a
// checkpoint) from inside the commit that passes 1,000 pages of log, and a checkpoint
// syncs both files: one chat turn in about forty waited tens of milliseconds for it,
// which is most of a turn's p99. The writer connection therefore never checkpoints
// (wal_autocheckpoint 0); a background loop runs a passive checkpoint on a connection of
// its own every checkpointInterval instead, and at once when a bulk write waits for one. A
// passive checkpoint takes no lock a writer or reader waits for: commits go on appending
// to the log while it copies, and the log starts over from its beginning once a
// checkpoint has caught up. Other processes on the same file (the CLI, `kioku chat`) keep
// SQLite's automatic checkpoints.
const checkpointInterval = time.Second

// bulkLogFrames bounds the log during a bulk write (about 256 MiB of 4 KiB pages). The log
// starts over only when a checkpoint has caught up before a transaction begins, which
// never happens while batches commit back to back: a 100k-memory load left a log of 1 GB
// (the whole load), which the checkpointer was still copying while the next writes ran:
// `kioku bench` times 2,000 one-by-one writes right after its load, 1,849/s (median of
// three) before the bound and 2,039/s with it. Past the bound a bulk write waits for one
// checkpoint before its next batch (0.2 s in all of a 100k load); the writer's
// journal_size_limit then gives the file back.
const bulkLogFrames = 64 << 10

// checkpointer runs the background checkpoints of one store.
type checkpointer struct {
	stop     chan struct{}
	done     chan struct{}
	nudge    chan struct{} // a checkpoint is wanted now (buffered: one request stands for many)
	once     sync.Once
	logBound int // bulkLogFrames (tests lower it)

	mu       sync.Mutex
	started  uint64        // checkpoints begun
	finished uint64        // checkpoints ended
	ended    chan struct{} // closed when a checkpoint ends, then replaced
	frames   int           // the log's length when the last checkpoint ran
}

// startCheckpointer starts the loop on its own connection to path, checkpointing every
// interval (checkpointInterval).
func startCheckpointer(path string, every time.Duration) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("couldn't open the checkpoint connection: %w", err)
	}
	conn.SetMaxOpenConns(1)
	c := &checkpointer{stop: make(chan struct{}), done: make(chan struct{}), nudge: make(chan struct{}, 1),
		ended: make(chan struct{}), logBound: bulkLogFrames}
	go c.loop(conn, every)
	return c, nil
}

func (c *checkpointer) loop(conn *sql.DB, every time.Duration) {
	defer close(c.done)
	defer conn.Close()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			c.run(conn)
		case <-c.nudge:
			c.run(conn)
		}
	}
}

// run runs one passive checkpoint and tells those waiting for it.
func (c *checkpointer) run(conn *sql.DB) {
	c.mu.Lock()
	c.started++
	c.mu.Unlock()
	frames, err := checkpointPassive(conn)
	if err != nil {
		slog.Warn("background checkpoint failed; the next one tries again", "err", err)
	}
	c.mu.Lock()
	c.finished++
	if err == nil {
		c.frames = frames
	}
	close(c.ended)
	c.ended = make(chan struct{})
	c.mu.Unlock()
}

// checkpointPassive copies what it can of the log into the database file without waiting
// for readers or writers, and returns the log's length in frames.
func checkpointPassive(conn *sql.DB) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var busy, logFrames, copied int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logFrames, &copied); err != nil {
		return 0, fmt.Errorf("couldn't checkpoint the log: %w", err)
	}
	return logFrames, nil
}

// afterBulkCommit is called by a bulk write between its batches: past bulkLogFrames it
// waits for a checkpoint that begins after the commit, so the next batch starts the log
// over. Asking for a checkpoint after every batch as well measured no faster (a sync of
// both files every batch).
func (c *checkpointer) afterBulkCommit(ctx context.Context) {
	if c == nil {
		return
	}
	c.mu.Lock()
	frames, want := c.frames, c.started+1
	c.mu.Unlock()
	if frames <= c.logBound {
		return
	}
	// One request is enough: a checkpoint under way leaves it waiting in nudge, and the
	// loop runs the next one as soon as that ends.
	c.soon()
	for {
		c.mu.Lock()
		done, ended := c.finished >= want, c.ended
		if done {
			// The next commit starts the log over: until a checkpoint measures it, it is
			// taken as empty rather than waited for again.
			c.frames = 0
		}
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ended:
		case <-ctx.Done():
			return
		case <-c.done:
			return
		}
	}
}

// soon asks the loop for a checkpoint now rather than at its next tick.
func (c *checkpointer) soon() {
	select {
	case c.nudge <- struct{}{}:
	default:
	}
}

// close stops the loop and waits for a checkpoint in progress.
func (c *checkpointer) close() {
	if c == nil {
		return
	}
	c.once.Do(func() { close(c.stop) })
	<-c.done
}
