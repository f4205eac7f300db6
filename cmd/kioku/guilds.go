package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

const guildsUsage = `usage: kioku guilds <command> [flags]
  list                         servers kioku holds data about, with counts and departures
  purge ID [--confirm ID]      delete everything about one server now (previews first)
every command takes --json`

// runGuilds is `kioku guilds`: what kioku holds per server, and the operator's way to
// delete a server's data at once instead of waiting for the grace period after the bot
// was removed from it.
func runGuilds(ctx context.Context, app *App, args []string) error {
	return runStoreCommand(ctx, app, "guilds", guildsUsage, args, map[string]storeCommand{
		"list": guildsList, "purge": guildsPurge,
	})
}

func guildsList(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "guilds list")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	guilds, err := store.Guilds.Guilds(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(app.Stdout, map[string]any{"guilds": nonNil(guilds)})
	}
	if len(guilds) == 0 {
		fmt.Fprintln(app.Stdout, "kioku holds no server data.")
		return nil
	}
	tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GUILD\tSERVER\tPERSONAL\tFORGOTTEN\tTRANSCRIPT\tDEPARTURE")
	for _, g := range guilds {
		departure := "-"
		if d := g.Departure; d != nil {
			departure = fmt.Sprintf("left %s, purge after %s", d.LeftAt.Local().Format(time.DateTime),
				d.PurgeAfter.Local().Format(time.DateTime))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", g.GuildID, g.ServerMemories, g.PersonalMemories, g.Forgotten,
			g.Transcripts, departure)
	}
	return tw.Flush()
}

// guildsPurge previews a server's purge, and with --confirm repeating the id runs it: a
// hard delete cannot be recovered, so a mistyped id must not be enough.
func guildsPurge(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "guilds purge")
	confirm := fs.String("confirm", "", "the same guild id again, to delete for real")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("kioku guilds purge ID [--confirm ID]")
	}
	id := pos[0]
	if *confirm != "" && *confirm != id {
		return usagef("--confirm %s does not repeat the guild id %s; nothing was deleted", *confirm, id)
	}
	if *confirm == "" {
		var found *memory.GuildSummary
		guilds, err := store.Guilds.Guilds(ctx)
		if err != nil {
			return err
		}
		for i := range guilds {
			if guilds[i].GuildID == id {
				found = &guilds[i]
			}
		}
		if *asJSON {
			return writeJSON(app.Stdout, map[string]any{"guild": found, "purged": false})
		}
		if found == nil {
			fmt.Fprintf(app.Stdout, "kioku holds no data about guild %s.\n", id)
			return nil
		}
		fmt.Fprintf(app.Stdout, "Guild %s: %d server memories, %d personal memories that originated there, %d forgotten, %d transcript turns.\n",
			id, found.ServerMemories, found.PersonalMemories, found.Forgotten, found.Transcripts)
		fmt.Fprintf(app.Stdout, "Nothing is deleted yet. This cannot be undone; to delete all of it run:\n  kioku guilds purge %s --confirm %s\n", id, id)
		return nil
	}
	res, err := store.Guilds.PurgeGuild(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(app.Stdout, map[string]any{"guild_id": id, "purged": true, "deleted": res})
	}
	fmt.Fprintf(app.Stdout, "Purged guild %s: %d memories, %d history rows, %d evidence rows, %d embeddings, %d transcript turns, %d jobs, %d settings rows.\n",
		id, res.Memories, res.History, res.Evidence, res.Embeddings, res.Transcripts, res.Jobs, res.Settings)
	return nil
}
