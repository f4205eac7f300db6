package chat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/memory"
)

// A recalled memory scoring under chat.RecallFloor stays out of the prompt beside a good
// match, the good match goes in, and a pinned memory goes in whatever its score. When no
// match clears the floor, the matches are kept rather than none.
func TestRecallFloor(t *testing.T) {
	e := newEnv(t, chat.Config{})
	// "tea" is in every memory of both scopes searched (term statistics are per scope), so
	// BM25 gives it next to no weight: a memory sharing only that word with the question
	// matches, but barely. The fillers are longer than the memories under test, so those
	// rank first among the tea-only matches.
	for i := range 40 {
		e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: fmt.Sprintf("tea break number %d", i)})
		e.remember(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g1", Content: fmt.Sprintf("my tea stash number %d", i)})
	}
	good := e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The volcano tea trip is on Sunday"})
	weak := e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Ben drinks tea"})
	pinned := e.remember(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g1", Content: "Aiko's tea tin", Pinned: true})

	const question = "when is the volcano tea trip"
	res, err := e.store.Recall.Search(t.Context(), memory.SearchQuery{Text: question, KeywordOnly: true,
		Owners: []memory.Owner{memory.ServerOwner("g1"), memory.PersonalOwner("111")}})
	if err != nil {
		t.Fatal(err)
	}
	scores := map[int64]float64{}
	for _, r := range res {
		scores[r.Memory.ID] = r.Score
	}
	for _, m := range []*memory.Memory{weak, pinned} {
		if s, ok := scores[m.ID]; !ok || s >= chat.RecallFloor {
			t.Fatalf("#%d %q: recalled %v with score %.4f; the test needs a match under the floor %.2f", m.ID, m.Content, ok, s, chat.RecallFloor)
		}
	}
	if scores[good.ID] < chat.RecallFloor {
		t.Fatalf("good match scores %.4f, under the floor", scores[good.ID])
	}

	e.turn(e.guild(question))
	prompt := systemText(e.lastChat())
	if !strings.Contains(prompt, good.Content) {
		t.Errorf("good match missing from the prompt:\n%s", prompt)
	}
	if strings.Contains(prompt, weak.Content) {
		t.Errorf("match under the floor (%.4f) injected into the prompt:\n%s", scores[weak.ID], prompt)
	}
	if !strings.Contains(prompt, pinned.Content) {
		t.Errorf("pinned memory under the floor dropped from the prompt:\n%s", prompt)
	}

	// Only the all-but-weightless word: nothing clears the floor, so the matches stay.
	e.turn(e.guild("tea?"))
	if prompt := systemText(e.lastChat()); !strings.Contains(prompt, weak.Content) {
		t.Errorf("with no match above the floor, the weak match was dropped too:\n%s", prompt)
	}
}
