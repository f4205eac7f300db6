// Package metrics is kioku's Prometheus instrumentation: the definition of every kioku_
// series, one registry per Metrics (never the global default registry, so several bots
// in one test process do not collide), the Go runtime and process collectors, and the
// collectors that read the queue, the store, short-term memory and the bot at scrape
// time.
//
// The measured packages know nothing of Prometheus. They report through hooks that
// cmd/kioku/wire.go points at the methods here (the model client's OnCall, the pipeline's
// OnJobOutcome, timing wrappers around the chat turn and recall), and what is read at
// scrape time comes in as func fields of Sources. The package imports only memory.
package metrics

import (
	"cmp"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kioku-bot/kioku/memory"
)

// namespace prefixes every series kioku defines.
const namespace = "kioku"

// Defaults copied into an Options' zero fields by New.
const (
	// DefaultScrapeTimeout bounds each database read a scrape makes: a scrape that waits
	// on a busy database must still answer (with that series left out) before
	// Prometheus's own scrape timeout, 10 s by default.
	DefaultScrapeTimeout = 2 * time.Second
	// DefaultMemoryCountsTTL is how long one count of memories by scope and type is
	// reused. The count reads every live row, and memory counts move slowly, so a burst
	// of scrapes (several Prometheus servers, someone reloading the page) costs one query.
	DefaultMemoryCountsTTL = 30 * time.Second
)

// Outcomes of a chat turn, the outcome label of kioku_turn_duration_seconds.
const (
	// TurnAnswered: the model answered.
	TurnAnswered = "answered"
	// TurnRateLimited: the member's turn rate was spent; kioku said so without the model.
	TurnRateLimited = "rate_limited"
	// TurnBudgetSpent: the server's (or the member's DMs') daily model budget was spent;
	// kioku said so without the model.
	TurnBudgetSpent = "budget_spent"
	// TurnIgnored: the turn was deliberately not answered (privacy "full").
	TurnIgnored = "ignored"
	// TurnError: the turn failed.
	TurnError = "error"
)

// Callers of recall, the caller label of kioku_recall_duration_seconds.
const (
	// RecallTurn: a chat turn's prompt recall and the model's memory search tool.
	RecallTurn = "turn"
	// RecallPipeline: the pipeline's search for a new fact's candidates.
	RecallPipeline = "pipeline"
	// RecallCommand: /memory search.
	RecallCommand = "command"
)

// turnBuckets span a chat turn: a rate-limited reply takes milliseconds, an answer from
// a local model with a few tool rounds tens of seconds, and the bot gives up at 3 minutes.
var turnBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}

// recallBuckets span one recall: keyword search answers in milliseconds; a query
// embedding from a provider adds a network round trip.
var recallBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

// Options configures a Metrics. Zero values mean the documented defaults.
type Options struct {
	// Now is the clock of the memory-count cache and of the oldest due job's age; default
	// time.Now. cmd/kioku hands it the store's clock, which stamps the jobs.
	Now func() time.Time
	// ScrapeTimeout bounds each database read of a scrape; default DefaultScrapeTimeout.
	ScrapeTimeout time.Duration
	// MemoryCountsTTL is how long a count of memories is reused; default
	// DefaultMemoryCountsTTL.
	MemoryCountsTTL time.Duration
	// Logger receives the errors of a scrape that left a series out. Nil discards.
	Logger *slog.Logger
}

// Metrics is the registry of one kioku process and the series it feeds. Its methods are
// safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	turns       *prometheus.HistogramVec
	recalls     *prometheus.HistogramVec
	llmCalls    *prometheus.CounterVec
	llmErrors   *prometheus.CounterVec
	llmTokens   *prometheus.CounterVec
	jobOutcomes *prometheus.CounterVec

	sources atomic.Pointer[Sources]
	store   atomic.Pointer[StoreSources]
}

// New returns a Metrics with its own registry holding kioku's series, the Go runtime,
// process and build-info collectors, and a collector for the Sources given to Watch.
func New(opts Options) *Metrics {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		log: log,
		turns: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "turn_duration_seconds",
			Help:    "Time of one chat turn, model calls and tool rounds included, by outcome (answered, rate_limited, ignored, error).",
			Buckets: turnBuckets,
		}, []string{"outcome"}),
		recalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "recall_duration_seconds",
			Help:    "Time of one recall (keyword and vector legs, fusion and ranking), by caller (turn, pipeline, command).",
			Buckets: recallBuckets,
		}, []string{"caller"}),
		llmCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "llm_calls_total",
			Help: "Attempts sent to the model provider, retries included, by model and purpose (chat, extraction, decision, embedding).",
		}, []string{"model", "purpose"}),
		llmErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "llm_errors_total",
			Help: "Model provider attempts that failed, retried or not, by model and purpose.",
		}, []string{"model", "purpose"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "llm_tokens_total",
			Help: "Tokens the provider reported for successful attempts, by model, purpose and kind (prompt, completion, embedding).",
		}, []string{"model", "purpose", "kind"}),
		jobOutcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "pipeline_job_outcomes_total",
			Help: "Pipeline job runs by how they ended (completed, failed, dead, buried, postponed, lost).",
		}, []string{"outcome"}),
	}
	// Series that exist from the start read 0 rather than nothing, so rates and ratios
	// over them are defined before the first event.
	for _, o := range []string{TurnAnswered, TurnRateLimited, TurnBudgetSpent, TurnIgnored, TurnError} {
		m.turns.WithLabelValues(o)
	}
	for _, c := range []string{RecallTurn, RecallPipeline, RecallCommand} {
		m.recalls.WithLabelValues(c)
	}
	for _, o := range jobOutcomes {
		m.jobOutcomes.WithLabelValues(o)
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
		m.turns, m.recalls, m.llmCalls, m.llmErrors, m.llmTokens, m.jobOutcomes,
		newSourceCollector(m, cmp.Or(opts.ScrapeTimeout, DefaultScrapeTimeout),
			cmp.Or(opts.MemoryCountsTTL, DefaultMemoryCountsTTL), opts.Now),
		newStoreCollector(m),
	)
	return m
}

// jobOutcomes are the pipeline's job outcomes (pipeline.JobOutcomes), started at zero.
// They are spelled here because this package does not import the pipeline.
var jobOutcomes = []string{"completed", "failed", "dead", "buried", "postponed", "lost"}

// Handler serves the registry in the Prometheus exposition format. A series whose source
// fails is left out and the error logged, rather than failing the whole scrape.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
		// Counts scrapes that left something out: promhttp_metric_handler_errors_total.
		Registry: m.reg,
	})
}

// ObserveTurn records one chat turn that took d and ended with outcome (TurnAnswered…).
func (m *Metrics) ObserveTurn(outcome string, d time.Duration) {
	m.turns.WithLabelValues(outcome).Observe(d.Seconds())
}

// ObserveRecall records one recall by caller (RecallTurn…) that took d.
func (m *Metrics) ObserveRecall(caller string, d time.Duration) {
	m.recalls.WithLabelValues(caller).Observe(d.Seconds())
}

// ModelCall is one attempt sent to the model provider (llm.Call, which this package does
// not import).
type ModelCall struct {
	Model   string
	Purpose memory.ModelPurpose
	Failed  bool
	// PromptTokens, CompletionTokens and EmbedTokens are what a successful attempt reported.
	PromptTokens, CompletionTokens, EmbedTokens int
}

// CountModelCall counts one attempt sent to the model provider, its failure and its tokens.
func (m *Metrics) CountModelCall(c ModelCall) {
	purpose := string(c.Purpose)
	m.llmCalls.WithLabelValues(c.Model, purpose).Inc()
	errs := m.llmErrors.WithLabelValues(c.Model, purpose)
	if c.Failed {
		errs.Inc()
	}
	for kind, n := range map[string]int{"prompt": c.PromptTokens, "completion": c.CompletionTokens, "embedding": c.EmbedTokens} {
		if n > 0 {
			m.llmTokens.WithLabelValues(c.Model, purpose, kind).Add(float64(n))
		}
	}
}

// CountJobOutcome counts one pipeline job run that ended with outcome (pipeline.JobOutcome).
func (m *Metrics) CountJobOutcome(outcome string) {
	m.jobOutcomes.WithLabelValues(outcome).Inc()
}
