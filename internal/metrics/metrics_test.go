package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kioku-bot/kioku/internal/metrics"
	"github.com/kioku-bot/kioku/memory"
)

// scrape serves one request of h and parses the exposition it wrote.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape answered %d: %s", rec.Code, rec.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("couldn't parse the exposition: %v", err)
	}
	return fams
}

// sample returns the metric of family name whose labels include every pair of labels.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		return m
	}
	return nil
}

// value is the value of a counter or gauge sample, and false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	m := sample(fams, name, labels...)
	switch {
	case m == nil:
		return 0, false
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

func wantValue(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	got, ok := value(fams, name, labels...)
	if !ok {
		t.Errorf("%s%v missing from the scrape", name, labels)
	} else if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// clock is a hand-driven clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestSeries: what the hooks report and what the sources say at scrape time come out as
// kioku's series with their labels, next to the Go runtime and process series.
func TestSeries(t *testing.T) {
	clk := &clock{now: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)}
	m := metrics.New(metrics.Options{Now: clk.Now})
	m.ObserveTurn(metrics.TurnAnswered, 1500*time.Millisecond)
	m.ObserveTurn(metrics.TurnAnswered, 200*time.Millisecond)
	m.ObserveTurn(metrics.TurnError, 3*time.Second)
	m.ObserveRecall(metrics.RecallTurn, 4*time.Millisecond)
	m.CountModelCall(metrics.ModelCall{Model: "chat-model", Purpose: memory.PurposeChat, Failed: true})
	m.CountModelCall(metrics.ModelCall{Model: "chat-model", Purpose: memory.PurposeChat, PromptTokens: 100, CompletionTokens: 20})
	m.CountModelCall(metrics.ModelCall{Model: "pipe-model", Purpose: memory.PurposeExtraction, PromptTokens: 50, CompletionTokens: 10})
	m.CountModelCall(metrics.ModelCall{Model: "embed-model", Purpose: memory.PurposeEmbedding, EmbedTokens: 7})
	m.CountJobOutcome("completed")
	m.CountJobOutcome("completed")
	m.CountJobOutcome("buried")
	m.Watch(metrics.Sources{
		JobStats: func(context.Context) (memory.JobStats, error) {
			return memory.JobStats{Queued: 3, Ready: 2, Leased: 1, Done: 9, Dead: 1, OldestReady: clk.Now().Add(-90 * time.Second)}, nil
		},
		MemoryCounts: func(context.Context) ([]memory.MemoryCount, error) {
			return []memory.MemoryCount{{Scope: memory.ScopeServer, Type: memory.TypeFact, Count: 4},
				{Scope: memory.ScopePersonal, Type: memory.TypePreference, Count: 2}}, nil
		},
		ShortTermEntries: func() int { return 5 },
		Bot: func() metrics.BotStats {
			return metrics.BotStats{Connected: true, Turns: 3, TurnErrors: 1, Interactions: 4, Denied: 1, CommandsRegistered: 6}
		},
	})
	fams := scrape(t, m.Handler())

	turns := sample(fams, "kioku_turn_duration_seconds", "outcome", metrics.TurnAnswered)
	if turns == nil || turns.GetHistogram().GetSampleCount() != 2 || turns.GetHistogram().GetSampleSum() != 1.7 {
		t.Errorf("answered turns histogram = %v, want 2 turns taking 1.7 s", turns)
	} else {
		for _, b := range turns.GetHistogram().GetBucket() {
			if b.GetUpperBound() == 1 && b.GetCumulativeCount() != 1 {
				t.Errorf("turns under 1 s = %d, want 1", b.GetCumulativeCount())
			}
		}
	}
	// Outcomes that never happened read zero rather than nothing.
	if h := sample(fams, "kioku_turn_duration_seconds", "outcome", metrics.TurnRateLimited); h == nil || h.GetHistogram().GetSampleCount() != 0 {
		t.Errorf("rate_limited turns = %v, want an empty histogram", h)
	}
	if h := sample(fams, "kioku_recall_duration_seconds", "caller", metrics.RecallTurn); h == nil || h.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("turn recall histogram = %v, want one recall", h)
	}

	wantValue(t, fams, 2, "kioku_llm_calls_total", "model", "chat-model", "purpose", "chat")
	wantValue(t, fams, 1, "kioku_llm_errors_total", "model", "chat-model", "purpose", "chat")
	wantValue(t, fams, 0, "kioku_llm_errors_total", "model", "pipe-model", "purpose", "extraction")
	wantValue(t, fams, 100, "kioku_llm_tokens_total", "model", "chat-model", "purpose", "chat", "kind", "prompt")
	wantValue(t, fams, 20, "kioku_llm_tokens_total", "model", "chat-model", "purpose", "chat", "kind", "completion")
	wantValue(t, fams, 50, "kioku_llm_tokens_total", "model", "pipe-model", "purpose", "extraction", "kind", "prompt")
	wantValue(t, fams, 7, "kioku_llm_tokens_total", "model", "embed-model", "purpose", "embedding", "kind", "embedding")

	wantValue(t, fams, 2, "kioku_pipeline_job_outcomes_total", "outcome", "completed")
	wantValue(t, fams, 1, "kioku_pipeline_job_outcomes_total", "outcome", "buried")
	wantValue(t, fams, 0, "kioku_pipeline_job_outcomes_total", "outcome", "dead")
	wantValue(t, fams, 3, "kioku_pipeline_jobs", "state", "queued")
	wantValue(t, fams, 2, "kioku_pipeline_jobs", "state", "ready")
	wantValue(t, fams, 1, "kioku_pipeline_jobs", "state", "dead")
	wantValue(t, fams, 90, "kioku_pipeline_oldest_ready_age_seconds")

	wantValue(t, fams, 4, "kioku_memories", "scope", "server", "type", "fact")
	wantValue(t, fams, 2, "kioku_memories", "scope", "personal", "type", "preference")
	wantValue(t, fams, 0, "kioku_memories", "scope", "personal", "type", "event")
	if n := len(fams["kioku_memories"].GetMetric()); n != 2*len(memory.Types) {
		t.Errorf("%d memory series, want one per scope and type (%d)", n, 2*len(memory.Types))
	}
	wantValue(t, fams, 5, "kioku_stm_entries")

	wantValue(t, fams, 1, "kioku_gateway_connected")
	wantValue(t, fams, 3, "kioku_turns_total")
	wantValue(t, fams, 1, "kioku_turn_errors_total")
	wantValue(t, fams, 4, "kioku_interactions_total")
	wantValue(t, fams, 1, "kioku_interactions_denied_total")
	wantValue(t, fams, 6, "kioku_commands_registered")
	if fams["kioku_turns_total"].GetType() != dto.MetricType_COUNTER || fams["kioku_turns_in_flight"].GetType() != dto.MetricType_GAUGE {
		t.Errorf("bot series types: turns_total %v, turns_in_flight %v", fams["kioku_turns_total"].GetType(), fams["kioku_turns_in_flight"].GetType())
	}

	if _, ok := fams["kioku_health_score"]; ok {
		t.Error("kioku_health_score reported with no health score source")
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes", "go_build_info"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("runtime series %s missing", name)
		}
	}
}

// TestHealthScore: the score is reported once its source has one, and left out while it
// says there is none.
func TestHealthScore(t *testing.T) {
	m := metrics.New(metrics.Options{})
	var score atomic.Pointer[float64]
	m.Watch(metrics.Sources{HealthScore: func() (float64, bool) {
		if p := score.Load(); p != nil {
			return *p, true
		}
		return 0, false
	}})
	if _, ok := scrape(t, m.Handler())["kioku_health_score"]; ok {
		t.Error("kioku_health_score reported before there is a score")
	}
	v := 0.75
	score.Store(&v)
	wantValue(t, scrape(t, m.Handler()), 0.75, "kioku_health_score")
}

// TestRegistryPerMetrics: two Metrics in one process keep their own series, so two bots
// in one test never see each other's counts.
func TestRegistryPerMetrics(t *testing.T) {
	a, b := metrics.New(metrics.Options{}), metrics.New(metrics.Options{})
	a.CountJobOutcome("completed")
	wantValue(t, scrape(t, a.Handler()), 1, "kioku_pipeline_job_outcomes_total", "outcome", "completed")
	wantValue(t, scrape(t, b.Handler()), 0, "kioku_pipeline_job_outcomes_total", "outcome", "completed")
}

// TestMemoryCountsCached: a burst of scrapes counts memories once; the count is renewed
// after the TTL; a failed count keeps the last good one, and without one leaves only the
// memory series out of an otherwise complete scrape.
func TestMemoryCountsCached(t *testing.T) {
	clk := &clock{now: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)}
	m := metrics.New(metrics.Options{Now: clk.Now, MemoryCountsTTL: 30 * time.Second})
	var (
		queries atomic.Int32
		fail    atomic.Bool
	)
	m.Watch(metrics.Sources{
		MemoryCounts: func(context.Context) ([]memory.MemoryCount, error) {
			n := queries.Add(1)
			if fail.Load() {
				return nil, errors.New("database is locked")
			}
			return []memory.MemoryCount{{Scope: memory.ScopeServer, Type: memory.TypeFact, Count: int(n)}}, nil
		},
		ShortTermEntries: func() int { return 1 },
	})
	h := m.Handler()
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { scrape(t, h) })
	}
	wg.Wait()
	if n := queries.Load(); n != 1 {
		t.Fatalf("%d counts for a burst of 5 scrapes, want 1", n)
	}
	clk.Advance(29 * time.Second)
	wantValue(t, scrape(t, h), 1, "kioku_memories", "scope", "server", "type", "fact")
	clk.Advance(time.Second)
	wantValue(t, scrape(t, h), 2, "kioku_memories", "scope", "server", "type", "fact")

	fail.Store(true)
	clk.Advance(30 * time.Second)
	wantValue(t, scrape(t, h), 2, "kioku_memories", "scope", "server", "type", "fact")
	if n := queries.Load(); n != 3 {
		t.Fatalf("%d counts, want 3", n)
	}

	t.Run("FailingFromTheStart", func(t *testing.T) {
		m := metrics.New(metrics.Options{})
		m.Watch(metrics.Sources{
			MemoryCounts: func(context.Context) ([]memory.MemoryCount, error) {
				return nil, errors.New("database is locked")
			},
			ShortTermEntries: func() int { return 1 },
		})
		fams := scrape(t, m.Handler())
		if _, ok := fams["kioku_memories"]; ok {
			t.Error("kioku_memories reported although counting failed")
		}
		wantValue(t, fams, 1, "kioku_stm_entries")
		// The handler counts the incomplete scrape after serving it: the next one shows it.
		wantValue(t, scrape(t, m.Handler()), 1, "promhttp_metric_handler_errors_total", "cause", "gathering")
	})
}

// TestStoreSeries: the store kind is always reported, and the pool series only for a store
// with a pool.
func TestStoreSeries(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.WatchStore(metrics.StoreSources{Kind: "sqlite"})
	got := scrape(t, m.Handler())
	wantValue(t, got, 1, "kioku_store_info", "store", "sqlite")
	if _, ok := got["kioku_db_pool_max_connections"]; ok {
		t.Error("pool series reported for a store without a pool")
	}
	m.WatchStore(metrics.StoreSources{Kind: "postgres", Pool: func() metrics.PoolStats {
		return metrics.PoolStats{Idle: 2, InUse: 1, Max: 8, Acquires: 40}
	}})
	got = scrape(t, m.Handler())
	wantValue(t, got, 1, "kioku_store_info", "store", "postgres")
	wantValue(t, got, 2, "kioku_db_pool_connections", "state", "idle")
	wantValue(t, got, 1, "kioku_db_pool_connections", "state", "in_use")
	wantValue(t, got, 8, "kioku_db_pool_max_connections")
	wantValue(t, got, 40, "kioku_db_pool_acquires_total")
}
