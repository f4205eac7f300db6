package graph_test

import (
	"testing"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

func TestProtectDecision(t *testing.T) {
	for _, tc := range []struct {
		name       string
		m          memory.Memory
		protected  bool
		typ        memory.Type
		importance float64
	}{
		{"DefaultTypeBecomesDecision", memory.Memory{Content: "We decided to use Postgres.", Importance: 0.5}, true, memory.TypeDecision, 0.8},
		{"FactBecomesDecision", memory.Memory{Content: "来週大阪に行くことにした。", Type: memory.TypeFact, Importance: 0.5}, true, memory.TypeDecision, 0.8},
		{"ExplicitTypeKept", memory.Memory{Content: "Kate prefers tea over coffee.", Type: memory.TypePreference, Importance: 0.3}, true, memory.TypePreference, 0.8},
		{"HigherImportanceKept", memory.Memory{Content: "Let's go with the blue logo.", Importance: 0.95}, true, memory.TypeDecision, 0.95},
		{"NegatedIsNoDecision", memory.Memory{Content: "We haven't decided on a venue.", Type: memory.TypeFact, Importance: 0.5}, false, memory.TypeFact, 0.5},
		{"QuestionIsNoDecision", memory.Memory{Content: "Did we decide to switch to Linear?", Type: memory.TypeFact, Importance: 0.5}, false, memory.TypeFact, 0.5},
		{"WantingIsNoDecision", memory.Memory{Content: "早く会場を決めたい。", Type: memory.TypeFact, Importance: 0.5}, false, memory.TypeFact, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			if got := graph.ProtectDecision(&m); got != tc.protected || m.Type != tc.typ || m.Importance != tc.importance {
				t.Errorf("ProtectDecision(%q) = %v, type %q, importance %v; want %v, %q, %v",
					tc.m.Content, got, m.Type, m.Importance, tc.protected, tc.typ, tc.importance)
			}
		})
	}
}

func TestIsDecision(t *testing.T) {
	for text, want := range map[string]bool{
		"we switched from Slack to Discord last year":   true,
		"Yuki prefers tabs over spaces":                 true,
		"let's go with the cheaper venue":               true,
		"we'll use the old server until March":          true,
		"I'm not sure we decided anything":              false,
		"If we switch to Linear, who migrates tickets?": false,
		"Tuesday works for me":                          false,
		"飲み会は金曜日にしよう":                                   true,
		"まだ決まってないけど、たぶん金曜日":                             false,
		"金曜日にしようか？":                                     false,
		"それはあまり気にしたことがない":                               false,
	} {
		if got := graph.IsDecision(text); got != want {
			t.Errorf("IsDecision(%q) = %v, want %v", text, got, want)
		}
	}
}
