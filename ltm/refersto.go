package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// A memory's refers_to and refers_to_end are the span of time its own words name, resolved
// against its created_at (recall.ReferredDate): "the raid moved to next Friday" said on
// Saturday 7 March is Friday 13 March. The date stage of recall places a memory by that span
// rather than by when it was said. The span is a function of two columns and nothing else
// (not the process's time zone, not who wrote it), so every write path computes it the same
// way (referredSpan), the backfill of older rows reproduces it exactly, and an edit
// recomputes it against the same created_at: fixing a typo in "we played on Friday" does not
// move the Friday it was about.

// RepairRefersTo names, in store_repairs on both engines, the backfill of refers_to for the
// memories written before SQLite's migration 0024 and PostgreSQL's 0012.
const RepairRefersTo = repairRefersTo

const repairRefersTo = "fill-refers-to"

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

// fillRefersTo returns a phase that sets each memory's span (live or forgotten, since a
// recovered memory is recalled by it) to what its content and creation time give, counting
// those it changed. A row whose content changed since it was read is left to the write
// that changed it, which stored its own span.
func fillRefersTo(changed *int) repairPhase {
	return func(ctx context.Context, tx *txn, after int64, limit int) (int64, bool, error) {
		type row struct {
			id, created int64
			content     string
			from, to    sql.NullInt64
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, content, created_at, refers_to, refers_to_end FROM memories
			WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
		if err != nil {
			return 0, false, fmt.Errorf("couldn't read memories: %w", err)
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.content, &r.created, &r.from, &r.to); err != nil {
				rows.Close()
				return 0, false, fmt.Errorf("couldn't read memories: %w", err)
			}
			batch = append(batch, r)
		}
		if err := rows.Close(); err != nil {
			return 0, false, fmt.Errorf("couldn't read memories: %w", err)
		}
		for _, r := range batch {
			w := referredSpan(r.content, r.created)
			from, to := spanOf(r.from, r.to)
			if from.Equal(w.From) && to.Equal(w.To) {
				continue
			}
			newFrom, newTo := spanColumns(w)
			n, err := execCount(ctx, tx, `UPDATE memories SET refers_to = ?, refers_to_end = ? WHERE id = ? AND content = ?`,
				newFrom, newTo, r.id, r.content)
			if err != nil {
				return 0, false, fmt.Errorf("couldn't store the date memory %d names: %w", r.id, err)
			}
			*changed += n
		}
		return lastID(batch, func(r row) int64 { return r.id }), len(batch) == limit, nil
	}
}
