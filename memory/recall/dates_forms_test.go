package recall_test

import (
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory/recall"
)

// dateCase is a text and the window the reader should make of it; a zero from means no
// window (ok=false).
type dateCase struct {
	text     string
	from, to time.Time
}

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// days is the window of n days from y-m-d.
func days(y int, m time.Month, d, n int) (time.Time, time.Time) {
	return date(y, m, d), date(y, m, d+n)
}

func checkDates(t *testing.T, read func(string, time.Time) (recall.Window, bool), at time.Time, cases []dateCase) {
	t.Helper()
	for _, c := range cases {
		w, ok := read(c.text, at)
		if c.from.IsZero() {
			if ok {
				t.Errorf("%q at %s = %s – %s, want no date", c.text, at.Format("Mon 2006-01-02"), w.From.Format("2006-01-02"), w.To.Format("2006-01-02"))
			}
			continue
		}
		if !ok || !w.From.Equal(c.from) || !w.To.Equal(c.to) {
			t.Errorf("%q at %s = %s – %s (ok %v), want %s – %s", c.text, at.Format("Mon 2006-01-02"),
				w.From.Format("2006-01-02"), w.To.Format("2006-01-02"), ok, c.from.Format("2006-01-02"), c.to.Format("2006-01-02"))
		}
	}
}

// one is the case of a text read as the single day y-m-d.
func one(text string, y int, m time.Month, d int) dateCase {
	from, to := days(y, m, d, 1)
	return dateCase{text, from, to}
}

// span is the case of a text read as [from, to).
func span(text string, from, to time.Time) dateCase { return dateCase{text, from, to} }

// none is the case of a text that names no date the reader may pin down.
func none(text string) dateCase { return dateCase{text: text} }

func month(y int, m time.Month) (time.Time, time.Time) { return date(y, m, 1), date(y, m+1, 1) }

func monthCase(text string, y int, m time.Month) dateCase {
	from, to := month(y, m)
	return dateCase{text, from, to}
}

// Questions are read looking back: a date without its year or direction is the latest
// one not after the asked day. Asked on Wednesday 15 April 2026.
func TestDateWindowForms(t *testing.T) {
	asked := time.Date(2026, 4, 15, 10, 0, 0, 0, time.UTC)
	checkDates(t, recall.DateWindow, asked, []dateCase{
		// Numbers: dots are day first, a year first is year/month/day, a slash is read
		// only when one number cannot be the month (or the text is Japanese: month/day).
		one("who came to the meetup on 07.03.2026?", 2026, 3, 7),
		one("the 7.3.2026 meetup", 2026, 3, 7),
		one("2026/3/7", 2026, 3, 7),
		one("2026.03.07", 2026, 3, 7),
		one("the party on 25/12/2025", 2025, 12, 25),
		one("the party on 12/25/2025", 2025, 12, 25),
		one("what happened on 15/3?", 2026, 3, 15),
		one("what happened on 3/15?", 2026, 3, 15),
		one("7/3に何した？", 2025, 7, 3),
		one("３月７日に何した？", 2026, 3, 7),
		none("what did we do on 7/3/2026?"),
		none("what did we do on 7/3?"),
		none("is the bot up 24/7?"),
		none("who rated it 8/10"),
		none("the 31.04.2026 meetup"),
		// Abbreviated months, and a year kept when it is written.
		one("what did we do on Mar 7", 2026, 3, 7),
		one("7 Mar", 2026, 3, 7),
		one("Sept 3", 2025, 9, 3),
		one("dec. 24th", 2025, 12, 24),
		one("on Jan 2", 2026, 1, 2),
		one("31 Dec 2025", 2025, 12, 31),
		one("March 3, 2024", 2024, 3, 3),
		one("3 March 2024", 2024, 3, 3),
		one("the 3rd of March, 2024", 2024, 3, 3),
		one("what is planned for March 3rd 2027?", 2027, 3, 3),
		none("on 31 April"),
		none("on 29 Feb 2025"),
		// Months with a year, months without, and parts of months.
		monthCase("June 2026", 2026, 6),
		monthCase("what happened in June 2026?", 2026, 6),
		monthCase("jun 2025", 2025, 6),
		monthCase("what happened in Sept, 2025?", 2025, 9),
		monthCase("what happened in Sept?", 2025, 9),
		monthCase("last December", 2025, 12),
		monthCase("next December", 2026, 12),
		span("the last week of June 2026", date(2026, 6, 24), date(2026, 7, 1)),
		span("the last week of June", date(2025, 6, 24), date(2025, 7, 1)),
		span("the last week of last month", date(2026, 3, 25), date(2026, 4, 1)),
		span("the last weekend of February", date(2026, 2, 28), date(2026, 3, 2)),
		span("early June 2025", date(2025, 6, 1), date(2025, 6, 11)),
		// Japanese.
		one("2026年3月7日の集まりには誰が来た？", 2026, 3, 7),
		one("2025年12月31日", 2025, 12, 31),
		monthCase("2026年3月", 2026, 3),
		span("2025年12月の下旬", date(2025, 12, 21), date(2026, 1, 1)),
		span("先月の最後の週に何があった？", date(2026, 3, 25), date(2026, 4, 1)),
		span("3月の最後の週", date(2026, 3, 25), date(2026, 4, 1)),
		// The future, which a question names by itself.
		monthCase("来月の予定は？", 2026, 5),
		span("来月の初め", date(2026, 5, 1), date(2026, 5, 11)),
		one("明日", 2026, 4, 16),
		one("来週の金曜", 2026, 4, 24),
		span("来週", date(2026, 4, 20), date(2026, 4, 27)),
		one("今週の金曜", 2026, 4, 17),
		span("3日後", date(2026, 4, 16), date(2026, 4, 21)),
		one("what's happening tomorrow?", 2026, 4, 16),
		span("next week", date(2026, 4, 20), date(2026, 4, 27)),
		monthCase("next month", 2026, 5),
		one("next Monday", 2026, 4, 20),
		one("this coming Friday", 2026, 4, 17),
		one("what's happening in two days?", 2026, 4, 17),
		none("who finished the raid in two days?"), // a length of time, not a date
		none("what is on next Friday?"),            // this week's Friday or next week's
		none("next weekend"),
		// Weekdays without a direction look back in a question.
		one("what did we do on Friday?", 2026, 4, 10),
		one("the Friday before last", 2026, 4, 3),
	})
}

// Year boundaries and leap days, asked on Friday 2 January 2026 and Friday 1 March 2024.
func TestDateWindowAcrossYearsAndLeapDays(t *testing.T) {
	checkDates(t, recall.DateWindow, time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC), []dateCase{
		monthCase("what did we do last December?", 2025, 12),
		monthCase("in December", 2025, 12),
		monthCase("先月", 2025, 12),
		span("last week", date(2025, 12, 22), date(2025, 12, 29)),
		span("next week", date(2026, 1, 5), date(2026, 1, 12)),
		one("on the 30th", 2025, 12, 30),
		one("two days ago", 2025, 12, 31),
		one("31 Dec", 2025, 12, 31),
	})
	checkDates(t, recall.DateWindow, time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC), []dateCase{
		one("yesterday", 2024, 2, 29),
		one("two days ago", 2024, 2, 28),
		one("29 Feb", 2024, 2, 29),
		one("29.02.2024", 2024, 2, 29),
		one("on the 30th", 2024, 1, 30), // February has none
		span("the last week of February", date(2024, 2, 23), date(2024, 3, 1)),
	})
	checkDates(t, recall.DateWindow, time.Date(2026, 4, 15, 9, 0, 0, 0, time.UTC), []dateCase{
		one("29 Feb", 2024, 2, 29), // the latest year that has one
	})
}

// A memory's dates resolve against when it was said, and a date without its year or
// direction follows the statement's tense. Said on Tuesday 3 March 2026.
func TestReferredDate(t *testing.T) {
	said := time.Date(2026, 3, 3, 18, 0, 0, 0, time.UTC)
	checkDates(t, recall.ReferredDate, said, []dateCase{
		one("two days ago I finished the raid", 2026, 3, 1),
		one("yesterday was fun", 2026, 3, 2),
		one("we played Catan last Friday", 2026, 2, 27),
		one("we played on Friday", 2026, 2, 27),
		one("we'll play on Friday", 2026, 3, 6),
		one("see you Friday", 2026, 3, 6),
		one("Thursday works for me", 2026, 3, 5), // two days ahead against five back
		none("Friday works for me"),              // three days ahead, four back
		one("tomorrow we raid", 2026, 3, 4),
		one("the day after tomorrow", 2026, 3, 5),
		none("next Friday we play"), // this week's Friday or next week's
		one("next Monday we play", 2026, 3, 9),
		one("this coming Friday", 2026, 3, 6),
		span("next week we move", date(2026, 3, 9), date(2026, 3, 16)),
		span("the week after next", date(2026, 3, 16), date(2026, 3, 23)),
		monthCase("next month I start the new job", 2026, 4),
		one("we'll finish in three days", 2026, 3, 6),
		none("we finished it in three days"),
		span("this weekend we'll paint", date(2026, 3, 7), date(2026, 3, 9)),
		span("we painted at the weekend", date(2026, 2, 28), date(2026, 3, 2)),
		// Month and day without a year.
		one("my birthday is 7 March", 2026, 3, 7),
		one("we met on 7 March", 2025, 3, 7),
		one("booked the hall for 7 March", 2026, 3, 7),
		one("I'll be in Berlin on 3 September", 2026, 9, 3),
		none("the tournament is on 3 September"), // six months either way
		monthCase("in June we went to Kyoto", 2025, 6),
		monthCase("we're going to Kyoto in June", 2026, 6),
		monthCase("Kyoto in June", 2026, 6),
		one("on the 5th we'll meet", 2026, 3, 5),
		one("on the 1st we met", 2026, 3, 1),
		// Dates written out whole, and the ambiguous ones.
		one("the meetup on 07.03.2026 was great", 2026, 3, 7),
		one("moved the launch to 2026-04-01", 2026, 4, 1),
		monthCase("the last release was in June 2025", 2025, 6),
		none("see you on 7/3"),
		none("we met on 7/3/2026"),
		none("Catan night is on Friday"), // no tense: Friday is three days ahead and four back
		// Japanese.
		one("明日は休み", 2026, 3, 4),
		one("あした行く", 2026, 3, 4),
		one("おとといクリアした", 2026, 3, 1),
		one("2日前にクリアした", 2026, 3, 1),
		one("来週の金曜に集まろう", 2026, 3, 13),
		span("来週から新しい仕事", date(2026, 3, 9), date(2026, 3, 16)),
		monthCase("来月引っ越す", 2026, 4),
		one("金曜に行った", 2026, 2, 27),
		one("金曜に集まろう", 2026, 3, 6),
		one("金曜に行きたい", 2026, 3, 6),
		one("金曜に行きます", 2026, 3, 6),
		none("金曜"),
		none("また金曜に"),                  // "again on Friday": no tense
		none("ありがとう、金曜ね"),              // ありがとう is not a volitional form
		one("おはよう、金曜に行こう", 2026, 3, 6), // nor おはよう; 行こう is
		one("3月7日に会いましょう", 2026, 3, 7),
		one("3月7日に会った", 2025, 3, 7),
		one("3/7に集まろう", 2026, 3, 7),
		one("2026年3月7日に集まる", 2026, 3, 7),
	})
}

// Said on Saturday 7 March 2026, "next Friday" is the coming one: both readings meet.
func TestReferredDateNextWeekdayFromTheWeekend(t *testing.T) {
	checkDates(t, recall.ReferredDate, time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC), []dateCase{
		one("next Friday we play", 2026, 3, 13),
		span("next weekend", date(2026, 3, 14), date(2026, 3, 16)),
		span("this weekend", date(2026, 3, 7), date(2026, 3, 9)),
		one("Friday was fun", 2026, 3, 6),
		one("Friday", 2026, 3, 6), // yesterday, against six days ahead
	})
}

// Year boundaries and leap days on the memory side.
func TestReferredDateAcrossYearsAndLeapDays(t *testing.T) {
	checkDates(t, recall.ReferredDate, time.Date(2026, 1, 2, 20, 0, 0, 0, time.UTC), []dateCase{
		monthCase("we had a party last December", 2025, 12),
		one("two days ago", 2025, 12, 31),
		one("31 Dec was wild", 2025, 12, 31),
		one("we'll meet on 31 Dec", 2026, 12, 31),
		one("on the 30th we met", 2025, 12, 30),
		monthCase("先月引っ越した", 2025, 12),
	})
	checkDates(t, recall.ReferredDate, time.Date(2025, 12, 31, 20, 0, 0, 0, time.UTC), []dateCase{
		one("tomorrow", 2026, 1, 1),
		span("next week", date(2026, 1, 5), date(2026, 1, 12)),
		one("we'll meet on 2 Jan", 2026, 1, 2),
		monthCase("来月", 2026, 1),
	})
	checkDates(t, recall.ReferredDate, time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC), []dateCase{
		one("yesterday", 2024, 2, 29),
		one("we'll meet on 29 Feb", 2028, 2, 29),
	})
	checkDates(t, recall.ReferredDate, time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC), []dateCase{
		one("tomorrow", 2024, 3, 1),
		one("today is a leap day", 2024, 2, 29),
	})
	checkDates(t, recall.ReferredDate, time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), []dateCase{
		one("we met on 29 Feb", 2024, 2, 29),
		none("we met on 29 Feb 2025"),
	})
	if w, ok := recall.ReferredDate("yesterday", time.Time{}); ok {
		t.Errorf("ReferredDate with no time said = %v, want no date", w)
	}
}

// Whatever people type, the readers do not panic, and a window they give is not empty.
func FuzzDateReaders(f *testing.F) {
	for _, s := range []string{"07.03.2026", "7/3", "the last week of June 2026", "来週の金曜に集まろう", "in 3 weeks",
		"99999999999 days ago", "on the 31st", "29 Feb", "３月７日", "next Friday we'll play", "2026年13月40日"} {
		f.Add(s, int64(1772560800))
	}
	f.Fuzz(func(t *testing.T, text string, unix int64) {
		at := time.Unix(unix%(1<<40), 0).UTC()
		for _, read := range []func(string, time.Time) (recall.Window, bool){recall.DateWindow, recall.ReferredDate} {
			if w, ok := read(text, at); ok && !w.From.Before(w.To) {
				t.Errorf("%q at %v: empty window %v – %v", text, at, w.From, w.To)
			}
		}
	})
}
