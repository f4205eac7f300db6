package postgres

import (
	"errors"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/internal/kwindex"
)

// The notice log hands out the memories of a range of notices once each, drops its older
// half past noticeKeep ids, and after a lost stretch says that every earlier reader must
// start over.
func TestNoticeLog(t *testing.T) {
	ctx := t.Context()
	l := newNoticeLog()
	if last, first, err := l.Ends(ctx); err != nil || last != 0 || first != 1 {
		t.Fatalf("empty log: ends %d %d %v", last, first, err)
	}
	l.add([]int64{1, 2})
	l.add([]int64{2, 3})
	l.add([]int64{4})
	if got, err := l.Changed(ctx, 0, 3); err != nil || !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Errorf("changed in (0, 3]: %v %v", got, err)
	}
	if got, err := l.Changed(ctx, 1, 2); err != nil || !slices.Equal(got, []int64{2, 3}) {
		t.Errorf("changed in (1, 2]: %v %v", got, err)
	}
	if got, err := l.Changed(ctx, 3, 3); err != nil || len(got) != 0 {
		t.Errorf("changed in (3, 3]: %v %v", got, err)
	}

	big := make([]int64, 300)
	const notices = noticeKeep/300 + 2
	for range notices {
		l.add(big)
	}
	last, first, _ := l.Ends(ctx)
	if len(l.ids) > noticeKeep || first <= 1 || last != 3+notices {
		t.Fatalf("after %d ids: %d held, ends %d %d", 5+300*notices, len(l.ids), last, first)
	}
	if _, err := l.Changed(ctx, 0, last); !errors.Is(err, kwindex.ErrLogTrimmed) {
		t.Errorf("changes the log no longer holds: %v, want ErrLogTrimmed", err)
	}
	if _, err := l.Changed(ctx, first-1, last); err != nil {
		t.Errorf("changes the log holds: %v", err)
	}

	l.lost()
	last2, first2, _ := l.Ends(ctx)
	if last2 != last+1 || first2 != last2+1 {
		t.Errorf("after a lost stretch: ends %d %d, want %d %d", last2, first2, last+1, last+2)
	}
	if _, err := l.Changed(ctx, last, last2); !errors.Is(err, kwindex.ErrLogTrimmed) {
		t.Errorf("a reader from before the lost stretch: %v, want ErrLogTrimmed", err)
	}
}
