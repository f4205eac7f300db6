package memory

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ValidateFilters checks the filters of a search, so a bad value is refused with a message
// that names it instead of silently matching nothing: an unknown type, a score or
// importance outside 0–1, an author id that is not a Discord id, or a since after until.
func (q *SearchQuery) ValidateFilters() error {
	for _, t := range q.Types {
		if !t.Valid() {
			return Errorf(EINVALID, "Unknown memory type %q: use one of %s.", string(t), typeList())
		}
	}
	if q.MinScore < 0 || q.MinScore > 1 || q.MinScore != q.MinScore {
		return Errorf(EINVALID, "min_score must be between 0 and 1 (got %g).", q.MinScore)
	}
	if q.ImportanceMin < 0 || q.ImportanceMin > 1 || q.ImportanceMin != q.ImportanceMin {
		return Errorf(EINVALID, "importance_min must be between 0 and 1 (got %g).", q.ImportanceMin)
	}
	if q.AuthorID != "" && !isSnowflake(q.AuthorID) {
		return Errorf(EINVALID, "author must be a user id (digits only), not %q.", q.AuthorID)
	}
	for _, st := range q.Include {
		if !st.Shelved() {
			return Errorf(EINVALID, "include takes superseded or archived, not %q.", string(st))
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && q.Since.After(q.Until) {
		return Errorf(EINVALID, "since (%s) is after until (%s): nothing can match.",
			q.Since.UTC().Format(time.RFC3339), q.Until.UTC().Format(time.RFC3339))
	}
	return nil
}

func isSnowflake(s string) bool {
	if len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// DateFormats describes the dates ParseSearchDate accepts, for help texts and errors.
const DateFormats = "a date (2025-06-01), a date and time (2025-06-01T18:00:00Z) or an age (3d, 2w, 12h: that long ago)"

// ParseSearchDate reads the since/until value of a search filter at now. It accepts a date
// (YYYY-MM-DD, in UTC), an RFC 3339 time, or an age: a number with h (hours), d (days) or
// w (weeks), meaning that long before now. A bare date as the end of a range (endOfDay)
// means the end of that day, so until:2025-06-01 includes everything said on June 1st. An
// empty value gives the zero time (no bound); anything else is an EINVALID error naming
// the accepted forms, with field as the filter's name.
func ParseSearchDate(field, value string, now time.Time, endOfDay bool) (time.Time, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Millisecond)
		}
		return t, nil
	}
	if n := len(v); n >= 2 {
		unit := unicode.ToLower(rune(v[n-1]))
		if k, err := strconv.Atoi(v[:n-1]); err == nil && k >= 0 && k <= 100000 {
			switch unit {
			case 'h':
				return now.Add(-time.Duration(k) * time.Hour), nil
			case 'd':
				return now.AddDate(0, 0, -k), nil
			case 'w':
				return now.AddDate(0, 0, -7*k), nil
			}
		}
	}
	return time.Time{}, Errorf(EINVALID, "%s %q is not a date: give %s.", field, value, DateFormats)
}

// HiddenStates are the shelved states q leaves out: those it does not Include. The slice
// may be shared (ShelvedStates itself, for a query that includes none): read it only.
func (q *SearchQuery) HiddenStates() []State {
	if len(q.Include) == 0 {
		return ShelvedStates
	}
	out := make([]State, 0, len(ShelvedStates))
	for _, st := range ShelvedStates {
		if !slices.Contains(q.Include, st) {
			out = append(out, st)
		}
	}
	return out
}
