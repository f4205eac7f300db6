package pgstore

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The PostgreSQL schema is its own numbered series of .sql files (pgstore/migrations),
// separate from SQLite's (migrations/): the engines differ in types, indexes and triggers,
// so one file can't serve both. The rules are the same as ltm's: each file is applied once,
// in name order, in its own transaction, recorded with a checksum; a changed file, or a
// file the database has that this binary does not know (a newer kioku migrated it), stops
// Open with a clear message before anything is changed.

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
// returns the names it applied. Tests pass their own files.
func Migrate(ctx context.Context, p *pgxpool.Pool, fsys fs.FS) ([]string, error) {
	conn, err := p.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("couldn't migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationsLock); err != nil {
		return nil, fmt.Errorf("couldn't migrate: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationsLock) //nolint:errcheck // ending the session releases it too
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("couldn't create schema_migrations: %w", err)
	}
	applied := map[string]string{}
	rows, err := conn.Query(ctx, `SELECT name, checksum FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
	}
	for rows.Next() {
		var name, sum string
		if err := rows.Scan(&name, &sum); err != nil {
			rows.Close()
			return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
		}
		applied[name] = sum
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("couldn't list migrations: %w", err)
	}
	sort.Strings(names)
	if err := refuseNewer(applied, names); err != nil {
		return nil, err
	}
	var done []string
	for _, name := range names {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return done, fmt.Errorf("couldn't read migration %s: %w", name, err)
		}
		sum := sha256.Sum256(body)
		checksum := hex.EncodeToString(sum[:])
		if prev, ok := applied[name]; ok {
			if prev != checksum {
				return done, fmt.Errorf("PostgreSQL migration %s was changed after it was applied (checksum %.12s, recorded %.12s); restore the original file and add a new migration instead", name, checksum, prev)
			}
			continue
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("couldn't apply PostgreSQL migration %s: %w", name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ($1, $2, $3)`,
				name, checksum, time.Now().UnixMilli()); err != nil {
				return fmt.Errorf("couldn't record PostgreSQL migration %s: %w", name, err)
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		done = append(done, name)
	}
	return done, nil
}

// refuseNewer fails when the database records a migration this binary does not have: a
// newer kioku migrated it, and an older binary could misread or damage its data.
func refuseNewer(applied map[string]string, known []string) error {
	knownSet := make(map[string]bool, len(known))
	for _, name := range known {
		knownSet[name] = true
	}
	var unknown []string
	for name := range applied {
		if !knownSet[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	newestKnown := "no migrations"
	if len(known) > 0 {
		newestKnown = known[len(known)-1]
	}
	return fmt.Errorf("this PostgreSQL database was migrated by a newer kioku (unknown here: %s); this binary knows up to %s: upgrade kioku or restore a backup",
		strings.Join(unknown, ", "), newestKnown)
}
