package main

// The wiring of kioku: the one place that knows every package. Each subcommand opens the
// store here and hands its aggregates to the consumers that declare what they need (the
// chat engine, the background pipeline, the Discord bot); no other package imports them all.

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/contextbuild"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/spend"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/web"
)

// openStore opens the configured database, applying migrations.
func (app *App) openStore(ctx context.Context) (*backend, error) {
	if app.storeKind() == kindPostgres {
		return app.openPostgres(ctx)
	}
	store, err := sqlite.Open(ctx, app.config.DB)
	if err != nil {
		return nil, err
	}
	app.applyMemoryCaps(store)
	store.KeywordIndexMax = app.config.KeywordIndexMemories
	if app.storeOpened != nil {
		app.storeOpened(store)
	}
	return sqliteBackend(store, app.config.DB), nil
}

// storeKind is the kind of store KIOKU_DB names.
func (app *App) storeKind() string {
	if isPostgresURL(app.config.DB) {
		return kindPostgres
	}
	return kindSQLite
}

// dbName names the configured database for people: the file, or the URL without its
// password.
func (app *App) dbName() string {
	if app.storeKind() == kindPostgres {
		return redactURL(app.config.DB)
	}
	return app.config.DB
}

// storeHook sees each SQLite store openStore opens (App.storeOpened).
type storeHook func(*ltm.Store)

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
		OnCall:        app.hooks().modelCallHook(),
	})
}

// newPipeline builds the background memory pipeline on store and model (which sends its
// requests to KIOKU_PIPELINE_MODEL) with the operator's mode and budget. It starts nothing.
// audience, when not nil, tells the pipeline which channels' memories a conversation in a
// guild channel may use (the bot's channel rule); without it nothing is channel-restricted.
func (app *App) newPipeline(store *backend, model *llm.Client, audience func(ctx context.Context, guildID, channelID string) *memory.Audience) (*pipeline.Pipeline, error) {
	flags := pipeline.ModeFlags(app.config.PipelineMode)
	deps := pipelineDeps(store, model)
	if app.config.EmbedModel == "" {
		deps.Embeddings = nil // keyword-only recall: no vectors to track, no tracker task
	}
	deps.Provider = providerCounts(store, model)
	return pipeline.New(pipeline.Config{
		Audience:          audience,
		DailyBudget:       app.dailyBudget(store),
		Flags:             &flags,
		CallsPerHour:      app.config.PipelineCallsPerHour,
		GuildShare:        app.config.PipelineGuildShare,
		HighSignalPerHour: app.config.PipelineMemberTriggers,
		MaintenanceMode:   app.config.MaintenanceMode,
		Retention:         memory.RetentionPolicy{ArchivePast: app.config.ArchivePastAfter},
		Logger:            app.logger.With("component", "pipeline"),
		OnJobOutcome:      app.hooks().jobOutcomeHook(),
	}, app.hooks().observePipeline(deps))
}

// decisionCandidates are what the pipeline compares a fact with: the memories recall finds
// for its words and those the knowledge graph says are about the same entities.
type decisionCandidates struct {
	searcher
	graph storeGraph
}

// AboutSameEntities asks the knowledge graph.
func (c decisionCandidates) AboutSameEntities(ctx context.Context, q memory.SearchQuery) ([]*memory.Memory, error) {
	return c.graph.AboutSameEntities(ctx, q)
}

// pipelineDeps hands the store's aggregates to the seams of the pipeline; the store's clock
// is read at each call, so a test that moves it moves the pipeline with it.
func pipelineDeps(store *backend, model pipeline.Model) pipeline.Deps {
	return pipeline.Deps{
		Jobs:         store.Jobs,
		Ledger:       store.Jobs,
		Transcript:   store.Transcripts,
		Facts:        store.Facts,
		Candidates:   decisionCandidates{store.Recall, store.Graph},
		Settings:     store.Settings,
		Housekeeping: housekeeping{store.Maintenance, store.Guilds},
		Embeddings:   store.Recall,
		Graph:        store.Graph,
		Health:       store.Health,
		Repairer:     store.Maintenance,
		Model:        model,
		Quote:        contextbuild.Quote,
		Now:          func() time.Time { return store.Now() },
	}
}

// housekeeping is the pipeline's Housekeeping over two aggregates: retention is the
// store's maintenance, the purge of departed servers its guilds'.
type housekeeping struct {
	retention
	departures
}

type retention interface {
	Retention(ctx context.Context, pol memory.RetentionPolicy) (memory.RetentionResult, error)
}

type departures interface {
	PurgeDepartedGuilds(ctx context.Context) (memory.GuildPurge, int, error)
}

// chatDeps hands the store's aggregates, short-term memory and the model to the chat engine.
func chatDeps(store *backend, model chat.ChatModel, short *stm.Store, onTurn chat.TurnHook) chat.Deps {
	return chat.Deps{
		Memories:   store.Memories,
		Duplicates: store.Duplicates,
		Recall:     store.Recall,
		Transcript: store.Transcripts,
		Settings:   store.Settings,
		ShortTerm:  short,
		Model:      model,
		OnTurn:     onTurn,
	}
}

// newEngine builds the chat turn engine on store, model and short-term memory, giving the
// store the embedding model when one is configured. onTurn, when not nil, is told about
// every stored user turn (the pipeline's extraction trigger).
func (app *App) newEngine(store *backend, model *llm.Client, short *stm.Store, onTurn chat.TurnHook) (*chat.Engine, error) {
	cfg := app.config
	if cfg.EmbedModel != "" {
		// Every embedding call is charged to the server (or member's DMs) whose work it
		// is, and passes that payer's rate limit (internal/spend).
		meter := spend.New(app.dailyBudget(store), cfg.EmbedCallsPerMinute, app.logger.With("component", "spend"))
		store.Recall.SetEmbedder(meter.Embedder(model.Embed), cfg.EmbedModel)
		store.Recall.SetVectorCache(int64(cfg.VectorCacheMB) << 20)
	}
	return chat.New(chat.Config{
		// All of a server's members together, next to each member's own rate, and the daily
		// model budget the engine shares with the pipeline (README "Limits").
		GuildTurnsPerMinute: cfg.GuildTurnsPerMinute,
		DailyBudget:         app.dailyBudget(store),
		// The prompt's size and each member's rate.
		ContextWindow:   cfg.ContextWindow,
		MaxOutputTokens: cfg.MaxOutputTokens,
		TurnsPerMinute:  cfg.TurnsPerMinute,
		Logger:          app.logger.With("component", "chat"),
	}, app.hooks().observeChat(chatDeps(store, model, short, onTurn)))
}

// newBot builds the Discord bot on session with the store, short-term memory, the chat
// engine that answers its turns and the running pipeline whose status it reports.
func (app *App) newBot(session *discordgo.Session, store *backend, short *stm.Store, engine bot.Turner, pipe *pipeline.Pipeline) (*bot.Bot, error) {
	return bot.New(bot.Config{
		Session: session,
		Store:   app.hooks().observeBot(botStore(store)),
		STM:     short,
		Turner:  app.hooks().observeTurns(engine),
		Logger:  app.logger.With("component", "bot"),
		// Turns running at once, and messages that may wait for one (README "Limits").
		MaxConcurrentTurns: app.config.MaxConcurrentTurns,
		TurnQueue:          app.turnQueue(),
		// A server that removed the bot keeps its data this long, in case it comes back.
		GuildPurgeAfter: app.config.GuildPurgeAfter,
		// The running pipeline adds its model budget to what the database says.
		PipelineStatus: pipe.Status,
		// What this process saw of the model provider, for the health score.
		Provider: pipe.Provider,
		// The server's daily model budget, for /kioku status.
		BudgetToday: app.dailyBudget(store).UsedToday,
	})
}

// botStore gives the bot the aggregates of store it uses, each behind the bot's own seam.
func botStore(store *backend) bot.Store {
	return bot.Store{
		Memories: store.Memories, Review: store.Review, Duplicates: store.Duplicates, Recall: store.Recall, Facts: store.Facts, Jobs: store.Jobs,
		Transcripts: store.Transcripts, Settings: store.Settings, Confirmations: store.Confirmations,
		Transfer: store.Transfer, Channels: store.Channels, Guilds: store.Guilds,
		Maintenance: store.Health, Now: store.Now, RecoverWindow: store.RecoverWindow,
		Graph: store.Graph,
	}
}

// newDashboard builds the web dashboard over store: sign-in with the application's OAuth2
// client at Discord's (or the configured Discord-compatible) address, sessions in the
// store, and what each member may see and do from their roles (read with the bot's token)
// and the stored channel rules, decided by the bot's own code.
func (app *App) newDashboard(store *backend) (*web.Server, error) {
	cfg := app.config
	// A session of its own, never opened: the dashboard only calls Discord's REST API with
	// the bot's token, to read a signed-in member's roles.
	rest, err := bot.NewSession(cfg.DiscordToken, cfg.DiscordAPIURL)
	if err != nil {
		return nil, err
	}
	return web.New(web.Config{
		PublicURL:      cfg.WebURL,
		DiscordURL:     cfg.DiscordAPIURL,
		ClientID:       cfg.DiscordClientID,
		ClientSecret:   cfg.DiscordClientSecret,
		TrustedProxies: cfg.WebTrustedProxies,
		Logger:         app.logger.With("component", "web"),
	}, web.Deps{
		Sessions: store.Sessions, Memories: store.Memories, Finder: store.Channels, Recall: store.Recall,
		Transfer: store.Transfer, ForgetMe: store.Confirmations, Turns: store.Transcripts, Privacy: store.Settings, Overview: store.Overview,
		Review: store.Review, Graph: store.Graph,
		Doctor: store.Health, Jobs: store.Jobs, Repairs: store.Maintenance, Budget: app.dailyBudget(store).UsedToday,
		Members: func(ctx context.Context, guildID, userID string) ([]string, bool, error) {
			return bot.LookupMember(ctx, rest, guildID, userID)
		},
		Access: func(ctx context.Context, guildID, userID string, roles []string) (web.GuildAccess, bool, error) {
			gs, err := store.Settings.GuildSettings(ctx, guildID)
			if err != nil {
				return web.GuildAccess{}, false, err
			}
			a, ok, err := bot.StoredMemberAccess(ctx, store.Channels, guildID, userID, roles, gs.EditorRoleID)
			return web.GuildAccess{Channels: a.Channels, Manager: a.Manager, Editor: a.Editor}, ok, err
		},
	})
}
