package main

import (
	"context"
	"fmt"
)

// pgDumpAdvice is how to back up a PostgreSQL store: with the database's own tools, which
// take a consistent snapshot while the bots write, as VACUUM INTO does for SQLite.
const pgDumpAdvice = "back it up with pg_dump (pg_dump --format=custom --file=kioku.dump \"$KIOKU_DB\"; pg_restore restores it) or your PostgreSQL service's own backups"

// runBackup is `kioku backup PATH`: a consistent snapshot of the database, safe to take
// while `kioku run` is writing to it.
func runBackup(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "backup")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one PATH for the backup file")
	}
	if app.storeKind() == kindPostgres {
		return errBackupOnPostgres
	}
	store, err := app.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	sqlite, err := store.sqliteOnly("kioku backup", pgDumpAdvice)
	if err != nil {
		return err
	}
	if err := sqlite.Maintenance.Backup(ctx, pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(app.Stdout, "backed up %s to %s\n", app.config.DB, pos[0])
	return nil
}
