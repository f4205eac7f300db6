package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

// scrapeMetrics fetches /metrics from the running bot and parses the exposition.
func (h *e2e) scrapeMetrics() map[string]*dto.MetricFamily {
	h.t.Helper()
	resp, err := http.Get("http://" + h.httpAddr + "/metrics")
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("/metrics = %d %s", resp.StatusCode, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		h.t.Fatalf("couldn't parse /metrics: %v", err)
	}
	return fams
}

// metricSample is the sample of family name whose labels include every pair in labels.
func metricSample(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	for _, m := range fams[name].GetMetric() {
		if hasLabels(m, labels) {
			return m
		}
	}
	return nil
}

// hasLabels reports whether m carries every name/value pair in labels.
func hasLabels(m *dto.Metric, labels []string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for i := 0; i+1 < len(labels); i += 2 {
		if have[labels[i]] != labels[i+1] {
			return false
		}
	}
	return true
}

// metricValue is the value of a counter or gauge, summed over the samples whose labels
// include labels; -1 when there is none.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	sum, found := 0.0, false
	for _, m := range fams[name].GetMetric() {
		if hasLabels(m, labels) {
			found = true
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
		}
	}
	if !found {
		return -1
	}
	return sum
}

// getStatus fetches path from the bot's HTTP server and returns the status code and
// the JSON body's "status".
func (h *e2e) getStatus(path string) (int, string) {
	h.t.Helper()
	resp, err := http.Get("http://" + h.httpAddr + path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		h.t.Fatalf("%s: couldn't decode the body: %v", path, err)
	}
	return resp.StatusCode, body.Status
}

// TestRunMetrics: through the real `kioku run` wiring, chat turns, the model calls of
// chat, extraction, decisions and embeddings, the pipeline's jobs, the memories written
// and the Go runtime all show in /metrics, in the Prometheus exposition format, with
// values that match what happened.
func TestRunMetrics(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{
		"KIOKU_PIPELINE_MODE":    "full",
		"KIOKU_MAINTENANCE_MODE": "execute",
		"KIOKU_CHAT_MODEL":       "chat-model",
		"KIOKU_PIPELINE_MODEL":   "pipe-model",
		"KIOKU_EMBED_MODEL":      "embed-model",
	})
	alice := h.fake.NewUser("alice")
	var facts atomic.Int32
	h.ai.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		system, last := req.Messages[0].Content, req.Messages[len(req.Messages)-1]
		switch {
		case strings.HasPrefix(system, "You extract"):
			// A new wording each time, so a fact is never the exact copy of a memory and
			// the pipeline asks the model to decide against the similar ones.
			b, _ := json.Marshal(map[string]any{"facts": []map[string]any{{
				"content": fmt.Sprintf("Alice decided to raid on Fridays, note %d", facts.Add(1)),
				"type":    "decision", "confidence": 0.9, "scope": "personal", "subject": alice.ID}}})
			return fakeopenai.Text(string(b))
		case strings.HasPrefix(system, "You maintain the long-term memory"):
			return fakeopenai.Text(`{"action":"ADD","confidence":0.9,"reason":"a new detail"}`)
		case last.Role == openai.ChatMessageRoleTool:
			return fakeopenai.Text("Saved.")
		case strings.Contains(last.Content, "remember that"):
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "create_long_term_memory",
				Arguments: `{"memory_content":"Alice raids on Fridays","memory_scope":"target_user"}`})
		}
		return fakeopenai.Text("Noted.")
	})
	const dm = "200000000000000041"
	if got := h.chat(h.fake.DMMessage(dm, alice, "please remember that I raid on Fridays")); !strings.Contains(got.Content, "Saved.") {
		t.Fatalf("first reply %q", got.Content)
	}
	// Sent once the memory above exists, so its extraction finds it as a candidate.
	if got := h.chat(h.fake.DMMessage(dm, alice, "We decided to raid on Fridays from now on")); got.Content != "Noted." {
		t.Fatalf("second reply %q", got.Content)
	}
	const turns = 2

	// The worker runs on its own schedule; wait for it to finish a job and decide.
	var fams map[string]*dto.MetricFamily
	waitFor(t, h, "a completed pipeline job and a decision in /metrics", func() bool {
		fams = h.scrapeMetrics()
		return metricValue(fams, "kioku_pipeline_job_outcomes_total", "outcome", "completed") >= 1 &&
			metricValue(fams, "kioku_llm_calls_total", "purpose", "decision") >= 1
	})

	t.Run("TurnHistogram", func(t *testing.T) {
		hist := metricSample(fams, "kioku_turn_duration_seconds", "outcome", "answered").GetHistogram()
		if hist.GetSampleCount() < turns || hist.GetSampleSum() <= 0 {
			t.Fatalf("answered turns: count %d sum %v, want at least %d turns that took time", hist.GetSampleCount(), hist.GetSampleSum(), turns)
		}
		var last uint64
		for _, b := range hist.GetBucket() {
			if b.GetCumulativeCount() < last || b.GetCumulativeCount() > hist.GetSampleCount() {
				t.Errorf("bucket le=%v holds %d: buckets must be cumulative up to the count %d", b.GetUpperBound(), b.GetCumulativeCount(), hist.GetSampleCount())
			}
			last = b.GetCumulativeCount()
		}
		if len(hist.GetBucket()) == 0 || fams["kioku_turn_duration_seconds"].GetType() != dto.MetricType_HISTOGRAM {
			t.Errorf("kioku_turn_duration_seconds is not a histogram with buckets: %v", fams["kioku_turn_duration_seconds"])
		}
		if got := metricValue(fams, "kioku_turns_total"); got != turns {
			t.Errorf("kioku_turns_total = %v, want %d", got, turns)
		}
		if n := metricSample(fams, "kioku_recall_duration_seconds", "caller", "turn").GetHistogram().GetSampleCount(); n < turns {
			t.Errorf("%d turn recalls timed, want at least one per turn (%d)", n, turns)
		}
		if n := metricSample(fams, "kioku_recall_duration_seconds", "caller", "pipeline").GetHistogram().GetSampleCount(); n < 1 {
			t.Errorf("%d pipeline recalls timed, want the candidate search", n)
		}
	})

	t.Run("ModelCalls", func(t *testing.T) {
		// The first turn asked twice (the tool call, then the answer), the second once.
		if got := metricValue(fams, "kioku_llm_calls_total", "model", "chat-model", "purpose", "chat"); got != 3 {
			t.Errorf("chat calls = %v, want 3", got)
		}
		for _, purpose := range []string{"extraction", "decision"} {
			if got := metricValue(fams, "kioku_llm_calls_total", "model", "pipe-model", "purpose", purpose); got < 1 {
				t.Errorf("%s calls on the pipeline model = %v, want at least 1", purpose, got)
			}
		}
		if got := metricValue(fams, "kioku_llm_calls_total", "model", "embed-model", "purpose", "embedding"); got < 1 {
			t.Errorf("embedding calls = %v, want at least 1", got)
		}
		if got := metricValue(fams, "kioku_llm_errors_total", "model", "chat-model", "purpose", "chat"); got != 0 {
			t.Errorf("chat errors = %v, want 0", got)
		}
		for _, c := range []struct{ model, purpose, kind string }{
			{"chat-model", "chat", "prompt"}, {"chat-model", "chat", "completion"},
			{"pipe-model", "extraction", "prompt"}, {"embed-model", "embedding", "embedding"},
		} {
			if got := metricValue(fams, "kioku_llm_tokens_total", "model", c.model, "purpose", c.purpose, "kind", c.kind); got <= 0 {
				t.Errorf("%s tokens of %s on %s = %v, want the provider's count", c.kind, c.purpose, c.model, got)
			}
		}
		// Every call is counted under the model it went to and nothing else.
		if total, ai := metricValue(fams, "kioku_llm_calls_total"), h.ai.ChatCount()+h.ai.EmbeddingCount(); total > float64(ai) {
			t.Errorf("%v calls counted, but the provider saw only %d", total, ai)
		}
	})

	t.Run("Store", func(t *testing.T) {
		if got := metricValue(fams, "kioku_store_info", "store", "sqlite"); got != 1 {
			t.Errorf("kioku_store_info{store=sqlite} = %v, want 1", got)
		}
		if _, ok := fams["kioku_db_pool_max_connections"]; ok {
			t.Error("pool series reported on SQLite, which has no pool to report")
		}
	})

	t.Run("Queue", func(t *testing.T) {
		if got := metricValue(fams, "kioku_pipeline_jobs", "state", "done"); got < 1 {
			t.Errorf("done jobs = %v, want at least the completed one", got)
		}
		for _, state := range []string{"queued", "ready", "leased", "stale", "dead"} {
			if got := metricValue(fams, "kioku_pipeline_jobs", "state", state); got < 0 {
				t.Errorf("kioku_pipeline_jobs{state=%q} missing", state)
			}
		}
		if got := metricValue(fams, "kioku_pipeline_job_outcomes_total", "outcome", "dead"); got != 0 {
			t.Errorf("dead outcomes = %v, want 0", got)
		}
	})

	t.Run("Memories", func(t *testing.T) {
		if got := metricValue(fams, "kioku_memories", "scope", "personal"); got < 1 {
			t.Errorf("personal memories = %v, want at least the one the tool saved", got)
		}
		if got := metricValue(fams, "kioku_memories", "scope", "server"); got != 0 {
			t.Errorf("server memories = %v, want 0", got)
		}
		if got := metricValue(fams, "kioku_stm_entries"); got < 1 {
			t.Errorf("short-term entries = %v, want the DM's", got)
		}
		if got := metricValue(fams, "kioku_gateway_connected"); got != 1 {
			t.Errorf("kioku_gateway_connected = %v", got)
		}
	})

	t.Run("Runtime", func(t *testing.T) {
		if got := metricValue(fams, "go_goroutines"); got < 1 {
			t.Errorf("go_goroutines = %v", got)
		}
		if got := metricValue(fams, "process_start_time_seconds"); got <= 0 {
			t.Errorf("process_start_time_seconds = %v", got)
		}
	})

	t.Run("HealthScore", func(t *testing.T) {
		// The maintenance task runs once at start, so the score is there long before its
		// first scheduled run.
		var score float64
		waitFor(t, h, "kioku_health_score in /metrics", func() bool {
			score = metricValue(h.scrapeMetrics(), "kioku_health_score")
			return score >= 0
		})
		if score < 80 || score > 100 {
			t.Errorf("kioku_health_score = %v, want a healthy score for a fresh database", score)
		}
	})
}

// TestRunReadiness: /readyz answers 503 while the Discord session is still opening and
// 200 once the bot runs, and 503 again as soon as shutdown begins, while a turn still in
// flight finishes; /healthz keeps its own meaning meanwhile.
func TestRunReadiness(t *testing.T) {
	t.Parallel()
	// The session asks the REST API for the gateway's address before it connects; a proxy
	// in front of the fake Discord holds that request until the test has looked.
	held, release := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	overrides := map[string]string{"KIOKU_PIPELINE_MODE": "off"}
	h := launchBot(t, overrides, func(f *fakediscord.Fake) {
		target, err := url.Parse(f.URL())
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/gateway") {
				holdOnce.Do(func() { close(held) })
				<-release
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		overrides["KIOKU_DISCORD_API_URL"] = srv.URL + "/"
	})
	// Cleanups run last first: a failing test lets the session connect before it is stopped.
	t.Cleanup(free)
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatalf("the session never asked for the gateway:\n%s", h.stderr.String())
	}
	if code, status := h.getStatus("/readyz"); code != http.StatusServiceUnavailable || status != "starting" {
		t.Errorf("/readyz while connecting = %d %q, want 503 starting", code, status)
	}
	if code, _ := h.getStatus("/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz while connecting = %d, want 503 (gateway not connected)", code)
	}
	free()
	h.waitConnected()
	waitFor(t, h, "/readyz to answer 200", func() bool {
		code, _ := h.getStatus("/readyz")
		return code == http.StatusOK
	})
	if code, status := h.getStatus("/healthz"); code != http.StatusOK || status != "ok" {
		t.Errorf("/healthz while running = %d %q", code, status)
	}

	// A turn whose model call waits for the test keeps the shutdown waiting.
	entered, answer := make(chan struct{}), make(chan struct{})
	var enterOnce, answerOnce sync.Once
	reply := func() { answerOnce.Do(func() { close(answer) }) }
	t.Cleanup(reply) // before the stop, which waits for the turn
	h.ai.Default(func(openai.ChatCompletionRequest) fakeopenai.Response {
		enterOnce.Do(func() { close(entered) })
		<-answer
		return fakeopenai.Text("made it")
	})
	alice := h.fake.NewUser("alice")
	mark := h.fake.Mark()
	if err := h.fake.DispatchMessage(h.fake.DMMessage("200000000000000051", alice, "hello")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatalf("the turn never reached the model:\n%s", h.stderr.String())
	}
	h.cancel()
	waitFor(t, h, "/readyz to answer 503 once shutdown began", func() bool {
		code, status := h.getStatus("/readyz")
		return code == http.StatusServiceUnavailable && status == "stopping"
	})
	reply()
	if r, err := h.fake.WaitForSince(h.ctx(), mark, fakediscord.Match("POST", "/channels/200000000000000051/messages")); err != nil {
		t.Fatalf("the turn in flight was not answered during shutdown: %v\n%s", err, h.stderr.String())
	} else if r.Message.Content != "made it" {
		t.Errorf("reply during shutdown %q", r.Message.Content)
	}
}
