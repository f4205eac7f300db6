package pipeline_test

import (
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/memory"
	"github.com/sashabaranov/go-openai"
)

// shownIDs returns the candidate ids a decision request shows the model.
func shownIDs(req openai.ChatCompletionRequest) []int64 {
	var out []int64
	for _, m := range regexp.MustCompile(`(?m)^\[id:(\d+)\]`).FindAllStringSubmatch(req.Messages[len(req.Messages)-1].Content, -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		out = append(out, id)
	}
	return out
}

// TestSupersedeByEntity: a fact meets the memories about the same person even when they
// share no word with it ("Kate relocated to Tokyo" and "Katherine's home is Osaka", a
// nickname of one name) and when keyword matches would fill every candidate slot; the
// model's SUPERSEDE keeps the fact as a new memory and marks the old one superseded by it,
// out of default search, with the pipeline as the actor in its history.
func TestSupersedeByEntity(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	g1 := memory.ServerOwner("g1")
	home, err := e.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Katherine's home is Osaka"}, "user:admin")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"The Tokyo office relocated last year", "Tokyo tower relocated its lights", "We relocated the Tokyo meetup",
		"The Tokyo raid relocated to Sunday", "Tokyo servers relocated to a new host", "Relocated Tokyo channel is #tokyo"} {
		if _, err := e.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: c}, "user:admin"); err != nil {
			t.Fatal(err)
		}
	}
	var shown []int64
	e.fake.Script(
		extraction(fact{Content: "Kate relocated to Tokyo", Type: "fact", Confidence: 0.9, Scope: "server"}),
		fakeopenai.Handle(func(req openai.ChatCompletionRequest) fakeopenai.Response {
			shown = shownIDs(req)
			return decision("SUPERSEDE", home.Memory.ID, "", 0.9, "Kate moved from Osaka to Tokyo")
		}),
	)
	e.sayAsEditor("g1", "c1", "u1", "Alice", "Kate relocated to Tokyo, we decided to update the roster")
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	if !slices.Contains(shown, home.Memory.ID) {
		t.Fatalf("the model was shown %v, not #%d about the same person\n%s", shown, home.Memory.ID, e.logs)
	}
	old, err := e.store.Memories.Get(ctx, g1, home.Memory.ID)
	if err != nil {
		t.Fatal(err)
	}
	if old.State != memory.StateSuperseded || old.StateRef == 0 || old.Content != "Katherine's home is Osaka" {
		t.Fatalf("old memory %+v, want superseded with its words", old)
	}
	fresh, err := e.store.Memories.Get(ctx, g1, old.StateRef)
	if err != nil || fresh.Content != "Kate relocated to Tokyo" || fresh.State != memory.StateActive {
		t.Fatalf("the memory that superseded it: %+v %v", fresh, err)
	}
	hist, _ := e.store.Memories.History(ctx, g1, old.ID)
	if last := hist[len(hist)-1]; last.Actor != memory.ActorPipeline || last.Reason != "Kate moved from Osaka to Tokyo" {
		t.Fatalf("history of the supersession: %+v", last)
	}
	res, err := e.store.Recall.Search(ctx, memory.SearchQuery{Text: "Katherine home Osaka", Owners: []memory.Owner{g1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Memory.ID == old.ID {
			t.Fatal("a superseded memory is still in default search")
		}
	}
}

// TestDisputeAndItsLimits: a DISPUTE marks both memories disputed with each other; a fact
// said in a channel whose readers may not all see the target is kept without touching it
// and waits for review; a member who may not edit server memory disputes nothing.
func TestDisputeAndItsLimits(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	g1 := memory.ServerOwner("g1")
	remember := func(channel, content string) *memory.Memory {
		t.Helper()
		m := memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content, Provenance: memory.Provenance{ChannelID: channel}}
		res, err := e.store.Memories.Remember(ctx, m, "user:admin")
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	leader := remember("", "The raid leader is Mika")
	e.fake.Script(
		extraction(fact{Content: "The raid leader is Ren", Type: "fact", Confidence: 0.9, Scope: "server"}),
		decision("DISPUTE", leader.ID, "", 0.9, "two leaders named"),
	)
	e.sayAsEditor("g1", "c1", "u1", "Alice", "We decided the raid leader is Ren")
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	old, _ := e.store.Memories.Get(ctx, g1, leader.ID)
	if old.State != memory.StateDisputed || old.StateRef == 0 {
		t.Fatalf("target %+v, want disputed", old)
	}
	other, _ := e.store.Memories.Get(ctx, g1, old.StateRef)
	if other.State != memory.StateDisputed || other.StateRef != leader.ID || other.Content != "The raid leader is Ren" {
		t.Fatalf("new memory %+v, want disputed with #%d", other, leader.ID)
	}

	// Said in c1, where the readers may not see a memory learned in the staff channel.
	staff := remember("staff", "The guild bank password rotates on Mondays")
	e.fake.Script(
		extraction(fact{Content: "The guild bank password rotates on Fridays", Type: "fact", Confidence: 0.9, Scope: "server"}),
		decision("SUPERSEDE", staff.ID, "", 0.9, "changed day"),
	)
	e.sayAsEditor("g1", "c1", "u1", "Alice", "We decided the bank password rotates on Fridays")
	e.tick()
	if got, _ := e.store.Memories.Get(ctx, g1, staff.ID); got.State != memory.StateActive || got.Version != staff.Version {
		t.Fatalf("a staff memory was changed from another channel: %+v", got)
	}
	_ = other
}

// TestNearDuplicateAddIsNone: a fact the model would ADD though a memory the conversation
// may see already says it in other words is recorded as NONE against that memory, and
// nothing is written; a near miss ("prefers coffee") is added.
func TestNearDuplicateAddIsNone(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	g1 := memory.ServerOwner("g1")
	kenji, err := e.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Kenji is allergic to peanuts"}, "user:admin")
	if err != nil {
		t.Fatal(err)
	}
	e.fake.Script(
		extraction(fact{Content: "Kenji has a peanut allergy", Type: "fact", Confidence: 0.9, Scope: "server"}),
		decision("ADD", 0, "", 0.9, "new"),
	)
	e.sayAsEditor("g1", "c1", "u1", "Alice", "We decided to note that Kenji has a peanut allergy")
	if r := e.tick(); r.Done != 1 {
		t.Fatalf("tick %+v\n%s", r, e.logs)
	}
	if got := e.contents(g1); len(got) != 1 {
		t.Fatalf("a paraphrase was saved: %q", got)
	}
	evs := e.history(g1)
	if last := evs[len(evs)-1]; last.Action != memory.ActionSkip || last.MemoryID != kenji.Memory.ID {
		t.Fatalf("last history row %+v, want NONE against #%d", last, kenji.Memory.ID)
	}
	e.fake.Script(
		extraction(fact{Content: "Kenji is allergic to cats", Type: "fact", Confidence: 0.9, Scope: "server"}),
		decision("ADD", 0, "", 0.9, "new"),
	)
	e.sayAsEditor("g1", "c1", "u1", "Alice", "We decided to note Kenji is allergic to cats too")
	e.tick()
	if got := e.contents(g1); len(got) != 2 {
		t.Fatalf("a near miss was not saved: %q", got)
	}
}
