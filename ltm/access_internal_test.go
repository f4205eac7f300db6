package ltm

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// A flush of more memories than one write batch holds writes every count, each batch in
// its own transaction.
func TestFlushAccessWritesEveryBatch(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 3*accessWriteBatch + 7
	rememberFillers(t, s, "gAccess", n)
	var ids []int64
	if err := queryEach(ctx, s.read, `SELECT id FROM memories ORDER BY id`, nil, func(rows *sql.Rows) error {
		var id int64
		err := rows.Scan(&id)
		ids = append(ids, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(ids) != n {
		t.Fatalf("%d memories stored, want %d", len(ids), n)
	}
	s.recall.access.record(ids, 1_000)
	s.recall.access.record(ids[:10], 2_000)
	if err := s.Recall.FlushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	var total, moved int
	if err := s.read.QueryRow(`SELECT sum(access_count), sum(accessed_at = 2000) FROM memories`).Scan(&total, &moved); err != nil {
		t.Fatal(err)
	}
	if total != n+10 || moved != n {
		t.Fatalf("after the flush: %d accesses counted (want %d), %d memories accessed at the last time (want %d)", total, n+10, moved, n)
	}
}
