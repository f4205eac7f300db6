package ltm

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
// its own every checkpointInterval instead. A passive checkpoint takes no lock a writer or
// reader waits for: commits go on appending to the log while it copies, and the log
// starts over from its beginning once a checkpoint has caught up. Other processes on the
// same file (the CLI, `kioku chat`) keep SQLite's automatic checkpoints.
const checkpointInterval = time.Second

// checkpointer runs the background checkpoints of one store.
type checkpointer struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// startCheckpointer starts the loop on its own connection to path.
func startCheckpointer(path string) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("couldn't open the checkpoint connection: %w", err)
	}
	conn.SetMaxOpenConns(1)
	c := &checkpointer{stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop(conn)
	return c, nil
}

func (c *checkpointer) loop(conn *sql.DB) {
	defer close(c.done)
	defer conn.Close()
	tick := time.NewTicker(checkpointInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			if err := checkpointPassive(conn); err != nil {
				slog.Warn("background checkpoint failed; the next one tries again", "err", err)
			}
		}
	}
}

// checkpointPassive copies what it can of the log into the database file without waiting
// for readers or writers.
func checkpointPassive(conn *sql.DB) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var busy, logFrames, copied int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logFrames, &copied); err != nil {
		return fmt.Errorf("couldn't checkpoint the log: %w", err)
	}
	return nil
}

// close stops the loop and waits for a checkpoint in progress.
func (c *checkpointer) close() {
	if c == nil {
		return
	}
	c.once.Do(func() { close(c.stop) })
	<-c.done
}
