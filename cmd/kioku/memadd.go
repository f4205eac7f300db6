package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/kioku-bot/kioku/memory"
)

// kioku memories add: one memory saved by the operator, unless the scope already holds it,
// word for word or in other words.

func memAdd(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories add")
	var sf scopeFlags
	sf.register(fs)
	typ := fs.String("type", "fact", "memory type: "+typeNames())
	tags := fs.String("tags", "", "comma-separated tags")
	importance := fs.Float64("importance", memory.DefaultImportance, "0 to 1")
	pinned := fs.Bool("pinned", false, "pin (always in context, never decays)")
	force := fs.Bool("force", false, "save it even when it says again what a memory of the scope says")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	owner, err := sf.owner()
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("kioku memories add TEXT")
	}
	m := memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID, UserID: owner.UserID, Type: memory.Type(*typ),
		Content: strings.Join(pos, " "), Importance: *importance, Pinned: *pinned, Source: memory.SourceCommand}
	if *tags != "" {
		m.Tags = strings.Split(*tags, ",")
	}
	if !*force {
		near, err := nearDuplicate(ctx, store, owner, m.Content)
		if err != nil {
			return err
		}
		if near != nil {
			if sf.asJSON {
				return writeJSON(app.Stdout, map[string]any{"created": false, "similar_to": near.ID, "memory": near})
			}
			fmt.Fprintf(app.Stdout, "similar to #%d: %s\nnothing saved; --force saves it anyway\n", near.ID, oneLine(near.Content))
			return nil
		}
	}
	res, err := store.Memories.Remember(ctx, m, memory.ActorCLI)
	if err != nil {
		return err
	}
	if sf.asJSON {
		return writeJSON(app.Stdout, map[string]any{"created": res.Created, "memory": res.Memory})
	}
	if res.Created {
		fmt.Fprintf(app.Stdout, "remembered #%d\n", res.Memory.ID)
	} else {
		fmt.Fprintf(app.Stdout, "already remembered as #%d\n", res.Memory.ID)
	}
	return nil
}

// nearDuplicate returns the memory of owner's scope that content says again in other words,
// nil when there is none or when it is the same content (the write itself answers that one:
// "already remembered").
func nearDuplicate(ctx context.Context, store *backend, owner memory.Owner, content string) (*memory.Memory, error) {
	near, err := store.Duplicates.Similar(ctx, owner, content)
	if err != nil || near == nil || near.Hash == memory.Hash(content) {
		return nil, err
	}
	return near, nil
}
