package main

import (
	"context"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/stm"
)

// runChat is `kioku chat`: the Discord turn engine in the terminal, one line one message,
// against the configured database and model (any OpenAI-compatible endpoint, such as a
// local Ollama). Without --guild the conversation is a DM with --user.
func runChat(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "chat")
	user := fs.String("user", "local", "your user id (memories you save are this user's)")
	name := fs.String("name", "", "your display name (default: the user id)")
	guild := fs.String("guild", "", "guild id to chat in (default: a DM)")
	channel := fs.String("channel", "", "channel id in the guild (default: cli)")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *user == "" {
		return usagef("--user must not be empty")
	}
	store, err := app.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	model, err := app.newModelClient()
	if err != nil {
		return err
	}
	short, err := stm.New(stm.Options{})
	if err != nil {
		return err
	}
	// The terminal schedules extraction of what is said here like Discord turns are; the
	// worker of a `kioku run` on the same database (or its sweep) does the work, so a
	// REPL session makes no model calls behind the user's back.
	pipe, err := app.newPipeline(store, model, nil) // the terminal has no channels
	if err != nil {
		return err
	}
	engine, err := app.newEngine(store, model, short, pipe.OnTurn)
	if err != nil {
		return err
	}
	// The operator holds the database itself (`kioku memories`), so in the terminal the
	// model may change any server memory for them.
	return chat.REPL(ctx, engine, app.Stdin, app.Stdout, chat.Request{GuildID: *guild, ChannelID: *channel, UserID: *user,
		UserName: *name, ServerEditor: true})
}
