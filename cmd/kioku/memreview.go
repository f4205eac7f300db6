package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/kioku-bot/kioku/memory"
)

// kioku memories review: what waits for a person in one scope (disputed pairs, flagged
// pairs, near-duplicates, changes the pipeline could not make), and settling one item.

func memReview(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories review")
	var sf scopeFlags
	sf.register(fs)
	limit := fs.Int("limit", 20, "items to list")
	settle := fs.String("settle", "", "settle this item (its ref: d12, h345) with --choice")
	choice := fs.String("choice", "", "how to settle it: keep (both, or the memory as it is), replace (the newer wins, or the proposal is applied), merge (one memory with --text), forget (the newer, or the proposal's target)")
	text := fs.String("text", "", "the merged memory's text, for --choice merge")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	owner, err := sf.owner()
	if err != nil {
		return err
	}
	if *settle != "" {
		changed, err := store.Review.Resolve(ctx, owner, *settle, memory.ReviewChoice(*choice), *text, memory.ActorCLI, nil)
		if err != nil {
			return err
		}
		if sf.asJSON {
			return writeJSON(app.Stdout, map[string]any{"settled": *settle, "changed": nonNil(changed)})
		}
		fmt.Fprintf(app.Stdout, "settled %s (%s)\n", *settle, *choice)
		return nil
	}
	items, total, err := store.Review.Queue(ctx, owner, nil, *limit, 0)
	if err != nil {
		return err
	}
	if sf.asJSON {
		return writeJSON(app.Stdout, map[string]any{"total": total, "items": nonNil(items)})
	}
	for _, it := range items {
		fmt.Fprintf(app.Stdout, "%s  %s  %s\n", it.Ref, it.Kind, it.CreatedAt.Local().Format("2006-01-02 15:04"))
		fmt.Fprintf(app.Stdout, "    #%d %s\n", it.Memory.ID, oneLine(it.Memory.Content))
		switch {
		case it.Other != nil:
			fmt.Fprintf(app.Stdout, "    #%d %s\n", it.Other.ID, oneLine(it.Other.Content))
		case it.Proposed != "":
			fmt.Fprintf(app.Stdout, "    → %s\n", oneLine(it.Proposed))
		case it.Kind == memory.ReviewProposal:
			fmt.Fprintln(app.Stdout, "    → forget it")
		}
		if it.Reason != "" {
			fmt.Fprintf(app.Stdout, "    (%s)\n", oneLine(it.Reason))
		}
	}
	fmt.Fprintf(app.Stdout, "%d of %d waiting%s\n", len(items), total,
		strings.Repeat("; settle one with --settle REF --choice keep|replace|merge|forget", min(1, len(items))))
	return nil
}
