package recall

import (
	"regexp"
	"time"
	"unicode"
)

var (
	reISO = regexp.MustCompile(`\b(\d{4})-(\d{1,2})-(\d{1,2})\b`)
	// reYMD is year first, as Japan writes it: "2026/3/7", "2026.03.07".
	reYMD = regexp.MustCompile(`\b(\d{4})[/.](\d{1,2})[/.](\d{1,2})\b`)
	// reDMY is day first with dots, as Europe writes it: "07.03.2026".
	reDMY = regexp.MustCompile(`\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b`)
	// reSlash is "7/3", "25/12/2025", "12/25/2025": day first in Europe, month first in
	// the United States and Japan.
	reSlash = regexp.MustCompile(`\b(\d{1,2})/(\d{1,2})(?:/(\d{4}))?\b`)
)

// readNumericDate reads a date written in numbers: "2024-03-03", "2026/3/7", "07.03.2026",
// "25/12/2025", "3/15". A dotted date without a year ("7.3") is left alone, as it is as
// likely a version or a decimal.
func readNumericDate(c calendar, s string, k cue) (Window, found) {
	if k&cueDigit == 0 || k&(cueSlash|cueDot|cueDash) == 0 {
		return Window{}, notFound
	}
	if k&cueDash != 0 {
		if m := reISO.FindStringSubmatch(s); m != nil {
			if w, f := c.dayIn(m[1], monthOf(m[2]), atoi(m[3])); f != notFound {
				return w, f
			}
		}
	}
	if k&(cueSlash|cueDot) != 0 {
		if m := reYMD.FindStringSubmatch(s); m != nil {
			if w, f := c.dayIn(m[1], monthOf(m[2]), atoi(m[3])); f != notFound {
				return w, f
			}
		}
	}
	if k&cueDot != 0 {
		if m := reDMY.FindStringSubmatch(s); m != nil {
			if w, f := c.dayIn(m[3], monthOf(m[2]), atoi(m[1])); f != notFound {
				return w, f
			}
		}
	}
	if k&cueSlash != 0 {
		for _, m := range reSlash.FindAllStringSubmatch(s, 4) {
			if m[0] == "24/7" {
				continue // "open 24/7"
			}
			mo, d, ok := slashOrder(s, atoi(m[1]), atoi(m[2]))
			if !ok {
				continue
			}
			if w, f := c.dayIn(m[3], mo, d); f != notFound {
				return w, f
			}
		}
	}
	return Window{}, notFound
}

// slashOrder reads which of a slash date's numbers a and b is the month. A number over 12
// is the day; when both could be the month ("7/3") the date is read only in Japanese text,
// which writes month/day, and is otherwise not a date: it could be 7 March or 3 July, or a
// score or a fraction, and a guess would mislead.
func slashOrder(s string, a, b int) (time.Month, int, bool) {
	switch {
	case a >= 1 && a <= 12 && b > 12:
		return time.Month(a), b, true
	case b >= 1 && b <= 12 && a > 12:
		return time.Month(b), a, true
	case a >= 1 && a <= 12 && b >= 1 && b <= 12 && hasJapanese(s):
		return time.Month(a), b, true
	}
	return 0, 0, false
}

// monthOf reads a month written as a number; 0 (no month) when it is not one.
func monthOf(s string) time.Month {
	if m := atoi(s); m >= 1 && m <= 12 {
		return time.Month(m)
	}
	return 0
}

// hasJapanese reports whether s holds kana or kanji.
func hasJapanese(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) {
			return true
		}
	}
	return false
}
