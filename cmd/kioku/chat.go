package main

import (
	"context"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/contextbuild"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/pipeline"
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

// newModelClient builds the OpenAI-compatible client from the configuration.
func (app *App) newModelClient() (*llm.Client, error) {
	cfg := app.config
	return llm.New(llm.Config{
		BaseURL:       cfg.LLMBaseURL,
		APIKey:        cfg.LLMAPIKey,
		ChatModel:     cfg.ChatModel,
		PipelineModel: cfg.PipelineModel,
		EmbedModel:    cfg.EmbedModel,
		Timeout:       cfg.LLMTimeout,
		Logger:        app.logger.With("component", "llm"),
	})
}

// newPipeline builds the background memory pipeline on store and model (which sends its
// requests to KIOKU_PIPELINE_MODEL) with the operator's mode and budget. It starts nothing.
// audience, when not nil, tells the pipeline which channels' memories a conversation in a
// guild channel may use (the bot's channel rule); without it nothing is channel-restricted.
func (app *App) newPipeline(store *ltm.Store, model *llm.Client, audience func(ctx context.Context, guildID, channelID string) *memory.Audience) (*pipeline.Pipeline, error) {
	flags := pipeline.ModeFlags(app.config.PipelineMode)
	return pipeline.New(pipeline.Config{
		Audience:          audience,
		Flags:             &flags,
		CallsPerHour:      app.config.PipelineCallsPerHour,
		GuildShare:        app.config.PipelineGuildShare,
		HighSignalPerHour: app.config.PipelineMemberTriggers,
		Logger:            app.logger.With("component", "pipeline"),
	}, pipelineDeps(store, model))
}

// pipelineDeps hands the store to every seam of the pipeline; the store's clock is read at
// each call, so a test that moves it moves the pipeline with it.
func pipelineDeps(store *ltm.Store, model pipeline.Model) pipeline.Deps {
	return pipeline.Deps{Jobs: store, Ledger: store, Transcript: store, Facts: store, Candidates: store,
		Settings: store, Housekeeping: store, Model: model, Quote: contextbuild.Quote, Now: func() time.Time { return store.Now() }}
}

// newEngine builds the chat turn engine on store, model and short-term memory, giving the
// store the embedding model when one is configured. onTurn, when not nil, is told about
// every stored user turn (the pipeline's extraction trigger).
func (app *App) newEngine(store *ltm.Store, model *llm.Client, short *stm.Store, onTurn chat.TurnHook) (*chat.Engine, error) {
	cfg := app.config
	if cfg.EmbedModel != "" {
		store.Recall.SetEmbedder(model.Embed, cfg.EmbedModel)
	}
	return chat.New(chat.Config{
		ContextWindow:   cfg.ContextWindow,
		MaxOutputTokens: cfg.MaxOutputTokens,
		TurnsPerMinute:  cfg.TurnsPerMinute,
		Logger:          app.logger.With("component", "chat"),
	}, chat.Deps{Store: store, ShortTerm: short, Model: model, OnTurn: onTurn})
}
