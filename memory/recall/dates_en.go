package recall

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// monthPattern matches an English month's name or its usual abbreviation ("mar", "sept").
const monthPattern = `(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?`

// yearPattern is an optional year after a date or a month: "3 March 2024", "March 3, 2024".
const yearPattern = `(?:,? ((?:19|20)\d\d)\b)?`

var (
	weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
		"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}
	counts = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
		"a couple of": 2, "couple of": 2, "a few": 3, "few": 3}

	reDayMonth  = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)?(?: of)? ` + monthPattern + yearPattern)
	reMonthDay  = regexp.MustCompile(`\b` + monthPattern + ` (\d{1,2})(?:st|nd|rd|th)?\b` + yearPattern)
	reMonthYear = regexp.MustCompile(`\b` + monthPattern + `,? ((?:19|20)\d\d)\b`)
	rePart      = regexp.MustCompile(`\b(early|mid|late|(?:the )?(?:start|beginning|end|middle) of|the (?:first|second|last) week(?:end)? of)[ -](?:(this month|last month|next month|the month)\b|` + monthPattern + yearPattern + `)`)
	reMonthRel  = regexp.MustCompile(`\b(last|next) ` + monthPattern)
	reMonthOnly = regexp.MustCompile(`\b(?:in|during|back in) (jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b`)
	reOnThe     = regexp.MustCompile(`\bon the (\d{1,2})(?:st|nd|rd|th)\b`)
	reAgo       = regexp.MustCompile(`\b(\d+|a couple of|couple of|a few|few|an|a|one|two|three|four|five|six) (day|week|month)s? ago\b`)
	reInUnits   = regexp.MustCompile(`\bin (\d+|a couple of|a few|an|a|one|two|three|four|five|six) (day|week|month)s?\b`)
	reWeekday   = regexp.MustCompile(`\b(last |this past |this coming |coming |next |on |the |this )?(sunday|monday|tuesday|wednesday|thursday|friday|saturday)( before last| night| morning| evening)?\b`)
)

// monthByName are the months' full English names ("Jan" may be a person's name).
var monthByName = map[string]time.Month{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
	"july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12}

// monthByPrefix reads a month from the first three letters of its English name.
func monthByPrefix(name string) time.Month {
	if len(name) >= 3 {
		if m, ok := monthNames[name[:3]]; ok {
			return m
		}
	}
	return 0
}

// atoi reads a number the patterns matched as digits.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// dayIn is day d of month m in year (a matched year, or none for the occurrence the
// calendar leans to). A month that is not one (13) means the text was not a date; a day the
// month lacks ("31 April", "29 Feb 2025") is a date named wrong, and reading another date
// from the text would be a guess.
func (c calendar) dayIn(year string, m time.Month, d int) (Window, found) {
	if m < time.January || m > time.December {
		return Window{}, notFound
	}
	if year == "" {
		if d < 1 || d > daysIn(2000, m) { // 2000 has a 29 February
			return Window{}, ambiguous
		}
		return oneDay(c.yearly(m, d))
	}
	t, ok := c.date(atoi(year), m, d)
	return oneDay(t, ok)
}

// monthIn is the first day of month m in year, or of the occurrence the calendar leans to.
func (c calendar) monthIn(year string, m time.Month) (time.Time, bool) {
	if year == "" {
		return c.month(m)
	}
	return time.Date(atoi(year), m, 1, 0, 0, 0, 0, c.loc), true
}

// relMonth is the first day of "last month", "this month" or "next month".
func (c calendar) relMonth(name string) time.Time {
	switch name {
	case "last month":
		return c.thisMonth().AddDate(0, -1, 0)
	case "next month":
		return c.thisMonth().AddDate(0, 1, 0)
	}
	return c.thisMonth()
}

// readEnNamedDate reads an English date that names its month or day: "3 March", "Mar 7",
// "March 3rd, 2024", "31 Dec 2025", "early March", "the last week of June 2026",
// "June 2026", "last December", "on the 14th".
func readEnNamedDate(c calendar, s string, k cue) (Window, found) {
	if k&cueMonth != 0 && k&cueDigit != 0 {
		if m := reDayMonth.FindStringSubmatch(s); m != nil {
			if w, f := c.dayIn(m[3], monthByPrefix(m[2]), atoi(m[1])); f != notFound {
				return w, f
			}
		}
		if m := reMonthDay.FindStringSubmatch(s); m != nil {
			if w, f := c.dayIn(m[3], monthByPrefix(m[1]), atoi(m[2])); f != notFound {
				return w, f
			}
		}
	}
	if k&cuePart != 0 && k&(cueMonth|cueMonthWord) != 0 {
		if m := rePart.FindStringSubmatch(s); m != nil {
			if m[2] != "" {
				return part(c.relMonth(m[2]), m[1]), resolved
			}
			start, ok := c.monthIn(m[4], monthByPrefix(m[3]))
			return partOf(start, ok, m[1])
		}
	}
	if k&cueMonth != 0 && k&cueDigit != 0 {
		if m := reMonthYear.FindStringSubmatch(s); m != nil {
			return part(time.Date(atoi(m[2]), monthByPrefix(m[1]), 1, 0, 0, 0, 0, c.loc), ""), resolved
		}
	}
	if k&cueMonth != 0 && k&cueLastNext != 0 {
		if m := reMonthRel.FindStringSubmatch(s); m != nil {
			if m[1] == "last" {
				return part(c.lastMonthNamed(monthByPrefix(m[2])), ""), resolved
			}
			return part(c.nextMonthNamed(monthByPrefix(m[2])), ""), resolved
		}
	}
	if k&cueDigit != 0 && strings.Contains(s, "on the ") {
		if m := reOnThe.FindStringSubmatch(s); m != nil {
			if d := atoi(m[1]); d >= 1 && d <= 31 {
				return oneDay(c.monthly(d))
			}
		}
	}
	return Window{}, notFound
}

// readEnRelativeDate reads an English date relative to the reference day: "two weeks ago",
// "in three days", "yesterday", "tomorrow", "last weekend", "next week", "last Friday",
// "next Friday", "on Friday", "in March".
func readEnRelativeDate(c calendar, s string, k cue) (Window, found) {
	if k&cueAgo != 0 {
		if m := reAgo.FindStringSubmatch(s); m != nil {
			return c.agoOrAhead(count(m[1]), -1, m[2]), resolved
		}
	}
	// "in three days" is a date in a plan, but a length of time in the past tense ("we
	// finished it in three days").
	if k&cueIn != 0 && k&cueUnit != 0 {
		if m := reInUnits.FindStringSubmatch(s); m != nil && tenseOf(s) != leanPast {
			return c.agoOrAhead(count(m[1]), 1, m[2]), resolved
		}
	}
	if k&cueRelative != 0 {
		if w, f := readEnDeictic(c, s); f != notFound {
			return w, f
		}
	}
	if k&cueWeekday != 0 {
		if m := reWeekday.FindStringSubmatch(s); m != nil {
			wd := weekdays[m[2]]
			switch m[1] {
			case "last ", "this past ":
				d := c.lastWeekday(wd)
				if m[3] == " before last" {
					d = d.AddDate(0, 0, -7)
				}
				return spanDays(d, 1), resolved
			case "next ":
				return oneDay(c.nextWeekday(wd))
			case "this coming ", "coming ":
				return spanDays(c.comingWeekday(wd), 1), resolved
			}
			if m[3] == " before last" {
				return spanDays(c.lastWeekday(wd).AddDate(0, 0, -7), 1), resolved
			}
			return oneDay(c.weekday(wd))
		}
	}
	if k&cueMonth != 0 {
		if m := reMonthOnly.FindStringSubmatch(s); m != nil {
			start, ok := c.month(monthByPrefix(m[1]))
			return partOf(start, ok, "")
		}
	}
	return Window{}, notFound
}

// count reads "two", "a few" or "3" as a number.
func count(s string) int {
	if n, ok := counts[s]; ok {
		return n
	}
	return atoi(s)
}

// readEnDeictic reads the English words that name a day, week or month by where it lies from
// the reference day.
func readEnDeictic(c calendar, s string) (Window, found) {
	today, has := c.today, func(w string) bool { return strings.Contains(s, w) }
	switch {
	case has("day before yesterday"):
		return spanDays(today.AddDate(0, 0, -2), 1), resolved
	case has("day after tomorrow"):
		return spanDays(today.AddDate(0, 0, 2), 1), resolved
	case has("yesterday"), has("last night"):
		return spanDays(today.AddDate(0, 0, -1), 1), resolved
	case has("tomorrow"), has("tmrw"):
		return spanDays(today.AddDate(0, 0, 1), 1), resolved
	case has("weekend before last"):
		return spanDays(c.lastWeekday(time.Saturday).AddDate(0, 0, -7), 2), resolved
	case has("last weekend"):
		return spanDays(c.lastWeekday(time.Saturday), 2), resolved
	case has("next weekend"):
		sat, ok := c.nextWeekday(time.Saturday)
		return weekendOf(sat, ok)
	case has("this weekend"), has("the weekend"):
		return weekendOf(c.weekend())
	case has("week before last"):
		return spanDays(weekStart(today).AddDate(0, 0, -14), 7), resolved
	case has("week after next"):
		return spanDays(weekStart(today).AddDate(0, 0, 14), 7), resolved
	case has("last week"):
		return spanDays(weekStart(today).AddDate(0, 0, -7), 7), resolved
	case has("next week"):
		return spanDays(weekStart(today).AddDate(0, 0, 7), 7), resolved
	case has("this week"):
		return c.current(weekStart(today), weekStart(today).AddDate(0, 0, 7)), resolved
	case has("last month"):
		return part(c.relMonth("last month"), ""), resolved
	case has("next month"):
		return part(c.relMonth("next month"), ""), resolved
	case has("this month"):
		return c.current(c.thisMonth(), c.thisMonth().AddDate(0, 1, 0)), resolved
	case has("today"), has("tonight"), has("this morning"), has("this afternoon"), has("this evening"):
		return spanDays(today, 1), resolved
	}
	return Window{}, notFound
}

// weekendOf is the two days from Saturday sat, or the answer that the weekend could not be
// pinned down.
func weekendOf(sat time.Time, ok bool) (Window, found) {
	if !ok {
		return Window{}, ambiguous
	}
	return spanDays(sat, 2), resolved
}
