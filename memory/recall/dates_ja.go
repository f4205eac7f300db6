package recall

import (
	"regexp"
	"strings"
	"time"
)

// jaPartPattern names a part of a month: its start, middle, end or last week.
const jaPartPattern = `(初め|はじめ|頭|上旬|中旬|半ば|下旬|終わり|末|最後の週|最終週)?`

var (
	reJaYMD     = regexp.MustCompile(`(\d{4})年(\d{1,2})月(\d{1,2})日`)
	reJaYM      = regexp.MustCompile(`(\d{4})年(\d{1,2})月(?:の)?` + jaPartPattern)
	reJaMD      = regexp.MustCompile(`(\d{1,2})月(\d{1,2})日`)
	reJaMonth   = regexp.MustCompile(`(\d{1,2})月(?:の)?` + jaPartPattern)
	reJaAgo     = regexp.MustCompile(`(\d+)(日|週間|か月|ヶ月|カ月|ヵ月)(?:くらい|ほど|ぐらい)?(前|後)`)
	reJaRelPart = regexp.MustCompile(`(先々月|先月|今月|再来月|来月)(?:の)?` + jaPartPattern)
)

// jaWeekdays are the Japanese weekdays, in order so that a text naming two reads the same
// way every time.
var jaWeekdays = []struct {
	name string
	wd   time.Weekday
}{{"日曜", time.Sunday}, {"月曜", time.Monday}, {"火曜", time.Tuesday}, {"水曜", time.Wednesday},
	{"木曜", time.Thursday}, {"金曜", time.Friday}, {"土曜", time.Saturday}}

// jaKanaDays are the days people write in kana, by their distance from today.
var jaKanaDays = []struct {
	name string
	days int
}{{"おととい", -2}, {"あさって", 2}, {"きのう", -1}, {"あした", 1}}

// jaWeekday is the first weekday s names.
func jaWeekday(s string) (time.Weekday, bool) {
	first, wd := -1, time.Sunday
	for _, w := range jaWeekdays {
		if i := strings.Index(s, w.name); i >= 0 && (first < 0 || i < first) {
			first, wd = i, w.wd
		}
	}
	return wd, first >= 0
}

// readJaNamedDate reads a Japanese date that names its month: "2026年3月7日", "2026年3月",
// "3月7日", "3月の下旬".
func readJaNamedDate(c calendar, s string, k cue) (Window, found) {
	if k&cueJapanese == 0 || k&cueDigit == 0 || !strings.Contains(s, "月") {
		return Window{}, notFound
	}
	if m := reJaYMD.FindStringSubmatch(s); m != nil {
		if w, f := c.dayIn(m[1], monthOf(m[2]), atoi(m[3])); f != notFound {
			return w, f
		}
	}
	if m := reJaYM.FindStringSubmatch(s); m != nil {
		if mo := monthOf(m[2]); mo != 0 {
			return part(time.Date(atoi(m[1]), mo, 1, 0, 0, 0, 0, c.loc), m[3]), resolved
		}
	}
	if m := reJaMD.FindStringSubmatch(s); m != nil {
		if w, f := c.dayIn("", monthOf(m[1]), atoi(m[2])); f != notFound {
			return w, f
		}
	}
	if m := reJaMonth.FindStringSubmatch(s); m != nil {
		if mo := monthOf(m[1]); mo != 0 {
			start, ok := c.month(mo)
			return partOf(start, ok, m[2])
		}
	}
	return Window{}, notFound
}

// readJaRelativeDate reads a Japanese date relative to the reference day: "3日前", "2週間後",
// "先月の下旬", "来月", "昨日", "明日", "先週の金曜", "来週の金曜", "週末", "金曜".
func readJaRelativeDate(c calendar, s string, k cue) (Window, found) {
	if k&cueJapanese == 0 {
		return Window{}, notFound
	}
	today, week := c.today, weekStart(c.today)
	if m := reJaAgo.FindStringSubmatch(s); m != nil {
		return c.jaAgoOrAhead(s, atoi(m[1]), m[2], m[3] == "後"), resolved
	}
	if m := reJaRelPart.FindStringSubmatch(s); m != nil {
		start := c.thisMonth().AddDate(0, jaMonthOffset(m[1]), 0)
		if m[1] == "今月" && m[2] == "" {
			return c.current(start, start.AddDate(0, 1, 0)), resolved
		}
		return part(start, m[2]), resolved
	}
	wd, named := jaWeekday(s)
	has := func(w string) bool { return strings.Contains(s, w) }
	switch {
	case has("一昨日"):
		return spanDays(today.AddDate(0, 0, -2), 1), resolved
	case has("明後日"):
		return spanDays(today.AddDate(0, 0, 2), 1), resolved
	case has("昨日"), has("昨夜"), has("昨晩"):
		return spanDays(today.AddDate(0, 0, -1), 1), resolved
	case has("明日"):
		return spanDays(today.AddDate(0, 0, 1), 1), resolved
	}
	for _, d := range jaKanaDays {
		if has(d.name) {
			return spanDays(today.AddDate(0, 0, d.days), 1), resolved
		}
	}
	switch {
	case has("先々週"):
		return spanDays(week.AddDate(0, 0, -14), 7), resolved
	case has("再来週"):
		return spanDays(week.AddDate(0, 0, 14), 7), resolved
	case has("先週末"):
		return spanDays(c.lastWeekday(time.Saturday), 2), resolved
	case has("来週末"):
		return spanDays(week.AddDate(0, 0, 12), 2), resolved
	case has("今週末"):
		return spanDays(week.AddDate(0, 0, 5), 2), resolved
	case has("先週"), has("来週"), has("今週"):
		switch {
		case has("先週"):
			week = week.AddDate(0, 0, -7)
		case has("来週"):
			week = week.AddDate(0, 0, 7)
		case !named:
			return c.current(week, week.AddDate(0, 0, 7)), resolved
		}
		if named {
			return spanDays(week.AddDate(0, 0, (int(wd)+6)%7), 1), resolved
		}
		return spanDays(week, 7), resolved
	case has("今日"), has("今朝"), has("今夜"), has("今晩"):
		return spanDays(today, 1), resolved
	case has("週末"):
		return weekendOf(c.weekend())
	case named:
		return oneDay(c.weekday(wd))
	}
	return Window{}, notFound
}

// jaAgoOrAhead is "3日前" or "3日後" (sign by ahead): a day or two exactly, more days give
// or take two, weeks and months as in English; "2週間前の日曜日" is the named day in that
// week.
func (c calendar) jaAgoOrAhead(s string, n int, unit string, ahead bool) Window {
	sign := -1
	if ahead {
		sign = 1
	}
	switch unit {
	case "日":
		t := c.today.AddDate(0, 0, sign*n)
		if n <= 2 {
			return spanDays(t, 1)
		}
		return Window{t.AddDate(0, 0, -2), t.AddDate(0, 0, 3)}
	case "週間":
		if wd, ok := jaWeekday(s); ok {
			ws := weekStart(c.today.AddDate(0, 0, sign*7*n))
			return spanDays(ws.AddDate(0, 0, (int(wd)+6)%7), 1)
		}
		return c.agoOrAhead(n, sign, "week")
	}
	return c.agoOrAhead(n, sign, "month")
}

// jaMonthOffset is how many months from this one 先々月, 先月, 今月, 来月 or 再来月 lies.
func jaMonthOffset(name string) int {
	switch name {
	case "先々月":
		return -2
	case "先月":
		return -1
	case "来月":
		return 1
	case "再来月":
		return 2
	}
	return 0
}
