package graph_test

import (
	"testing"

	"github.com/kioku-bot/kioku/memory/graph"
)

// The linker runs inside every memory's write transaction; these show its cost per text.
//
//	go test -run XXX -bench . ./memory/graph
func BenchmarkLink(b *testing.B) {
	ctx := graph.Context{AuthorID: "1", AuthorName: "Kate Lin", People: []graph.Person{{UserID: "2", Name: "kuro_neko"}}}
	for _, tc := range []struct{ name, text string }{
		{"plain", "the weekly sync moves to a later slot and everyone brings snacks for the potluck"},
		{"english", "Kate said Bill is hosting the Minecraft server in #events, and we decided to move the Osaka trip to May."},
		{"japanese", "田中さんとケンくんが来週大阪でマイクラのオフ会をやることにした。『葬送のフリーレン』も見る。"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				graph.Link(tc.text, ctx)
			}
		})
	}
}

func BenchmarkIsDecision(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		graph.IsDecision("we talked for a while and in the end we decided to switch from Jira to Linear next sprint")
	}
}
