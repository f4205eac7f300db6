package ltm_test

import (
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// BenchmarkWrite times the two write paths over a guild that already holds 10k memories,
// with the corpus embedder set (embeddings supplied at once, so only kioku's own work is
// timed): one Remember per memory, each its own transaction, and RememberMany in the 5,000
// memory calls an eval load or `kioku bench` makes. Caps are off so the guild can grow.
// Besides wall-clock rates it reports the process's CPU time per memory (user + system),
// which a busy shared machine disturbs far less than the wall clock.
//
//	go test -run XXX -bench 'Write' -benchtime 3s ./ltm
func BenchmarkWrite(b *testing.B) {
	c, s := benchStore(b, 10_000)
	s.MaxServerMemories = -1
	b.Run("remember", func(b *testing.B) {
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			if _, err := s.Memories.Remember(ctx, c.newMemory(), "bench"); err != nil {
				b.Fatal(err)
			}
		}
		reportWriteRates(b, b.N, processCPU()-cpu)
	})
	const bulk = 5000
	b.Run("many5000", func(b *testing.B) {
		b.ReportAllocs()
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			mems := make([]memory.Memory, bulk)
			for i := range mems {
				mems[i] = c.newMemory()
			}
			b.StartTimer()
			start := processCPU()
			if _, err := s.Transfer.RememberMany(ctx, mems, "bench"); err != nil {
				b.Fatal(err)
			}
			cpu += processCPU() - start
		}
		reportWriteRates(b, b.N*bulk, cpu)
	})
}

func reportWriteRates(b *testing.B, memories int, cpu time.Duration) {
	b.ReportMetric(float64(memories)/b.Elapsed().Seconds(), "memories/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(memories), "cpu-µs/memory")
}

// BenchmarkSimilarWrite times what the near-duplicate check adds to a write a member makes
// (a tool's or a command's save) over the same 10k-memory guild as BenchmarkWrite: the plain
// Remember, Similar alone (recall's keyword and vector legs with matches only, then the
// word comparison of its candidates), and Similar followed by Remember as the write paths
// run them.
//
//	go test -run XXX -bench 'SimilarWrite' -benchtime 3s ./ltm
func BenchmarkSimilarWrite(b *testing.B) {
	c, s := benchStore(b, 10_000)
	s.MaxServerMemories = -1
	b.Run("remember", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Memories.Remember(ctx, c.newMemory(), "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("similar", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Duplicates.Similar(ctx, benchOwner, c.newMemory().Content); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("similar+remember", func(b *testing.B) {
		for b.Loop() {
			m := c.newMemory()
			if _, err := s.Duplicates.Similar(ctx, benchOwner, m.Content); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Memories.Remember(ctx, m, "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
