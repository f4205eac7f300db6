package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// engineOf is the engine under s, a store Open opened.
func engineOf(t *testing.T, s *ltm.Store) *engine {
	t.Helper()
	e, ok := s.Engine().(*engine)
	if !ok {
		t.Fatalf("the store runs on %s, not this package's engine", s.Engine().Name())
	}
	return e
}

// openTestStore opens a store on a fresh database at path, closed when the test ends.
func openTestStore(t *testing.T, path string) *ltm.Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rememberFillers writes n memories of about 300 bytes each to guild g.
func rememberFillers(t *testing.T, s *ltm.Store, g string, n int) {
	t.Helper()
	mems := make([]memory.Memory, n)
	for i := range mems {
		mems[i] = memory.Memory{Scope: memory.ScopeServer, GuildID: g, Type: memory.TypeFact,
			Content: fmt.Sprintf("note %d: the %s committee keeps minutes of every meeting, the budget, who volunteered, "+
				"which venue was booked and what was decided about the spring festival's food stalls and music", i, g)}
	}
	if _, err := s.Transfer.RememberMany(context.Background(), mems, "test"); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// The writer's commits never checkpoint: with the background loop stopped the log grows
// past SQLite's automatic threshold (1,000 pages) instead of starting over, and a passive
// checkpoint on another connection then copies all of it.
func TestWriterLeavesCheckpointsToTheBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	s := openTestStore(t, path)
	engineOf(t, s).checkpoints.close()
	rememberFillers(t, s, "gWal", 6000)
	const autoThreshold = 1000 * 4096
	if wal := fileSize(t, path+"-wal"); wal <= 2*autoThreshold {
		t.Fatalf("the log holds %d bytes after the writes: a commit checkpointed it (automatic threshold %d)", wal, autoThreshold)
	}
	conn, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var busy, frames, copied int
	if err := conn.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
		t.Fatal(err)
	}
	if frames == 0 || copied != frames {
		t.Fatalf("passive checkpoint copied %d of %d frames, want all", copied, frames)
	}
}

// The background loop copies the log into the database file by itself: the file, which
// holds only the schema after Open, grows to hold the memories written.
func TestCheckpointerCopiesTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	s := openTestStore(t, path)
	before := fileSize(t, path)
	rememberFillers(t, s, "gCp", 2000)
	wal := fileSize(t, path+"-wal")
	deadline := time.Now().Add(20 * checkpointInterval)
	for fileSize(t, path) < before+wal/2 {
		if time.Now().After(deadline) {
			t.Fatalf("database file still %d bytes (%d before the writes, log %d) after %v: no background checkpoint ran",
				fileSize(t, path), before, wal, 20*checkpointInterval)
		}
		time.Sleep(checkpointInterval / 10)
	}
}

// The writer keeps statement journals (the pages a multi-row statement of a bulk write
// changed, kept to undo that statement alone) in memory: in a temporary file they were
// written out for every statement, and the file held page images of what was being
// deleted or overwritten. A VACUUM, whose copy of the whole database is a temporary one,
// builds it in a file and leaves the setting as it was.
func TestWriterKeepsStatementJournalsInMemory(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	check := func(when string) {
		t.Helper()
		if got, err := WriterPragma(ctx, s, "temp_store"); err != nil || got != "2" {
			t.Fatalf("%s: writer temp_store = %q (%v), want 2 (memory)", when, got, err)
		}
	}
	check("after Open")
	rememberFillers(t, s, "gVac", 500)
	if _, err := engineOf(t, s).write.ExecContext(ctx, `DELETE FROM memories`); err != nil {
		t.Fatal(err)
	}
	if freed, err := s.Maintenance.Compact(ctx); err != nil || freed == 0 {
		t.Fatalf("compact freed %d bytes (%v)", freed, err)
	}
	check("after a VACUUM")
}

// A bulk write's batches commit back to back, so the log never starts over on its own and
// would hold the whole load; past the bound each batch waits for a checkpoint first, the
// log starts over, and its file stays a few batches long. The writer is set to cut a file
// grown past logFileBytes back to that size when the log starts over (journal_size_limit).
func TestBulkWritesKeepTheLogBounded(t *testing.T) {
	logFile := func(bounded bool) int64 {
		path := filepath.Join(t.TempDir(), "kioku.db")
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if limit, err := WriterPragma(context.Background(), s, "journal_size_limit"); err != nil || limit != fmt.Sprint(logFileBytes) {
			t.Fatalf("writer's journal_size_limit = %q, %v; want %d", limit, err, logFileBytes)
		}
		e := engineOf(t, s)
		e.checkpoints.close()
		if bounded {
			// Checkpoints every millisecond measure the log between this test's batches, as the
			// one-second ones do between a large load's.
			if e.checkpoints, err = startCheckpointer(path, time.Millisecond); err != nil {
				t.Fatal(err)
			}
			e.checkpoints.logBound = 50
		} else {
			// No checkpoint at all: the log holds every page the load wrote.
			e.checkpoints = nil
		}
		// One bulk write of ten full batches (RememberMany's are 1,000 memories).
		mems := make([]memory.Memory, 10_000)
		for i := range mems {
			mems[i] = memory.Memory{Scope: memory.ScopeServer, GuildID: "gBulk", Type: memory.TypeFact,
				Content: fmt.Sprintf("note %d: the committee keeps minutes", i)}
		}
		if _, err := s.Transfer.RememberMany(context.Background(), mems, "test"); err != nil {
			t.Fatal(err)
		}
		return fileSize(t, path+"-wal")
	}
	whole, bounded := logFile(false), logFile(true)
	t.Logf("log file after 10 batches: %d bytes, %d with the bound", whole, bounded)
	if bounded*3 > whole {
		t.Fatalf("the bounded load's log grew to %d bytes, %d without a checkpoint: it did not start over", bounded, whole)
	}
}
