package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kioku-bot/kioku/migrations"
)

// The PostgreSQL schema is its own numbered series of .sql files (ltm/postgres/migrations),
// separate from SQLite's (ltm/sqlite/migrations): the engines differ in types, indexes and
// triggers, so one file can't serve both. One runner applies both (package migrations):
// each file once, in name order, in its own transaction, recorded with a checksum; a changed
// file, or a file the database has that this binary does not know (a newer kioku migrated
// it), stops Open with a clear message before anything is changed.

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationsLock is the advisory lock key that keeps two processes starting at once from
// applying the same migration twice.
const migrationsLock = 0x6b696f6b75 // "kioku"

// migrate applies the pending migrations of the embedded series.
func migrate(ctx context.Context, p *pgxpool.Pool) error {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("couldn't read migrations: %w", err)
	}
	_, err = Migrate(ctx, p, fsys)
	return err
}

// Migrate applies every migration in fsys that the database has not applied yet and
// returns the names it applied. Tests pass their own files. The runner is the one both
// engines use (package migrations); PostgreSQL brings its placeholders and the advisory
// lock that keeps two processes starting at once from applying the same file twice.
func Migrate(ctx context.Context, p *pgxpool.Pool, fsys fs.FS) ([]string, error) {
	db := stdlib.OpenDBFromPool(p)
	defer db.Close()
	res, err := migrations.ApplyEngine(ctx, db, fsys, migrationEngine)
	return res.Applied, err
}

var migrationEngine = migrations.Engine{
	Name:   "PostgreSQL",
	Rebind: rebind,
	Lock:   fmt.Sprintf(`SELECT pg_advisory_lock(%d)`, migrationsLock),
	Unlock: fmt.Sprintf(`SELECT pg_advisory_unlock(%d)`, migrationsLock),
}
