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
	"github.com/kioku-bot/kioku/memory/maintenance"
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
// bot, serves /healthz, /readyz and /metrics, and runs until ctx is cancelled
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

	backups, err := app.newBackupJob(store)
	if err != nil {
		return err
	}
	app.newMetrics(store)
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
	var b *shardedBot
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
	// One session and bot per shard this process runs (shards.go); they share the store,
	// short-term memory, the chat engine and the pipeline.
	sessions, err := app.shardSessions(ctx)
	if err != nil {
		return err
	}
	b = &shardedBot{first: sessions[0].ShardID, count: sessions[0].ShardCount}
	forgets := newForgetWatch(store, short, log)
	for _, session := range sessions {
		sb, err := app.newBot(session, store, short, forgets.turner(engine), pipe)
		if err != nil {
			return err
		}
		b.bots = append(b.bots, sb)
	}
	app.watchRun(store, short, b, pipe)

	var (
		srv  *http.Server
		life lifecycle
	)
	ln := app.httpListener
	if ln == nil && cfg.HTTPAddr != "" {
		if ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			return fmt.Errorf("invalid KIOKU_HTTP_ADDR: couldn't listen on %s: %w", cfg.HTTPAddr, err)
		}
	}
	if ln != nil {
		srv = &http.Server{Handler: opsHandler(store, b, app.metrics, &life), ReadHeaderTimeout: 5 * time.Second}
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
	life.set(phaseRunning)
	background.Go(func() { forgets.run(ctx) })
	background.Go(func() { catchUpRetention(ctx, store, pipe, log) })
	if cfg.MaintenanceMode != maintenance.ModeOff {
		// A first diagnosis now, so the health score (/kioku status, /metrics) is known from
		// the start rather than after the first scheduled run; RunTask records it and logs a
		// failure itself.
		background.Go(func() { _ = pipe.RunTask(ctx, pipeline.TaskMaintenance) })
	}
	if backups != nil {
		background.Go(func() { backups.schedule(ctx) }) // daily, when KIOKU_BACKUP_DIR is set
	}
	// One-time repairs of data older versions wrote; resumable, and a no-op once done.
	background.Go(func() {
		rep, err := store.runRepairs(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("couldn't finish repairing stored data; the next start resumes", "err", err)
		case err == nil && !rep.Empty():
			log.Info("stored data repaired", "result", describeRepairs(rep))
		}
	})
	log.Info("kioku is running", "db", store.where, "store", store.kind, "chat_model", cfg.ChatModel, "pipeline_model", model.Config().PipelineModel,
		"pipeline_mode", cfg.PipelineMode, "embed_model", cfg.EmbedModel, "shards", shardList(b))

	<-ctx.Done()
	life.set(phaseStopping)
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
