package ltm_test

import (
	"fmt"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// BenchmarkRememberEntities is BenchmarkRemember's "one" with chat text that names people,
// places, games and channels, so each write links three to five entities (the plain
// benchmark's pseudo-words name none):
//
//	go test -run XXX -bench 'Remember' -benchtime 200x -short ./ltm
func BenchmarkRememberEntities(b *testing.B) {
	names := []string{"Kate", "Bill", "Yuki", "Alex", "Priya", "Tom", "Marisol", "Kenji"}
	places := []string{"Osaka", "Berlin", "Lisbon", "Seoul", "Tokyo", "Dublin"}
	games := []string{"Valheim", "Minecraft", "Factorio", "Elden Ring", "Tetris"}
	for _, n := range benchSizes[:2] {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			_, s := benchStore(b, n)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				text := fmt.Sprintf("%s said %s is hosting %s night in %s on the %dth, sign up in #events",
					names[i%len(names)], names[(i+3)%len(names)], games[i%len(games)], places[i%len(places)], i)
				m := memory.Memory{Scope: memory.ScopeServer, GuildID: benchOwner.GuildID, Content: text, Source: memory.SourceImport}
				if _, err := s.Memories.Remember(ctx, m, "bench"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
		})
	}
}
