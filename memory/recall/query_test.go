package recall_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory/recall"
)

func TestAnalyze(t *testing.T) {
	cases := []struct {
		name string
		text string
		want recall.Plan
	}{
		{"StopWordsDropped", "What is Alice's favourite coffee?",
			recall.Plan{Terms: []string{"alice", "favourite", "coffee"}, Pairs: [][2]string{{"favourite", "coffee"}}}},
		{"PairsOnlyBetweenAdjacentContentWords", "game night on friday",
			recall.Plan{Terms: []string{"game", "night", "friday"}, Pairs: [][2]string{{"game", "night"}}}},
		{"OnlyStopWordsKeepsThem", "who was it?", recall.Plan{Terms: []string{"who", "was", "it"}}},
		{"FullWidthFolded", "ＡＰＩ key", recall.Plan{Terms: []string{"api", "key"}, Pairs: [][2]string{{"api", "key"}}}},
		{"NowIsCurrent", "where is standup now", recall.Plan{Terms: []string{"standup"}, Current: true}},
		{"WhatTimeIsWhen", "what time is standup", recall.Plan{Terms: []string{"time", "standup"}, When: true}},
		{"TheseDaysIsCurrent", "where does bob work these days", recall.Plan{Terms: []string{"bob", "work"}, Pairs: [][2]string{{"bob", "work"}}, Current: true}},
		{"WhatDateIsWhen", "what date is the party", recall.Plan{Terms: []string{"date", "party"}, When: true}},
		{"MonthNamed", "what did we decide in september", recall.Plan{Terms: []string{"decide", "september"}, Months: []time.Month{time.September}}},
		{"MayAsMonth", "in may 2024", recall.Plan{Terms: []string{"may", "2024"}, Pairs: [][2]string{{"may", "2024"}}, Months: []time.Month{time.May}}},
		{"MayAsVerb", "may we go", recall.Plan{Terms: []string{"may"}}},
		{"JapaneseRunsAndCues", "今のリーダーはいつ決まった？", recall.Plan{CJK: []string{"今のリーダーはいつ決まった"}, Current: true, When: true}},
		{"MixedScript", "pr出して", recall.Plan{Terms: []string{"pr"}, CJK: []string{"出して"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := recall.Analyze(c.text)
			if !slices.Equal(got.Terms, c.want.Terms) || !slices.Equal(got.Pairs, c.want.Pairs) || !slices.Equal(got.CJK, c.want.CJK) ||
				got.Current != c.want.Current || got.When != c.want.When || !slices.Equal(got.Months, c.want.Months) {
				t.Fatalf("Analyze(%q)\n got %+v\nwant %+v", c.text, got, c.want)
			}
		})
	}
}

func TestCJKGrams(t *testing.T) {
	p := recall.Plan{CJK: []string{"東京タワー", "東京", "駅"}}
	if got, want := p.CJKGrams(2), []string{"東京", "京タ", "タワ", "ワー"}; !slices.Equal(got, want) {
		t.Errorf("bigrams %v, want %v (distinct, single characters dropped)", got, want)
	}
	if got, want := p.CJKGrams(3), []string{"東京タ", "京タワ", "タワー", "東京"}; !slices.Equal(got, want) {
		t.Errorf("trigrams %v, want %v (a shorter run whole)", got, want)
	}
}

func TestScanBM25(t *testing.T) {
	t.Run("MoreOccurrencesScoreHigher", func(t *testing.T) {
		x := recall.ScanBM25([]string{"東京に行く", "東京と東京"}, []string{"東京"}, nil, 10)
		if !(x[1] > x[0] && x[0] > 0) {
			t.Fatalf("scores %v: want the doc holding the gram twice higher, both positive", x)
		}
	})
	t.Run("RarerTermScoresHigher", func(t *testing.T) {
		docs := []string{"東京の駅", "大阪の駅", "名古屋の駅", "京都"}
		x := recall.ScanBM25(docs, []string{"の駅", "京都"}, nil, len(docs))
		if !(x[3] > x[0]) {
			t.Fatalf("scores %v: want the rare gram's doc higher", x)
		}
	})
	t.Run("LatinWordsCountWholeWordsOnly", func(t *testing.T) {
		docs := []string{"明日のapiは", "rapidな変更", "api"}
		x := recall.ScanBM25(docs, nil, []string{"api"}, len(docs))
		if x[0] <= 0 || x[1] != 0 || x[2] <= 0 {
			t.Fatalf("scores %v: want api inside Japanese and alone to count, inside rapid not", x)
		}
	})
	t.Run("NoDocs", func(t *testing.T) {
		if x := recall.ScanBM25(nil, []string{"東京"}, nil, 5); len(x) != 0 {
			t.Fatalf("scores %v, want none", x)
		}
	})
}
