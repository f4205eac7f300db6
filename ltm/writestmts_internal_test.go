package ltm

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// A bulk write of at least one full batch keeps the statements of full batches prepared
// for the next ones; a smaller one leaves them unprepared, and writes the same rows.
func TestBulkWritesKeepTheirStatementsPrepared(t *testing.T) {
	ctx := context.Background()
	s, err := OpenTestStore(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(from, n int) {
		t.Helper()
		mems := make([]memory.Memory, n)
		for i := range mems {
			mems[i] = memory.Memory{Scope: memory.ScopeServer, GuildID: "gPrep", Type: memory.TypeFact,
				Content: fmt.Sprintf("note %d about the spring festival", from+i)}
		}
		res, err := s.Transfer.RememberMany(ctx, mems, "test")
		if err != nil {
			t.Fatal(err)
		}
		if res.Created != n {
			t.Fatalf("created %d of %d", res.Created, n)
		}
	}
	kept := func() (n int) {
		s.stmts.mu.Lock()
		defer s.stmts.mu.Unlock()
		for _, q := range bulkQueries() {
			if s.stmts.m[q] != nil {
				n++
			}
		}
		return n
	}
	write(0, insertRowsPerStatement-1)
	if n := kept(); n != 0 {
		t.Fatalf("%d bulk statements prepared after a write smaller than a batch", n)
	}
	write(insertRowsPerStatement, 2*insertRowsPerStatement+5)
	if n := kept(); n != len(bulkQueries()) {
		t.Fatalf("%d of %d bulk statements prepared after full batches", n, len(bulkQueries()))
	}
	write(10*insertRowsPerStatement, insertRowsPerStatement)
	want := 4*insertRowsPerStatement + 4
	var memories, created int
	if err := s.read.db.QueryRow(`SELECT (SELECT count(*) FROM memories WHERE scope_key = 'g:gPrep'),
		(SELECT count(*) FROM memory_history WHERE action = ? AND version = 1)`, memory.ActionCreate).Scan(&memories, &created); err != nil {
		t.Fatal(err)
	}
	if memories != want || created != want {
		t.Fatalf("%d memories and %d creation history rows, want %d of each", memories, created, want)
	}
}
