package postgres

import "context"

// SetCJKScanMax lowers the scope size above which CJK search is narrowed by trigrams, so a
// test reaches that path without 20,000 memories.
func (s *Store) SetCJKScanMax(n int) { s.db.cjkScanMax = n }

// TrigramsCJK reports whether the database's pg_trgm indexes CJK characters.
func (s *Store) TrigramsCJK() bool { return s.db.trigramsCJK }

// ListenerPID is the backend process id of the change feed's connection.
func (s *Store) ListenerPID() uint32 {
	f := s.changes
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == nil {
		return 0
	}
	return f.conn.PgConn().PID()
}

// HoldReconnect keeps the change feed from reconnecting until release is called, so a test
// can write while the feed is down.
func (s *Store) HoldReconnect() (release func()) {
	f := s.changes
	hold := make(chan struct{})
	f.mu.Lock()
	f.hold = hold
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.hold = nil
		f.mu.Unlock()
		close(hold)
	}
}

// WaitFeedDown returns once the change feed has noticed that its connection is gone.
func (s *Store) WaitFeedDown(ctx context.Context) error {
	f := s.changes
	for {
		f.mu.Lock()
		up, moved := f.up, f.moved
		f.mu.Unlock()
		if !up {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// StaleVectors counts the memories of scope key waiting to be read again by its next recall.
func (s *Store) StaleVectors(key string) int { return s.core.RecallFeed().Stale(key) }
