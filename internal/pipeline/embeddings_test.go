package pipeline_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/memory"
)

// trackerEnv is an env whose store embeds through the fake with "embed-model" and whose
// pipeline has the embedding tracker (Deps.Embeddings), as `kioku run` wires it when
// KIOKU_EMBED_MODEL is set.
func trackerEnv(t *testing.T, cfg pipeline.Config) *env {
	t.Helper()
	e := newEnv(t, cfg).withEmbeddings()
	deps := storeDeps(e.store, e.client)
	deps.Embeddings = e.store.Recall
	p, err := pipeline.New(e.p.Config(), deps)
	if err != nil {
		t.Fatal(err)
	}
	e.p = p
	return e
}

// embedRun runs the embeddings task by hand and returns its recorded run.
func (e *env) embedRun() memory.TaskRun {
	e.t.Helper()
	if err := e.p.RunTask(e.t.Context(), pipeline.TaskEmbeddings); err != nil {
		e.t.Fatal(err)
	}
	runs, err := e.store.Jobs.TaskRuns(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range runs {
		if r.Name == pipeline.TaskEmbeddings {
			return r
		}
	}
	e.t.Fatal("the embeddings run was not recorded")
	return memory.TaskRun{}
}

// remember stores a server memory of g1 through the ordinary write path (which embeds it
// at once when the provider answers), one second after the previous write so that the
// tracker's oldest-first order is the order of the calls.
func (e *env) remember(content string) *memory.Memory {
	e.t.Helper()
	e.clock.Advance(time.Second)
	res, err := e.store.Memories.Remember(e.t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content}, "user:u1")
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Memory
}

// vectorScore is the cosine recall gives memory id for a search of its own content: 0
// when the memory is not in the vector index.
func (e *env) vectorScore(m *memory.Memory, content string) float64 {
	e.t.Helper()
	res, err := e.store.Recall.Search(e.t.Context(), memory.SearchQuery{Text: content, Owners: []memory.Owner{m.Owner()}, Limit: 50})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range res {
		if r.Memory.ID == m.ID {
			return r.Vector
		}
	}
	e.t.Fatalf("search %q did not find memory %d", content, m.ID)
	return 0
}

// embedState is everything a tracker run could change.
type embedState struct {
	coverage                         memory.EmbedCoverage
	rows, memories, history, indexed int
}

func (e *env) embedState(model string) embedState {
	e.t.Helper()
	// Vectors fetched by writes are stored shortly after them; the state counts them stored.
	if err := e.store.Recall.FlushVectors(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	cov, err := e.store.Recall.EmbeddingCoverage(e.t.Context(), model)
	if err != nil {
		e.t.Fatal(err)
	}
	st, err := e.store.Health.Counts(e.t.Context(), "")
	if err != nil {
		e.t.Fatal(err)
	}
	return embedState{coverage: cov, rows: st.Embeddings, memories: st.Memories, history: st.HistoryRows,
		indexed: e.store.Recall.EmbedStatus().Vectors}
}

// embeddingInputs lists the inputs of each embedding request after the first skip.
func (e *env) embeddingInputs(skip int) [][]string {
	var out [][]string
	for i, r := range e.fake.EmbeddingRequests() {
		if i >= skip {
			out = append(out, r.Input)
		}
	}
	return out
}

// TestEmbeddingTracker: memories written while the provider is down, a memory edited while
// it is down and a change of model all get their vectors once the provider answers; while
// it is down a run is recorded as skipped and changes nothing; a forgotten memory is never
// embedded; no embedding call happens inside a write transaction.
func TestEmbeddingTracker(t *testing.T) {
	e := trackerEnv(t, pipeline.Config{EmbedBatch: 2})
	ctx := t.Context()
	e.fake.OnRequest(func(r *http.Request) {
		if e.store.InWriteTx() {
			t.Errorf("%s called while a write transaction is open", r.URL.Path)
		}
	})
	owner := memory.ServerOwner("g1")
	// The scope is resident (recalled once), so the index count follows the writes.
	if err := e.store.Recall.WarmVectors(ctx, owner); err != nil {
		t.Fatal(err)
	}
	wiki := e.remember("The wiki lives on the team drive")
	if st := e.embedState("embed-model"); st.coverage.Embedded != 1 || st.indexed != 1 {
		t.Fatalf("a memory written while the provider answers was not embedded at once: %+v", st)
	}

	e.fake.Down()
	raid := e.remember("Raid night is on Wednesday")
	snacks := e.remember("Bring snacks to the board game evening")
	e.clock.Advance(time.Second)
	movedWiki := "The wiki moved to the shared notebook"
	if _, err := e.store.Memories.Modify(ctx, owner, wiki.ID, memory.Change{Content: &movedWiki}, "user:u1"); err != nil {
		t.Fatal(err)
	}
	key := e.remember("The spare key hides under the blue flowerpot")
	if _, err := e.store.Memories.Forget(ctx, owner, []int64{key.ID}, "user:u1", ""); err != nil {
		t.Fatal(err)
	}
	before := e.embedState("embed-model")
	if before.coverage != (memory.EmbedCoverage{Model: "embed-model", Live: 3, Embedded: 0}) || before.indexed != 0 {
		t.Fatalf("the outage scenario left %+v, want three live memories without vectors", before)
	}

	t.Run("ProviderDownSkipsAndChangesNothing", func(t *testing.T) {
		sent := e.fake.EmbeddingCount()
		// The write path's failure opened the circuit breaker: no call at all.
		run := e.embedRun()
		if !run.OK || !strings.HasPrefix(run.Detail, "skipped: embedding provider marked down until") ||
			!strings.Contains(run.Detail, "embedded=0 refreshed=0 missing=3 calls=0") {
			t.Fatalf("run while the breaker is open: %+v", run)
		}
		if n := e.fake.EmbeddingCount(); n != sent {
			t.Fatalf("%d embedding requests while the breaker is open", n-sent)
		}
		// The breaker closes; the provider is still down: the first call fails, the run stops.
		e.clock.Advance(time.Minute)
		run = e.embedRun()
		if !run.OK || !strings.HasPrefix(run.Detail, "skipped: embedding provider failed") ||
			!strings.Contains(run.Detail, "embedded=0 refreshed=0 missing=3 calls=1") {
			t.Fatalf("run while the provider is down: %+v", run)
		}
		reqs := e.embeddingInputs(sent)
		if len(reqs) == 0 {
			t.Fatal("the run did not try the provider")
		}
		for _, in := range reqs { // the client's retries of the one call, oldest gaps first
			if !slices.Equal(in, []string{raid.Content, snacks.Content}) {
				t.Fatalf("requests %q, want only the first batch (the two oldest gaps)", reqs)
			}
		}
		if after := e.embedState("embed-model"); after != before {
			t.Fatalf("a skipped run changed the store:\nbefore %+v\nafter  %+v", before, after)
		}
	})

	t.Run("ProviderBackFillsEveryGap", func(t *testing.T) {
		e.fake.Up()
		e.clock.Advance(time.Minute)
		if v := e.vectorScore(raid, raid.Content); v != 0 {
			t.Fatalf("memory written during the outage has a vector (%v) before the tracker ran", v)
		}
		run := e.embedRun()
		if !run.OK || run.Detail != "embedded=2 refreshed=1 missing=0 calls=2 loaded=0" {
			t.Fatalf("run after the provider came back: %+v", run)
		}
		if cov := e.embedState("embed-model").coverage; cov.Embedded != 3 || cov.Live != 3 {
			t.Fatalf("coverage %+v, want every live memory", cov)
		}
		for m, content := range map[*memory.Memory]string{raid: raid.Content, snacks: snacks.Content, wiki: movedWiki} {
			if v := e.vectorScore(m, content); v < 0.99 {
				t.Errorf("memory %d (%q): vector leg cosine %v, want its own vector", m.ID, content, v)
			}
		}
		for _, r := range e.fake.EmbeddingRequests() {
			for _, in := range r.Input {
				if strings.Contains(in, "flowerpot") {
					t.Fatalf("the forgotten memory was sent to the provider: %q", in)
				}
			}
		}
		if run := e.embedRun(); run.Detail != "embedded=0 refreshed=0 missing=0 calls=0 loaded=0" {
			t.Fatalf("a run with nothing to do: %+v", run)
		}
	})

	t.Run("ModelChangeRefreshesEveryMemory", func(t *testing.T) {
		client2, err := llm.New(llm.Config{BaseURL: e.fake.URL(), APIKey: fakeopenai.APIKey, ChatModel: "chat-model",
			EmbedModel: "embed-model-2", MaxRetries: llm.NoRetries})
		if err != nil {
			t.Fatal(err)
		}
		e.store.Recall.SetEmbedder(client2.Embed, "embed-model-2")
		sent := e.fake.EmbeddingCount()
		run := e.embedRun()
		if !run.OK || run.Detail != "embedded=0 refreshed=3 missing=0 calls=2 loaded=0" {
			t.Fatalf("run after the model changed: %+v", run)
		}
		for _, r := range e.fake.EmbeddingRequests()[sent:] {
			if r.Model != "embed-model-2" {
				t.Fatalf("request for model %q after the change", r.Model)
			}
		}
		if cov := e.embedState("embed-model-2").coverage; cov.Embedded != 3 || cov.Live != 3 {
			t.Fatalf("coverage of the new model %+v", cov)
		}
		if v := e.vectorScore(snacks, snacks.Content); v < 0.99 {
			t.Fatalf("vector leg cosine %v with the new model", v)
		}
	})
}

// TestEmbeddingTrackerBatches: the provider never gets more than a batch per call, nor a
// run more than its calls; the oldest gaps go first and later runs finish the backlog.
func TestEmbeddingTrackerBatches(t *testing.T) {
	t.Run("Configured", func(t *testing.T) {
		e := trackerEnv(t, pipeline.Config{EmbedBatch: 4, EmbedCallsPerRun: 2})
		e.fake.Down()
		var contents []string
		for i := range 11 {
			contents = append(contents, e.remember(fmt.Sprintf("Backlog note number %d about the quarterly plan", i)).Content)
		}
		e.fake.Up()
		e.clock.Advance(time.Minute)
		sent := e.fake.EmbeddingCount()
		if run := e.embedRun(); run.Detail != "embedded=8 refreshed=0 missing=3 calls=2 loaded=0" {
			t.Fatalf("first run: %+v", run)
		}
		reqs := e.embeddingInputs(sent)
		if len(reqs) != 2 || !slices.Equal(reqs[0], contents[:4]) || !slices.Equal(reqs[1], contents[4:8]) {
			t.Fatalf("requests %q, want the eight oldest in two batches of four", reqs)
		}
		if run := e.embedRun(); run.Detail != "embedded=3 refreshed=0 missing=0 calls=1 loaded=0" {
			t.Fatalf("second run: %+v", run)
		}
		if reqs := e.embeddingInputs(sent + 2); len(reqs) != 1 || !slices.Equal(reqs[0], contents[8:]) {
			t.Fatalf("second run's requests %q", reqs)
		}
	})
	t.Run("Defaults", func(t *testing.T) {
		e := trackerEnv(t, pipeline.Config{})
		e.fake.Down()
		n := pipeline.DefaultEmbedBatch + 6
		mems := make([]memory.Memory, n)
		for i := range mems {
			mems[i] = memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: fmt.Sprintf("Bulk imported note %d", i)}
		}
		if _, err := e.store.Transfer.RememberMany(t.Context(), mems, "test"); err != nil {
			t.Fatal(err)
		}
		e.fake.Up()
		e.clock.Advance(time.Minute)
		sent := e.fake.EmbeddingCount()
		if run := e.embedRun(); run.Detail != fmt.Sprintf("embedded=%d refreshed=0 missing=0 calls=2 loaded=0", n) {
			t.Fatalf("run: %+v", run)
		}
		var sizes []int
		for _, in := range e.embeddingInputs(sent) {
			sizes = append(sizes, len(in))
		}
		if !slices.Equal(sizes, []int{pipeline.DefaultEmbedBatch, 6}) {
			t.Fatalf("request sizes %v, want %d then 6", sizes, pipeline.DefaultEmbedBatch)
		}
	})
}

// TestEmbeddingTrackerScheduling: the task is scheduled only when the pipeline has the
// tracker's store (an embedding model is configured), and its runs are recorded.
func TestEmbeddingTrackerScheduling(t *testing.T) {
	t.Run("NoModelNoTask", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{})
		c, err := e.p.Scheduler()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(c.Entries()); n != 4 {
			t.Fatalf("%d scheduled tasks without an embedding model, want 4", n)
		}
		if err := e.p.RunTask(t.Context(), pipeline.TaskEmbeddings); err == nil {
			t.Fatal("the embeddings task ran without an embedding model")
		}
	})
	t.Run("ScheduledWithModel", func(t *testing.T) {
		e := trackerEnv(t, pipeline.Config{})
		c, err := e.p.Scheduler()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(c.Entries()); n != 5 {
			t.Fatalf("%d scheduled tasks, want the embeddings task as the fifth", n)
		}
		for _, entry := range c.Entries() {
			entry.WrappedJob.Run()
		}
		runs, err := e.store.Jobs.TaskRuns(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(runs, func(r memory.TaskRun) bool { return r.Name == pipeline.TaskEmbeddings && r.OK }) {
			t.Fatalf("runs %+v, want an embeddings run", runs)
		}
	})
	t.Run("BadSchedule", func(t *testing.T) {
		e := trackerEnv(t, pipeline.Config{EmbedSchedule: "now and then"})
		if _, err := e.p.Scheduler(); err == nil || !strings.Contains(err.Error(), "embeddings") {
			t.Fatalf("a bad embeddings schedule gave %v", err)
		}
	})
}
