package recall_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory/recall"
)

const eps = 1e-9

var day = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

// rankAll ranks candidates and returns each one's result by id.
func rankAll(t *testing.T, cands []recall.Candidate, plan recall.Plan, opt recall.Options) map[int64]recall.Ranked {
	t.Helper()
	out := map[int64]recall.Ranked{}
	for _, r := range recall.Rank(cands, &plan, opt) {
		out[cands[r.Index].ID] = r
	}
	return out
}

// The blend follows SPEC §5: alpha×vector + (1−alpha)×keyword when both legs scored, the one
// score when only one did. Candidates share a creation time and carry no importance or
// access, so the tie-breakers add exactly 0.01×0.5 (recency 1 for all).
func TestRankFusion(t *testing.T) {
	const alpha = 0.7
	const ties = 0.01 * 0.5
	cases := []struct {
		name      string
		cands     []recall.Candidate
		vectorLeg bool
		want      map[int64]float64 // relevance before the tie-breakers
	}{
		{
			name:      "BothLegsBlend",
			cands:     []recall.Candidate{{ID: 1, Keyword: 3, Vector: 0.8}, {ID: 2, Keyword: 1, Vector: 0.2}},
			vectorLeg: true,
			want:      map[int64]float64{1: alpha*0.8 + (1-alpha)*3.0/4, 2: alpha*0.2 + (1-alpha)*1.0/4},
		},
		{
			name:      "KeywordLegMissingUsesVectorAlone",
			cands:     []recall.Candidate{{ID: 1, Vector: 0.8}, {ID: 2, Vector: 0.5}},
			vectorLeg: true,
			want:      map[int64]float64{1: 0.8, 2: 0.5},
		},
		{
			name:      "VectorLegOffUsesKeywordAlone",
			cands:     []recall.Candidate{{ID: 1, Keyword: 3}, {ID: 2, Keyword: 1}},
			vectorLeg: false,
			want:      map[int64]float64{1: 3.0 / 4, 2: 1.0 / 4},
		},
		{
			name: "VectorLegOffIgnoresStaleCosines",
			// Without the vector leg a cosine the caller happened to fill in must not count.
			cands:     []recall.Candidate{{ID: 1, Keyword: 1, Vector: 0.9}},
			vectorLeg: false,
			want:      map[int64]float64{1: 1.0 / 2},
		},
		{
			name: "CandidateMissedByOneLegScoresZeroThere",
			// The vector leg ran; #2 was found by keywords only and has no vector.
			cands:     []recall.Candidate{{ID: 1, Keyword: 1, Vector: 0.6}, {ID: 2, Keyword: 3}},
			vectorLeg: true,
			want:      map[int64]float64{1: alpha*0.6 + (1-alpha)*1.0/4, 2: (1 - alpha) * 3.0 / 4},
		},
		{
			name:      "NegativeCosineCountsAsZero",
			cands:     []recall.Candidate{{ID: 1, Keyword: 1, Vector: -0.4}},
			vectorLeg: true,
			want:      map[int64]float64{1: (1 - alpha) * 1.0 / 2},
		},
		{
			name:      "VectorLegRanButFoundNothing",
			cands:     []recall.Candidate{{ID: 1, Keyword: 1}},
			vectorLeg: true,
			want:      map[int64]float64{1: (1 - alpha) * 1.0 / 2},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.cands {
				c.cands[i].CreatedAt = day
			}
			got := rankAll(t, c.cands, recall.Plan{}, recall.Options{Alpha: alpha, VectorLeg: c.vectorLeg})
			if len(got) != len(c.want) {
				t.Fatalf("got %d results, want %d", len(got), len(c.want))
			}
			for id, rel := range c.want {
				if r := got[id]; math.Abs(r.Score-(rel+ties)) > eps {
					t.Errorf("#%d: score %.6f, want %.6f", id, r.Score, rel+ties)
				}
			}
		})
	}
}

// BM25 is normalized so that a better match scores higher (SPEC §5: 1/(1+|bm25|) is
// inverted), stays below 1, and a candidate the keyword leg missed scores 0 there.
func TestRankKeywordNormalization(t *testing.T) {
	cands := []recall.Candidate{
		{ID: 1, Keyword: 0.5, CreatedAt: day},
		{ID: 2, Keyword: 7, CreatedAt: day},
		{ID: 3, Keyword: 2, CreatedAt: day},
		{ID: 4, Vector: 0.3, CreatedAt: day},
	}
	ranked := recall.Rank(cands, &recall.Plan{}, recall.Options{Alpha: recall.DefaultAlpha})
	var order []int64
	for _, r := range ranked {
		order = append(order, cands[r.Index].ID)
		if r.Keyword < 0 || r.Keyword >= 1 {
			t.Errorf("#%d: keyword %v outside [0,1)", cands[r.Index].ID, r.Keyword)
		}
	}
	if want := []int64{2, 3, 1, 4}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v (a better match ranks higher)", order, want)
	}
	byID := rankAll(t, cands, recall.Plan{}, recall.Options{Alpha: recall.DefaultAlpha})
	if got, want := byID[2].Keyword, 7.0/8; math.Abs(got-want) > eps {
		t.Errorf("best match: keyword %v, want x/(1+xmax) = %v", got, want)
	}
	if byID[4].Keyword != 0 {
		t.Errorf("keyword miss: keyword %v, want 0", byID[4].Keyword)
	}
}

// The tie-breakers (recency, importance, access) are damped to at most 0.01 in total: they
// order equal matches and never overturn a clearer one.
func TestRankTieBreakersAreDamped(t *testing.T) {
	old, recent := day, day.Add(48*time.Hour)
	cases := []struct {
		name  string
		cands []recall.Candidate
		want  []int64
	}{
		{"EqualMatchesNewerFirst", []recall.Candidate{
			{ID: 1, Keyword: 1, CreatedAt: recent}, {ID: 2, Keyword: 1, CreatedAt: old}}, []int64{1, 2}},
		{"EqualMatchesMoreImportantFirst", []recall.Candidate{
			{ID: 1, Keyword: 1, CreatedAt: day, Importance: 0.2}, {ID: 2, Keyword: 1, CreatedAt: day, Importance: 0.9}}, []int64{2, 1}},
		{"EqualMatchesPinnedCountsAsImportant", []recall.Candidate{
			{ID: 1, Keyword: 1, CreatedAt: day, Importance: 0.9}, {ID: 2, Keyword: 1, CreatedAt: day, Pinned: true}}, []int64{2, 1}},
		{"EqualMatchesMoreRecalledFirst", []recall.Candidate{
			{ID: 1, Keyword: 1, CreatedAt: day, AccessCount: 1}, {ID: 2, Keyword: 1, CreatedAt: day, AccessCount: 40}}, []int64{2, 1}},
		{"EqualEverythingHigherIDFirst", []recall.Candidate{
			{ID: 1, Keyword: 1, CreatedAt: day}, {ID: 2, Keyword: 1, CreatedAt: day}}, []int64{2, 1}},
		{"ClearerMatchBeatsEveryTieBreaker", []recall.Candidate{
			{ID: 1, Keyword: 1, CreatedAt: recent, Pinned: true, AccessCount: 99},
			{ID: 2, Keyword: 1.1, CreatedAt: old}}, []int64{2, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ranked := recall.Rank(c.cands, &recall.Plan{}, recall.Options{Alpha: recall.DefaultAlpha})
			var order []int64
			for _, r := range ranked {
				order = append(order, c.cands[r.Index].ID)
				if extra := r.Score - r.Keyword; extra < 0 || extra > 0.01+eps {
					t.Errorf("#%d: tie-breakers add %v, want within [0, 0.01]", c.cands[r.Index].ID, extra)
				}
			}
			if !slices.Equal(order, c.want) {
				t.Fatalf("order %v, want %v", order, c.want)
			}
		})
	}
}

// The query's boosts scale relevance: "now" favours the newest, "when" a memory stating a
// date or time, a named month memories created in it.
func TestRankBoosts(t *testing.T) {
	sep, oct := time.Date(2024, 9, 12, 9, 0, 0, 0, time.UTC), time.Date(2024, 10, 3, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		query string
		cands []recall.Candidate
		want  []int64
	}{
		{"NowFavoursTheNewerStatement", "what time is standup now", []recall.Candidate{
			{ID: 1, Keyword: 1.2, CreatedAt: sep, Content: "standup is at 9"},
			{ID: 2, Keyword: 1.0, CreatedAt: oct, Content: "standup moved to 10"}}, []int64{2, 1}},
		{"WithoutNowTheBetterMatchWins", "what time is standup", []recall.Candidate{
			{ID: 1, Keyword: 1.2, CreatedAt: sep, Content: "standup is on the calendar"},
			{ID: 2, Keyword: 1.0, CreatedAt: oct, Content: "standup moved rooms"}}, []int64{1, 2}},
		{"WhenFavoursAStatedTime", "when is the retro", []recall.Candidate{
			{ID: 1, Keyword: 1.2, CreatedAt: day, Content: "the retro is for the whole team"},
			{ID: 2, Keyword: 1.0, CreatedAt: day, Content: "the retro is friday at 3pm"}}, []int64{2, 1}},
		{"WhenFavoursAJapaneseDate", "いつ", []recall.Candidate{
			{ID: 1, Vector: 0.6, CreatedAt: day, Content: "振り返りは全員参加"},
			{ID: 2, Vector: 0.5, CreatedAt: day, Content: "振り返りは5月3日"}}, []int64{2, 1}},
		{"MonthFavoursMemoriesFromIt", "what did we decide in september", []recall.Candidate{
			{ID: 1, Keyword: 1.1, CreatedAt: oct, Content: "we decided to ship"},
			{ID: 2, Keyword: 1.0, CreatedAt: sep, Content: "we decided to wait"}}, []int64{2, 1}},
		{"MayTheVerbIsNoMonth", "what may we decide", []recall.Candidate{
			{ID: 1, Keyword: 1.1, CreatedAt: oct, Content: "we decided to ship"},
			{ID: 2, Keyword: 1.0, CreatedAt: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), Content: "we decided to wait"}}, []int64{1, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := recall.Analyze(c.query)
			ranked := recall.Rank(c.cands, &plan, recall.Options{Alpha: recall.DefaultAlpha, VectorLeg: true})
			var order []int64
			for _, r := range ranked {
				order = append(order, c.cands[r.Index].ID)
			}
			if !slices.Equal(order, c.want) {
				t.Fatalf("order %v, want %v", order, c.want)
			}
		})
	}
}

func TestRankMinScoreAndLimit(t *testing.T) {
	cands := []recall.Candidate{
		{ID: 1, Keyword: 1, CreatedAt: day}, {ID: 2, Keyword: 4, CreatedAt: day},
		{ID: 3, Keyword: 9, CreatedAt: day}, {ID: 4, Keyword: 0.1, CreatedAt: day},
	}
	ids := func(opt recall.Options) []int64 {
		var out []int64
		for _, r := range recall.Rank(cands, &recall.Plan{}, opt) {
			out = append(out, cands[r.Index].ID)
		}
		return out
	}
	t.Run("LimitKeepsTheBest", func(t *testing.T) {
		if got := ids(recall.Options{Limit: 2}); !slices.Equal(got, []int64{3, 2}) {
			t.Fatalf("got %v, want [3 2]", got)
		}
	})
	t.Run("MinScoreDropsTheWeak", func(t *testing.T) {
		// 1/10 + 0.005 is just over 0.1; 0.1/10 + 0.005 is not.
		if got := ids(recall.Options{MinScore: 0.1}); !slices.Equal(got, []int64{3, 2, 1}) {
			t.Fatalf("got %v, want [3 2 1]", got)
		}
	})
	t.Run("NoCandidates", func(t *testing.T) {
		if got := recall.Rank(nil, &recall.Plan{}, recall.Options{}); len(got) != 0 {
			t.Fatalf("got %v, want nothing", got)
		}
	})
}

// TestRankPastForCurrentQuestions: asked for the current state, a memory whose span of time
// has ended (last week's raid plan) falls behind an equally good match that names no
// time, and one still to come keeps its place; a question about a date, or not about now,
// is untouched.
func TestRankPastForCurrentQuestions(t *testing.T) {
	asked := time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC)
	past := recall.Window{From: time.Date(2026, 3, 13, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)}
	coming := recall.Window{From: time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC)}
	said := time.Date(2026, 3, 7, 18, 0, 0, 0, time.UTC)
	cands := []recall.Candidate{
		{ID: 1, Keyword: 5, CreatedAt: said, RefersTo: past, Content: "the raid moved to next Friday"},
		{ID: 2, Keyword: 4.6, CreatedAt: said, Content: "the raid is on Saturdays"},
		{ID: 3, Keyword: 4.2, CreatedAt: said, RefersTo: coming, Content: "the raid after next is on Friday"},
	}
	order := func(question string, stages recall.Stages, asked time.Time) []int64 {
		t.Helper()
		plan := recall.AnalyzeAt(question, asked)
		var ids []int64
		for _, r := range recall.Rank(cands, &plan, recall.Options{Alpha: recall.DefaultAlpha, Stages: stages, Asked: asked}) {
			ids = append(ids, cands[r.Index].ID)
		}
		return ids
	}
	on := recall.Stages{Past: 0.3}
	for _, c := range []struct {
		name     string
		question string
		stages   recall.Stages
		asked    time.Time
		want     []int64
	}{
		{"CurrentQuestion", "what is the raid plan now?", on, asked, []int64{2, 3, 1}},
		{"StageOff", "what is the raid plan now?", recall.Stages{}, asked, []int64{1, 2, 3}},
		{"NotAboutNow", "what is the raid plan?", on, asked, []int64{1, 2, 3}},
		{"AboutADate", "what was the raid plan on 13 March?", on, asked, []int64{1, 2, 3}},
		{"BeforeTheSpanEnded", "what is the raid plan now?", on, time.Date(2026, 3, 13, 9, 0, 0, 0, time.UTC), []int64{1, 2, 3}},
	} {
		if got := order(c.question, c.stages, c.asked); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q ranks %v, want %v", c.name, c.question, got, c.want)
		}
	}
}
