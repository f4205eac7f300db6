package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/migrations"
)

// ErrNoDatabase is returned by OpenReadOnly when no file exists at the path.
var ErrNoDatabase = errors.New("no database")

// readOnlyFileDSN opens the file itself read-only (SQLite's mode=ro), so no connection of
// it can create the file, migrate it or write to it, whatever statement it is given. It
// sets no journal mode: that pragma would write to a database that is not in WAL mode.
func readOnlyFileDSN(path string) string {
	return fmt.Sprintf("file:%s?mode=ro&_pragma=busy_timeout(%d)&_pragma=query_only(1)", path, DefaultBusyTimeout.Milliseconds())
}

// OpenReadOnly opens the kioku database at path for reading only, for diagnostics
// (`kioku doctor`): it never creates the file and never migrates it. A database behind
// this binary's migrations opens, and the returned state lists what is pending; one
// migrated by a newer kioku, a changed migration, a path with no file (ErrNoDatabase) or
// a file that is not a kioku database is an error. Every write through the store fails.
func OpenReadOnly(ctx context.Context, path string) (*ltm.Store, migrations.State, error) {
	var state migrations.State
	if path == "" {
		return nil, state, errors.New("couldn't open database: empty path")
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, state, fmt.Errorf("%w at %s", ErrNoDatabase, path)
	case err != nil:
		return nil, state, fmt.Errorf("couldn't open database %s: %w", path, err)
	case fi.IsDir():
		return nil, state, fmt.Errorf("couldn't open database %s: it is a directory", path)
	}
	open := func(conns int) (*sql.DB, error) {
		d, err := sql.Open("sqlite", readOnlyFileDSN(path))
		if err != nil {
			return nil, fmt.Errorf("couldn't open database %s: %w", path, err)
		}
		d.SetMaxOpenConns(conns)
		d.SetMaxIdleConns(conns)
		return d, nil
	}
	write, err := open(1)
	if err != nil {
		return nil, state, err
	}
	read, err := open(4)
	if err != nil {
		write.Close()
		return nil, state, err
	}
	state, err = migrations.Inspect(ctx, read, Migrations())
	if err == nil {
		err = schemaError(state)
	}
	if err != nil {
		write.Close()
		read.Close()
		return nil, state, fmt.Errorf("couldn't open database %s: %w", path, err)
	}
	t := ltm.DefaultTunables()
	e := newEngine(path, write, read, t)
	e.readOnly = true
	// Nothing is prepared on the writer: it cannot write, and a database a migration
	// behind may lack what the statements name.
	return ltm.OpenEngine(e, ltm.Conns{Write: write, Read: read, Path: path}, t), state, nil
}

// schemaError refuses a schema this binary cannot read safely: one a newer kioku migrated,
// or one whose migration files changed after they were applied.
func schemaError(st migrations.State) error {
	switch {
	case len(st.Unknown) > 0:
		return fmt.Errorf("this database was migrated by a newer kioku (unknown here: %s): upgrade kioku", strings.Join(st.Unknown, ", "))
	case len(st.Changed) > 0:
		return fmt.Errorf("migrations %s changed after they were applied", strings.Join(st.Changed, ", "))
	}
	return nil
}
