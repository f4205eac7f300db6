package ltm

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// withStages runs the test with the ranking stages set to st.
func withStages(t *testing.T, s *Store, lexicon float64, coverage int) {
	t.Helper()
	s.Stages.Lexicon, s.Stages.Coverage = lexicon, coverage
}

func openLexiconStore(t *testing.T) *Store {
	t.Helper()
	s, err := OpenTestStore(t.Context(), filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func rememberIn(t *testing.T, s *Store, guild, author, content string, at time.Time) *memory.Memory {
	t.Helper()
	res, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
		CreatedAt: at, Provenance: memory.Provenance{Author: author}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return res.Memory
}

func searchIDs(t *testing.T, s *Store, guild, text string) []int64 {
	t.Helper()
	res, err := s.Recall.Search(t.Context(), memory.SearchQuery{Text: text, Owners: []memory.Owner{memory.ServerOwner(guild)}, KeywordOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Memory.ID
	}
	return ids
}

// A question naming a category finds the memories of its members only with the lexicon on,
// English and Japanese, and never from a scope the search cannot see.
func TestRecallConceptExpansion(t *testing.T) {
	s := openLexiconStore(t)
	at := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	climb := rememberIn(t, s, "g1", "kb", "went bouldering again, my forearms are done", at)
	knit := rememberIn(t, s, "g1", "kb", "finished knitting the blue scarf", at.Add(time.Hour))
	rememberIn(t, s, "g1", "tom", "kate's hobbies list is in the wiki", at.Add(2*time.Hour))
	hidden := rememberIn(t, s, "g2", "kb", "photography walk tomorrow", at)
	fishing := rememberIn(t, s, "g1", "yui", "週末は釣りに行ってきた", at.Add(3*time.Hour))

	withStages(t, s, 0, 0)
	off := searchIDs(t, s, "g1", "What are Kate's hobbies?")
	for _, id := range []int64{climb.ID, knit.ID} {
		if contains(off, id) {
			t.Fatalf("#%d found without the lexicon: the test proves nothing", id)
		}
	}
	if contains(searchIDs(t, s, "g1", "ケイトの趣味は？"), fishing.ID) {
		t.Fatalf("the fishing memory was found without the lexicon")
	}

	withStages(t, s, 0.5, 0)
	on := searchIDs(t, s, "g1", "What are Kate's hobbies?")
	for _, id := range []int64{climb.ID, knit.ID} {
		if !contains(on, id) {
			t.Errorf("#%d (a hobby) not found with the lexicon on: %v", id, on)
		}
	}
	if contains(on, hidden.ID) {
		t.Errorf("the expansion leaked a memory of another scope")
	}
	if !contains(searchIDs(t, s, "g1", "ケイトの趣味は？"), fishing.ID) {
		t.Errorf("釣り not found for 趣味 with the lexicon on")
	}
	// The question's own words still count more than a member's.
	if len(on) == 0 || contains([]int64{climb.ID, knit.ID, fishing.ID}, on[0]) {
		t.Errorf("a member outranked the memory holding the question's own words: %v", on)
	}
}

// For an "in common" question, the coverage stage lets a second author into the top places
// one author's near-duplicates held; other questions keep their order.
func TestRecallCoverage(t *testing.T) {
	s := openLexiconStore(t)
	at := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	// Unrelated memories give "ramen" a positive inverse document frequency.
	for i := range 12 {
		rememberIn(t, s, "g1", "bea", fmt.Sprintf("note %d about the weekly rota", i), at.Add(-time.Duration(i+1)*time.Hour))
	}
	var kate []int64
	for i, c := range []string{"kate loves ramen ramen ramen", "kate had ramen ramen again", "kate ramen ramen night", "kate ramen ramen forever"} {
		kate = append(kate, rememberIn(t, s, "g1", "kate", c, at.Add(time.Duration(i)*time.Minute)).ID)
	}
	tom := rememberIn(t, s, "g1", "tom", "tom likes ramen too, the spicy kind with extra toppings and an egg", at.Add(48*time.Hour)).ID

	q := "what do they have in common about ramen"
	withStages(t, s, 0, 0)
	off := searchIDs(t, s, "g1", q)
	if len(off) < 5 || off[len(off)-1] != tom {
		t.Fatalf("without coverage tom's memory should come last, got %v (tom #%d)", off, tom)
	}
	withStages(t, s, 0, 2)
	on := searchIDs(t, s, "g1", q)
	if len(on) != len(off) || on[2] != tom {
		t.Fatalf("with coverage tom's memory should come third, after two of kate's: got %v", on)
	}
	plainOn := searchIDs(t, s, "g1", "ramen")
	withStages(t, s, 0, 0)
	if plainOff := searchIDs(t, s, "g1", "ramen"); !equalIDs(plainOn, plainOff) {
		t.Errorf("a question that is not about what they share was reordered: %v, want %v", plainOn, plainOff)
	}
}

func contains(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
