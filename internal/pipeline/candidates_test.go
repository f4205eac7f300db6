package pipeline_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/memory"
	"github.com/sashabaranov/go-openai"
)

// TestDecisionCandidates: the decision stage shows the model at most MaxCandidates
// memories, all from the fact's own scope, and a decision naming a real memory outside
// that set (another guild's) is dropped without touching it.
func TestDecisionCandidates(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	remember := func(m memory.Memory) *memory.Memory {
		t.Helper()
		res, err := e.store.Memories.Remember(ctx, m, "user:admin")
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	own := map[int64]bool{}
	for i := range 8 {
		m := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: fmt.Sprintf("Raid night for team %d is on Tuesday", i+1)})
		own[m.ID] = true
	}
	other := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Raid night for team 1 is on Tuesday"})
	personal := remember(memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", GuildID: "g1", Content: "Raid night for team 1 is on Tuesday for me"})

	var shown []int64
	idLine := regexp.MustCompile(`(?m)^\[id:(\d+)\]`)
	e.fake.Script(
		extraction(fact{Content: "Raid night for team 1 is on Wednesday now", Type: "decision", Confidence: 0.9, Scope: "server"}),
		fakeopenai.Handle(func(req openai.ChatCompletionRequest) fakeopenai.Response {
			for _, m := range idLine.FindAllStringSubmatch(req.Messages[len(req.Messages)-1].Content, -1) {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				shown = append(shown, id)
			}
			// A real id, but another guild's: a hallucination as far as this fact goes.
			return decision("UPDATE", other.ID, "Raid night for team 1 is on Wednesday now", 0.95, "moved")
		}),
	)
	e.say("g1", "c1", "u1", "Alice", decisive)
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	if e.fake.Remaining() != 0 {
		t.Fatal("the decision stage was not asked")
	}
	if len(shown) != pipeline.MaxCandidates {
		t.Fatalf("the model was shown %d candidates %v, want %d", len(shown), shown, pipeline.MaxCandidates)
	}
	for _, id := range shown {
		if !own[id] {
			t.Errorf("candidate #%d is not one of guild g1's server memories (g2's is #%d, u1's personal #%d)", id, other.ID, personal.ID)
		}
	}
	got, err := e.store.Memories.Get(ctx, memory.ServerOwner("g2"), other.ID)
	if err != nil || got.Content != other.Content || got.Version != other.Version {
		t.Fatalf("another guild's memory changed: %+v %v", got, err)
	}
	if acts := e.actions(memory.ServerOwner("g2")); !slices.Equal(acts, []memory.Action{memory.ActionCreate}) {
		t.Fatalf("g2 history %v, want only its creation", acts)
	}
	evs := e.history(memory.ServerOwner("g1"))
	last := evs[len(evs)-1]
	if last.Action != memory.ActionSkip || !strings.Contains(last.Reason, "not one of the candidates") {
		t.Fatalf("last g1 history row %+v, want the hallucinated target skipped", last)
	}
}

// TestSubjectResolution (issue items 6 and 8): a member's fact belongs to the member its
// subject_id names by user id (also as a <@id> mention) among those who spoke, and only
// when it cites a message of theirs; a display name, a silent member, a personal fact
// whose evidence spans several speakers, or a fact without valid evidence among several
// speakers is dropped. "I" means the speaker when the evidence or the batch has just one.
func TestSubjectResolution(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	e.fake.Script(
		extraction(
			fact{Content: "Bob prefers window seats on trains", Type: "preference", Confidence: 0.9, Scope: "personal", SubjectID: "<@u2>", Evidence: []int{2}},
			fact{Content: "Alice prefers aisle seats on planes", Type: "preference", Confidence: 0.9, Scope: "personal", SubjectID: "ALICE", Evidence: []int{1}},
			fact{Content: "Somebody prefers the middle seat", Type: "preference", Confidence: 0.9, Scope: "personal", Evidence: []int{1, 2}},
			fact{Content: "Carol prefers the front row seats", Type: "preference", Confidence: 0.9, Scope: "personal", SubjectID: "u3", Evidence: []int{1}},
			fact{Content: "Alice prefers tea over coffee", Type: "preference", Confidence: 0.9, Scope: "personal", SubjectID: "u1", Evidence: []int{9}},
			fact{Content: "Alice prefers the quiet carriage", Type: "preference", Confidence: 0.9, Scope: "personal", SubjectID: "u1", Evidence: []int{1, 7}},
			fact{Content: "Alice prefers late trains home", Type: "preference", Confidence: 0.9, Scope: "personal", SubjectID: "I", Evidence: []int{1}},
		),
		extraction(
			fact{Content: "Carol prefers the back row seats", Type: "preference", Confidence: 0.9, Scope: "personal", SubjectID: "I"},
		),
	)
	e.say("g1", "c1", "u1", "Alice", calm)
	e.say("g1", "c1", "u2", "Bob", decisive)
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	e.say("g1", "c2", "u3", "Carol", decisive)
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	want := map[string][]string{
		"u1": {"Alice prefers late trains home", "Alice prefers the quiet carriage"},
		"u2": {"Bob prefers window seats on trains"},
		"u3": {"Carol prefers the back row seats"}, // not the front row: Carol did not speak in c1
	}
	for user, contents := range want {
		got := e.contents(memory.PersonalOwner(user))
		slices.Sort(got)
		if !slices.Equal(got, contents) {
			t.Errorf("%s's memories %q, want %q", user, got, contents)
		}
	}
	if got := e.memories(memory.ServerOwner("g1")); len(got) != 0 {
		t.Errorf("personal facts became server memories: %v", got)
	}
	logs := e.logs.String()
	for why, n := range map[string]int{
		"subject is none of the people who spoke":         2, // the display name, the silent user
		"personal fact with evidence from several people": 1,
		"no valid evidence and several people spoke":      1,
		"evidence record 7 does not exist":                1,
	} {
		if got := strings.Count(logs, why); got != n {
			t.Errorf("%d log lines say %q, want %d\n%s", got, why, n, logs)
		}
	}
}

// TestDefaultBackoffHasJitter: with the default jitter each retry waits between half and
// all of the exponential backoff, so jobs failing together do not retry together.
func TestDefaultBackoffHasJitter(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	p, err := pipeline.New(pipeline.Config{}, storeDeps(e.store, e.client)) // default jitter
	if err != nil {
		t.Fatal(err)
	}
	e.say("g1", "c1", "u1", "Alice", decisive)
	e.fake.Down()
	id := e.jobs()[0].ID
	jittered := false
	// The job was enqueued with the default five attempts: four retries, then dead.
	for attempt := 1; attempt < memory.DefaultMaxAttempts; attempt++ {
		if r, err := p.Tick(t.Context()); err != nil || r.Retried != 1 {
			t.Fatalf("attempt %d: %+v %v", attempt, r, err)
		}
		j, err := e.store.Jobs.GetJob(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		d := pipeline.DefaultBackoffBase << (attempt - 1)
		wait := j.RunAfter.Sub(e.clock.Now())
		if wait < d/2 || wait > d {
			t.Fatalf("attempt %d waits %v, want between %v and %v", attempt, wait, d/2, d)
		}
		// Run times are stored in milliseconds.
		jittered = jittered || wait < d-time.Millisecond
		e.clock.Advance(wait)
	}
	if !jittered {
		t.Error("every retry waited the full backoff: no jitter")
	}
	if j, _ := e.store.Jobs.GetJob(t.Context(), id); j.State != memory.JobQueued || j.Attempts != memory.DefaultMaxAttempts-1 {
		t.Fatalf("job %+v", j)
	}
}

// TestCandidatesDoNotCountAccess: comparing a new fact with stored memories is nobody
// recalling them, so the candidate search leaves their access count and last access alone
// and they keep decaying.
func TestCandidatesDoNotCountAccess(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	res, err := e.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
		Content: "Raid night is on Tuesday", Importance: 0.8}, "user:admin")
	if err != nil {
		t.Fatal(err)
	}
	stored := res.Memory
	e.clock.Advance(20 * 24 * time.Hour)

	var shown []int64
	idLine := regexp.MustCompile(`(?m)^\[id:(\d+)\]`)
	e.fake.Script(
		extraction(fact{Content: "Raid night is on Friday now", Type: "fact", Confidence: 0.9, Scope: "server"}),
		fakeopenai.Handle(func(req openai.ChatCompletionRequest) fakeopenai.Response {
			for _, m := range idLine.FindAllStringSubmatch(req.Messages[len(req.Messages)-1].Content, -1) {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				shown = append(shown, id)
			}
			return decision("NONE", stored.ID, "", 0.9, "keep both")
		}),
	)
	e.say("g1", "c1", "u1", "Alice", decisive)
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	if !slices.Contains(shown, stored.ID) {
		t.Fatalf("the decision stage was shown %v, want the stored memory #%d among the candidates", shown, stored.ID)
	}
	if err := e.store.Recall.FlushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := e.store.Memories.Get(ctx, memory.ServerOwner("g1"), stored.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessCount != 0 || !got.AccessedAt.IsZero() {
		t.Fatalf("candidate memory: access count %d, last access %v; want untouched", got.AccessCount, got.AccessedAt)
	}
	if eff := got.EffectiveImportance(e.clock.Now()); eff >= 0.8 {
		t.Fatalf("candidate memory: effective importance %v, want still decayed below 0.8", eff)
	}
}
