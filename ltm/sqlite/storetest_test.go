package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/ltm/storetest"
)

// TestSQLiteStore runs the store contract on the SQLite store, one fresh database file per
// case.
func TestSQLiteStore(t *testing.T) {
	storetest.Run(t, openSQLite)
}

func openSQLite(t *testing.T) storetest.Stores {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kioku.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	clock := storetest.NewClock(storetest.Epoch)
	s.Now = clock.Now
	return storetest.Stores{
		Memories: s.Memories, Review: s.Review, Duplicates: s.Duplicates, Recall: s.Recall, Jobs: s.Jobs, Transcripts: s.Transcripts, Settings: s.Settings,
		Confirmations: s.Confirmations, ForgetMe: s.Confirmations, Graph: s.Graph,
		Stages: &s.Stages,
		Facts:  s.Facts, Channels: s.Channels, Guilds: s.Guilds, Budgets: s.Budgets, Counts: s.Health, Sessions: s.Sessions,
		Contributions: s.Overview,
		Keywords:      s.Recall,
		Raw:           sqliteFiles{path: path},
		Repairs:       s.Maintenance,
		Exec:          sqliteExec(path),
		Writes:        s,
		Embedder:      s.Recall,
		ReadOnly: func(ctx context.Context, on bool) error {
			_, err := sqlite.WriterPragma(ctx, s, fmt.Sprintf("query_only = %t", on))
			return err
		},
		Clock:         clock,
		RecoverWindow: s.RecoverWindow,
		ConfirmTTL:    s.ConfirmTTL,
	}
}

// sqliteFiles hands the suite the database file and its WAL, with the WAL checkpointed
// into the database first so that both hold only what is live.
type sqliteFiles struct{ path string }

func (f sqliteFiles) DataFiles(ctx context.Context) ([]string, error) {
	db, err := sql.Open("sqlite", sqlite.DSN(f.path))
	if err != nil {
		return nil, fmt.Errorf("couldn't open %s: %w", f.path, err)
	}
	defer db.Close()
	var busy, frames, done int
	if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done); err != nil {
		return nil, fmt.Errorf("couldn't checkpoint %s: %w", f.path, err)
	}
	if busy != 0 {
		return nil, fmt.Errorf("couldn't checkpoint %s: the database is busy", f.path)
	}
	return filepath.Glob(f.path + "*")
}

// sqliteExec runs a statement on the database file through a connection of its own, as
// another version of kioku would have written.
func sqliteExec(path string) func(ctx context.Context, stmt string) error {
	return func(ctx context.Context, stmt string) error {
		db, err := sql.Open("sqlite", sqlite.DSN(path))
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.ExecContext(ctx, stmt)
		return err
	}
}
