package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

// forgetWatchEvery is how often a running bot looks for forget-mes other processes did,
// besides before every turn.
const forgetWatchEvery = 5 * time.Second

// forgetWatch carries forget-me across processes on one database (README "Scaling out").
// Short-term memory is in-process: a member who says "forget me" through one shard's process
// may still have recent messages in another's, in the channels of the servers it runs. Every
// forget-me records a fence in the database; the watch clears from this process's short-term
// memory every member fenced since it last looked, and before each turn it makes sure it has
// seen every fence recorded so far. On SQLite it reads the fences (ltm.ForgottenSince) before
// each turn and every forgetWatchEvery; on PostgreSQL the store's change feed (LISTEN/NOTIFY)
// pushes each forget-me as it commits, and before each turn the watch waits for the feed to
// have delivered everything committed until then. The store's other in-process state needs no
// watch here: the keyword index reads the change log before each query, the pinned-memory
// cache compares the store's pinned version, recall loads every candidate from the database,
// and PostgreSQL's vector index follows the same feed, so an erased memory is never returned.
type forgetWatch struct {
	// read returns the fences since a time (polling stores); nil with a feed.
	read func(ctx context.Context, since time.Time) ([]memory.ForgetFence, error)
	// feed pushes fences (PostgreSQL); nil when polling.
	feed  changeFeed
	short *stm.Store
	// forgetQueries empties the recall query cache, whose keys are texts people searched.
	forgetQueries func()
	log           *slog.Logger

	mu sync.Mutex
	// since is when this process started: short-term memory is empty before it.
	since time.Time
	// applied is the fence time already applied per member, so a member is cleared once per
	// forget-me, not again on every look (which would drop what they said afterwards).
	applied map[string]time.Time
}

func newForgetWatch(store *backend, short *stm.Store, log *slog.Logger) *forgetWatch {
	w := &forgetWatch{read: store.fences, feed: store.changes, short: short, forgetQueries: store.Recall.ForgetCachedQueries,
		log: log, since: store.Now().Add(-time.Second), applied: map[string]time.Time{}}
	if w.feed != nil {
		w.read = nil
		w.feed.OnForget(func(userID string, at time.Time) {
			w.mu.Lock()
			defer w.mu.Unlock()
			if at.After(w.since) {
				w.apply(memory.ForgetFence{UserID: userID, ForgottenAt: at})
			}
		})
	}
	return w
}

// catchUp clears from short-term memory every member forgotten since the last look. The
// lock is held through the read so two looks never apply one fence twice.
func (w *forgetWatch) catchUp(ctx context.Context) error {
	if w.feed != nil {
		// The feed applies each fence as it arrives; wait until it has brought everything
		// committed so far.
		return w.feed.Sync(ctx)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fences, err := w.read(ctx, w.since)
	if err != nil {
		return err
	}
	for _, f := range fences {
		w.apply(f)
	}
	// Fences older than the store keeps them are gone from the table; so are they here.
	for id, at := range w.applied {
		if time.Since(at) > 48*time.Hour {
			delete(w.applied, id)
		}
	}
	return nil
}

// apply clears one fenced member's short-term memory, once per fence. w.mu is held.
func (w *forgetWatch) apply(f memory.ForgetFence) {
	if at, ok := w.applied[f.UserID]; ok && !f.ForgottenAt.After(at) {
		return
	}
	w.applied[f.UserID] = f.ForgottenAt
	// The cache is keyed by query text, not by who asked: all of it goes.
	w.forgetQueries()
	if n := w.short.ClearUser(f.UserID); n > 0 {
		w.log.Info("forgot a member's short-term memory after a forget-me elsewhere", "user_id", f.UserID, "entries", n)
	}
}

// run looks every forgetWatchEvery until ctx ends, for short-term memory read outside turns
// (/stm).
func (w *forgetWatch) run(ctx context.Context) {
	if w.feed != nil {
		return // the feed pushes every fence as it commits
	}
	t := time.NewTicker(forgetWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := w.catchUp(ctx); err != nil && ctx.Err() == nil {
				w.log.Warn("couldn't look for forget-mes of other processes", "err", err)
			}
		}
	}
}

// turner is next with a look before every turn, so a turn never reads short-term memory a
// forget-me elsewhere has erased.
func (w *forgetWatch) turner(next bot.Turner) bot.Turner { return watchedTurner{next, w} }

type watchedTurner struct {
	next bot.Turner
	w    *forgetWatch
}

func (t watchedTurner) Turn(ctx context.Context, req chat.Request) (chat.Reply, error) {
	if err := t.w.catchUp(ctx); err != nil {
		// Not answering would not protect anyone better than answering: the look failed
		// because the database did, and the turn reads it too.
		t.w.log.Warn("couldn't look for forget-mes of other processes before a turn", "err", err)
	}
	return t.next.Turn(ctx, req)
}
