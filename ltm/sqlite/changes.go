package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// changeTable is SQLite's change log (ltm.ChangeLog): the memory_changes table (migration
// 0012), which triggers fill on every write by any process, so the CLI or an import
// writing to the same file is seen by the next keyword query. Retention trims it
// (ltm.Dialect.ChangeLog).
type changeTable struct {
	read *sql.DB

	mu     sync.Mutex
	ends   *sql.Stmt // endsSQL, prepared on first use
	closed bool
}

// endsSQL reads the newest and oldest sequence numbers. Two subqueries: SQLite answers a
// lone min() or max() of the primary key from the b-tree's ends, but one SELECT with both
// scans the table.
const endsSQL = `SELECT coalesce((SELECT max(seq) FROM memory_changes), 0),
	coalesce((SELECT min(seq) FROM memory_changes), 0)`

// Ends returns the newest and oldest sequence numbers of the change log (0 when it is
// empty), through a statement kept prepared: it runs before every keyword query.
func (c *changeTable) Ends(ctx context.Context) (last, first int64, err error) {
	var row *sql.Row
	if st := c.endsStmt(ctx); st != nil {
		row = st.QueryRowContext(ctx)
	} else {
		row = c.read.QueryRowContext(ctx, endsSQL)
	}
	if err := row.Scan(&last, &first); err != nil {
		return 0, 0, fmt.Errorf("couldn't read the change log: %w", err)
	}
	return last, first, nil
}

// endsStmt returns endsSQL prepared on the readers, preparing it once; nil when the log is
// closed or the statement can't be prepared (Ends then runs it directly).
func (c *changeTable) endsStmt(ctx context.Context) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ends == nil && !c.closed {
		if st, err := c.read.PrepareContext(ctx, endsSQL); err == nil {
			c.ends = st
		}
	}
	return c.ends
}

// Changed returns the memories of the changes with sequence numbers in (from, to].
func (c *changeTable) Changed(ctx context.Context, from, to int64) ([]int64, error) {
	rows, err := c.read.QueryContext(ctx, `SELECT DISTINCT memory_id FROM memory_changes WHERE seq > ? AND seq <= ?`, from, to)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the change log: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("couldn't read the change log: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read the change log: %w", err)
	}
	return ids, nil
}

// close closes the prepared statement; later reads run it directly.
func (c *changeTable) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.ends != nil {
		c.ends.Close()
		c.ends = nil
	}
}
