package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/pipeline"
	"github.com/kioku-bot/kioku/stm"
)

// shutdownTimeout bounds the graceful part of a shutdown: in-flight turns
// finish and the HTTP server drains within it. It is well under systemd's
// default stop timeout of 90 s, so the database is closed (and its WAL
// checkpointed) before a supervisor would kill the process; a model call
// slower than this is cancelled rather than waited for.
const shutdownTimeout = 30 * time.Second

// healthTimeout bounds one /healthz probe.
const healthTimeout = 3 * time.Second

// runBot is `kioku run`: it wires the store, the model client, short-term
// memory, the background memory pipeline, the chat engine and the Discord
// bot, serves /healthz and /metrics, and runs until ctx is cancelled
// (SIGINT/SIGTERM). Then it stops accepting turns, lets in-flight ones finish
// within shutdownTimeout, closes the gateway session, stops the pipeline and
// closes the database cleanly.
func runBot(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	cfg := app.config
	log := app.logger
	if cfg.DiscordToken == "" {
		return errors.New("invalid KIOKU_DISCORD_TOKEN: empty; set it to the bot token from the Discord Developer Portal (Bot → Reset Token)")
	}

	store, err := app.openStore(ctx)
	if err != nil {
		return err
	}
	// The store is closed last, after every user of it has stopped.
	defer func() {
		if err := store.Close(); err != nil {
			log.Error("couldn't close database cleanly", "err", err)
		}
	}()

	backups, err := app.newBackupJob(store)
	if err != nil {
		return err
	}
	model, err := app.newModelClient()
	if err != nil {
		return err
	}
	var background sync.WaitGroup
	defer background.Wait()
	short, err := stm.New(stm.Options{})
	if err != nil {
		return err
	}
	// Decisions see only memories the conversation's channel may use, by the bot's channel
	// rule; b is set below, before the pipeline starts.
	var b *bot.Bot
	pipe, err := app.newPipeline(store, model, func(ctx context.Context, guildID, channelID string) *memory.Audience {
		return b.ReplyAudience(ctx, guildID, channelID)
	})
	if err != nil {
		return err
	}
	engine, err := app.newEngine(store, model, short, pipe.OnTurn)
	if err != nil {
		return err
	}
	if cfg.EmbedModel != "" {
		// The embedding tracker's first run loads cached vectors and embeds a first
		// batch of what is missing without delaying the start (recall uses keywords
		// alone until the index is ready); the scheduled runs do the rest. RunTask
		// records the run and logs a failure itself.
		background.Go(func() { _ = pipe.RunTask(ctx, pipeline.TaskEmbeddings) })
	}
	session, err := bot.NewSession(cfg.DiscordToken, cfg.DiscordAPIURL)
	if err != nil {
		return err
	}
	b, err = app.newBot(session, store, short, engine, pipe)
	if err != nil {
		return err
	}

	var srv *http.Server
	ln := app.httpListener
	if ln == nil && cfg.HTTPAddr != "" {
		if ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			return fmt.Errorf("invalid KIOKU_HTTP_ADDR: couldn't listen on %s: %w", cfg.HTTPAddr, err)
		}
	}
	if ln != nil {
		srv = &http.Server{Handler: opsHandler(store, b, model), ReadHeaderTimeout: 5 * time.Second}
		log.Info("serving health and metrics", "addr", ln.Addr().String())
		background.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("health and metrics server stopped", "err", err)
			}
		})
	}

	if err := b.Open(); err != nil {
		if srv != nil {
			_ = srv.Close()
		}
		return err
	}
	// The pipeline (worker, stale-lease reaper, sweep, retention) starts with the bot.
	// Its tasks run under their own context, which Stop cancels below.
	if err := pipe.Start(ctx); err != nil {
		_ = b.Shutdown(context.WithoutCancel(ctx))
		if srv != nil {
			_ = srv.Close()
		}
		return err
	}
	background.Go(func() { catchUpRetention(ctx, store, pipe, log) })
	if backups != nil {
		background.Go(func() { backups.schedule(ctx) }) // daily, when KIOKU_BACKUP_DIR is set
	}
	// One-time repairs of data older versions wrote; resumable, and a no-op once done.
	background.Go(func() {
		rep, err := store.Maintenance.RunRepairs(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("couldn't finish repairing stored data; the next start resumes", "err", err)
		case err == nil && !rep.Empty():
			log.Info("stored data repaired", "result", describeRepairs(rep))
		}
	})
	log.Info("kioku is running", "db", cfg.DB, "chat_model", cfg.ChatModel, "pipeline_model", model.Config().PipelineModel,
		"pipeline_mode", cfg.PipelineMode, "embed_model", cfg.EmbedModel)

	<-ctx.Done()
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	var errs []error
	if err := b.Shutdown(shutCtx); err != nil {
		errs = append(errs, err)
	}
	// After the bot, whose last turns may still schedule extractions, and before the
	// store closes: a job cut short here goes back to the queue without losing an attempt.
	if err := pipe.Stop(shutCtx); err != nil {
		errs = append(errs, err)
	}
	if srv != nil {
		if err := srv.Shutdown(shutCtx); err != nil {
			errs = append(errs, fmt.Errorf("couldn't stop the health server: %w", err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	log.Info("stopped cleanly")
	return nil
}

// retentionEvery is how often retention should run: the pipeline's
// DefaultRetentionSchedule (SPEC §4: every 6 h).
const retentionEvery = 6 * time.Hour

// catchUpRetention runs retention at start when its last recorded run is older than
// retentionEvery, or it never ran. The scheduler counts its interval from the process
// start, so a bot restarted more often than every six hours would otherwise never purge
// expired transcripts and tombstones.
func catchUpRetention(ctx context.Context, store *ltm.Store, pipe *pipeline.Pipeline, log *slog.Logger) {
	runs, err := store.Jobs.TaskRuns(ctx)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("couldn't read the last retention run; it runs on schedule", "err", err)
		}
		return
	}
	for _, r := range runs {
		if r.Name == pipeline.TaskRetention && store.Now().Sub(r.FinishedAt) < retentionEvery {
			return
		}
	}
	// RunTask records the run and logs a failure itself.
	_ = pipe.RunTask(ctx, pipeline.TaskRetention)
}

// opsHandler serves the operator endpoints: /healthz and /metrics.
func opsHandler(store *ltm.Store, b *bot.Bot, model *llm.Client) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		defer cancel()
		status := map[string]string{"database": "ok", "gateway": "connected"}
		healthy := true
		// A settings read is a real round trip through the read pool, and
		// cheap: one indexed row, no integrity check (that is `kioku doctor`).
		if _, err := store.Settings.UserSettings(ctx, "healthz"); err != nil {
			status["database"], healthy = err.Error(), false
		}
		if !b.Connected() {
			status["gateway"], healthy = "disconnected", false
		}
		status["status"] = "ok"
		code := http.StatusOK
		if !healthy {
			status["status"], code = "unhealthy", http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(status)
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		writeMetrics(w, b.Stats(), model.Usage())
	})
	return mux
}

// writeMetrics writes the Prometheus text exposition format by hand. A
// dozen counters do not justify client_golang and its dependency tree (and
// its global registry, which would need care with in-process tests); the
// format is small, stable and documented, and the values are snapshots of
// counters the bot and the model client already keep.
func writeMetrics(w io.Writer, s bot.Stats, u llm.Usage) {
	metric := func(name, typ, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", name, help, name, typ, name, v)
	}
	connected := int64(0)
	if s.Connected {
		connected = 1
	}
	metric("kioku_gateway_connected", "gauge", "1 while the Discord gateway session is up.", connected)
	metric("kioku_turns_total", "counter", "Chat turns run.", s.Turns)
	metric("kioku_turn_errors_total", "counter", "Chat turns that failed with an internal error.", s.TurnErrors)
	metric("kioku_turns_in_flight", "gauge", "Chat turns running now.", s.TurnsInFlight)
	metric("kioku_messages_ignored_total", "counter", "Messages addressed to the bot and deliberately not answered.", s.Ignored)
	metric("kioku_interactions_total", "counter", "Slash commands, context menu commands and button presses.", s.Interactions)
	metric("kioku_interaction_errors_total", "counter", "Interactions answered with an internal error.", s.InteractionErrors)
	metric("kioku_interactions_denied_total", "counter", "Interactions refused for missing permission.", s.Denied)
	metric("kioku_llm_calls_total", "counter", "Attempts sent to the model provider, retries included.", u.Calls)
	metric("kioku_llm_errors_total", "counter", "Model provider attempts that failed.", u.Errors)
	metric("kioku_llm_prompt_tokens_total", "counter", "Prompt tokens reported by the provider.", u.PromptTokens)
	metric("kioku_llm_completion_tokens_total", "counter", "Completion tokens reported by the provider.", u.CompletionTokens)
	metric("kioku_llm_embed_tokens_total", "counter", "Embedding tokens reported by the provider.", u.EmbedTokens)
}
