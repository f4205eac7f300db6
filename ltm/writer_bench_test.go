package ltm_test

import (
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// BenchmarkWrite times the two write paths over a guild that already holds 10k memories,
// with the corpus embedder set (embeddings supplied at once, so only kioku's own work is
// timed): one Remember per memory, each its own transaction, and RememberMany in the 5,000
// memory calls an eval load or `kioku bench` makes. Caps are off so the guild can grow.
//
//	go test -run XXX -bench 'Write' -benchtime 3s ./ltm
func BenchmarkWrite(b *testing.B) {
	c, s := benchStore(b, 10_000)
	s.MaxServerMemories = -1
	b.Run("remember", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Memories.Remember(ctx, c.newMemory(), "bench"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
	})
	const bulk = 5000
	b.Run("many5000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			mems := make([]memory.Memory, bulk)
			for i := range mems {
				mems[i] = c.newMemory()
			}
			b.StartTimer()
			if _, err := s.Transfer.RememberMany(ctx, mems, "bench"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*bulk)/b.Elapsed().Seconds(), "memories/s")
	})
}
