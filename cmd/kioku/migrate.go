package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/migrations"
)

func runMigrate(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "migrate")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", ltm.DSN(app.config.DB))
	if err != nil {
		return fmt.Errorf("couldn't open %s: %w", app.config.DB, err)
	}
	defer db.Close()
	res, err := migrations.Apply(ctx, db, migrations.FS())
	if err != nil {
		return err
	}
	for _, name := range res.Applied {
		fmt.Fprintf(app.Stdout, "applied %s\n", name)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("couldn't close %s: %w", app.config.DB, err)
	}
	// Data older versions wrote is repaired here, before the bot starts, so an operator
	// sees it finish (kioku run would also do it, in the background).
	store, err := app.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	rep, err := store.Maintenance.RunRepairs(ctx)
	if err != nil {
		return err
	}
	if !rep.Empty() {
		fmt.Fprintf(app.Stdout, "repaired: %s\n", describeRepairs(rep))
	}
	fmt.Fprintf(app.Stdout, "%s is up to date (%d migrations).\n", app.config.DB, res.Current)
	return nil
}

// describeRepairs says in one line what RunRepairs did.
func describeRepairs(rep ltm.RepairReport) string {
	parts := []string{fmt.Sprintf("credentials redacted in %d memories (%d forgotten as duplicates), %d history rows, %d transcript turns, %d jobs",
		rep.Memories, rep.Duplicates, rep.History, rep.Transcripts, rep.Jobs),
		fmt.Sprintf("%d finished jobs stripped to their ids", rep.Stripped)}
	if rep.SearchText > 0 {
		parts = append(parts, fmt.Sprintf("search text stored for %d memories", rep.SearchText))
	}
	if rep.Vacuumed {
		parts = append(parts, "freed space cleared")
	}
	if len(rep.Finished) > 0 {
		parts = append(parts, "finished "+strings.Join(rep.Finished, ", "))
	}
	return strings.Join(parts, "; ")
}
