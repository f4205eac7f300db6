package migrations

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"

	"modernc.org/sqlite"

	"github.com/kioku-bot/kioku/memory"
)

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

// needsSearchText reports whether a migration's SQL calls kioku_search_text.
func needsSearchText(body string) bool {
	return strings.Contains(body, searchTextFunction+"(")
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
