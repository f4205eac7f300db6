package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kioku-bot/kioku/internal/metrics"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
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
// bot, serves /healthz, /readyz and /metrics (and the web dashboard when
// KIOKU_WEB_ADDR is set), and runs until ctx is cancelled
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
	defer startMemoryLimit(ctx, cfg, 15*time.Second, log)()

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
	run := &botRun{store: store, log: log}
	defer run.wait()
	if err := run.wire(ctx, app); err != nil {
		return err
	}
	if err := run.serveOps(app); err != nil {
		return err
	}
	if err := run.serveWeb(app); err != nil {
		run.closeServers()
		return err
	}
	if err := run.start(ctx, cfg); err != nil {
		return err
	}
	log.Info("kioku is running", "db", store.where, "store", store.kind, "chat_model", cfg.ChatModel, "pipeline_model", run.core.model.Config().PipelineModel,
		"pipeline_mode", cfg.PipelineMode, "embed_model", cfg.EmbedModel, "shards", shardList(run.bot))

	<-ctx.Done()
	return run.stop(ctx)
}

// botRun is what `kioku run` starts over its store, in the order it starts them, and
// stops in reverse: the bot's core (core.go) with Discord in front of it.
type botRun struct {
	store   *backend
	log     *slog.Logger
	backups *backupJob // nil without KIOKU_BACKUP_DIR
	core    *botCore
	bot     *shardedBot
	srv     *http.Server // nil when health and metrics are not served
	web     *http.Server // nil when the web dashboard is not served
	life    lifecycle
	// background holds the goroutines the run started besides the core's; the store
	// closes after them.
	background sync.WaitGroup
}

// wait returns once every goroutine the run and its core started has ended.
func (r *botRun) wait() {
	r.background.Wait()
	if r.core != nil {
		r.core.background.Wait()
	}
}

// wire builds the parts over the store: backups, metrics, the core (model client,
// short-term memory, pipeline, chat engine) and one bot per shard.
func (r *botRun) wire(ctx context.Context, app *App) error {
	var err error
	if r.backups, err = app.newBackupJob(r.store); err != nil {
		return err
	}
	app.newMetrics(r.store)
	// Decisions see only memories the conversation's channel may use, by the bot's channel
	// rule; b is set below, before the pipeline starts.
	var b *shardedBot
	r.core, err = app.newCore(r.store, func(ctx context.Context, guildID, channelID string) *memory.Audience {
		return b.ReplyAudience(ctx, guildID, channelID)
	})
	if err != nil {
		return err
	}
	// One session and bot per shard this process runs (shards.go); they share the store,
	// short-term memory, the chat engine and the pipeline.
	sessions, err := app.shardSessions(ctx)
	if err != nil {
		return err
	}
	b = &shardedBot{first: sessions[0].ShardID, count: sessions[0].ShardCount}
	c := r.core
	for _, session := range sessions {
		sb, err := app.newBot(session, r.store, c.short, c.forgets.turner(c.engine), c.pipe)
		if err != nil {
			return err
		}
		b.bots = append(b.bots, sb)
	}
	r.bot = b
	app.hooks().watchRun(r.store, c.short, b, c.pipe)
	return nil
}

// serveOps serves health and metrics on the app's listener, or on KIOKU_HTTP_ADDR when
// it has none; without either nothing is served.
func (r *botRun) serveOps(app *App) error {
	ln := app.httpListener
	if ln == nil && app.config.HTTPAddr != "" {
		var err error
		if ln, err = net.Listen("tcp", app.config.HTTPAddr); err != nil {
			return fmt.Errorf("invalid KIOKU_HTTP_ADDR: couldn't listen on %s: %w", app.config.HTTPAddr, err)
		}
	}
	if ln == nil {
		return nil
	}
	srv := &http.Server{Handler: opsHandler(r.store, r.bot, app.metrics, &r.life), ReadHeaderTimeout: 5 * time.Second}
	r.srv = srv
	r.log.Info("serving health and metrics", "addr", ln.Addr().String())
	r.background.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("health and metrics server stopped", "err", err)
		}
	})
	return nil
}

// serveWeb serves the web dashboard on the app's web listener, or on KIOKU_WEB_ADDR; it
// is off unless KIOKU_WEB_ADDR is set. Its listener serves the dashboard alone: health and
// metrics stay on KIOKU_HTTP_ADDR.
func (r *botRun) serveWeb(app *App) error {
	cfg := app.config
	if cfg.WebAddr == "" {
		return nil
	}
	dash, err := app.newDashboard(r.store)
	if err != nil {
		return err
	}
	ln := app.webListener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.WebAddr); err != nil {
			return fmt.Errorf("invalid KIOKU_WEB_ADDR: couldn't listen on %s: %w", cfg.WebAddr, err)
		}
	}
	srv := &http.Server{Handler: dash.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	r.web = srv
	r.log.Info("serving the web dashboard", "addr", ln.Addr().String(), "url", cfg.WebURL, "redirect_uri", dash.RedirectURI())
	r.background.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("web dashboard server stopped", "err", err)
		}
	})
	return nil
}

// closeServers closes the health and web servers at once, for a start that failed.
func (r *botRun) closeServers() {
	for _, srv := range []*http.Server{r.srv, r.web} {
		if srv != nil {
			_ = srv.Close()
		}
	}
}

// start connects the bots, then starts the core (the pipeline and its background work)
// and the daily backups.
func (r *botRun) start(ctx context.Context, cfg Config) error {
	if err := r.bot.Open(); err != nil {
		r.closeServers()
		return explainGatewayError(err, cfg.DiscordAPIURL)
	}
	if err := r.core.start(ctx, cfg); err != nil {
		_ = r.bot.Shutdown(context.WithoutCancel(ctx))
		r.closeServers()
		return err
	}
	r.life.set(phaseRunning)
	if r.backups != nil {
		r.background.Go(func() { r.backups.schedule(ctx) }) // daily, when KIOKU_BACKUP_DIR is set
	}
	return nil
}

// stop stops accepting turns, lets in-flight ones finish within shutdownTimeout, closes
// the gateway sessions, stops the pipeline, the health server and the web dashboard.
func (r *botRun) stop(ctx context.Context) error {
	r.life.set(phaseStopping)
	r.log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	var errs []error
	if err := r.bot.Shutdown(shutCtx); err != nil {
		errs = append(errs, err)
	}
	// After the bot, whose last turns may still schedule extractions, and before the
	// store closes: a job cut short here goes back to the queue without losing an attempt.
	if err := r.core.stop(shutCtx); err != nil {
		errs = append(errs, err)
	}
	if r.srv != nil {
		if err := r.srv.Shutdown(shutCtx); err != nil {
			errs = append(errs, fmt.Errorf("couldn't stop the health server: %w", err))
		}
	}
	if r.web != nil {
		if err := r.web.Shutdown(shutCtx); err != nil {
			errs = append(errs, fmt.Errorf("couldn't stop the web dashboard: %w", err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	r.log.Info("stopped cleanly")
	return nil
}

// retentionEvery is how often retention should run: the pipeline's
// DefaultRetentionSchedule (SPEC §4: every 6 h).
const retentionEvery = 6 * time.Hour

// catchUpRetention runs retention at start when its last recorded run is older than
// retentionEvery, or it never ran. The scheduler counts its interval from the process
// start, so a bot restarted more often than every six hours would otherwise never purge
// expired transcripts and tombstones.
func catchUpRetention(ctx context.Context, store *backend, pipe *pipeline.Pipeline, log *slog.Logger) {
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

// phase is where `kioku run` stands in its life, as /readyz reports it.
type phase int32

const (
	// phaseStarting: the database is being opened and migrated, or the Discord session
	// connected.
	phaseStarting phase = iota
	// phaseRunning: the database is open and migrated, the Discord session open and the
	// pipeline started.
	phaseRunning
	// phaseStopping: shutdown has begun; no new turn is accepted.
	phaseStopping
)

// lifecycle holds the phase; the run moves it and /readyz reads it.
type lifecycle struct{ p atomic.Int32 }

func (l *lifecycle) set(p phase) { l.p.Store(int32(p)) }

func (l *lifecycle) phase() phase { return phase(l.p.Load()) }

// opsHandler serves the operator endpoints. /healthz says whether the running bot works
// now (a database round trip, the gateway connected): for alerts and liveness probes.
// /readyz says whether start-up has finished and shutdown not begun, without I/O: for
// readiness probes and rolling restarts. /metrics is the Prometheus exposition.
func opsHandler(store *backend, b interface{ Connected() bool }, m *metrics.Metrics, life *lifecycle) http.Handler {
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
		respondJSON(w, code, status)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		switch life.phase() {
		case phaseRunning:
			respondJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		case phaseStopping:
			respondJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "stopping"})
		default:
			respondJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "starting"})
		}
	})
	mux.Handle("GET /metrics", m.Handler())
	return mux
}

// respondJSON answers with v as JSON and the status code.
func respondJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
