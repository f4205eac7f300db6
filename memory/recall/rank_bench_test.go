package recall_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// BenchmarkRank is the fusion step of one recall: the candidates both legs return (about
// 200 keyword and 50 vector candidates in a large scope) scored, dampened and cut to the
// top 10, with the product's dampening and a query that wakes the date and person stages.
func BenchmarkRank(b *testing.B) {
	for _, n := range []int{50, 250} {
		b.Run(fmt.Sprintf("candidates=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			words := []string{"raid", "bank", "deploy", "friday", "kenji", "guild", "schedule", "dinner", "api", "limit"}
			cands := make([]recall.Candidate, n)
			for i := range cands {
				text := ""
				for range 12 {
					text += words[rng.IntN(len(words))] + " "
				}
				cands[i] = recall.Candidate{
					ID:          int64(i + 1),
					Keyword:     rng.Float64() * 12,
					Vector:      rng.Float64()*2 - 1,
					CreatedAt:   day.Add(-time.Duration(rng.IntN(90*24)) * time.Hour),
					Content:     text,
					Importance:  rng.Float64(),
					AccessCount: rng.IntN(20),
					Type:        memory.TypeFact,
					Scope:       "g:1",
					Channel:     fmt.Sprint("c", rng.IntN(4)),
					AuthorName:  []string{"Kenji", "Alice", "Sam"}[rng.IntN(3)],
				}
			}
			plan := recall.AnalyzeAt("what did Kenji say about the raid schedule last friday", day)
			opt := recall.Options{Alpha: recall.DefaultAlpha, VectorLeg: true, Limit: 10, Dampen: recall.DefaultDampening,
				Stages: recall.Stages{DateBoost: 0.5, DateHalo: 24 * time.Hour, PersonBoost: 0.5}}
			b.ReportAllocs()
			for b.Loop() {
				if got := recall.Rank(cands, &plan, opt); len(got) != 10 {
					b.Fatalf("ranked %d, want 10", len(got))
				}
			}
		})
	}
}
