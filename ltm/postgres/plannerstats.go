package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// The planner's statistics of the memories table decide how every lookup in it is run, and
// until the table is first analyzed they are wrong in a way that matters: its partial indexes
// (0001_schema.sql), built on the empty table, count no rows, so a walk of a whole scope
// (memories_scope_live) looks as cheap as one index entry. Autovacuum fixes that, but only
// after a minute or more, not at all where it is off, and not after a restore (pg_restore
// does not analyze); meanwhile every write's duplicate lookup read the whole scope and a
// bulk load slowed to 30 writes a second. So the store checks the statistics itself
// whenever the table may have doubled since it last looked, and analyzes the table when they
// describe less than half of it. That is one catalog read per doubling per process, and an
// ANALYZE (a sample of at most 30,000 rows) only where autovacuum has not kept up; the
// ANALYZE also makes every connection plan its prepared statements on memories anew.

// analyzeFrom is the table size, in memory ids, below which the statistics are left to
// autovacuum: a scope of a few hundred rows reads fast whatever the plan.
const analyzeFrom = 1000

// analyzeTimeout bounds the check and the ANALYZE; a write that crossed a doubling waits
// for them, so the writes after it are planned with them.
const analyzeTimeout = 30 * time.Second

// plannerStats is what this process knows of the memories table's statistics.
type plannerStats struct {
	// covered is about the newest memory id the statistics were last seen to describe: the
	// table's rows when they were gathered, or the id that found them recent enough.
	covered atomic.Int64
	// checking is set while one write checks them; the others go on without waiting.
	checking atomic.Bool
}

// keepPlannerStats is called after a write committed new memories: when the newest of
// them has an id at least twice what the statistics were last seen to cover, it reads how
// many rows the statistics describe and analyzes the table if that is less than half. A
// failure is logged, never returned: the write has committed, and only speed is at stake.
func (s *db) keepPlannerStats(ctx context.Context, mems ...*memory.Memory) {
	var newest int64
	for _, m := range mems {
		if m != nil {
			newest = max(newest, m.ID)
		}
	}
	st := &s.stats
	if newest < analyzeFrom || newest < 2*st.covered.Load() || !st.checking.CompareAndSwap(false, true) {
		return
	}
	defer st.checking.Store(false)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), analyzeTimeout)
	defer cancel()
	covered, err := s.refreshPlannerStats(ctx, newest)
	if err != nil {
		slog.Warn("couldn't refresh the planner's statistics of memories", "err", err)
		// Not again before the table doubles: a role that may not analyze would otherwise
		// try on every write.
		covered = newest
	}
	st.covered.Store(covered)
}

// refreshPlannerStats analyzes memories unless its statistics describe at least half of
// rows, and returns the rows they describe now.
func (s *db) refreshPlannerStats(ctx context.Context, rows int64) (int64, error) {
	var described float64 // reltuples: -1 before the first ANALYZE or VACUUM
	if err := s.read.QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass`).Scan(&described); err != nil {
		return 0, fmt.Errorf("couldn't read the statistics of memories: %w", err)
	}
	if 2*int64(described) >= rows {
		return max(int64(described), rows/2), nil
	}
	// Without ownership of the table PostgreSQL skips it with a warning, not an error.
	if _, err := s.read.ExecContext(ctx, `ANALYZE memories`); err != nil {
		return 0, fmt.Errorf("couldn't analyze memories: %w", err)
	}
	return rows, nil
}
