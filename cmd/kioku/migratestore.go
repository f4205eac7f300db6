package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/kioku-bot/kioku/internal/storecopy"
	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/migrations"
)

// runMigrateStore is `kioku migrate-store --from kioku.db --to postgres://…` (--to defaults
// to KIOKU_DB when that is a PostgreSQL URL): it copies a SQLite database into an empty
// PostgreSQL one, keeping every memory's id, and verifies each table's row count and
// content hash (README "Scaling out"). Stop the bot first: what it writes after the copy
// began is not copied.
func runMigrateStore(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "migrate-store")
	from := fs.String("from", "", "the SQLite database to copy (default: KIOKU_DB)")
	to := fs.String("to", "", "the empty PostgreSQL database to copy into: postgres://USER:PASSWORD@HOST/DB (default: KIOKU_DB, when it is one)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *from == "" {
		*from = app.config.DB
	}
	if *to == "" && isPostgresURL(app.config.DB) {
		// The database this kioku is configured to run on: in a container the URL stays in
		// the environment, off the command line.
		*to = app.config.DB
	}
	*from = strings.TrimPrefix(*from, "sqlite:")
	*to = lowerScheme(strings.TrimSpace(*to))
	if !isPostgresURL(*to) {
		return usagef("want --to postgres://… (or postgresql://…), the PostgreSQL database to copy into")
	}
	if isPostgresURL(*from) {
		return usagef("want --from a SQLite file: migrate-store copies SQLite into PostgreSQL")
	}
	src, err := openCopySource(ctx, *from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, *to)
	if err != nil {
		return err
	}
	defer dst.Close()
	rep, err := storecopy.Copy(ctx, src, dst.Pool())
	if err != nil {
		return fmt.Errorf("couldn't copy %s to %s: %w", *from, redactURL(*to), err)
	}
	if *asJSON {
		return writeJSON(app.Stdout, rep)
	}
	writeCopyReport(app, *from, redactURL(*to), rep)
	return nil
}

// openCopySource opens the SQLite database at path read-only, refusing one that does not
// exist or is behind this kioku's migrations: the copy matches columns by name, and a
// database an older kioku wrote lacks some of them.
func openCopySource(ctx context.Context, path string) (*sql.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no database at %s; give --from the SQLite file kioku runs on", path)
	} else if err != nil {
		return nil, fmt.Errorf("couldn't read %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
	if err != nil {
		return nil, fmt.Errorf("couldn't open %s: %w", path, err)
	}
	pending, err := migrations.Pending(ctx, db, sqlite.Migrations())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("couldn't read the migrations of %s: %w", path, err)
	}
	if len(pending) > 0 {
		db.Close()
		return nil, fmt.Errorf("%s is %d migrations behind this kioku (%s); run `KIOKU_DB=%s kioku migrate` first",
			path, len(pending), strings.Join(pending, ", "), path)
	}
	return db, nil
}

// writeCopyReport prints what was copied, verified and left behind.
func writeCopyReport(app *App, from, to string, rep storecopy.Report) {
	w := app.Stdout
	fmt.Fprintf(w, "copied %s to %s\n", from, to)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  table\trows\tsha256 (both sides)\t")
	for _, t := range rep.Tables {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t", t.Name, t.Rows, t.Hash[:16])
		if len(t.Dropped) > 0 {
			fmt.Fprintf(tw, "columns not on PostgreSQL, not copied: %s", strings.Join(t.Dropped, ", "))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if len(rep.Sequences) > 0 {
		parts := make([]string, len(rep.Sequences))
		for i, s := range rep.Sequences {
			parts[i] = fmt.Sprintf("%s %d", s.Table, s.Value)
		}
		fmt.Fprintf(w, "ids kept; new ids continue after: %s\n", strings.Join(parts, ", "))
	}
	if len(rep.Skipped) > 0 {
		fmt.Fprintln(w, "not copied:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, s := range rep.Skipped {
			fmt.Fprintf(tw, "  %s\t%d rows\t%s\n", s.Name, s.Rows, s.Reason)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "verified: %d tables hold the same rows on both sides. Point KIOKU_DB at the PostgreSQL database and start kioku.\n", len(rep.Tables))
}

// isPostgresURL reports whether v names a PostgreSQL database rather than a SQLite file.
func isPostgresURL(v string) bool {
	lower := strings.ToLower(strings.TrimSpace(v))
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}

// lowerScheme writes a URL's scheme in lower case, the only case the PostgreSQL driver
// reads (POSTGRES://… is the same database to people).
func lowerScheme(v string) string {
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok {
		return v
	}
	return strings.ToLower(scheme) + "://" + rest
}

// redactURL is a database URL without its password, for output and logs.
func redactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil {
		return "the PostgreSQL database"
	}
	return u.Redacted()
}
