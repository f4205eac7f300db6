package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
	"github.com/kioku-bot/kioku/stm"
)

// botCore is the bot without its transport: the model client, short-term memory, the
// background pipeline, the chat engine and the forget watch over one store, and the
// background work started with them. `kioku run` puts Discord in front of it and `kioku
// chat` a terminal, so both learn, repair and forget alike.
type botCore struct {
	store   *backend
	log     *slog.Logger
	model   *llm.Client
	short   *stm.Store
	pipe    *pipeline.Pipeline
	engine  *chat.Engine
	forgets *forgetWatch
	// background holds the goroutines start started; the store closes after them.
	background sync.WaitGroup
}

// newCore builds the core over store. audience, when not nil, is the channel rule of a
// conversation for the pipeline's decisions (the Discord bot's); a terminal has none.
func (app *App) newCore(store *backend, audience func(ctx context.Context, guildID, channelID string) *memory.Audience) (*botCore, error) {
	c := &botCore{store: store, log: app.logger}
	var err error
	if c.model, err = app.newModelClient(); err != nil {
		return nil, err
	}
	if c.short, err = stm.New(stm.Options{}); err != nil {
		return nil, err
	}
	if c.pipe, err = app.newPipeline(store, c.model, audience); err != nil {
		return nil, err
	}
	if c.engine, err = app.newEngine(store, c.model, c.short, c.pipe.OnTurn); err != nil {
		return nil, err
	}
	c.forgets = newForgetWatch(store, c.short, c.log)
	return c, nil
}

// start starts the pipeline (worker, stale-lease reaper, sweep, retention, maintenance,
// embedding tracker) and the work a start owes: the first embedding batch, forget-me
// watching, retention catch-up, the first diagnosis and one-time repairs. The pipeline's
// tasks run until stop; the rest until ctx ends.
func (c *botCore) start(ctx context.Context, cfg Config) error {
	if err := c.pipe.Start(ctx); err != nil {
		return err
	}
	store, pipe, log := c.store, c.pipe, c.log
	if cfg.EmbedModel != "" {
		// The embedding tracker's first run loads cached vectors and embeds a first
		// batch of what is missing without delaying the start (recall uses keywords
		// alone until the index is ready); the scheduled runs do the rest. RunTask
		// records the run and logs a failure itself.
		c.background.Go(func() { _ = pipe.RunTask(ctx, pipeline.TaskEmbeddings) })
	}
	c.background.Go(func() { c.forgets.run(ctx) })
	c.background.Go(func() { catchUpRetention(ctx, store, pipe, log) })
	if cfg.MaintenanceMode != maintenance.ModeOff {
		// A first diagnosis now, so the health score (/kioku status, /metrics) is known from
		// the start rather than after the first scheduled run; RunTask records it and logs a
		// failure itself.
		c.background.Go(func() { _ = pipe.RunTask(ctx, pipeline.TaskMaintenance) })
	}
	// One-time repairs of data older versions wrote; resumable, and a no-op once done.
	c.background.Go(func() {
		rep, err := store.runRepairs(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("couldn't finish repairing stored data; the next start resumes", "err", err)
		case err == nil && repairsChanged(rep):
			log.Info("stored data repaired", "result", describeRepairs(rep))
		}
	})
	return nil
}

// stop stops the pipeline within ctx: a job cut short goes back to the queue without
// losing an attempt. The goroutines start began end with its context; wait for them with
// background.Wait before closing the store.
func (c *botCore) stop(ctx context.Context) error { return c.pipe.Stop(ctx) }
