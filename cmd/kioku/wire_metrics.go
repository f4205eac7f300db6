package main

// The metrics' side of the wiring: the hooks and timing wrappers that connect the parts
// wire.go builds to the process's Prometheus registry (internal/metrics), so that none of
// them imports Prometheus. Each is a no-op when app.metrics is nil (metricHooks) (every subcommand but
// `kioku run`).

import (
	"context"
	"time"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/metrics"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

// newMetrics gives the app a registry of its own for this run; the store's clock stamps
// the jobs, so it also measures how long the oldest due job has waited.
func (app *App) newMetrics(store *backend) *metrics.Metrics {
	app.metrics = metrics.New(metrics.Options{
		Now:    func() time.Time { return store.Now() },
		Logger: app.logger.With("component", "metrics"),
	})
	return app.metrics
}

// metricHooks connects the parts of a run to the metrics registry m; with m nil (every
// subcommand but `kioku run`) each hook is nil and each wrapper gives back what it got.
type metricHooks struct{ m *metrics.Metrics }

// hooks are the app's metric hooks for the parts wire.go builds.
func (app *App) hooks() metricHooks { return metricHooks{app.metrics} }

// watchRun points the metrics read at scrape time at the store, short-term memory, the
// bot and the pipeline's last health report.
func (h metricHooks) watchRun(store *backend, short *stm.Store, b interface{ Stats() bot.Stats }, pipe *pipeline.Pipeline) {
	if h.m == nil {
		return
	}
	var pool func() metrics.PoolStats
	if store.pool != nil {
		pool = func() metrics.PoolStats {
			p := store.pool()
			return metrics.PoolStats{Idle: int64(p.Idle), InUse: int64(p.InUse), Max: int64(p.Max), Acquires: p.Acquires}
		}
	}
	h.m.WatchStore(metrics.StoreSources{Kind: store.kind, Pool: pool})
	h.m.Watch(metrics.Sources{
		JobStats:         store.Jobs.JobStats,
		MemoryCounts:     store.Health.MemoryCounts,
		ShortTermEntries: short.Len,
		HealthScore: func() (float64, bool) {
			r, ok := pipe.Health()
			return float64(r.Score), ok
		},
		Bot: func() metrics.BotStats {
			s := b.Stats()
			return metrics.BotStats{Connected: s.Connected, Turns: s.Turns, TurnErrors: s.TurnErrors,
				TurnsInFlight: s.TurnsInFlight, TurnsQueued: s.TurnsQueued, TurnsBusy: s.TurnsBusy, Ignored: s.Ignored, Interactions: s.Interactions,
				InteractionErrors: s.InteractionErrors, Denied: s.Denied, CommandsRegistered: s.CommandsRegistered}
		},
	})
}

// modelCallHook counts the model client's attempts by model and purpose.
func (h metricHooks) modelCallHook() func(llm.Call) {
	m := h.m
	if m == nil {
		return nil
	}
	return func(c llm.Call) {
		m.CountModelCall(metrics.ModelCall{Model: c.Model, Purpose: c.Purpose, Failed: c.Failed,
			PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens, EmbedTokens: c.EmbedTokens})
	}
}

// jobOutcomeHook counts the pipeline's job outcomes.
func (h metricHooks) jobOutcomeHook() func(pipeline.JobOutcome) {
	m := h.m
	if m == nil {
		return nil
	}
	return func(o pipeline.JobOutcome) { m.CountJobOutcome(string(o)) }
}

// observePipeline times the pipeline's candidate searches.
func (h metricHooks) observePipeline(d pipeline.Deps) pipeline.Deps {
	if h.m != nil {
		d.Candidates = timedCandidates{d.Candidates, timedRecall{d.Candidates, h.m, metrics.RecallPipeline}}
	}
	return d
}

// observeChat times the chat engine's recall (the prompt's and the memory tools').
func (h metricHooks) observeChat(d chat.Deps) chat.Deps {
	if h.m != nil {
		d.Recall = timedRecall{d.Recall, h.m, metrics.RecallTurn}
	}
	return d
}

// observeBot times the bot's own searches (/memory search).
func (h metricHooks) observeBot(s bot.Store) bot.Store {
	if h.m != nil {
		s.Recall = timedRecall{s.Recall, h.m, metrics.RecallCommand}
	}
	return s
}

// observeTurns times every chat turn the bot runs.
func (h metricHooks) observeTurns(t bot.Turner) bot.Turner {
	if h.m == nil {
		return t
	}
	return timedTurner{t, h.m}
}

// searcher is recall as chat, the pipeline and the bot each declare it.
type searcher interface {
	Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
}

// timedCandidates are the pipeline's candidates with their searches timed.
type timedCandidates struct {
	pipeline.Candidates
	timed timedRecall
}

// Search runs the timed search.
func (c timedCandidates) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	return c.timed.Search(ctx, q)
}

// timedRecall records how long each search of next takes, labelled with its caller.
type timedRecall struct {
	next   searcher
	m      *metrics.Metrics
	caller string
}

// Search runs the search and records its time.
func (r timedRecall) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	start := time.Now()
	res, err := r.next.Search(ctx, q)
	r.m.ObserveRecall(r.caller, time.Since(start))
	return res, err
}

// timedTurner records how long each chat turn takes and how it ended.
type timedTurner struct {
	next bot.Turner
	m    *metrics.Metrics
}

// Turn runs the turn and records its time and outcome.
func (t timedTurner) Turn(ctx context.Context, req chat.Request) (chat.Reply, error) {
	start := time.Now()
	reply, err := t.next.Turn(ctx, req)
	outcome := metrics.TurnAnswered
	switch {
	case err != nil:
		outcome = metrics.TurnError
	case reply.Ignored:
		outcome = metrics.TurnIgnored
	case reply.RateLimited:
		outcome = metrics.TurnRateLimited
	case reply.BudgetSpent:
		outcome = metrics.TurnBudgetSpent
	}
	t.m.ObserveTurn(outcome, time.Since(start))
	return reply, err
}
