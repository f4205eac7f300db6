package recall

import (
	"testing"
	"time"
)

func TestSmooth(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 20, 0, 0, 0, time.UTC)
	msg := func(id int64, ch string, min int) Candidate {
		return Candidate{ID: id, Scope: "g:a", Channel: ch, CreatedAt: t0.Add(time.Duration(min) * time.Minute)}
	}
	cands := []Candidate{
		msg(1, "c", 0), msg(2, "c", 1), msg(3, "c", 2), msg(4, "c", 3), msg(5, "c", 4),
		msg(6, "other", 2), // another channel, same minute
		msg(7, "c", 90),    // after a silence: another session
	}
	cands[2].Scope = "g:a"
	ranked := []Ranked{{Index: 0, Score: 0}, {Index: 1, Score: 0.1}, {Index: 2, Score: 1, Keyword: 0.9}, {Index: 3, Score: 0}, {Index: 4, Score: 0.05},
		{Index: 5, Score: 0}, {Index: 6, Score: 0}}
	s := Smoothing{Lambda: 0.5, K: 2, Hits: 1, Cap: 2, Gap: 30 * time.Minute}
	got := Smooth(cands, ranked, s, 0, 0)
	score := map[int64]float64{}
	for _, r := range got {
		score[cands[r.Index].ID] = r.Score
	}
	// Hit #3 (score 1): ±2 in its session are #1, #2, #4, #5, but Cap 2 lifts only two of
	// them (the ties go to the higher id: #5, #4); the others keep their own score.
	want := map[int64]float64{3: 1, 5: 0.5, 4: 0.5, 2: 0.1, 1: 0, 6: 0, 7: 0}
	for id, w := range want {
		if score[id] != w {
			t.Errorf("#%d score %v, want %v (all %v)", id, score[id], w, score)
		}
	}
	if cands[got[0].Index].ID != 3 || cands[got[1].Index].ID != 5 || cands[got[2].Index].ID != 4 {
		t.Errorf("order %v", got)
	}
	if len(Smooth(cands, ranked, s, 0, 2)) != 2 {
		t.Errorf("limit not applied")
	}
	off := Smooth(cands, ranked, Smoothing{}, 0, 0)
	if cands[off[1].Index].ID != 2 {
		t.Errorf("without smoothing the order should stay, got %v", off)
	}
}
