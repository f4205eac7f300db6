package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"modernc.org/sqlite"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/migrations"
)

// The SQLite schema is its own numbered series of .sql files (migrations/), embedded in the
// binary, separate from PostgreSQL's (ltm/postgres/migrations): the engines differ in
// types, indexes and triggers, so one file can't serve both. The one runner (package
// migrations) applies both: each file once, in name order, in its own transaction,
// recorded with a checksum; a changed file, or a file the database has that this binary
// does not know (a newer kioku migrated it), stops Open with a clear message before
// anything is changed.

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations returns SQLite's series of migration files: what Open applies, and what
// `kioku migrate` and the diagnostics compare a database with.
func Migrations() fs.FS {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the directory is embedded: it is always there
	}
	return fsys
}

// Migrate applies every migration in fsys that db, a SQLite database, has not applied yet:
// Migrations() for kioku's schema, a part of it in upgrade tests.
func Migrate(ctx context.Context, db *sql.DB, fsys fs.FS) (migrations.Result, error) {
	return migrations.ApplyEngine(ctx, db, fsys, migrationEngine)
}

// migrationEngine is SQLite to the runner: placeholders as they are, no lock (each file's
// transaction takes the database's one write lock before it checks what is applied), and
// for the file that calls kioku_search_text a connection that has it. The runner holds no
// connection of its own on SQLite, so the pool can give one.
var migrationEngine = migrations.Engine{
	Rebind:   func(q string) string { return q },
	FileConn: searchTextFileConn,
}

// searchTextFunction is the SQL function migration 0004 calls. Since migration 0007 the
// schema needs no function of ours: kioku stores each memory's search text in plain columns.
// 0004 must stay as it was applied (the runner checks every file's checksum), and it still
// runs on every database older than it, fresh ones included, so the function is registered
// when such a file is about to run, never as a side effect of importing the package.
const searchTextFunction = "kioku_search_text"

var registerSearchText = sync.OnceValue(func() error {
	if err := sqlite.RegisterDeterministicScalarFunction(searchTextFunction, 1, searchText); err != nil {
		return fmt.Errorf("couldn't register %s: %w", searchTextFunction, err)
	}
	return nil
})

// searchTextFileConn returns a connection of db that has kioku_search_text for a
// migration whose SQL calls it, and nil for any other (migrations.Engine.FileConn).
func searchTextFileConn(ctx context.Context, db *sql.DB, body string) (*sql.Conn, error) {
	if !strings.Contains(body, searchTextFunction+"(") {
		return nil, nil
	}
	return searchTextConn(ctx, db)
}

// searchTextConn returns a connection of db that has kioku_search_text. The driver adds a
// registered function only to connections it opens afterwards, so an idle connection opened
// before the registration is closed (returning driver.ErrBadConn from Raw tells database/sql
// to discard it) and the next one is tried; with every idle one gone, db opens a new one.
func searchTextConn(ctx context.Context, db *sql.DB) (*sql.Conn, error) {
	if err := registerSearchText(); err != nil {
		return nil, err
	}
	for range db.Stats().OpenConnections + 1 {
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("couldn't open a connection: %w", err)
		}
		var probe sql.NullString
		if err := conn.QueryRowContext(ctx, `SELECT `+searchTextFunction+`(NULL)`).Scan(&probe); err == nil {
			return conn, nil
		}
		if err := conn.Raw(func(any) error { return driver.ErrBadConn }); err != nil && !errors.Is(err, driver.ErrBadConn) {
			conn.Close()
			return nil, fmt.Errorf("couldn't drop a connection: %w", err)
		}
		conn.Close()
	}
	return nil, fmt.Errorf("couldn't get a connection with %s", searchTextFunction)
}

// searchText is memory.SearchText for SQL; NULL stays NULL.
func searchText(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case string:
		return memory.SearchText(v), nil
	case []byte:
		return memory.SearchText(string(v)), nil
	default:
		return nil, fmt.Errorf("kioku_search_text: want text, got %T", v)
	}
}
