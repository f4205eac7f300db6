package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/kioku-bot/kioku/ltm"
)

// The change feed keeps a process's in-memory state current with what other processes on
// the database write. Triggers (migration 0005) NOTIFY on every change recall or the bot
// keeps in memory, naming scope keys and ids only; each Store LISTENs on one dedicated
// connection and, per notice, takes the changed memories out of its vector index (the next
// recall of their scope reads them again: ltm.RecallFeed), empties its query vector cache on a
// forget-me, and hands the notice to the hooks registered with OnChange (cmd/kioku clears
// short-term memory there). When the connection drops, notices sent meanwhile are lost:
// the feed reconnects with backoff and resyncs, dropping every resident scope and cached
// query and re-reading the forget-me fences, so nothing stale survives the gap.

// ChangeKind says what a Change is about.
type ChangeKind int

const (
	// MemoriesChanged: the memories IDs of scope ScopeKey were written, edited, forgotten,
	// erased, moved or given a vector.
	MemoriesChanged ChangeKind = iota + 1
	// MemberForgotten: member UserID was forgotten (forget-me) at At, by any process.
	MemberForgotten
	// UserSettingsChanged: member UserID's settings (privacy, cross-server use) changed.
	UserSettingsChanged
	// GuildSettingsChanged: server GuildID's settings changed.
	GuildSettingsChanged
	// ChangesResynced: the feed reconnected after losing its connection; changes made
	// meanwhile were not announced one by one, so every cache of what the database holds
	// must be dropped. The forget-mes of the gap are announced (MemberForgotten) before it.
	ChangesResynced
)

// Change is one notice of the change feed. Every hook sees the same IDs: read them, don't
// change them.
type Change struct {
	Kind     ChangeKind
	ScopeKey string
	IDs      []int64
	UserID   string
	GuildID  string
	At       time.Time
}

// Reconnect backoff of the change feed, and how long Open waits for its first notice.
const (
	feedRetryMin  = 100 * time.Millisecond
	feedRetryMax  = 5 * time.Second
	feedCheckWait = 10 * time.Second
)

type changeFeed struct {
	d       *db
	cfg     *pgx.ConnConfig
	channel string
	cancel  context.CancelFunc
	done    chan struct{}

	mu        sync.Mutex
	hooks     []func(Change)
	conn      *pgx.Conn
	up        bool
	moved     chan struct{}            // closed and replaced whenever up changes
	waiters   map[string]chan struct{} // SyncChanges tokens
	forgotten map[string]int64         // fence time (unix ms) announced per member
	hold      chan struct{}            // tests: reconnecting waits until it is closed
}

// listen connects the change feed and starts its loop: when it returns, every change
// committed afterwards reaches this store.
func (s *db) listen(ctx context.Context, cfg *pgx.ConnConfig) error {
	// The triggers name the channel after the schema of the memories table.
	var channel string
	if err := s.pool.QueryRow(ctx, `SELECT kioku_change_channel(n.nspname) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'memories'::regclass`).Scan(&channel); err != nil {
		return fmt.Errorf("couldn't find the store's change channel: %w", err)
	}
	f := &changeFeed{d: s, cfg: cfg.Copy(), channel: channel, done: make(chan struct{}),
		moved: make(chan struct{}), waiters: map[string]chan struct{}{}, forgotten: map[string]int64{}}
	conn, err := f.connect(ctx)
	if err != nil {
		return err
	}
	// Fences recorded before this process started concern no state it holds.
	fences, err := f.fences(ctx)
	if err != nil {
		conn.Close(context.Background())
		return err
	}
	f.forgotten = fences
	f.setConn(conn)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.cancel = cancel
	s.changes = f
	// A keyword query does not wait for a feed that is down: the database answers it.
	s.notices.sync = func(ctx context.Context) error { return f.sync(ctx, false) }
	go f.run(runCtx, conn)
	return nil
}

// connect opens the feed's connection and listens on the store's channel.
func (f *changeFeed) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, f.cfg)
	if err != nil {
		return nil, fmt.Errorf("couldn't connect the change feed: %w", err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{f.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("couldn't listen for changes: %w", err)
	}
	return conn, nil
}

// fences reads every forget-me fence the database keeps (a day's: ltm.ForgetFenceKeep).
func (f *changeFeed) fences(ctx context.Context) (map[string]int64, error) {
	rows, err := f.d.read.QueryContext(ctx, `SELECT user_id, forgotten_at FROM forget_fences`)
	if err != nil {
		return nil, fmt.Errorf("couldn't read forget-me fences: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			id string
			at int64
		)
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("couldn't read forget-me fence: %w", err)
		}
		out[id] = at
	}
	return out, rows.Err()
}

// run receives notices until ctx ends, reconnecting whenever the connection drops.
func (f *changeFeed) run(ctx context.Context, conn *pgx.Conn) {
	defer close(f.done)
	for {
		err := f.receive(ctx, conn)
		f.setConn(nil)
		conn.Close(context.Background())
		if ctx.Err() != nil {
			return
		}
		slog.Warn("change feed: lost its connection; reconnecting", "err", err)
		if conn = f.reconnect(ctx); conn == nil {
			return
		}
		f.setConn(conn)
		slog.Info("change feed: reconnected; dropped in-memory state that may have missed changes")
	}
}

func (f *changeFeed) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		f.handle(n.Payload)
	}
}

// reconnect connects again with backoff and resyncs; nil when ctx ended first.
func (f *changeFeed) reconnect(ctx context.Context) *pgx.Conn {
	wait := feedRetryMin
	for {
		f.mu.Lock()
		hold := f.hold
		f.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-ctx.Done():
				return nil
			}
		}
		conn, err := f.connect(ctx)
		if err == nil {
			if err = f.resync(ctx); err == nil {
				return conn
			}
			conn.Close(context.Background())
		}
		if ctx.Err() != nil {
			return nil
		}
		slog.Warn("change feed: couldn't reconnect", "err", err, "retry_in", wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil
		}
		wait = min(2*wait, feedRetryMax)
	}
}

// resync drops what may have missed changes while the feed was down and announces the
// forget-mes of the gap, then ChangesResynced. The feed listens again before it runs, so
// no change falls between the two; if the fences can't be read, the feed reconnects again
// rather than leave a forget-me of the gap unannounced.
func (f *changeFeed) resync(ctx context.Context) error {
	f.d.core.RecallFeed().Missed()
	f.d.notices.lost()
	fences, err := f.fences(ctx)
	if err != nil {
		return err
	}
	for id, at := range fences {
		f.noteForgotten(id, at)
	}
	f.emit(Change{Kind: ChangesResynced})
	return nil
}

// handle applies one notice (see migration 0005 for the payloads).
func (f *changeFeed) handle(payload string) {
	kind, rest, _ := strings.Cut(payload, " ")
	switch kind {
	case "m":
		list, key, ok := strings.Cut(rest, " ")
		if !ok {
			break
		}
		ids := make([]int64, 0, strings.Count(list, ",")+1)
		for _, s := range strings.Split(list, ",") {
			if id, err := strconv.ParseInt(s, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
		f.d.core.RecallFeed().MemoriesChanged(key, ids)
		f.d.notices.add(ids)
		f.emit(Change{Kind: MemoriesChanged, ScopeKey: key, IDs: ids})
		return
	case "f":
		ms, user, ok := strings.Cut(rest, " ")
		at, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil {
			break
		}
		f.noteForgotten(user, at)
		return
	case "u":
		f.emit(Change{Kind: UserSettingsChanged, UserID: rest})
		return
	case "g":
		f.emit(Change{Kind: GuildSettingsChanged, GuildID: rest})
		return
	case "s":
		f.mu.Lock()
		if w, ok := f.waiters[rest]; ok {
			close(w)
			delete(f.waiters, rest)
		}
		f.mu.Unlock()
		return
	}
	slog.Warn("change feed: ignored a notice it does not understand", "payload_bytes", len(payload))
}

// noteForgotten announces a member's forget-me fence once per fence: the query vector
// cache (keyed by what people searched) is emptied, and the hooks are told.
func (f *changeFeed) noteForgotten(user string, at int64) {
	f.mu.Lock()
	seen, ok := f.forgotten[user]
	if ok && at <= seen {
		f.mu.Unlock()
		return
	}
	f.forgotten[user] = at
	// Fences older than the store keeps them are gone from the table; so are they here.
	for id, t := range f.forgotten {
		if at-t > 2*ltm.ForgetFenceKeep.Milliseconds() {
			delete(f.forgotten, id)
		}
	}
	f.mu.Unlock()
	f.d.core.RecallFeed().ForgetCachedQueries()
	f.emit(Change{Kind: MemberForgotten, UserID: user, At: time.UnixMilli(at).UTC()})
}

func (f *changeFeed) emit(c Change) {
	f.mu.Lock()
	hooks := f.hooks
	f.mu.Unlock()
	for _, h := range hooks {
		h(c)
	}
}

// setConn records the feed's connection (nil: down) and wakes whoever waits on the state.
func (f *changeFeed) setConn(conn *pgx.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conn, f.up = conn, conn != nil
	close(f.moved)
	f.moved = make(chan struct{})
}

// isUp reports whether the feed is connected, so every change reaches this process.
func (f *changeFeed) isUp() bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.up
}

// stop ends the feed and closes its connection.
func (f *changeFeed) stop() {
	if f == nil {
		return
	}
	f.cancel()
	<-f.done
}

// OnChange registers fn to be called with every change notice the store receives, its own
// writes' included, in commit order, on the feed's goroutine: fn must return quickly and
// must not wait for the feed (SyncChanges). The store has already applied each notice to
// its own state when fn runs. cmd/kioku clears short-term memory and its caches here.
func (s *Store) OnChange(fn func(Change)) {
	f := s.changes
	f.mu.Lock()
	f.hooks = append(f.hooks, fn)
	f.mu.Unlock()
}

// SyncChanges returns once every change committed before it was called has been applied
// by this store and handed to its OnChange hooks (a notice of its own makes the round
// trip: notices arrive in commit order). While the feed is reconnecting it waits for the
// feed to be back, which drops every cache anyway.
func (s *Store) SyncChanges(ctx context.Context) error { return s.changes.sync(ctx, true) }

// errFeedDown says the change feed is reconnecting, so what other processes write may not
// have reached this one.
var errFeedDown = errors.New("the change feed is reconnecting")

// sync is SyncChanges. While the feed is down it waits for it to be back when wait is set,
// and returns errFeedDown otherwise.
func (f *changeFeed) sync(ctx context.Context, wait bool) error {
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return fmt.Errorf("couldn't sync changes: %w", err)
	}
	token := hex.EncodeToString(raw[:])
	for {
		f.mu.Lock()
		up, moved := f.up, f.moved
		var w chan struct{}
		if up {
			w = make(chan struct{})
			f.waiters[token] = w
		}
		f.mu.Unlock()
		if !up && !wait {
			return fmt.Errorf("couldn't sync changes: %w", errFeedDown)
		}
		if !up {
			select {
			case <-moved:
				continue
			case <-ctx.Done():
				return fmt.Errorf("couldn't sync changes: %w", context.Cause(ctx))
			}
		}
		_, err := f.d.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, f.channel, "s "+token)
		if err == nil {
			select {
			case <-w:
				return nil
			case <-moved: // the connection dropped: the notice may be lost
			case <-ctx.Done():
				err = context.Cause(ctx)
			}
		}
		f.mu.Lock()
		delete(f.waiters, token)
		f.mu.Unlock()
		if err != nil {
			return fmt.Errorf("couldn't sync changes: %w", err)
		}
	}
}
