package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// restart reopens the database after the load's memory was handed back to the operating
// system: start-up to the first answer, the cold guilds' first recall, then every scope
// once, and the resident memory that took.
func (r *run) restart(ctx context.Context, path string, rep *Report) (*ltm.Store, error) {
	r.c.release()
	runtime.GC()
	debug.FreeOSMemory()
	if r.opt.Restarted != nil {
		r.opt.Restarted()
	}
	base, _ := procStatus()
	rep.BaseRSSMB = mb(base.rss)
	rep.RSSPeak = resetPeakRSS() == nil
	r.progress("reopening the database")

	start := time.Now()
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	rep.OpenDBMs = ms(time.Since(start))
	r.setup(store)
	err = r.afterRestart(ctx, store, path, start, base, rep)
	if err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// afterRestart measures the reopened store: the first answer (start-up since start), the
// cold guilds, every scope once, and the resident memory above base that took.
func (r *run) afterRestart(ctx context.Context, store *ltm.Store, path string, start time.Time, base status, rep *Report) error {
	first := r.c.queries[0]
	if _, err := store.Recall.Search(ctx, r.search(first, false)); err != nil {
		return err
	}
	rep.OpenMs = ms(time.Since(start))
	if len(r.c.coldQueries) > 0 {
		// The baseline's connection stays open until the memory is read, so rss_mb stays
		// comparable between runs.
		raw, err := openRaw(path)
		if err != nil {
			return err
		}
		defer raw.Close()
		if err := r.cold(ctx, store, raw, rep); err != nil {
			return err
		}
	}
	r.progress("asking each of %d scopes once", len(r.c.scopeQueries))
	start = time.Now()
	for _, q := range r.c.scopeQueries {
		if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
			return err
		}
	}
	rep.AllScopesMs = ms(time.Since(start))
	// The sweep started background loads (vectors and keyword indexes of large scopes):
	// memory is read once they have finished, as a bot's would be a moment later.
	if err := store.Recall.Settle(ctx); err != nil {
		return err
	}
	return readResident(r.opt.MemProfile, base, rep)
}

// cold times the first recall of each cold guild after the restart against a plain FTS5
// query for the same guild and text.
func (r *run) cold(ctx context.Context, store *ltm.Store, raw *sql.DB, rep *Report) error {
	var recall, fts []time.Duration
	for i, q := range r.c.coldQueries {
		timeFTS := func() error {
			t := time.Now()
			err := ftsOnly(ctx, raw, q.text, r.scopeKey(q.scope))
			fts = append(fts, time.Since(t))
			return err
		}
		// Alternating which goes first keeps the page cache from favouring either.
		if i%2 == 0 {
			if err := timeFTS(); err != nil {
				return err
			}
		}
		t := time.Now()
		if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
			return err
		}
		recall = append(recall, time.Since(t))
		if i%2 == 1 {
			if err := timeFTS(); err != nil {
				return err
			}
		}
	}
	rep.ColdScopes = len(recall)
	rep.ColdRecallP50Ms, rep.ColdRecallP99Ms = pct(recall, 0.50), pct(recall, 0.99)
	rep.ColdFTSP99Ms = pct(fts, 0.99)
	rep.ColdVsFTS = ratio(rep.ColdRecallP99Ms, rep.ColdFTSP99Ms)
	return nil
}

// readResident reads the process's memory once every scope was asked: the heap profile
// into memProfile when set, the resident memory above base, and the Go heap in use.
func readResident(memProfile io.Writer, base status, rep *Report) error {
	if memProfile != nil {
		runtime.GC()
		if err := pprof.WriteHeapProfile(memProfile); err != nil {
			return fmt.Errorf("couldn't write heap profile: %w", err)
		}
	}
	st, err := procStatus()
	if err == nil {
		rep.RSSMB = mb(st.rss)
		if rep.RSSPeak {
			rep.RSSMB = mb(st.hwm)
		}
		rep.BytesPerMemory = math.Round(float64(max(0, int64(rep.RSSMB*1024*1024)-int64(base.rss))) / float64(rep.Memories))
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rep.HeapInuseMB = mb(m.HeapInuse)
	return nil
}
