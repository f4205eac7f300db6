package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// rememberFillers writes n memories of about 300 bytes each to guild g.
func rememberFillers(t *testing.T, s *Store, g string, n int) {
	t.Helper()
	mems := make([]memory.Memory, n)
	for i := range mems {
		mems[i] = memory.Memory{Scope: memory.ScopeServer, GuildID: g, Type: memory.TypeFact,
			Content: fmt.Sprintf("note %d: the %s committee keeps minutes of every meeting, the budget, who volunteered, "+
				"which venue was booked and what was decided about the spring festival's food stalls and music", i, g)}
	}
	if _, err := s.Transfer.RememberMany(context.Background(), mems, "test"); err != nil {
		t.Fatal(err)
	}
}

// A flush of more memories than one write batch holds writes every count, each batch in
// its own transaction.
func TestFlushAccessWritesEveryBatch(t *testing.T) {
	ctx := context.Background()
	s, err := OpenTestStore(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 3*accessWriteBatch + 7
	rememberFillers(t, s, "gAccess", n)
	ids := memoryIDs(t, s)
	if len(ids) != n {
		t.Fatalf("%d memories stored, want %d", len(ids), n)
	}
	// Pending counts are set directly: record would start a flush in the background as
	// soon as a batch is full (TestFullAccessBatchFlushesEarly), splitting them in two.
	a := &s.recall.access
	a.mu.Lock()
	for _, id := range ids {
		a.pending[id]++
	}
	for _, id := range ids[:10] {
		a.pending[id]++
	}
	a.last = 2_000
	a.mu.Unlock()
	if err := s.Recall.FlushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	var total, moved int
	if err := s.read.db.QueryRow(`SELECT sum(access_count), sum(accessed_at = 2000) FROM memories`).Scan(&total, &moved); err != nil {
		t.Fatal(err)
	}
	if total != n+10 || moved != n {
		t.Fatalf("after the flush: %d accesses counted (want %d), %d memories accessed at the last time (want %d)", total, n+10, moved, n)
	}
}

// A full batch of pending counts is written at once, not at the next tick of the flush
// interval (15 s by default): a crash loses at most one batch, and the flush a chat turn
// may meet is one small transaction.
func TestFullAccessBatchFlushesEarly(t *testing.T) {
	ctx := context.Background()
	s, err := OpenTestStore(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rememberFillers(t, s, "gEarly", accessFlushBatch+5)
	ids := memoryIDs(t, s)
	s.recall.access.record(ids[:accessFlushBatch-1], 1_000)
	counted := func() int {
		var n int
		if err := s.read.db.QueryRow(`SELECT count(*) FROM memories WHERE access_count > 0`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := counted(); n != 0 {
		t.Fatalf("%d memories counted before the batch was full, want 0", n)
	}
	s.recall.access.record(ids[accessFlushBatch-1:accessFlushBatch], 1_000)
	// The flush interval is far longer than this wait: only the early flush can pass.
	deadline := time.Now().Add(DefaultAccessFlushInterval / 3)
	for counted() < accessFlushBatch {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d memories counted: the full batch was not flushed early", counted(), accessFlushBatch)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// memoryIDs is the id of every memory of s, in order.
func memoryIDs(t *testing.T, s *Store) []int64 {
	t.Helper()
	var ids []int64
	if err := queryEach(context.Background(), s.read, `SELECT id FROM memories ORDER BY id`, nil, func(rows *sql.Rows) error {
		var id int64
		err := rows.Scan(&id)
		ids = append(ids, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}
