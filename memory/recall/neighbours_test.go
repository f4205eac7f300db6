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
	got := Smooth(cands, ranked, s, 0, 0, nil)
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
	if len(Smooth(cands, ranked, s, 0, 2, nil)) != 2 {
		t.Errorf("limit not applied")
	}
	off := Smooth(cands, ranked, Smoothing{}, 0, 0, nil)
	if cands[off[1].Index].ID != 2 {
		t.Errorf("without smoothing the order should stay, got %v", off)
	}
}

func TestIsQuestion(t *testing.T) {
	for text, want := range map[string]bool{
		"which game are you bringing on Friday?":  true,
		"which game are you bringing on Friday ?": true,
		"are you coming? 🎲":                       true,
		"(was it Tuesday?)":                       true,
		"金曜日はどのゲームを持ってくる？":                        true,
		"金曜日は来ますか":                                true,
		"金曜日は来ますか。":                               true,
		"あれって何だっけ":                                true,
		"明日は雨かな":                                  true,
		"Catan, probably":                         false,
		"I wonder what he meant.":                 false,
		"カタンを持っていくの":                              false, // a bare …の ends statements too
		"マリカ":                                     false, // カ is katakana, not the particle か
		"":                                        false,
		"...":                                     false,
	} {
		if got := IsQuestion(text); got != want {
			t.Errorf("IsQuestion(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestSmoothLiftsAnswers: a hit that asks something lends a decaying share of its score to
// the next turns by other speakers in its session, past its own follow-up, as far as
// Answers; not to its own turns, not across a silence, not when it asks nothing.
func TestSmoothLiftsAnswers(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 20, 0, 0, 0, time.UTC)
	turn := func(id int64, author, text string, min int) Candidate {
		return Candidate{ID: id, Scope: "g:a", Channel: "c", AuthorName: author, Content: text, CreatedAt: t0.Add(time.Duration(min) * time.Minute)}
	}
	cands := []Candidate{
		turn(1, "Ana", "which game are you bringing on Friday?", 0),
		turn(2, "Ana", "or anything really", 1),
		turn(3, "Ben", "Catan, probably", 2),
		turn(4, "Cho", "I'll bring snacks", 3),
		turn(5, "Dev", "me too", 4),
		turn(6, "Ben", "see you then", 90), // after a silence
	}
	ranked := []Ranked{{Index: 0, Score: 1, Keyword: 1}, {Index: 1}, {Index: 2}, {Index: 3}, {Index: 4}, {Index: 5}}
	s := Smoothing{Lambda: 0.5, K: 1, Hits: 1, Cap: 3, Gap: 30 * time.Minute, Answers: 2, AnswerLambda: 0.8, AnswerDecay: 0.5}
	score := func(cs []Candidate) map[int64]float64 {
		out := map[int64]float64{}
		for _, r := range Smooth(cs, ranked, s, 0, 0, nil) {
			out[cs[r.Index].ID] = r.Score
		}
		return out
	}
	got := score(cands)
	// #2 is Ana's own follow-up: only the symmetric neighbour share (0.5). #3 and #4 are
	// the first two answers (0.8, then 0.4); #5 is beyond Answers, #6 beyond the silence.
	want := map[int64]float64{1: 1, 2: 0.5, 3: 0.8, 4: 0.4}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("#%d score %v, want %v (all %v)", id, got[id], w, got)
		}
	}
	for _, id := range []int64{5, 6} {
		if got[id] != 0 {
			t.Errorf("#%d lifted to %v: beyond the answers or the session (all %v)", id, got[id], got)
		}
	}

	statement := append([]Candidate(nil), cands...)
	statement[0].Content = "I'm bringing a game on Friday"
	if got := score(statement); got[3] != 0 || got[2] != 0.5 {
		t.Errorf("a statement lent to its answers: %v", got)
	}
	s.Cap = 1
	if got := score(cands); got[3] != 0.8 || got[2] != 0 || got[4] != 0 {
		t.Errorf("Cap 1 should keep only the strongest lift (#3): %v", got)
	}
}
