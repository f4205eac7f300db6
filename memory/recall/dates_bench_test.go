package recall_test

import (
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory/recall"
)

// BenchmarkDateWindow is the date reader on the recall hot path: every question goes through
// it, and most name no date. One op reads every question of the set once.
func BenchmarkDateWindow(b *testing.B) {
	asked := time.Date(2026, 4, 15, 10, 0, 0, 0, time.UTC)
	sets := []struct {
		name      string
		questions []string
	}{
		{"undated", []string{
			"what games does Priya play?",
			"Who is organising the raid schedule for the guild?",
			"what did Kenji say about the API rate limit",
			"does anyone know a good ramen place near the station",
			"どのラーメン屋がおすすめ？",
			"ケンジの好きなゲームは何？",
		}},
		{"dated", []string{
			"what happened yesterday?",
			"How did Pri do in her race last weekend?",
			"what did we decide on 3 March?",
			"who came to the meetup on 07.03.2026?",
			"what was planned for the last week of June 2026?",
			"先月の下旬に何があった?",
			"2026年3月7日の集まりには誰が来た？",
		}},
	}
	for _, set := range sets {
		b.Run(set.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, q := range set.questions {
					recall.DateWindow(q, asked)
				}
			}
		})
	}
}
