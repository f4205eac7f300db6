package metrics

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kioku-bot/kioku/memory"
)

// Sources are what the metrics read at scrape time. A nil field leaves its series out.
type Sources struct {
	// JobStats counts the pipeline's jobs by state (the store's Jobs.JobStats).
	JobStats func(ctx context.Context) (memory.JobStats, error)
	// MemoryCounts counts live memories by scope and type (the store's
	// Maintenance.MemoryCounts); its answer is reused for Options.MemoryCountsTTL.
	MemoryCounts func(ctx context.Context) ([]memory.MemoryCount, error)
	// ShortTermEntries is the number of short-term memory entries held (stm's Len).
	ShortTermEntries func() int
	// Bot reads the Discord bot's counters.
	Bot func() BotStats
	// HealthScore is the maintenance health score and true, or false while there is
	// none to report; kioku_health_score is left out then.
	HealthScore func() (float64, bool)
}

// BotStats are the Discord bot's counters (bot.Stats, which this package does not import).
type BotStats struct {
	// Connected reports whether the gateway session is up.
	Connected bool
	// Turns counts chat turns run; TurnErrors those that failed; TurnsInFlight those
	// running now.
	Turns, TurnErrors, TurnsInFlight int64
	// TurnsQueued is the number of messages waiting for a turn now; TurnsBusy counts the
	// messages answered "busy" because the wait queue was full.
	TurnsQueued, TurnsBusy int64
	// Ignored counts messages addressed to the bot and deliberately not answered.
	Ignored int64
	// Interactions counts slash commands, context menus and button presses;
	// InteractionErrors those answered with an internal error; Denied those refused for
	// missing permission.
	Interactions, InteractionErrors, Denied int64
	// CommandsRegistered is the number of commands of the last registration.
	CommandsRegistered int64
}

// Watch sets what the metrics read at scrape time, replacing what an earlier call set.
// It may be called while the handler serves.
func (m *Metrics) Watch(src Sources) {
	m.sources.Store(&src)
}

// Scopes and types a memory count reports, zeros included, so a scope that loses its
// last memory of a type reads 0 rather than vanishing.
var memoryScopes = []memory.Scope{memory.ScopeServer, memory.ScopePersonal}

// jobStates are the states of kioku_pipeline_jobs, each read from one JobStats field.
var jobStates = []struct {
	name string
	of   func(memory.JobStats) int
}{
	{"queued", func(s memory.JobStats) int { return s.Queued }},
	{"ready", func(s memory.JobStats) int { return s.Ready }},
	{"leased", func(s memory.JobStats) int { return s.Leased }},
	{"stale", func(s memory.JobStats) int { return s.Stale }},
	{"done", func(s memory.JobStats) int { return s.Done }},
	{"dead", func(s memory.JobStats) int { return s.Dead }},
}

// botSeries are the bot's counters and gauges, each read from one BotStats field.
var botSeries = []struct {
	name, help string
	typ        prometheus.ValueType
	of         func(BotStats) int64
}{
	{"gateway_connected", "1 while the Discord gateway session is up.", prometheus.GaugeValue,
		func(s BotStats) int64 { return boolInt(s.Connected) }},
	{"turns_total", "Chat turns run.", prometheus.CounterValue, func(s BotStats) int64 { return s.Turns }},
	{"turn_errors_total", "Chat turns that failed with an error.", prometheus.CounterValue,
		func(s BotStats) int64 { return s.TurnErrors }},
	{"turns_in_flight", "Chat turns running now.", prometheus.GaugeValue, func(s BotStats) int64 { return s.TurnsInFlight }},
	{"turns_queued", "Messages waiting for a chat turn now (KIOKU_MAX_CONCURRENT_TURNS are running).", prometheus.GaugeValue,
		func(s BotStats) int64 { return s.TurnsQueued }},
	{"turns_busy_total", "Messages answered \"busy\" because the wait queue (KIOKU_TURN_QUEUE) was full.", prometheus.CounterValue,
		func(s BotStats) int64 { return s.TurnsBusy }},
	{"messages_ignored_total", "Messages addressed to the bot and deliberately not answered.", prometheus.CounterValue,
		func(s BotStats) int64 { return s.Ignored }},
	{"interactions_total", "Slash commands, context menu commands and button presses.", prometheus.CounterValue,
		func(s BotStats) int64 { return s.Interactions }},
	{"interaction_errors_total", "Interactions answered with an internal error.", prometheus.CounterValue,
		func(s BotStats) int64 { return s.InteractionErrors }},
	{"interactions_denied_total", "Interactions refused for missing permission.", prometheus.CounterValue,
		func(s BotStats) int64 { return s.Denied }},
	{"commands_registered", "Application commands registered with Discord at the last start.", prometheus.GaugeValue,
		func(s BotStats) int64 { return s.CommandsRegistered }},
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// sourceCollector reads the Sources given to Watch at each scrape.
type sourceCollector struct {
	m       *Metrics
	timeout time.Duration
	now     func() time.Time

	jobs, oldestReady, memories, stmEntries, health *prometheus.Desc
	bot                                             []*prometheus.Desc

	// mu guards the memory-count cache; a scrape that finds it fresh reuses it, and
	// concurrent scrapes wait for the one query under way instead of starting their own.
	mu        sync.Mutex
	ttl       time.Duration
	countedAt time.Time
	counts    []memory.MemoryCount
	countErr  error
}

func newSourceCollector(m *Metrics, timeout, ttl time.Duration, now func() time.Time) *sourceCollector {
	if now == nil {
		now = time.Now
	}
	name := func(n string) string { return prometheus.BuildFQName(namespace, "", n) }
	c := &sourceCollector{
		m: m, timeout: timeout, ttl: ttl, now: now,
		jobs: prometheus.NewDesc(name("pipeline_jobs"),
			"Pipeline jobs by state at scrape time: queued (ready: the queued ones due now), leased (stale: leases expired), done, dead.",
			[]string{"state"}, nil),
		oldestReady: prometheus.NewDesc(name("pipeline_oldest_ready_age_seconds"),
			"How long the longest-waiting due job has waited; 0 when none is due. Growing means the worker is not keeping up.",
			nil, nil),
		memories: prometheus.NewDesc(name("memories"),
			"Live memories by scope (server, personal) and type; counted at most every 30 s by default.",
			[]string{"scope", "type"}, nil),
		stmEntries: prometheus.NewDesc(name("stm_entries"),
			"Short-term memory entries held (one per channel and one per member per channel).", nil, nil),
		health: prometheus.NewDesc(name("health_score"),
			"Maintenance health score of the memory store; absent until it has been computed.", nil, nil),
	}
	for _, s := range botSeries {
		c.bot = append(c.bot, prometheus.NewDesc(name(s.name), s.help, nil, nil))
	}
	return c
}

// Describe sends every series the collector may report.
func (c *sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range append([]*prometheus.Desc{c.jobs, c.oldestReady, c.memories, c.stmEntries, c.health}, c.bot...) {
		ch <- d
	}
}

// Collect reads each source that is set. A failed read becomes an invalid metric, which
// the handler logs and leaves out of the scrape.
func (c *sourceCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.m.sources.Load()
	if src == nil {
		return
	}
	if src.JobStats != nil {
		c.collectJobs(ch, src.JobStats)
	}
	if src.MemoryCounts != nil {
		c.collectMemories(ch, src.MemoryCounts)
	}
	if src.ShortTermEntries != nil {
		ch <- prometheus.MustNewConstMetric(c.stmEntries, prometheus.GaugeValue, float64(src.ShortTermEntries()))
	}
	if src.Bot != nil {
		st := src.Bot()
		for i, s := range botSeries {
			ch <- prometheus.MustNewConstMetric(c.bot[i], s.typ, float64(s.of(st)))
		}
	}
	if src.HealthScore != nil {
		if v, ok := src.HealthScore(); ok {
			ch <- prometheus.MustNewConstMetric(c.health, prometheus.GaugeValue, v)
		}
	}
}

func (c *sourceCollector) collectJobs(ch chan<- prometheus.Metric, read func(context.Context) (memory.JobStats, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, fmt.Errorf("couldn't read the job queue: %w", err))
		return
	}
	for _, s := range jobStates {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(s.of(st)), s.name)
	}
	age := 0.0
	if !st.OldestReady.IsZero() {
		age = max(0, c.now().Sub(st.OldestReady).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(c.oldestReady, prometheus.GaugeValue, age)
}

func (c *sourceCollector) collectMemories(ch chan<- prometheus.Metric, read func(context.Context) ([]memory.MemoryCount, error)) {
	counts, err := c.memoryCounts(read)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.memories, fmt.Errorf("couldn't count memories: %w", err))
		return
	}
	type key struct {
		scope memory.Scope
		typ   memory.Type
	}
	n := map[key]int{}
	for _, cnt := range counts {
		n[key{cnt.Scope, cnt.Type}] += cnt.Count
	}
	for _, s := range memoryScopes {
		for _, t := range memory.Types {
			ch <- prometheus.MustNewConstMetric(c.memories, prometheus.GaugeValue, float64(n[key{s, t}]), string(s), string(t))
			delete(n, key{s, t})
		}
	}
	// Rows of a scope or type this build does not know still count.
	for k, v := range n {
		ch <- prometheus.MustNewConstMetric(c.memories, prometheus.GaugeValue, float64(v), string(k.scope), string(k.typ))
	}
}

// memoryCounts returns the cached counts while they are fresh and counts again after.
// A failed count is cached for as long (a struggling database is not asked again by
// every scrape); meanwhile the last good counts, if any, are served.
func (c *sourceCollector) memoryCounts(read func(context.Context) ([]memory.MemoryCount, error)) ([]memory.MemoryCount, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.countedAt.IsZero() || now.Sub(c.countedAt) >= c.ttl || now.Before(c.countedAt) {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		counts, err := read(ctx)
		cancel()
		c.countedAt, c.countErr = now, err
		if err == nil {
			c.counts = counts
		}
	}
	if c.countErr != nil && c.counts == nil {
		return nil, c.countErr
	}
	return c.counts, nil
}
