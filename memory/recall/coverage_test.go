package recall_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory/recall"
)

func TestAnalyzeInCommon(t *testing.T) {
	for text, want := range map[string]bool{
		"what do Kate and Tom have in common":      true,
		"which cities have both of them visited":   true,
		"二人とも好きな食べ物は？":                             true,
		"ケイトとトムの共通点は？":                             true,
		"what did Kate say about the common room?": true, // a false positive the stage can afford: it only reorders
		"where is standup now":                     false,
		"ケイトは何を食べた？":                               false,
	} {
		if got := recall.Analyze(text).Common; got != want {
			t.Errorf("Analyze(%q).Common = %v, want %v", text, got, want)
		}
	}
}

func TestCover(t *testing.T) {
	day := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	cands := []recall.Candidate{
		{ID: 1, AuthorName: "Kate", Scope: "s", Channel: "c", CreatedAt: day},
		{ID: 2, AuthorName: "kate", Scope: "s", Channel: "c", CreatedAt: day.Add(time.Minute)},
		{ID: 3, AuthorName: "Kate", Scope: "s", Channel: "c", CreatedAt: day.Add(2 * time.Minute)},
		{ID: 4, AuthorName: "Tom", Scope: "s", Channel: "c", CreatedAt: day.Add(48 * time.Hour)},
		{ID: 5, AuthorName: "Bea", Scope: "s", Channel: "c", CreatedAt: day.Add(3 * time.Minute)},
		{ID: 6, AuthorName: "Tom", Scope: "s", Channel: "c", CreatedAt: day.Add(72 * time.Hour)},
	}
	ranked := make([]recall.Ranked, len(cands))
	for i := range cands {
		ranked[i] = recall.Ranked{Index: i, Score: 1 - float64(i)/10}
	}
	ids := func(rs []recall.Ranked) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, cands[r.Index].ID)
		}
		return out
	}
	common := recall.Analyze("what do they have in common")
	on := recall.Stages{Coverage: 2}

	// Kate's third message waits: her author count is full. Bea's message waits too: her
	// channel-day already holds two. Tom's, from other days, go first.
	got := ids(recall.Cover(cands, slices.Clone(ranked), &common, on, 0))
	if want := []int64{1, 2, 4, 6, 3, 5}; !slices.Equal(got, want) {
		t.Fatalf("Cover = %v, want %v", got, want)
	}
	if got := ids(recall.Cover(cands, slices.Clone(ranked), &common, on, 3)); !slices.Equal(got, []int64{1, 2, 4}) {
		t.Fatalf("Cover with limit 3 = %v", got)
	}
	plain := recall.Analyze("what did kate say")
	if got := ids(recall.Cover(cands, slices.Clone(ranked), &plain, on, 0)); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("a question not asking what they share was reordered: %v", got)
	}
	if got := ids(recall.Cover(cands, slices.Clone(ranked), &common, recall.Stages{}, 0)); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("coverage off still reordered: %v", got)
	}
}
