package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kioku-bot/kioku/ltm"
)

// aloneDB is the hot guild by itself in its own database, open beside the shared one.
type aloneDB struct {
	store  *ltm.Store
	raw    *sql.DB
	path   string
	remove bool // the database goes when closed (not kept)
	closed bool
	recall []time.Duration
	fts    []time.Duration
}

// loadAlone loads the hot guild by itself into a database of its own and closes it.
func (r *run) loadAlone(ctx context.Context, path string, rep *Report) error {
	store, err := r.open(ctx, path)
	if err != nil {
		return err
	}
	r.progress("hot guild alone: loading %d memories", len(r.c.scopes[0].members))
	_, err = r.load(ctx, store, r.c.scopes[0].members, rep)
	return errors.Join(err, store.Close())
}

// openAlone opens the hot guild's own database and warms it as the shared one is warmed.
// Both are opened and warmed once every load is over, so the two meet the queries in the
// same state: the alone guild opened and warmed right after its own load, before the
// shared load wrote gigabytes, answered slower than the shared guild (p50 3.9 against
// 2.8 ms at 1.1M) while the same two files reused were within 1.14 of each other.
func (r *run) openAlone(ctx context.Context, path string) (_ *aloneDB, err error) {
	store, err := r.open(ctx, path)
	if err != nil {
		return nil, err
	}
	a := &aloneDB{store: store, path: path, remove: r.opt.Keep == ""}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	hot := r.owner(0)
	if err := store.Recall.WarmVectors(ctx, hot); err != nil {
		return nil, err
	}
	if err := store.Recall.WarmKeywordIndex(ctx, hot); err != nil {
		return nil, err
	}
	if a.raw, err = openRaw(path); err != nil {
		return nil, err
	}
	for _, q := range r.c.queries[:min(20, len(r.c.queries))] {
		if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// time times q's recall and plain FTS5 query in the hot guild's own database.
func (a *aloneDB) time(ctx context.Context, r *run, q query) error {
	t := time.Now()
	if _, err := a.store.Recall.Search(ctx, r.search(q, false)); err != nil {
		return err
	}
	a.recall = append(a.recall, time.Since(t))
	t = time.Now()
	if err := ftsOnly(ctx, a.raw, q.text, ""); err != nil {
		return err
	}
	a.fts = append(a.fts, time.Since(t))
	return nil
}

// close closes the database (removing it unless kept); a second call does nothing.
func (a *aloneDB) close() error {
	if a == nil || a.closed {
		return nil
	}
	a.closed = true
	if a.raw != nil {
		a.raw.Close()
	}
	if err := a.store.Close(); err != nil {
		return fmt.Errorf("couldn't close bench store: %w", err)
	}
	if a.remove {
		return os.Remove(a.path)
	}
	return nil
}
