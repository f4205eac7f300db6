package pipeline_test

import (
	"database/sql"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// newGraphEnv is newEnv with the store's knowledge graph wired in, as cmd/kioku wires it.
func newGraphEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, pipeline.Config{})
	deps := storeDeps(e.store, e.client)
	deps.Graph = e.store.Graph
	p, err := pipeline.New(pipeline.Config{Jitter: func(d time.Duration) time.Duration { return d },
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, deps)
	if err != nil {
		t.Fatal(err)
	}
	e.p = p
	return e
}

type triple struct {
	Source       string  `json:"source"`
	Relationship string  `json:"relationship"`
	Target       string  `json:"target"`
	Confidence   float64 `json:"confidence"`
}

// extractionWithTriples is an extraction reply with facts and entity triples.
func extractionWithTriples(facts []fact, triples ...triple) fakeopenai.Response {
	b, _ := json.Marshal(map[string]any{"facts": facts, "entities": triples})
	return fakeopenai.Text(string(b))
}

func TestGraphTriplesRecorded(t *testing.T) {
	ctx := t.Context()
	e := newGraphEnv(t)
	g := memory.ServerOwner("g1")
	e.fake.Script(extractionWithTriples([]fact{{Content: "Alice leads Project Falcon from now on", Confidence: 0.9, Scope: "server", Evidence: []int{1}}},
		triple{"Alice", "leads", "Project Falcon", 0.8}, triple{"Project Falcon", "uses", "Postgres", 0.9}))
	e.say("g1", "c1", "u1", "Alice", "We decided Alice leads Project Falcon from now on")
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	nb, err := e.store.Graph.Neighbourhood(ctx, g, "alice")
	if err != nil {
		t.Fatalf("Alice's entity: %v\n%s", err, e.logs)
	}
	if nb.Entity.UserID != "u1" || nb.Entity.Kind != graph.KindPerson {
		t.Errorf("Alice's entity %+v: a speaker's name must be tied to their user id", nb.Entity)
	}
	if len(nb.Relations) != 1 || nb.Relations[0].Type != "leads" || nb.Relations[0].Target.Name != "Falcon" ||
		nb.Relations[0].Target.Kind != graph.KindProject {
		t.Fatalf("Alice's relations %+v, want leads → Falcon (project)", nb.Relations)
	}

	// The same relation seen again counts twice, with the running average of the confidences.
	e.fake.Script(extractionWithTriples([]fact{{Content: "Alice still leads Project Falcon", Confidence: 0.9, Scope: "server", Evidence: []int{1}}},
		triple{"Alice", "leads", "Project Falcon", 0.4}))
	e.say("g1", "c1", "u1", "Alice", "We decided Alice still leads Project Falcon")
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	nb, err = e.store.Graph.Neighbourhood(ctx, g, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	if r := nb.Relations[0]; r.Mentions != 2 || r.Confidence < 0.599 || r.Confidence > 0.601 {
		t.Errorf("relation after a second mention: %d mentions, confidence %v; want 2 and 0.6", r.Mentions, r.Confidence)
	}
	// Another guild's graph holds none of it.
	if _, err := e.store.Graph.Neighbourhood(ctx, memory.ServerOwner("g2"), "Alice"); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Errorf("g2 sees g1's graph: %v", err)
	}
}

func TestGraphOfADirectMessageIsTheMembers(t *testing.T) {
	ctx := t.Context()
	e := newGraphEnv(t)
	e.fake.Script(extractionWithTriples([]fact{{Content: "Bob plays Valheim every Friday", Confidence: 0.9, Scope: "personal", SubjectID: "u2", Evidence: []int{1}}},
		triple{"Bob", "plays", "Valheim", 0.9}))
	e.say("", "dm-u2", "u2", "Bob", "I decided to play Valheim every Friday")
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	nb, err := e.store.Graph.Neighbourhood(ctx, memory.PersonalOwner("u2"), "Valheim")
	if err != nil {
		t.Fatalf("Valheim in Bob's graph: %v\n%s", err, e.logs)
	}
	if nb.Entity.Kind != graph.KindGame || len(nb.Relations) != 1 || nb.Relations[0].Source.UserID != "u2" {
		t.Errorf("Bob's graph %+v", nb)
	}
}

func TestGraphNotWrittenInShadowMode(t *testing.T) {
	ctx := t.Context()
	e := newGraphEnv(t)
	if err := e.store.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: "g1", PipelineMode: memory.PipelineShadow}); err != nil {
		t.Fatal(err)
	}
	e.fake.Script(extractionWithTriples([]fact{{Content: "Alice leads Project Falcon from now on", Confidence: 0.9, Scope: "server", Evidence: []int{1}}},
		triple{"Alice", "leads", "Project Falcon", 0.8}))
	e.say("g1", "c1", "u1", "Alice", "We decided Alice leads Project Falcon from now on")
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	if top, err := e.store.Graph.TopEntities(ctx, memory.ServerOwner("g1"), 10); err != nil || len(top) != 0 {
		t.Errorf("shadow mode wrote the graph: %v %v", top, err)
	}
}

// TestGraphFailureKeepsFacts breaks the graph's tables under a running store: the job's facts
// are committed and the job is done all the same, and the failure is logged.
func TestGraphFailureKeepsFacts(t *testing.T) {
	ctx := t.Context()
	e := newGraphEnv(t)
	raw, err := sql.Open("sqlite", sqlite.DSN(e.store.Path()))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `DROP TABLE relations`); err != nil {
		t.Fatal(err)
	}
	e.fake.Script(extractionWithTriples([]fact{{Content: "Alice leads Project Falcon from now on", Confidence: 0.9, Scope: "server", Evidence: []int{1}}},
		triple{"Alice", "leads", "Project Falcon", 0.8}))
	e.say("g1", "c1", "u1", "Alice", "We decided Alice leads Project Falcon from now on")
	if r := e.tick(); r.Done != 1 || r.Retried != 0 || r.Dead != 0 {
		t.Fatalf("tick %+v: a graph failure must not fail the job\n%s", r, e.logs)
	}
	if got := e.contents(memory.ServerOwner("g1")); len(got) != 1 || got[0] != "Alice leads Project Falcon from now on" {
		t.Fatalf("facts after a graph failure: %q", got)
	}
	if !strings.Contains(e.logs.String(), "couldn't record the knowledge graph") {
		t.Errorf("the graph failure was not logged:\n%s", e.logs)
	}
	if st := e.stats(); st.Done != 1 {
		t.Errorf("job stats %+v, want the job done", st)
	}
}
