package ltm

import (
	"database/sql"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// A memory's refers_to and refers_to_end are the span of time its own words name, resolved
// against its created_at (recall.ReferredDate): "the raid moved to next Friday" said on
// Saturday 7 March is Friday 13 March. The date stage of recall places a memory by that span
// rather than by when it was said. The span is a function of two columns and nothing else
// (not the process's time zone, not who wrote it), so every write path computes it the same
// way (referredSpan), a backfill of older rows can reproduce it exactly, and an edit
// recomputes it against the same created_at: fixing a typo in "we played on Friday" does not
// move the Friday it was about.

// referredSpan is the span content names, said at created (Unix ms), on the UTC calendar the
// stored times are read back in; the zero Window when it names none, an ambiguous one, or
// the row has no creation time.
func referredSpan(content string, created int64) recall.Window {
	if created == 0 {
		return recall.Window{}
	}
	w, ok := recall.ReferredDate(content, fromMillis(created))
	if !ok {
		return recall.Window{}
	}
	return w
}

// spanColumns are the refers_to and refers_to_end values of w: NULL for no span.
func spanColumns(w recall.Window) (from, to any) {
	if w.IsZero() {
		return nil, nil
	}
	return w.From.UnixMilli(), w.To.UnixMilli()
}

// spanOf reads a stored span back.
func spanOf(from, to sql.NullInt64) (time.Time, time.Time) {
	if !from.Valid || !to.Valid {
		return time.Time{}, time.Time{}
	}
	return time.UnixMilli(from.Int64).UTC(), time.UnixMilli(to.Int64).UTC()
}

// refersToOf is the span a memory names, as recall reads it.
func refersToOf(m *memory.Memory) recall.Window {
	return recall.Window{From: m.RefersTo, To: m.RefersToEnd}
}
