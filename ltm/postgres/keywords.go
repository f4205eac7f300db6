package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kioku-bot/kioku/internal/kwindex"
)

// The keyword leg on PostgreSQL is served as SQLite's is, from the service's in-memory BM25
// index per scope (ltm's keyword indexes over internal/kwindex), with the same documents,
// statistics and scores. Only the change log differs: SQLite's processes read a table the
// triggers fill, here the change feed's memory notices (changes.go) are the log, in commit
// order, and each notice is one position of it. While a scope's index builds, and while the
// feed is down, the keyword leg answers from the database (keywordfallback.go).

// noticeKeep bounds the memory ids the log holds: past it the older half goes. Indexes
// that fell further behind (no keyword query while that many memories changed) are rebuilt,
// and so is a scope whose build outlasted them.
const noticeKeep = 200_000

// noticeLog is the change feed's memory notices as the keyword indexes' change log
// (ltm.ChangeLog): position first+i is the notice whose ids are ids[ends[i-1]:ends[i]].
type noticeLog struct {
	mu    sync.Mutex
	last  int64 // position of the newest notice; 0 before the first
	first int64 // position of the oldest notice held; last+1 when none is
	ids   []int64
	ends  []int

	// commits counts this process's committed write transactions; synced is the count the
	// feed had caught up with at the last sync. A query after a write of this process
	// waits for that write's notices, so it finds what was just written (SyncChanges).
	commits atomic.Int64
	synced  atomic.Int64
	sync    func(ctx context.Context) error
}

func newNoticeLog() *noticeLog { return &noticeLog{first: 1} }

// committed counts a write transaction of this process that committed.
func (l *noticeLog) committed() { l.commits.Add(1) }

// add appends a memory notice.
func (l *noticeLog) add(ids []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	l.ids = append(l.ids, ids...)
	l.ends = append(l.ends, len(l.ids))
	if len(l.ids) <= noticeKeep {
		return
	}
	drop := 0
	for drop < len(l.ends)-1 && len(l.ids)-l.ends[drop] > noticeKeep/2 {
		drop++
	}
	cut := l.ends[drop]
	l.ids = append(l.ids[:0:0], l.ids[cut:]...)
	ends := make([]int, len(l.ends)-drop-1)
	for i := range ends {
		ends[i] = l.ends[drop+1+i] - cut
	}
	l.ends = ends
	l.first += int64(drop + 1)
}

// lost records that notices were missed (the feed was down): every reader behind this
// point starts over.
func (l *noticeLog) lost() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	l.ids, l.ends = nil, nil
	l.first = l.last + 1
}

// Ends returns the newest position and the oldest held, after waiting for the notices of
// this process's own committed writes.
func (l *noticeLog) Ends(ctx context.Context) (last, first int64, err error) {
	if c := l.commits.Load(); c != l.synced.Load() && l.sync != nil {
		if err := l.sync(ctx); err != nil {
			return 0, 0, err
		}
		l.synced.Store(c)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, l.first, nil
}

// Changed returns the memories named by the notices at positions in (from, to].
func (l *noticeLog) Changed(_ context.Context, from, to int64) ([]int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if from+1 < l.first {
		return nil, fmt.Errorf("couldn't read the change feed's notices after %d: %w", from, kwindex.ErrLogTrimmed)
	}
	lo, hi := int(from+1-l.first), int(min(to, l.last)-l.first) // notice indexes, inclusive
	if hi < lo {
		return nil, nil
	}
	start := 0
	if lo > 0 {
		start = l.ends[lo-1]
	}
	seen := map[int64]struct{}{}
	var ids []int64
	for _, id := range l.ids[start:l.ends[hi]] {
		if _, ok := seen[id]; !ok {
			seen[id] = struct{}{}
			ids = append(ids, id)
		}
	}
	return ids, nil
}
