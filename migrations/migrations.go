// Package migrations is the one runner of kioku's schema migrations, SQLite's and
// PostgreSQL's: each engine embeds its own numbered series of .sql files
// (ltm/sqlite/migrations, ltm/postgres/migrations) and applies it with ApplyEngine, saying
// what its database does differently (Engine).
//
// Each file is applied once, in name order, inside its own transaction, and recorded with a
// checksum. An applied file must never change: the runner refuses to start when one did,
// because a silently different schema is worse than a clear failure. A database that records
// a file the binary does not have was migrated by a newer kioku, and is refused before
// anything is applied.
package migrations

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"
)

// Result reports what a run did.
type Result struct {
	Applied []string // files applied by this run, in order
	Current int      // files recorded as applied after the run
}

// Engine is what the runner does differently on one database engine.
type Engine struct {
	// Name prefixes the engine's messages ("PostgreSQL migration 0001_schema.sql was
	// changed…"); SQLite's say "migration" alone.
	Name string
	// Rebind numbers the runner's ? placeholders for the engine.
	Rebind func(string) string
	// Lock and Unlock, when set, are run on the runner's one connection before it reads
	// anything and after it ends, so that two processes starting at once never both apply a
	// file: PostgreSQL runs writers concurrently. SQLite needs none: each file's transaction
	// takes the database's one write lock before it checks what is applied.
	Lock, Unlock string
	// FileConn, when set, returns the connection of db that the file whose SQL is body is
	// applied on, or nil for the runner's own: SQLite's series has a file that calls a
	// function of kioku's, which its driver gives only to connections opened after the
	// function was registered. The runner closes the connection after the file.
	FileConn func(ctx context.Context, db *sql.DB, body string) (*sql.Conn, error)
}

// conn is what the runner runs statements on: the pool, or one connection of it.
type conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// ApplyEngine runs every migration in fsys not yet recorded in db, the database of engine
// e. An engine passes its own series; tests pass their own files.
func ApplyEngine(ctx context.Context, db *sql.DB, fsys fs.FS, e Engine) (Result, error) {
	var res Result
	var c conn = db
	if e.Lock != "" {
		one, err := db.Conn(ctx)
		if err != nil {
			return res, fmt.Errorf("couldn't migrate: %w", err)
		}
		defer one.Close()
		if _, err := one.ExecContext(ctx, e.Lock); err != nil {
			return res, fmt.Errorf("couldn't migrate: %w", err)
		}
		// Closing the session releases the lock too, should the unlock fail.
		defer one.ExecContext(context.WithoutCancel(ctx), e.Unlock) //nolint:errcheck
		c = one
	}
	if _, err := c.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return res, fmt.Errorf("couldn't create schema_migrations: %w", err)
	}
	applied, err := appliedChecksums(ctx, c)
	if err != nil {
		return res, err
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return res, fmt.Errorf("couldn't list migrations: %w", err)
	}
	sort.Strings(names)
	if err := e.refuseNewer(applied, names); err != nil {
		return res, err
	}
	for _, name := range names {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return res, fmt.Errorf("couldn't read migration %s: %w", name, err)
		}
		sum := sha256.Sum256(body)
		checksum := hex.EncodeToString(sum[:])
		if prev, ok := applied[name]; ok {
			if prev != checksum {
				return res, e.changed(name, checksum, prev)
			}
			continue
		}
		done, err := e.applyFile(ctx, db, c, name, string(body), checksum)
		if err != nil {
			return res, err
		}
		if done {
			res.Applied = append(res.Applied, name)
		} else {
			applied[name] = checksum // another process applied it meanwhile
		}
	}
	res.Current = len(applied) + len(res.Applied)
	return res, nil
}

// applyFile applies one file on c, or on the connection the engine gives it (FileConn).
func (e Engine) applyFile(ctx context.Context, db *sql.DB, c conn, name, body, checksum string) (bool, error) {
	if e.FileConn != nil {
		fc, err := e.FileConn(ctx, db, body)
		if err != nil {
			return false, fmt.Errorf("couldn't apply %smigration %s: %w", e.prefix(), name, err)
		}
		if fc != nil {
			defer fc.Close()
			return e.applyOne(ctx, fc, name, body, checksum)
		}
	}
	return e.applyOne(ctx, c, name, body, checksum)
}

// Pending lists the migrations in fsys that db, a SQLite database, has not applied yet, in
// the order ApplyEngine would apply them, without changing anything: a database that has no
// schema_migrations table has every migration pending. It fails like ApplyEngine when db
// was migrated by a newer kioku, so a caller learns that before it does anything else.
func Pending(ctx context.Context, db *sql.DB, fsys fs.FS) ([]string, error) {
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&tables); err != nil {
		return nil, fmt.Errorf("couldn't read the schema: %w", err)
	}
	applied := map[string]string{}
	if tables > 0 {
		var err error
		if applied, err = appliedChecksums(ctx, db); err != nil {
			return nil, err
		}
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("couldn't list migrations: %w", err)
	}
	sort.Strings(names)
	if err := (Engine{}).refuseNewer(applied, names); err != nil {
		return nil, err
	}
	var pending []string
	for _, name := range names {
		if _, ok := applied[name]; !ok {
			pending = append(pending, name)
		}
	}
	return pending, nil
}

// refuseNewer fails when db records a migration fsys does not have: a newer kioku migrated
// it, and an older binary running on that schema could misread or damage data, so the only
// safe moves are upgrading the binary or restoring a backup. It runs before anything is
// applied, so a refused database is left exactly as it was.
func (e Engine) refuseNewer(applied map[string]string, known []string) error {
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
	newestDB := unknown[0]
	for name := range applied {
		newestDB = max(newestDB, name)
	}
	newestKnown := "no migrations"
	if len(known) > 0 {
		newestKnown = known[len(known)-1]
	}
	sort.Strings(unknown)
	return fmt.Errorf("this %sdatabase was migrated by a newer kioku (%s; unknown here: %s); this binary knows up to %s: upgrade kioku or restore a backup",
		e.prefix(), newestDB, strings.Join(unknown, ", "), newestKnown)
}

// prefix is the engine's name and a space, or nothing for SQLite.
func (e Engine) prefix() string {
	if e.Name == "" {
		return ""
	}
	return e.Name + " "
}

func (e Engine) changed(name, checksum, prev string) error {
	return fmt.Errorf("%smigration %s was changed after it was applied (checksum %s, recorded %s); restore the original file and add a new migration instead",
		e.prefix(), name, short(checksum), short(prev))
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func appliedChecksums(ctx context.Context, db querier) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name, checksum FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
	}
	defer rows.Close()
	out := make(map[string]string)
	for rows.Next() {
		var name, sum string
		if err := rows.Scan(&name, &sum); err != nil {
			return nil, fmt.Errorf("couldn't read schema_migrations: %w", err)
		}
		out[name] = sum
	}
	return out, rows.Err()
}

// applyOne applies one migration in its own transaction on c and reports whether it did:
// false when another process on the same database (a second shard starting at the same
// moment) recorded it first. On SQLite the check runs inside the transaction, which holds
// the write lock once it has written, so two processes never both run a migration; on
// PostgreSQL the runner's advisory lock (Engine.Lock) does the same.
func (e Engine) applyOne(ctx context.Context, c conn, name, body, checksum string) (bool, error) {
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("couldn't begin %smigration %s: %w", e.prefix(), name, err)
	}
	defer tx.Rollback()
	// A write first, so the transaction holds the write lock (it waits for another
	// process's migration to commit) before it reads what is applied.
	if _, err := tx.ExecContext(ctx, `DELETE FROM schema_migrations WHERE name = '' AND checksum = ''`); err != nil {
		return false, fmt.Errorf("couldn't begin %smigration %s: %w", e.prefix(), name, err)
	}
	var prev string
	switch err := tx.QueryRowContext(ctx, e.Rebind(`SELECT checksum FROM schema_migrations WHERE name = ?`), name).Scan(&prev); {
	case err == nil && prev == checksum:
		return false, nil
	case err == nil:
		return false, e.changed(name, checksum, prev)
	case !errors.Is(err, sql.ErrNoRows):
		return false, fmt.Errorf("couldn't read applied migrations: %w", err)
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return false, fmt.Errorf("couldn't apply %smigration %s: %w", e.prefix(), name, err)
	}
	if _, err := tx.ExecContext(ctx, e.Rebind(`INSERT INTO schema_migrations (name, checksum, applied_at) VALUES (?, ?, ?)`),
		name, checksum, time.Now().UnixMilli()); err != nil {
		return false, fmt.Errorf("couldn't record %smigration %s: %w", e.prefix(), name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("couldn't commit %smigration %s: %w", e.prefix(), name, err)
	}
	return true, nil
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// State is how a database's applied migrations compare with a set of files.
type State struct {
	Applied int      // files recorded as applied
	Pending []string // known files not applied yet, in order
	Unknown []string // applied names no file has: a newer kioku migrated the database
	Changed []string // applied files whose content changed since
}

// ErrNotKioku is returned by Inspect for a database without kioku's migration table.
var ErrNotKioku = errors.New("not a kioku database (it has no schema_migrations table)")

// Inspect compares db, a SQLite database, with the migrations in fsys without writing
// anything, so it works on a read-only connection and leaves a database that is behind
// exactly as it was.
func Inspect(ctx context.Context, db *sql.DB, fsys fs.FS) (State, error) {
	var st State
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil {
		return st, fmt.Errorf("couldn't read the schema: %w", err)
	}
	if n == 0 {
		return st, ErrNotKioku
	}
	applied, err := appliedChecksums(ctx, db)
	if err != nil {
		return st, err
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return st, fmt.Errorf("couldn't list migrations: %w", err)
	}
	sort.Strings(names)
	known := make(map[string]bool, len(names))
	for _, name := range names {
		known[name] = true
		prev, ok := applied[name]
		if !ok {
			st.Pending = append(st.Pending, name)
			continue
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return st, fmt.Errorf("couldn't read migration %s: %w", name, err)
		}
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != prev {
			st.Changed = append(st.Changed, name)
		}
	}
	for name := range applied {
		if !known[name] {
			st.Unknown = append(st.Unknown, name)
		}
	}
	sort.Strings(st.Unknown)
	st.Applied = len(applied)
	return st, nil
}
