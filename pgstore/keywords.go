package pgstore

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/memory"
)

// The keyword leg on PostgreSQL is served as SQLite's is, from the service's in-memory BM25
// index per scope (ltm's keyword indexes over internal/kwindex), with the same documents,
// statistics and scores. Only the change log differs: SQLite's processes read a table the
// triggers fill, here the change feed's memory notices (changes.go) are the log, in commit
// order, and each notice is one position of it. While a scope's index builds, and while the
// feed is down, the keyword leg answers from the database (recall.go).

// noticeKeep is how many memory ids the log holds; a scope whose build falls further
// behind than that is built again, and the indexes are rebuilt when their own sync does.
const noticeKeep = 200_000

// noticeLog is the change feed's memory notices as the keyword indexes' change log
// (ltm.ChangeLog).
type noticeLog struct {
	mu      sync.Mutex
	last    int64 // position of the newest notice; 0 before the first
	first   int64 // position of the oldest notice held; last+1 when none is
	entries []notice
	held    int // ids in entries

	// commits counts this process's committed write transactions; synced is the count the
	// feed had caught up with at the last sync. A query after a write of this process
	// waits for that write's notices, so it finds what was just written (SyncChanges).
	commits atomic.Int64
	synced  atomic.Int64
	sync    func(ctx context.Context) error
}

type notice struct {
	pos int64
	ids []int64
}

func newNoticeLog() *noticeLog { return &noticeLog{first: 1} }

// committed counts a write transaction of this process that committed.
func (l *noticeLog) committed() { l.commits.Add(1) }

// add appends a memory notice.
func (l *noticeLog) add(ids []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	l.entries = append(l.entries, notice{l.last, ids})
	l.held += len(ids)
	drop := 0
	for l.held > noticeKeep && drop < len(l.entries)-1 {
		l.held -= len(l.entries[drop].ids)
		drop++
	}
	if drop > 0 {
		l.entries = append(l.entries[:0:0], l.entries[drop:]...)
	}
	l.first = l.entries[0].pos
}

// lost records that notices were missed (the feed was down): every reader behind this
// point starts over.
func (l *noticeLog) lost() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	l.entries, l.held = nil, 0
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
	start := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].pos > from })
	seen := map[int64]struct{}{}
	var ids []int64
	for _, e := range l.entries[start:] {
		if e.pos > to {
			break
		}
		for _, id := range e.ids {
			if _, ok := seen[id]; !ok {
				seen[id] = struct{}{}
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// KeywordIndexHolds reports whether any in-memory keyword index holds word; forget-me
// tests use it to prove a member's words left memory too.
func (s *Recall) KeywordIndexHolds(word string) bool { return s.db.core.Recall.KeywordIndexHolds(word) }

// KeywordIndexHas reports whether any in-memory keyword index holds memory id.
func (s *Recall) KeywordIndexHas(id int64) bool { return s.db.core.Recall.KeywordIndexHas(id) }

// WarmKeywordIndex builds the keyword indexes of the given scopes now and waits for them,
// so a benchmark or an operator's warm-up times a ready index rather than its build.
func (s *Recall) WarmKeywordIndex(ctx context.Context, owners ...memory.Owner) error {
	return s.db.core.Recall.WarmKeywordIndex(ctx, owners...)
}
