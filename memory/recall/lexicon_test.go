package recall_test

import (
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/memory/recall"
)

func TestExpansion(t *testing.T) {
	cases := []struct {
		name      string
		text      string
		has, lack []string
	}{
		{"EnglishCategory", "What are Kate's hobbies?", []string{"bouldering", "knitting", "photography"}, []string{"soccer", "pizza"}},
		{"SingularCue", "what sport does Sam play", []string{"tennis", "swimming"}, []string{"knitting"}},
		{"TwoCategories", "favourite food and music", []string{"sushi", "concert"}, nil},
		{"JapaneseCategory", "何のペットを飼ってる？", []string{"ハムスター", "犬を"}, []string{"サッカー"}},
		{"JapaneseHobby", "ケイトの趣味は？", []string{"登山", "釣り", "料理"}, nil},
		{"OwnWordsNotRepeated", "which sports besides tennis", []string{"golf"}, []string{"tennis"}},
		{"FullWidthFolded", "ＨＯＢＢＩＥＳ", []string{"knitting"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := recall.Analyze(c.text)
			for _, w := range c.has {
				if !slices.Contains(p.Expansion, w) {
					t.Errorf("Analyze(%q).Expansion = %v, want it to hold %q", c.text, p.Expansion, w)
				}
			}
			for _, w := range c.lack {
				if slices.Contains(p.Expansion, w) {
					t.Errorf("Analyze(%q).Expansion holds %q", c.text, w)
				}
			}
		})
	}
	for _, text := range []string{"where is standup now", "does the fix work", "いつ会議する？", "what did Kate say"} {
		if p := recall.Analyze(text); p.Expansion != nil {
			t.Errorf("Analyze(%q).Expansion = %v, want none for a question naming no category", text, p.Expansion)
		}
	}
}

func TestExpansionPlanSplitsScripts(t *testing.T) {
	p := recall.Analyze("趣味 and hobbies")
	e := p.ExpansionPlan()
	if !slices.Contains(e.Terms, "knitting") || slices.Contains(e.Terms, "登山") {
		t.Fatalf("terms %v: want the English members only", e.Terms)
	}
	if !slices.Contains(e.CJK, "登山") || slices.Contains(e.CJK, "knitting") {
		t.Fatalf("CJK %v: want the Japanese members only", e.CJK)
	}
	if len(e.Pairs) != 0 || e.Expansion != nil {
		t.Fatalf("expansion plan %+v should hold only terms and runs", e)
	}
	plain := recall.Analyze("standup time")
	if none := plain.ExpansionPlan(); len(none.Terms)+len(none.CJK) != 0 {
		t.Fatalf("a plan without expansion gave %+v", none)
	}
}
