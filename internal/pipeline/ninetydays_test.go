package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/sashabaranov/go-openai"
)

// The ninety-day server: what a guild says over three months, one statement on a day, with
// the decision a model following kioku's decision prompt would make for it. A replacing
// decision names its target by content; the fake finds that memory among the candidates
// the prompt shows, so a target the pipeline does not show is a target the model misses.
var ninetyDays = []struct {
	day     int
	say     string
	action  memory.ProposalAction // the model's decision; ADD when empty
	replace string                // the memory a SUPERSEDE or DISPUTE names
}{
	{day: 1, say: "The raid leader is Mika"},
	{day: 2, say: "Katherine's home is Osaka"},
	{day: 3, say: "Game night is on Fridays at 21:00"},
	{day: 5, say: "Kenji is allergic to peanuts"},
	{day: 8, say: "The guild meetup is on June 14"},
	{day: 10, say: "Kenji has a peanut allergy"}, // a paraphrase the model would add again
	{day: 20, say: "Ren leads the raids now", action: memory.ProposeSupersede, replace: "The raid leader is Mika"},
	{day: 25, say: "Kate relocated to Tokyo", action: memory.ProposeSupersede, replace: "Katherine's home is Osaka"},
	{day: 30, say: "Game night moved to Saturdays at 20:00", action: memory.ProposeSupersede, replace: "Game night is on Fridays at 21:00"},
	{day: 40, say: "The guild tournament is next Sunday"},
	{day: 50, say: "The guild bank is open to all members"},
	{day: 60, say: "The guild bank is closed to new members", action: memory.ProposeDispute, replace: "The guild bank is open to all members"},
	{day: 70, say: "Aiko took over the raids from Ren", action: memory.ProposeSupersede, replace: "Ren leads the raids now"},
	{day: 80, say: "The guild meetup is tomorrow evening"},
	{day: 88, say: "The autumn guild meetup is on September 6"},
}

// ninetyDayQuestions are asked on day 90: the memory that holds now, and those that no
// longer do (replaced, or a day gone by).
var ninetyDayQuestions = []struct {
	ask      string
	current  string
	outdated []string
}{
	{"Who leads the raids now?", "Aiko took over the raids from Ren", []string{"The raid leader is Mika", "Ren leads the raids now"}},
	{"Where does Kate live now?", "Kate relocated to Tokyo", []string{"Katherine's home is Osaka"}},
	{"When is game night now?", "Game night moved to Saturdays at 20:00", []string{"Game night is on Fridays at 21:00"}},
	{"When is the next guild meetup?", "The autumn guild meetup is on September 6",
		[]string{"The guild meetup is on June 14", "The guild meetup is tomorrow evening"}},
	{"What is Kenji allergic to?", "Kenji is allergic to peanuts", []string{"Kenji has a peanut allergy"}},
}

// ninetyDayResult is what one run of the script leaves, per question.
type ninetyDayResult struct {
	currentFirst  bool
	outdatedShown int // outdated memories among the chat context's
	unmarkedPast  int // past memories in context ranked above the current one
}

// lifecycle off: the model has no SUPERSEDE or DISPUTE (it updates a target it sees in
// place, and adds otherwise), the pipeline shows no memory only the shared entities find,
// and recall has no past stage: the behaviour before memories had a lifecycle.
type ninetyDayMode struct{ lifecycle bool }

// runNinetyDays runs the script in mode and asks the questions. It also returns how many
// statements the script replaced are still stored as current (active, or disputed).
func runNinetyDays(t *testing.T, mode ninetyDayMode) ([]ninetyDayResult, int) {
	e := newEnv(t, pipeline.Config{})
	if !mode.lifecycle {
		e.store.Stages.Past = 0
		e.p = e.pipelineWithoutEntities()
	}
	e.fake.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response { return ninetyDayBrain(req, mode) })
	ctx := t.Context()
	g1 := memory.ServerOwner("g1")
	for day := 1; day <= 90; day++ {
		for _, s := range ninetyDays {
			if s.day == day {
				e.sayAsEditor("g1", "c1", "u1", "Alice", s.say)
				e.clock.Advance(pipeline.DefaultIdleAfter)
				if r := e.tick(); r.Done != 1 {
					t.Fatalf("day %d: %+v\n%s", day, r, e.logs)
				}
			}
		}
		e.clock.Advance(24*time.Hour - pipeline.DefaultIdleAfter)
	}
	if mode.lifecycle {
		// Retention archives what passed more than two weeks ago.
		if _, err := e.store.Maintenance.Retention(ctx, memory.RetentionPolicy{ArchivePast: 14 * 24 * time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]ninetyDayResult, len(ninetyDayQuestions))
	for i, q := range ninetyDayQuestions {
		context := chatContext(t, e, g1, q.ask, mode.lifecycle)
		var r ninetyDayResult
		if len(context) > 0 && context[0].Content == q.current {
			r.currentFirst = true
		}
		current := slices.IndexFunc(context, func(m *memory.Memory) bool { return m.Content == q.current })
		for j, m := range context {
			if slices.Contains(q.outdated, m.Content) {
				r.outdatedShown++
			}
			if m.TimingAt(e.clock.Now()) == memory.TimingPast && (current < 0 || j < current) {
				r.unmarkedPast++
			}
		}
		out[i] = r
		t.Logf("lifecycle %v: %q → %s", mode.lifecycle, q.ask, describeContext(context, e.clock.Now()))
	}
	current, _, err := e.store.Memories.List(ctx, g1, memory.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	stale := 0
	for _, m := range current {
		for _, s := range ninetyDays {
			if s.action == memory.ProposeSupersede && s.replace == m.Content {
				stale++
			}
		}
	}
	return out, stale
}

// chatContext is what the chat engine's recall puts in a reply's context for ask: the
// best server memories over the floor, as chat/context.go picks them; nowOnly as it sets
// it (without lifecycle, as it did before: no).
func chatContext(t *testing.T, e *env, owner memory.Owner, ask string, nowOnly bool) []*memory.Memory {
	t.Helper()
	res, err := e.store.Recall.Search(t.Context(), memory.SearchQuery{Text: ask, Owners: []memory.Owner{owner}, Limit: 16,
		NowOnly: nowOnly})
	if err != nil {
		t.Fatal(err)
	}
	var out []*memory.Memory
	for _, r := range res {
		if (res[0].Score < 0.05 || r.Score >= 0.05) && len(out) < 8 {
			out = append(out, r.Memory)
		}
	}
	return out
}

func describeContext(ms []*memory.Memory, now time.Time) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("#%d %s %q", m.ID, m.LifecycleAt(now), m.Content)
	}
	return strings.Join(parts, "; ")
}

// ninetyDayBrain is the fake model: extraction makes each statement one server fact, and a
// decision follows the script, naming its target when the prompt shows it.
func ninetyDayBrain(req openai.ChatCompletionRequest, mode ninetyDayMode) fakeopenai.Response {
	if isExtraction(req) {
		return defaultBrain(req)
	}
	user := req.Messages[len(req.Messages)-1].Content
	fm := factLine.FindStringSubmatch(user)
	if fm == nil {
		return fakeopenai.Text("not json")
	}
	f := unquote(fm[1])
	for _, s := range ninetyDays {
		if s.say != f || s.action == "" {
			continue
		}
		for _, c := range candLine.FindAllStringSubmatch(user, -1) {
			if unquote(c[2]) != s.replace {
				continue
			}
			id, _ := strconv.ParseInt(c[1], 10, 64)
			switch {
			case mode.lifecycle:
				return decision(string(s.action), id, f, 0.9, "the script says so")
			case s.action == memory.ProposeSupersede:
				return decision("UPDATE", id, f, 0.9, "it changed")
			}
		}
	}
	return decision("ADD", 0, f, 0.9, "new information")
}

// noEntities is the pipeline's candidates without the knowledge graph's.
type noEntities struct{}

func (noEntities) AboutSameEntities(context.Context, memory.SearchQuery) ([]*memory.Memory, error) {
	return nil, nil
}

// pipelineWithoutEntities is the env's pipeline whose decisions see no memory only the
// shared entities find.
func (e *env) pipelineWithoutEntities() *pipeline.Pipeline {
	e.t.Helper()
	deps := storeDeps(e.store, e.client)
	deps.Candidates = struct {
		*ltm.Recall
		noEntities
	}{e.store.Recall, noEntities{}}
	p, err := pipeline.New(pipeline.Config{Jitter: func(d time.Duration) time.Duration { return d }}, deps)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// TestNinetyDays runs the ninety-day server with lifecycle states and without: with them,
// for every question about now the current memory ranks first, no outdated memory reaches
// the chat context and no past one ranks above the current; without them (the behaviour
// before), the report shows what reached the context instead.
func TestNinetyDays(t *testing.T) {
	on, staleOn := runNinetyDays(t, ninetyDayMode{lifecycle: true})
	off, staleOff := runNinetyDays(t, ninetyDayMode{lifecycle: false})
	t.Logf("replaced statements still stored as current: %d with lifecycle, %d without", staleOn, staleOff)
	if staleOn != 0 {
		t.Errorf("%d replaced statements are still current", staleOn)
	}
	var firstOn, firstOff, shownOn, shownOff int
	for i, q := range ninetyDayQuestions {
		t.Logf("%-32s current first: %-5v / %-5v  outdated in context: %d / %d", q.ask, on[i].currentFirst, off[i].currentFirst,
			on[i].outdatedShown, off[i].outdatedShown)
		if !on[i].currentFirst || on[i].outdatedShown != 0 || on[i].unmarkedPast != 0 {
			t.Errorf("%q with lifecycle states: %+v", q.ask, on[i])
		}
		firstOn, firstOff = firstOn+b2i(on[i].currentFirst), firstOff+b2i(off[i].currentFirst)
		shownOn, shownOff = shownOn+on[i].outdatedShown, shownOff+off[i].outdatedShown
	}
	t.Logf("current memory first: %d/%d with lifecycle, %d/%d without; outdated memories in context: %d with, %d without",
		firstOn, len(on), firstOff, len(off), shownOn, shownOff)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
