package ltm

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// Upkeep is the maintenance an engine does its own way: the state of its storage (how
// sound, how large, what space it could give back, which migrations it lacks), its
// full-text search (how it is built, how it is checked against the rows, how it is
// rebuilt), and copying the database. The rules of maintenance (what retention deletes,
// what a repair changes and audits, what the diagnostics count) are the service's and the
// same on every engine. An Engine passed to OpenEngine implements Upkeep too.
type Upkeep interface {
	// Integrity checks the database as far as it can afford on demand, and returns "" when
	// it is sound or else what is wrong, in words an operator can act on.
	Integrity(ctx context.Context) (string, error)
	// SizeBytes is the space the store's data takes.
	SizeBytes(ctx context.Context) (int64, error)
	// HasSchema reports whether the database has table, or the table's column when column
	// is not empty: `kioku doctor` reads a database a migration or two behind without
	// migrating it.
	HasSchema(ctx context.Context, table, column string) (bool, error)
	// DiagnoseStorage fills the engine's part of the storage diagnostics: FileBytes,
	// FreeBytes, AutoVacuum and PendingMigrations.
	DiagnoseStorage(ctx context.Context, st *maintenance.Storage) error
	// DiagnoseSearch compares the full-text search with the live memories: x.Words and
	// x.Trigrams.
	DiagnoseSearch(ctx context.Context, x *maintenance.Index) error
	// Reindex rebuilds the full-text search from the rows (`kioku reindex`).
	Reindex(ctx context.Context) (maintenance.ReindexReport, error)
	// RepairSearch is self-repair's mending of the full-text search; it returns how many
	// items it changed.
	RepairSearch(ctx context.Context) (int, error)
	// MergeSearch drops what the full-text search still holds of purged memories; retention
	// calls it after a purge.
	MergeSearch(ctx context.Context) error
	// Compact gives free space back to the file system and returns how many bytes it freed.
	Compact(ctx context.Context) (int64, error)
	// EraseDeleted leaves nothing that earlier deletes left readable in the storage: the
	// one-time repair of a database older versions wrote, before deletes overwrote what
	// they deleted (SQLite: the word index's deleted entries and the file's free pages).
	// An engine whose storage never kept deleted text does nothing.
	EraseDeleted(ctx context.Context) error
	// Backup writes a consistent copy of the database to path, or says why it can't.
	Backup(ctx context.Context, path string) error
}

// upkeepOf is the Upkeep of eng. An engine without one is a programming error, caught when
// the store is opened rather than at the first repair.
func upkeepOf(eng Engine) Upkeep {
	u, ok := eng.(Upkeep)
	if !ok {
		panic("ltm: the " + eng.Name() + " engine does not implement ltm.Upkeep")
	}
	return u
}

// keywordFallbackOf is the KeywordFallback of eng, which every engine has: the first recall
// of a scope whose in-memory index is still building needs it.
func keywordFallbackOf(eng Engine) KeywordFallback {
	k, ok := eng.(KeywordFallback)
	if !ok {
		panic("ltm: the " + eng.Name() + " engine does not implement ltm.KeywordFallback")
	}
	return k
}

// Backup writes a consistent snapshot of the database to path while the bot keeps running
// (SQLite: VACUUM INTO, into a file only kioku's user may read; an existing path is
// refused rather than overwritten). On an engine that backs itself up with its own tools
// (PostgreSQL) it refuses with the engine's reason and writes nothing.
func (s *Maintenance) Backup(ctx context.Context, path string) error {
	return s.db.upkeep.Backup(ctx, path)
}

// FlushIndex indexes the memories single writes left waiting for the full-text search
// (DeferredIndexing). The engine does it in the background shortly after each write and on
// Close; tests call it to observe the full-text search deterministically.
func (s *Memories) FlushIndex(ctx context.Context) error {
	if d, ok := s.db.eng.(DeferredIndexing); ok {
		return d.FlushIndexing(ctx)
	}
	return nil
}

// embedModel names the embedding model recall uses in this process ("" for none).
func embedModel(d *db) string {
	if e := d.recall.emb.Load(); e != nil {
		return e.model
	}
	return ""
}

// embedMissing is the embedding tracker's run with no cap on calls, which also loads every
// vector into recall's index. Without an embedding model it does nothing.
func embedMissing(ctx context.Context, d *db) (int, error) {
	res, err := newRecall(d).TrackEmbeddings(ctx, memory.EmbedTrackOptions{})
	if err == nil && res.Skipped != "" {
		err = fmt.Errorf("couldn't embed missing vectors: %s", res.Skipped)
	}
	return res.Embedded + res.Refreshed, err
}

// reindexed puts the memories ids, whose text a repair changed, back in the vector index
// (best effort).
func reindexed(ctx context.Context, d *db, ids []int64) {
	for _, id := range ids {
		m, err := scanMemory(d.read.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id = ?`, id))
		if err != nil {
			continue
		}
		d.vectors.unindexMemory(m)
		d.vectors.indexMemories(ctx, m)
	}
}
