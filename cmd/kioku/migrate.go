package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory/maintenance"
	"github.com/kioku-bot/kioku/migrations"
)

func runMigrate(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "migrate")
	noBackup := fs.Bool("no-backup", false, "apply pending migrations without copying the database first")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	if app.storeKind() == kindPostgres {
		return migratePostgres(ctx, app)
	}
	if !*noBackup {
		path, err := backupBeforeMigrating(ctx, app.config.DB, time.Now())
		if err != nil {
			return err
		}
		if path != "" {
			fmt.Fprintf(app.Stdout, "backed up %s to %s before migrating\n", app.config.DB, path)
		}
	}
	db, err := sql.Open("sqlite", sqlite.DSN(app.config.DB))
	if err != nil {
		return fmt.Errorf("couldn't open %s: %w", app.config.DB, err)
	}
	defer db.Close()
	res, err := sqlite.Migrate(ctx, db, sqlite.Migrations())
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
	rep, err := store.runRepairs(ctx)
	if err != nil {
		return err
	}
	// A database this run created held nothing older versions wrote: its repairs only
	// recorded themselves done, which is nothing to report.
	if created := len(res.Applied) == res.Current; !created && (repairsChanged(rep) || rep.Vacuumed) {
		fmt.Fprintf(app.Stdout, "repaired: %s\n", describeRepairs(rep))
	}
	fmt.Fprintf(app.Stdout, "%s is up to date (%d migrations).\n", app.config.DB, res.Current)
	return nil
}

// migratePostgres applies the PostgreSQL store's pending migrations, as opening it does;
// several processes starting at once apply each once (an advisory lock). There is no copy
// beforehand: back PostgreSQL up with pg_dump (README "Scaling out").
func migratePostgres(ctx context.Context, app *App) error {
	store, err := app.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	st, err := store.Health.Stats(ctx, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(app.Stdout, "%s is up to date (%d migrations).\n", app.dbName(), st.Migrations)
	return nil
}

// backupBeforeMigrating copies the database at dbPath beside itself, as
// DB.pre-MIGRATION-YYYYMMDDTHHMMSSZ.bak (MIGRATION is the first pending one), when it holds
// tables and has migrations pending: a migration cannot be undone, and an older kioku
// refuses the migrated file, so the copy is the way back. It returns "" without writing
// anything for a database that does not exist yet, is empty or is up to date. The
// timestamp keeps a retried upgrade from clobbering the copy an earlier attempt made.
func backupBeforeMigrating(ctx context.Context, dbPath string, now time.Time) (string, error) {
	if _, err := os.Stat(dbPath); errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("couldn't read %s: %w", dbPath, err)
	}
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(dbPath))
	if err != nil {
		return "", fmt.Errorf("couldn't open %s: %w", dbPath, err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&tables); err != nil {
		return "", fmt.Errorf("couldn't read the schema of %s: %w", dbPath, err)
	}
	if tables == 0 {
		return "", nil
	}
	pending, err := migrations.Pending(ctx, db, sqlite.Migrations())
	if err != nil || len(pending) == 0 {
		return "", err
	}
	if err := db.Close(); err != nil {
		return "", fmt.Errorf("couldn't close %s: %w", dbPath, err)
	}
	path := fmt.Sprintf("%s.pre-%s-%s.bak", dbPath, strings.TrimSuffix(pending[0], ".sql"), now.UTC().Format(backupStamp))
	if err := sqlite.BackupFile(ctx, dbPath, path); err != nil {
		return "", fmt.Errorf("%w (kioku migrate --no-backup migrates without a copy)", err)
	}
	return path, nil
}

// repairsChanged reports whether a run of the one-time repairs changed stored data: on a
// database that holds nothing to repair, they only record themselves finished.
func repairsChanged(rep maintenance.RepairReport) bool {
	return rep.Memories+rep.History+rep.Transcripts+rep.Jobs+rep.Stripped+rep.SearchText+rep.Linked+rep.RefersTo+rep.Comentions > 0
}

// describeRepairs says in one line what RunRepairs changed, naming only what it found.
func describeRepairs(rep maintenance.RepairReport) string {
	var parts []string
	count := func(n int, one, many string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, plural(n, one, many)))
		}
	}
	if redacted := rep.Memories + rep.History + rep.Transcripts + rep.Jobs; redacted > 0 {
		var in []string
		for _, c := range []struct {
			n         int
			one, many string
		}{{rep.Memories, "memory", "memories"}, {rep.History, "history row", "history rows"},
			{rep.Transcripts, "transcript turn", "transcript turns"}, {rep.Jobs, "job", "jobs"}} {
			if c.n > 0 {
				in = append(in, fmt.Sprintf("%d %s", c.n, plural(c.n, c.one, c.many)))
			}
		}
		line := "credentials redacted in " + strings.Join(in, ", ")
		if rep.Duplicates > 0 {
			line += fmt.Sprintf(" (%d of the memories forgotten as %s)", rep.Duplicates, plural(rep.Duplicates, "a duplicate", "duplicates"))
		}
		parts = append(parts, line)
	}
	count(rep.Stripped, "finished job stripped to its id", "finished jobs stripped to their ids")
	count(rep.SearchText, "memory given its search text", "memories given their search text")
	count(rep.Linked, "memory linked to the knowledge graph", "memories linked to the knowledge graph")
	count(rep.RefersTo, "memory given the date it names", "memories given the dates they name")
	count(rep.Comentions, "memory's words counted together", "memories' words counted together")
	if rep.Vacuumed {
		parts = append(parts, "freed space cleared")
	}
	if len(rep.Finished) > 0 {
		parts = append(parts, "finished "+strings.Join(rep.Finished, ", "))
	}
	return strings.Join(parts, "; ")
}

// plural picks the form of a noun for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
