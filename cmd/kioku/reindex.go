package main

import (
	"context"
	"fmt"
)

// runReindex is `kioku reindex` (SPEC §7): it recomputes every memory's search text from
// its content and author and rebuilds both full-text indexes from the rows. It repairs what
// another SQLite client wrote without search text, and an index that fell out of step.
func runReindex(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "reindex")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	store, err := app.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	rep, err := store.Maintenance.Reindex(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(app.Stdout, rep)
	}
	fmt.Fprintf(app.Stdout, "reindexed %d memories: search text recomputed for %d; %d live memories in the word index, %d in the trigram index\n",
		rep.Memories, rep.SearchText, rep.Words, rep.Trigrams)
	return nil
}
