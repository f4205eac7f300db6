package recall

import (
	"testing"
	"time"
)

func TestDateWindow(t *testing.T) {
	asked := time.Date(2024, 4, 15, 10, 0, 0, 0, time.UTC) // a Monday
	d := func(m time.Month, day int) time.Time { return time.Date(2024, m, day, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		text     string
		from, to time.Time
	}{
		{"what happened yesterday?", d(4, 14), d(4, 15)},
		{"How did Pri do in her race last weekend?", d(4, 13), d(4, 15)},
		{"the weekend before last", d(4, 6), d(4, 8)},
		{"what did we play on Saturday night?", d(4, 13), d(4, 14)},
		{"the Saturday before last", d(4, 6), d(4, 7)},
		{"two weeks ago", d(3, 28), d(4, 5)},
		{"last month", d(3, 1), d(4, 1)},
		{"in early March", d(3, 1), d(3, 11)},
		{"mid-March", d(3, 10), d(3, 22)},
		{"in the first week of January", d(1, 1), d(1, 8)},
		{"on 3 March", d(3, 3), d(3, 4)},
		{"March 3rd", d(3, 3), d(3, 4)},
		{"on the 14th", d(4, 14), d(4, 15)},
		{"on the 20th", d(3, 20), d(3, 21)},
		{"2024-03-03", d(3, 3), d(3, 4)},
		{"3月3日に何した?", d(3, 3), d(3, 4)},
		{"昨日何してた?", d(4, 14), d(4, 15)},
		{"先週の土曜日", d(4, 13), d(4, 14)},
		{"先週", d(4, 8), d(4, 15)},
		{"先月の下旬", d(3, 21), d(4, 1)},
		{"2月の初め", d(2, 1), d(2, 11)},
	}
	for _, c := range cases {
		w, ok := DateWindow(c.text, asked)
		if !ok || !w.From.Equal(c.from) || !w.To.Equal(c.to) {
			t.Errorf("DateWindow(%q) = %v–%v %v, want %v–%v", c.text, w.From, w.To, ok, c.from, c.to)
		}
	}
	for _, text := range []string{"what games does Priya play?", "who may come?", "ラーメンはどこ?"} {
		if w, ok := DateWindow(text, asked); ok {
			t.Errorf("DateWindow(%q) = %v, want no date", text, w)
		}
	}
}

func TestWindowWeight(t *testing.T) {
	w := Window{time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC)}
	halo := 48 * time.Hour
	for _, c := range []struct {
		t    time.Time
		want float64
	}{
		{w.From.Add(time.Hour), 1},
		{w.To.Add(24 * time.Hour), 0.5},
		{w.From.Add(-12 * time.Hour), 0.75},
		{w.To.Add(72 * time.Hour), 0},
	} {
		if got := windowWeight(w, c.t, halo); got != c.want {
			t.Errorf("windowWeight(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}

func TestRankDateBoost(t *testing.T) {
	asked := time.Date(2024, 4, 15, 10, 0, 0, 0, time.UTC)
	plan := AnalyzeAt("how was the race last weekend", asked)
	cands := []Candidate{
		{ID: 1, Keyword: 2, CreatedAt: time.Date(2024, 3, 2, 12, 0, 0, 0, time.UTC)},
		{ID: 2, Keyword: 1.5, CreatedAt: time.Date(2024, 4, 13, 12, 0, 0, 0, time.UTC)},
	}
	opt := Options{Stages: Stages{DateBoost: 1, DateHalo: 48 * time.Hour}}
	got := Rank(cands, &plan, opt)
	if cands[got[0].Index].ID != 2 {
		t.Fatalf("with the date boost the memory of last weekend should lead, got %+v", got)
	}
	// keyword 1.5/3 = 0.5, doubled; plus the tie-breaker (newest: 0.01·0.5).
	if want := 1.0 + 0.005; abs(got[0].Score-want) > 1e-9 {
		t.Fatalf("score = %v, want %v", got[0].Score, want)
	}
	got = Rank(cands, &plan, Options{})
	if cands[got[0].Index].ID != 1 {
		t.Fatalf("without the stage the stronger keyword match should lead, got %+v", got)
	}
}

// TestDateWeight: with spans, a candidate is placed in the question's window by its
// creation time or by the span its words name, whichever is nearer (any overlap of the span
// is inside; a span outside counts from its middle); without, by its creation time alone.
func TestDateWeight(t *testing.T) {
	d := func(day, hour int) time.Time { return time.Date(2024, 4, day, hour, 0, 0, 0, time.UTC) }
	lastWeekend := Window{d(13, 0), d(15, 0)}
	day := func(n int) Window { return spanDays(d(n, 0), 1) }
	cases := []struct {
		name     string
		created  time.Time
		refersTo Window
		halo     time.Duration
		want     float64
	}{
		{"NoSpanCreatedInside", d(14, 9), Window{}, 48 * time.Hour, 1},
		{"NoSpanCreatedADayAfter", d(16, 0), Window{}, 48 * time.Hour, 0.5},
		{"SpanInsideSaidLater", d(17, 9), day(13), 48 * time.Hour, 1},
		{"SpanFarOutsideSaidInside", d(14, 9), day(25), 48 * time.Hour, 1},
		{"SpanOverlapsTheStart", d(1, 9), Window{d(8, 0), d(14, 0)}, 48 * time.Hour, 1},
		{"SpanHoldsTheWindow", d(1, 9), Window{d(1, 0), time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}, 48 * time.Hour, 1},
		{"SpanTheDayAfter", d(1, 9), day(15), 48 * time.Hour, 0.75},
		{"SpanTheDayBefore", d(1, 9), day(12), 48 * time.Hour, 0.75},
		{"SpanTheDayAfterNoHalo", d(1, 9), day(15), 0, 0},
		{"SpanAWeekLater", d(1, 9), day(22), 48 * time.Hour, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cand := Candidate{CreatedAt: c.created, RefersTo: c.refersTo}
			if got := dateWeight(lastWeekend, &cand, c.halo, true); got != c.want {
				t.Errorf("dateWeight = %v, want %v", got, c.want)
			}
			if got, want := dateWeight(lastWeekend, &cand, c.halo, false), windowWeight(lastWeekend, c.created, c.halo); got != want {
				t.Errorf("without spans dateWeight = %v, want the creation time's %v", got, want)
			}
		})
	}
}

// TestRankDateBoostRefersTo: "the raid moved to next Friday", said a week before that
// Friday, leads a question about the Friday over a stronger keyword match said that day
// about something else; without its span it would get nothing from the stage.
func TestRankDateBoostRefersTo(t *testing.T) {
	said := time.Date(2026, 3, 7, 18, 0, 0, 0, time.UTC) // a Saturday
	friday, ok := ReferredDate("the raid moved to next Friday", said)
	if !ok {
		t.Fatal("no span read from the memory")
	}
	plan := AnalyzeAt("what happens on 13 March?", time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC))
	cands := []Candidate{
		{ID: 1, Keyword: 1, CreatedAt: said, RefersTo: friday},
		{ID: 2, Keyword: 1.5, CreatedAt: time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)},
	}
	opt := Options{Stages: Stages{DateBoost: 1, DateHalo: 48 * time.Hour, DateSpans: true}}
	if got := Rank(cands, &plan, opt); cands[got[0].Index].ID != 1 {
		t.Fatalf("the memory naming 13 March should lead, got %+v", got)
	}
	off := opt
	off.Stages.DateSpans = false
	if got := Rank(cands, &plan, off); cands[got[0].Index].ID != 2 {
		t.Fatalf("without spans the stage should not read the span, got %+v", got)
	}
	cands[0].RefersTo = Window{}
	if got := Rank(cands, &plan, opt); cands[got[0].Index].ID != 2 {
		t.Fatalf("placed by its creation day the stronger match should lead, got %+v", got)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
