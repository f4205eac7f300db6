package ltm

import (
	"context"
	"path/filepath"
	"testing"
)

// TestBookkeepingIsNotCountedAsAWrite: InWriteTx sees a caller's write transaction but not
// the store's own background bookkeeping, which runs at any moment beside a caller's model
// call.
func TestBookkeepingIsNotCountedAsAWrite(t *testing.T) {
	s, err := OpenTestStore(context.Background(), filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		name  string
		run   func(context.Context, func(*txn) error) error
		count bool
	}{{"write", s.withWriteTx, true}, {"bookkeeping", s.withBookkeepingTx, false}} {
		var seen bool
		if err := c.run(t.Context(), func(*txn) error { seen = s.InWriteTx(); return nil }); err != nil {
			t.Fatal(err)
		}
		if seen != c.count {
			t.Errorf("%s transaction: InWriteTx %v inside, want %v", c.name, seen, c.count)
		}
		if s.InWriteTx() {
			t.Errorf("%s transaction: InWriteTx still true after it ended", c.name)
		}
	}
}
