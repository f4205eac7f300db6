package recall

import (
	"time"
)

// Window is a span of time a question points at ("last weekend", "3 March", "先週"), or
// that a memory's own words name ("the raid moved to next Friday"): [From, To). Memories
// created inside a question's window, or naming a span that overlaps it, are what the
// question is about.
type Window struct {
	From, To time.Time
}

// IsZero reports whether w is empty (the text names no date).
func (w Window) IsZero() bool { return w.From.IsZero() && w.To.IsZero() }

// Contains reports whether t falls inside w.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.From) && t.Before(w.To) }

// Overlaps reports whether w and o share any instant.
func (w Window) Overlaps(o Window) bool { return w.From.Before(o.To) && o.From.Before(w.To) }

// Distance is how far t lies outside w (0 inside).
func (w Window) Distance(t time.Time) time.Duration {
	switch {
	case t.Before(w.From):
		return w.From.Sub(t)
	case !t.Before(w.To):
		return t.Sub(w.To)
	}
	return 0
}

// DateWindow reads the date a question points at, relative to when it is asked (asked,
// the zero time meaning now): absolute dates ("3 March", "Mar 7", "March 3rd, 2024",
// "31 Dec 2025", "on the 14th", "2024-03-03", "07.03.2026", "2026/3/7", "3月3日",
// "2026年3月7日"), months ("June 2026", "in June", "last December", "2026年3月") and
// relative dates ("yesterday", "last weekend", "two weeks ago", "last month", "early March",
// "the last week of June", "先週", "昨日", "先月の最後の週"), and the future ones a plan
// names ("tomorrow", "next week", "来月").
//
// A question asks about what was said before it, so a date that does not say which way it
// goes ("3 March", "Friday", "in June", "on the 14th") is the latest one not after the
// asked day (a weekday: before it). A slash date whose two numbers could each be the month
// ("7/3/2026") is read as no date unless the text is Japanese, where it is month/day; a date
// named but ambiguous ("next Friday" asked on a Tuesday) gives no window rather than a
// guess. ok is false when the text names no date.
func DateWindow(text string, asked time.Time) (Window, bool) {
	if asked.IsZero() {
		asked = time.Now()
	}
	s, k := prepareDateText(text)
	if k == 0 {
		return Window{}, false
	}
	return readDate(newCalendar(asked, leanPast), s, k)
}

// ReferredDate resolves the date a memory's own text names against when it was said
// (said, its created_at): "two days ago" said on 3 March is 1 March, "tomorrow" said on
// 3 March is 4 March. It reads every form DateWindow reads, with one calendar; what
// differs is the direction of a date that does not say which way it goes ("on Friday",
// "7 March", "in June"), which follows the text's tense:
//
//   - past tense ("we played on Friday", "金曜に行った"): the latest occurrence, as in a
//     question;
//   - a plan ("we'll play on Friday", "金曜に集まろう", "booked for 7 March"): the earliest
//     occurrence not before the day said (a weekday: after it);
//   - neither, or both: the nearer occurrence when it is at most half as far from the day
//     said as the other ("7 March" said on 3 March; "Friday" said on a Thursday), and no
//     date otherwise ("Friday" said on a Tuesday, "September" said in March).
//
// "next Friday" is the coming Friday when that lies in the following week; said earlier in
// the week, when it could be this week's or next week's, it is ambiguous. An ambiguous
// date gives ok=false rather than a guess; so does a zero said, which leaves nothing to
// resolve against. Where a text names several dates, the first form the reader finds
// decides: dates in numbers, then dates that name their month, then relative ones.
func ReferredDate(text string, said time.Time) (Window, bool) {
	if said.IsZero() {
		return Window{}, false
	}
	s, k := prepareDateText(text)
	if k == 0 {
		return Window{}, false
	}
	return readDate(newCalendar(said, tenseOf(s)), s, k)
}

// lean is which way a date that does not say its direction goes from the reference day.
type lean int8

const (
	// leanPast takes the latest occurrence not after the reference day: questions, and
	// statements in the past tense.
	leanPast lean = iota
	// leanFuture takes the earliest occurrence not before it: plans.
	leanFuture
	// leanNearest takes the clearly nearer occurrence, and none when neither is.
	leanNearest
)

// found is what one form of date made of a text.
type found int8

const (
	// notFound: the form is not in the text; the reader tries the next one.
	notFound found = iota
	// resolved: the form gave a window.
	resolved
	// ambiguous: the text names a date this form cannot pin down; the reader stops, as
	// a date read from elsewhere in the text would be a guess.
	ambiguous
)

// calendar reckons dates from a reference day: when a question is asked, or when a
// memory was said.
type calendar struct {
	today time.Time // midnight of the reference day
	loc   *time.Location
	lean  lean
}

func newCalendar(ref time.Time, l lean) calendar {
	loc := ref.Location()
	return calendar{today: time.Date(ref.Year(), ref.Month(), ref.Day(), 0, 0, 0, 0, loc), loc: loc, lean: l}
}

// readDate tries each form of date in turn: numeric, Japanese named dates, English named
// dates, English relative dates, Japanese relative dates.
func readDate(c calendar, s string, k cue) (Window, bool) {
	w, f := readNumericDate(c, s, k)
	if f == notFound {
		w, f = readJaNamedDate(c, s, k)
	}
	if f == notFound {
		w, f = readEnNamedDate(c, s, k)
	}
	if f == notFound {
		w, f = readEnRelativeDate(c, s, k)
	}
	if f == notFound {
		w, f = readJaRelativeDate(c, s, k)
	}
	return w, f == resolved
}

// spanDays is the n days from from.
func spanDays(from time.Time, n int) Window { return Window{from, from.AddDate(0, 0, n)} }

// oneDay is the window of the day t, or the answer that the form could not pin it down.
func oneDay(t time.Time, ok bool) (Window, found) {
	if !ok {
		return Window{}, ambiguous
	}
	return spanDays(t, 1), resolved
}

// date is the day y-m-d, or false when the month has no such day (31 April, 29 February
// 2025).
func (c calendar) date(y int, m time.Month, d int) (time.Time, bool) {
	if m < time.January || m > time.December || d < 1 || d > daysIn(y, m) {
		return time.Time{}, false
	}
	return time.Date(y, m, d, 0, 0, 0, 0, c.loc), true
}

func daysIn(y int, m time.Month) int { return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day() }

// dayNumber counts calendar days, so that distances between days ignore clock changes.
func dayNumber(t time.Time) int {
	return int(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// pick chooses between the latest occurrence not after today (prev) and the earliest not
// before it (next), as the calendar leans. Leaning nowhere, it takes the one at most half as
// far from today as the other, and none when neither is clearly nearer.
func (c calendar) pick(prev time.Time, okPrev bool, next time.Time, okNext bool) (time.Time, bool) {
	switch {
	case c.lean == leanPast:
		return prev, okPrev
	case c.lean == leanFuture:
		return next, okNext
	case okPrev && okNext && prev.Equal(next):
		return prev, true
	case !okPrev || !okNext:
		return time.Time{}, false
	}
	t := dayNumber(c.today)
	back, ahead := t-dayNumber(prev), dayNumber(next)-t
	switch {
	case 2*ahead <= back:
		return next, true
	case 2*back <= ahead:
		return prev, true
	}
	return time.Time{}, false
}

// yearly is the occurrence of month m, day d without a year. Today counts as either
// direction. 29 February can be eight years from the nearest one (2096 to 2104).
func (c calendar) yearly(m time.Month, d int) (time.Time, bool) {
	var prev, next time.Time
	okPrev, okNext := false, false
	y := c.today.Year()
	for i := 0; i <= 8 && !okPrev; i++ {
		if t, ok := c.date(y-i, m, d); ok && !t.After(c.today) {
			prev, okPrev = t, true
		}
	}
	for i := 0; i <= 8 && !okNext; i++ {
		if t, ok := c.date(y+i, m, d); ok && !t.Before(c.today) {
			next, okNext = t, true
		}
	}
	return c.pick(prev, okPrev, next, okNext)
}

// monthly is the occurrence of day d of a month not named ("on the 14th"). Today counts
// as either direction; months without that day are skipped.
func (c calendar) monthly(d int) (time.Time, bool) {
	var prev, next time.Time
	okPrev, okNext := false, false
	cur := time.Date(c.today.Year(), c.today.Month(), 1, 0, 0, 0, 0, c.loc)
	for i := 0; i <= 2 && !okPrev; i++ {
		m := cur.AddDate(0, -i, 0)
		if t, ok := c.date(m.Year(), m.Month(), d); ok && !t.After(c.today) {
			prev, okPrev = t, true
		}
	}
	for i := 0; i <= 2 && !okNext; i++ {
		m := cur.AddDate(0, i, 0)
		if t, ok := c.date(m.Year(), m.Month(), d); ok && !t.Before(c.today) {
			next, okNext = t, true
		}
	}
	return c.pick(prev, okPrev, next, okNext)
}

// thisMonth is the first day of the current month.
func (c calendar) thisMonth() time.Time {
	return time.Date(c.today.Year(), c.today.Month(), 1, 0, 0, 0, 0, c.loc)
}

// month is the first day of the occurrence of month m without a year: the current month
// is both the latest and the earliest.
func (c calendar) month(m time.Month) (time.Time, bool) {
	y := c.today.Year()
	prev, next := time.Date(y, m, 1, 0, 0, 0, 0, c.loc), time.Date(y, m, 1, 0, 0, 0, 0, c.loc)
	if m > c.today.Month() {
		prev = prev.AddDate(-1, 0, 0)
	}
	if m < c.today.Month() {
		next = next.AddDate(1, 0, 0)
	}
	return c.pick(prev, true, next, true)
}

// lastMonthNamed is the first day of the latest month m before the current one ("last
// December" said in January is the December just gone).
func (c calendar) lastMonthNamed(m time.Month) time.Time {
	t := time.Date(c.today.Year(), m, 1, 0, 0, 0, 0, c.loc)
	if m >= c.today.Month() {
		t = t.AddDate(-1, 0, 0)
	}
	return t
}

// nextMonthNamed is the first day of the earliest month m after the current one.
func (c calendar) nextMonthNamed(m time.Month) time.Time {
	t := time.Date(c.today.Year(), m, 1, 0, 0, 0, 0, c.loc)
	if m <= c.today.Month() {
		t = t.AddDate(1, 0, 0)
	}
	return t
}

// lastWeekday is the latest day before today that falls on wd.
func (c calendar) lastWeekday(wd time.Weekday) time.Time {
	back := (int(c.today.Weekday()) - int(wd) + 7) % 7
	if back == 0 {
		back = 7
	}
	return c.today.AddDate(0, 0, -back)
}

// comingWeekday is the earliest day after today that falls on wd.
func (c calendar) comingWeekday(wd time.Weekday) time.Time {
	ahead := (int(wd) - int(c.today.Weekday()) + 7) % 7
	if ahead == 0 {
		ahead = 7
	}
	return c.today.AddDate(0, 0, ahead)
}

// weekday is the occurrence of a weekday named without "last" or "next".
func (c calendar) weekday(wd time.Weekday) (time.Time, bool) {
	return c.pick(c.lastWeekday(wd), true, c.comingWeekday(wd), true)
}

// nextWeekday is "next Friday": the coming Friday when it lies in the following week, where
// both readings of "next" meet; earlier in the week it could be this week's or next week's.
func (c calendar) nextWeekday(wd time.Weekday) (time.Time, bool) {
	t := c.comingWeekday(wd)
	return t, !weekStart(t).Equal(weekStart(c.today))
}

// weekend is "this weekend" or "the weekend": the one under way on a Saturday or Sunday,
// otherwise the last or the coming one as the calendar leans.
func (c calendar) weekend() (time.Time, bool) {
	switch c.today.Weekday() {
	case time.Saturday:
		return c.today, true
	case time.Sunday:
		return c.today.AddDate(0, 0, -1), true
	}
	return c.pick(c.lastWeekday(time.Saturday), true, c.comingWeekday(time.Saturday), true)
}

// current is "this week" or "this month", the span [start, end) holding today: so far when
// looking back, from today when looking ahead, the whole of it otherwise.
func (c calendar) current(start, end time.Time) Window {
	switch c.lean {
	case leanPast:
		return Window{start, c.today.AddDate(0, 0, 1)}
	case leanFuture:
		return Window{c.today, end}
	}
	return Window{start, end}
}

// weekStart is the Monday of the week holding t.
func weekStart(t time.Time) time.Time { return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7)) }

// part is the part p ("early", "the first week of", "下旬"…) of the month starting at
// start; the whole month for an empty or unknown p.
func part(start time.Time, p string) Window {
	end := start.AddDate(0, 1, 0)
	switch p {
	case "early", "the start of", "the beginning of", "start of", "beginning of", "初め", "はじめ", "頭", "上旬":
		return Window{start, start.AddDate(0, 0, 10)}
	case "mid", "the middle of", "middle of", "中旬", "半ば":
		return Window{start.AddDate(0, 0, 9), start.AddDate(0, 0, 21)}
	case "late", "the end of", "end of", "下旬", "終わり", "末":
		return Window{start.AddDate(0, 0, 20), end}
	case "the first week of":
		return spanDays(start, 7)
	case "the second week of":
		return spanDays(start.AddDate(0, 0, 7), 7)
	case "the last week of", "最後の週", "最終週":
		return Window{end.AddDate(0, 0, -7), end}
	case "the first weekend of", "the second weekend of":
		sat := start
		for sat.Weekday() != time.Saturday {
			sat = sat.AddDate(0, 0, 1)
		}
		if p == "the second weekend of" {
			sat = sat.AddDate(0, 0, 7)
		}
		return spanDays(sat, 2)
	case "the last weekend of":
		sat := end.AddDate(0, 0, -1)
		for sat.Weekday() != time.Saturday {
			sat = sat.AddDate(0, 0, -1)
		}
		return spanDays(sat, 2)
	}
	return Window{start, end}
}

// partOf is part p of the month starting at start, or the answer that the month could not
// be pinned down.
func partOf(start time.Time, ok bool, p string) (Window, found) {
	if !ok {
		return Window{}, ambiguous
	}
	return part(start, p), resolved
}

// agoOrAhead is the window of n units ("day", "week", "month") before today (sign -1) or
// after it (sign 1): a day exactly, a week give or take four days, a month give or take
// ten, as people round such spans.
func (c calendar) agoOrAhead(n, sign int, unit string) Window {
	switch unit {
	case "day":
		return spanDays(c.today.AddDate(0, 0, sign*n), 1)
	case "week":
		t := c.today.AddDate(0, 0, sign*7*n)
		return Window{t.AddDate(0, 0, -4), t.AddDate(0, 0, 4)}
	}
	t := c.today.AddDate(0, sign*n, 0)
	return Window{t.AddDate(0, 0, -10), t.AddDate(0, 0, 10)}
}
