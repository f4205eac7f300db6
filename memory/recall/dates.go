package recall

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"
)

// Window is a span of time a question points at ("last weekend", "3 March", "先週"):
// [From, To). Memories created inside it are what the question is about.
type Window struct {
	From, To time.Time
}

// IsZero reports whether w is empty (the question names no date).
func (w Window) IsZero() bool { return w.From.IsZero() && w.To.IsZero() }

// Contains reports whether t falls inside w.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.From) && t.Before(w.To) }

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

const day = 24 * time.Hour

var (
	weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
		"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}
	jaWeekdays = map[string]time.Weekday{"日曜": time.Sunday, "月曜": time.Monday, "火曜": time.Tuesday,
		"水曜": time.Wednesday, "木曜": time.Thursday, "金曜": time.Friday, "土曜": time.Saturday}
	counts = map[string]int{"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
		"a couple of": 2, "couple of": 2, "a few": 3, "few": 3}

	reISO       = regexp.MustCompile(`\b(\d{4})-(\d{1,2})-(\d{1,2})\b`)
	reDayMonth  = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)? (?:of )?(january|february|march|april|may|june|july|august|september|october|november|december)\b`)
	reMonthDay  = regexp.MustCompile(`\b(january|february|march|april|may|june|july|august|september|october|november|december) (\d{1,2})(?:st|nd|rd|th)?\b`)
	reOnThe     = regexp.MustCompile(`\bon the (\d{1,2})(?:st|nd|rd|th)\b`)
	reAgo       = regexp.MustCompile(`\b(\d+|a couple of|couple of|a few|few|a|one|two|three|four|five|six) (day|week|month)s? ago\b`)
	rePart      = regexp.MustCompile(`\b(early|mid|late|the start of|the beginning of|the end of|start of|beginning of|end of|the middle of|middle of|the first week of|the second week of|the second weekend of|the first weekend of)[ -](january|february|march|april|may|june|july|august|september|october|november|december|this month|last month)\b`)
	reMonthOnly = regexp.MustCompile(`\b(?:in|during|back in) (january|february|march|april|june|july|august|september|october|november|december)\b`)
	reWeekday   = regexp.MustCompile(`\b(last |this past |on |the )?(sunday|monday|tuesday|wednesday|thursday|friday|saturday)( before last| night| morning| evening)?\b`)
	reJaMD      = regexp.MustCompile(`(\d{1,2})月(\d{1,2})日`)
	reJaAgo     = regexp.MustCompile(`(\d+)(日|週間|か月|ヶ月|カ月)(?:くらい|ほど|ぐらい)?前`)
	reJaMonth   = regexp.MustCompile(`(\d{1,2})月(?:の)?(初め|はじめ|頭|上旬|中旬|半ば|下旬|終わり|末)?`)
	reJaRelPart = regexp.MustCompile(`(先月|今月)(?:の)?(初め|はじめ|頭|上旬|中旬|半ば|下旬|終わり|末)?`)
)

var monthByName = map[string]time.Month{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
	"july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12}

// DateWindow reads the date a question points at, relative to when it is asked (asked,
// the zero time meaning now): absolute dates ("3 March", "March 3rd", "on the 14th",
// "2024-03-03", "3月3日") and relative ones ("yesterday", "last weekend", "two weeks ago",
// "last month", "early March", "the first week of January", "先週", "昨日"). A month or day
// without a year is the latest one not after asked. ok is false when the text names no date.
func DateWindow(text string, asked time.Time) (Window, bool) {
	if asked.IsZero() {
		asked = time.Now()
	}
	s := strings.ToLower(norm.NFKC.String(text))
	cal := newCalendar(asked)
	if w, ok := cal.absoluteDate(s); ok {
		return w, true
	}
	if w, ok := cal.relativeDate(s); ok {
		return w, true
	}
	return jaDateWindow(s, cal)
}

// calendar reckons dates relative to when a question is asked.
type calendar struct {
	asked, today time.Time
	loc          *time.Location
}

func newCalendar(asked time.Time) calendar {
	loc := asked.Location()
	return calendar{asked: asked, today: time.Date(asked.Year(), asked.Month(), asked.Day(), 0, 0, 0, 0, loc), loc: loc}
}

// spanDays is the n days from from.
func spanDays(from time.Time, n int) Window { return Window{from, from.AddDate(0, 0, n)} }

// monthStart is the first day of the latest month m not after the asked time.
func (c calendar) monthStart(m time.Month) time.Time {
	y := c.asked.Year()
	if m > c.asked.Month() {
		y--
	}
	return time.Date(y, m, 1, 0, 0, 0, 0, c.loc)
}

// relMonth is the first day of the month named: "last month", "this month" or a month's
// name.
func (c calendar) relMonth(name string) time.Time {
	cur := time.Date(c.asked.Year(), c.asked.Month(), 1, 0, 0, 0, 0, c.loc)
	if name == "last month" {
		return cur.AddDate(0, -1, 0)
	}
	if name == "this month" {
		return cur
	}
	return c.monthStart(monthByName[name])
}

// part is the part p ("early", "the first week of", "下旬"…) of the month starting at
// start; the whole month for an empty or unknown p.
func (c calendar) part(start time.Time, p string) Window {
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
	case "the first weekend of", "the second weekend of":
		sat := start
		for sat.Weekday() != time.Saturday {
			sat = sat.AddDate(0, 0, 1)
		}
		if p == "the second weekend of" {
			sat = sat.AddDate(0, 0, 7)
		}
		return spanDays(sat, 2)
	}
	return Window{start, end}
}

// lastWeekday is the latest day before today that falls on wd.
func (c calendar) lastWeekday(wd time.Weekday) time.Time {
	back := (int(c.today.Weekday()) - int(wd) + 7) % 7
	if back == 0 {
		back = 7
	}
	return c.today.AddDate(0, 0, -back)
}

// weekStart is the Monday of the week holding t.
func weekStart(t time.Time) time.Time { return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7)) }

// absoluteDate reads a date written out: "2024-03-03", "3月3日", "3 March", "March 3rd",
// "on the 14th".
func (c calendar) absoluteDate(s string) (Window, bool) {
	asked, loc, days, monthStart := c.asked, c.loc, spanDays, c.monthStart
	if m := reISO.FindStringSubmatch(s); m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		if mo >= 1 && mo <= 12 && d >= 1 && d <= 31 {
			return days(time.Date(y, time.Month(mo), d, 0, 0, 0, 0, loc), 1), true
		}
	}
	if m := reJaMD.FindStringSubmatch(s); m != nil {
		mo, _ := strconv.Atoi(m[1])
		d, _ := strconv.Atoi(m[2])
		if mo >= 1 && mo <= 12 && d >= 1 && d <= 31 {
			return days(monthStart(time.Month(mo)).AddDate(0, 0, d-1), 1), true
		}
	}
	if m := reDayMonth.FindStringSubmatch(s); m != nil {
		d, _ := strconv.Atoi(m[1])
		if d >= 1 && d <= 31 {
			return days(monthStart(monthByName[m[2]]).AddDate(0, 0, d-1), 1), true
		}
	}
	if m := reMonthDay.FindStringSubmatch(s); m != nil {
		d, _ := strconv.Atoi(m[2])
		if d >= 1 && d <= 31 {
			return days(monthStart(monthByName[m[1]]).AddDate(0, 0, d-1), 1), true
		}
	}
	if m := reOnThe.FindStringSubmatch(s); m != nil {
		d, _ := strconv.Atoi(m[1])
		if d >= 1 && d <= 31 {
			start := time.Date(asked.Year(), asked.Month(), 1, 0, 0, 0, 0, loc)
			if d > asked.Day() {
				start = start.AddDate(0, -1, 0)
			}
			return days(start.AddDate(0, 0, d-1), 1), true
		}
	}
	return Window{}, false
}

// relativeDate reads an English date relative to the asked day: "early March", "two weeks
// ago", "yesterday", "last weekend", "last Friday", "in March".
func (c calendar) relativeDate(s string) (Window, bool) {
	today, days, monthStart, relMonth, part, lastWeekday := c.today, spanDays, c.monthStart, c.relMonth, c.part, c.lastWeekday
	if m := rePart.FindStringSubmatch(s); m != nil {
		return part(relMonth(m[2]), m[1]), true
	}
	if m := reAgo.FindStringSubmatch(s); m != nil {
		n, ok := counts[m[1]]
		if !ok {
			n, _ = strconv.Atoi(m[1])
		}
		switch m[2] {
		case "day":
			return days(today.AddDate(0, 0, -n), 1), true
		case "week":
			c := today.AddDate(0, 0, -7*n)
			return Window{c.AddDate(0, 0, -4), c.AddDate(0, 0, 4)}, true
		default:
			c := today.AddDate(0, -n, 0)
			return Window{c.AddDate(0, 0, -10), c.AddDate(0, 0, 10)}, true
		}
	}
	switch {
	case strings.Contains(s, "day before yesterday"):
		return days(today.AddDate(0, 0, -2), 1), true
	case strings.Contains(s, "yesterday"), strings.Contains(s, "last night"):
		return days(today.AddDate(0, 0, -1), 1), true
	case strings.Contains(s, "weekend before last"):
		return days(lastWeekday(time.Saturday).AddDate(0, 0, -7), 2), true
	case strings.Contains(s, "last weekend"), strings.Contains(s, "the weekend"), strings.Contains(s, "this weekend"):
		return days(lastWeekday(time.Saturday), 2), true
	case strings.Contains(s, "week before last"):
		return days(weekStart(today).AddDate(0, 0, -14), 7), true
	case strings.Contains(s, "last week"):
		return days(weekStart(today).AddDate(0, 0, -7), 7), true
	case strings.Contains(s, "this week"):
		return Window{weekStart(today), today.AddDate(0, 0, 1)}, true
	case strings.Contains(s, "last month"):
		return part(relMonth("last month"), ""), true
	case strings.Contains(s, "this month"):
		return Window{relMonth("this month"), today.AddDate(0, 0, 1)}, true
	case strings.Contains(s, "today"), strings.Contains(s, "tonight"), strings.Contains(s, "this morning"):
		return days(today, 1), true
	}
	if m := reWeekday.FindStringSubmatch(s); m != nil {
		d := lastWeekday(weekdays[m[2]])
		if m[3] == " before last" {
			d = d.AddDate(0, 0, -7)
		}
		return days(d, 1), true
	}
	if m := reMonthOnly.FindStringSubmatch(s); m != nil {
		return part(monthStart(monthByName[m[1]]), ""), true
	}
	return Window{}, false
}

// jaDateWindow reads a Japanese date relative to the asked day: "3日前", "先月の下旬",
// "3月", "昨日", "先週の金曜", "週末".
func jaDateWindow(s string, c calendar) (Window, bool) {
	today, days, monthStart, part, lastWeekday := c.today, spanDays, c.monthStart, c.part, c.lastWeekday
	if m := reJaAgo.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		var c time.Time
		switch m[2] {
		case "日":
			c = today.AddDate(0, 0, -n)
			if n <= 2 {
				return days(c, 1), true
			}
			return Window{c.AddDate(0, 0, -2), c.AddDate(0, 0, 3)}, true
		case "週間":
			c = today.AddDate(0, 0, -7*n)
			// "2週間前の日曜日": the named day in that week.
			for name, wd := range jaWeekdays {
				if strings.Contains(s, name) {
					ws := weekStart(c)
					return days(ws.AddDate(0, 0, (int(wd)+6)%7), 1), true
				}
			}
			return Window{c.AddDate(0, 0, -4), c.AddDate(0, 0, 4)}, true
		default:
			c = today.AddDate(0, -n, 0)
			return Window{c.AddDate(0, 0, -10), c.AddDate(0, 0, 10)}, true
		}
	}
	if m := reJaRelPart.FindStringSubmatch(s); m != nil {
		start := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, today.Location())
		if m[1] == "先月" {
			start = start.AddDate(0, -1, 0)
		}
		if m[1] == "今月" && m[2] == "" {
			return Window{start, today.AddDate(0, 0, 1)}, true
		}
		return part(start, m[2]), true
	}
	if m := reJaMonth.FindStringSubmatch(s); m != nil {
		mo, _ := strconv.Atoi(m[1])
		if mo >= 1 && mo <= 12 {
			return part(monthStart(time.Month(mo)), m[2]), true
		}
	}
	switch {
	case strings.Contains(s, "一昨日"), strings.Contains(s, "おととい"):
		return days(today.AddDate(0, 0, -2), 1), true
	case strings.Contains(s, "昨日"), strings.Contains(s, "昨夜"), strings.Contains(s, "昨晩"), strings.Contains(s, "きのう"):
		return days(today.AddDate(0, 0, -1), 1), true
	case strings.Contains(s, "先々週"):
		return days(weekStart(today).AddDate(0, 0, -14), 7), true
	case strings.Contains(s, "先週末"):
		return days(lastWeekday(time.Saturday), 2), true
	case strings.Contains(s, "先週"):
		ws := weekStart(today).AddDate(0, 0, -7)
		for name, wd := range jaWeekdays {
			if strings.Contains(s, name) {
				return days(ws.AddDate(0, 0, (int(wd)+6)%7), 1), true
			}
		}
		return days(ws, 7), true
	case strings.Contains(s, "今週"):
		return Window{weekStart(today), today.AddDate(0, 0, 1)}, true
	case strings.Contains(s, "先月"):
		return part(time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, today.Location()).AddDate(0, -1, 0), ""), true
	case strings.Contains(s, "今日"), strings.Contains(s, "今朝"):
		return days(today, 1), true
	case strings.Contains(s, "週末"):
		return days(lastWeekday(time.Saturday), 2), true
	}
	for name, wd := range jaWeekdays {
		if strings.Contains(s, name) {
			return days(lastWeekday(wd), 1), true
		}
	}
	return Window{}, false
}
