package main

import (
	"context"
	"fmt"
)

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
	store, err := app.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Maintenance.Backup(ctx, pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(app.Stdout, "backed up %s to %s\n", app.config.DB, pos[0])
	return nil
}
