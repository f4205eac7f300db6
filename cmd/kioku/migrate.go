package main

import (
	"context"
	"database/sql"
	"fmt"

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
	if len(res.Applied) == 0 {
		fmt.Fprintf(app.Stdout, "%s is up to date (%d migrations).\n", app.config.DB, res.Current)
		return nil
	}
	for _, name := range res.Applied {
		fmt.Fprintf(app.Stdout, "applied %s\n", name)
	}
	fmt.Fprintf(app.Stdout, "%s is up to date (%d migrations).\n", app.config.DB, res.Current)
	return nil
}

// openStore opens the configured database, applying migrations.
func (app *App) openStore(ctx context.Context) (*ltm.Store, error) {
	return ltm.Open(ctx, app.config.DB)
}
