// Package bench is kioku's recall benchmark (SPEC §8): a deterministic synthetic corpus is
// written through the real write path into a fresh temporary store, then the real recall,
// its vector and keyword legs, and two baselines measured in the same run — an exact
// float32 scan of the same vectors and a plain FTS5 BM25 query — so the ratios mean
// something on a noisy machine.
//
// A run also measures what a deployment feels: many servers in one database (Options.Scopes)
// with the hot guild timed alone as well, the first recall of cold guilds after a restart,
// start-up from an existing database to the first answer, resident memory once every
// scope was asked once, and optionally whole chat turns (Options.Turns).
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// Defaults of Options.
const (
	DefaultMemories = 100_000
	DefaultDims     = 384
	DefaultQueries  = 1000
	DefaultSeed     = 1
)

// ReferenceFunc returns the ids of the reference keyword ranking's top q.Limit for the
// keyword-only query q (the ranking kioku's keyword leg must reproduce, issue "Scale"),
// best first. It reads the same database the store does.
type ReferenceFunc func(ctx context.Context, store *ltm.Store, q memory.SearchQuery) ([]int64, error)

// Options configures Run. Zero fields take the defaults above.
type Options struct {
	Memories int
	Dims     int
	Queries  int
	Seed     uint64
	// Scopes is the number of guilds the corpus is spread over (scopePlan): 0 or 1 puts
	// every memory in one guild. With more, one hot guild holds 1/11 of the corpus, a few
	// members get personal memory, and the hot guild is also loaded and timed alone.
	Scopes int
	// Turns is how many whole chat turns to time in the hot guild; 0 times none.
	Turns int
	// Dir is where the temporary database is created; empty means the system temp dir.
	Dir string
	// Keep, when set, is a directory where the databases are kept after the run and
	// reused by the next run of the same corpus (memories, dims, scopes, seed), which then
	// skips loading: the write rates are measured only by a run that loads (keep.go).
	Keep string
	// Progress, when set, receives one line per phase (the run takes a while at 100k).
	Progress io.Writer
	// CPUProfile, when set, receives a CPU profile (runtime/pprof) of the timed queries.
	CPUProfile io.Writer
	// Restarted, when set, is called when the store is closed for the restart, before it
	// is opened again as a fresh process would: kioku bench sets the bot's memory limit
	// there, since the load before it holds the whole corpus.
	Restarted func()
	// MemProfile, when set, receives a heap profile (runtime/pprof) of the restarted
	// process once every scope has been asked and its loads have finished: what the
	// resident memory (rss_mb) is made of.
	MemProfile io.Writer
	// Reference, when set, is the reference keyword ranking: the run reports the mean
	// overlap of keyword-only recall's top 10 with it (keyword_overlap_at10).
	Reference ReferenceFunc
}

// run is one benchmark run's state.
type run struct {
	opt      Options
	c        *corpus
	progress func(format string, args ...any)
}

// Run builds the corpus, loads it and measures. It needs no network.
func Run(ctx context.Context, opt Options) (Report, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Report{}, err
	}
	r := &run{opt: opt, progress: func(format string, args ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, format+"\n", args...)
		}
	}}
	r.progress("generating %d memories in %d guilds, %d dims, %d queries", opt.Memories, opt.Scopes, opt.Dims, opt.Queries)
	c := newCorpus(opt.Seed, opt.Memories, opt.Dims, opt.Queries, opt.Scopes)
	r.c = c
	rep := Report{Memories: opt.Memories, Dims: opt.Dims, Queries: len(c.queries), Scopes: opt.Scopes,
		HotMemories: len(c.scopes[0].members), VectorIndex: "int8 vectors, sign-code shortlist, exact float32 re-rank"}
	for _, s := range c.scopes {
		if s.personal {
			rep.PersonalScopes++
		}
	}

	dir, kept, err := r.databases()
	if err != nil {
		return Report{}, err
	}
	if opt.Keep == "" {
		defer os.RemoveAll(dir)
	}
	rep.Reused = kept != nil

	// The hot guild alone in a database of its own, asked the same queries as the shared
	// one, one after the other (hot): what a machine's noise does to one it does to both.
	// It is loaded first and opened once the shared one is loaded (below).
	alonePath := filepath.Join(dir, "alone.db")
	if opt.Scopes > 1 && !rep.Reused {
		if err := r.loadAlone(ctx, alonePath, &rep); err != nil {
			return Report{}, err
		}
	}

	path := filepath.Join(dir, "bench.db")
	store, err := r.open(ctx, path)
	if err != nil {
		return Report{}, err
	}
	// Store.Close may be called once: the store is closed and reopened below.
	defer func() {
		if store != nil {
			store.Close()
		}
	}()
	ids := kept
	if ids == nil {
		if ids, err = r.load(ctx, store, nil, &rep); err != nil {
			return Report{}, err
		}
		if err := r.keep(dir, ids); err != nil {
			return Report{}, err
		}
	}
	if err := r.measureWarm(ctx, store, path, alonePath, ids, &rep); err != nil {
		return Report{}, err
	}
	// Restart: close everything, hand the load's memory back, and open the database as a
	// fresh process would.
	err = store.Close()
	store = nil
	if err != nil {
		return Report{}, fmt.Errorf("couldn't close bench store: %w", err)
	}
	if store, err = r.restart(ctx, path, &rep); err != nil {
		return Report{}, err
	}
	if opt.Turns > 0 {
		if err := r.turns(ctx, store, &rep); err != nil {
			return Report{}, err
		}
	}
	return rep, nil
}

// withDefaults fills the zero fields with the defaults and checks the corpus can be
// spread over the scopes asked for.
func (opt Options) withDefaults() (Options, error) {
	if opt.Memories <= 0 {
		opt.Memories = DefaultMemories
	}
	if opt.Dims <= 0 {
		opt.Dims = DefaultDims
	}
	if opt.Queries <= 0 {
		opt.Queries = DefaultQueries
	}
	if opt.Seed == 0 {
		opt.Seed = DefaultSeed
	}
	opt.Scopes = max(opt.Scopes, 1)
	if opt.Scopes > 1 && opt.Memories < 20*opt.Scopes {
		return opt, fmt.Errorf("%d memories are too few for %d scopes: give each at least 20", opt.Memories, opt.Scopes)
	}
	return opt, nil
}

// measureWarm times the loaded store at path with its indexes built, as a running bot
// has them: the hot guild (beside its own database at alonePath with several scopes),
// then the other guilds by size. ids are the memories' ids by corpus index. Everything
// it opens is closed before it returns, since the restart after it measures the
// process's memory.
func (r *run) measureWarm(ctx context.Context, store *ltm.Store, path, alonePath string, ids []int64, rep *Report) error {
	// A running bot's indexes are built: build them now, outside the timings (the cold
	// measurement reopens the database and times the first recall on its own).
	if err := r.warm(ctx, store); err != nil {
		return err
	}
	var alone *aloneDB
	if r.opt.Scopes > 1 {
		var err error
		if alone, err = r.openAlone(ctx, alonePath); err != nil {
			return err
		}
		defer func() { alone.close() }()
	}
	if err := checkResident(store, r.opt, r.progress); err != nil {
		return err
	}
	index := make(map[int64]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	raw, err := openRaw(path)
	if err != nil {
		return err
	}
	defer raw.Close()

	// One untimed round warms caches and the query-vector cache equally for every leg.
	for _, q := range r.c.queries[:min(20, len(r.c.queries))] {
		if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
			return err
		}
	}
	if r.opt.CPUProfile != nil {
		if err := pprof.StartCPUProfile(r.opt.CPUProfile); err != nil {
			return fmt.Errorf("couldn't start CPU profile: %w", err)
		}
	}
	err = r.hot(ctx, store, raw, alone, index, rep)
	if err == nil && r.opt.Scopes > 1 {
		err = r.buckets(ctx, store, raw, rep)
	}
	if r.opt.CPUProfile != nil {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return err
	}
	// Nothing of it may stay reachable: the restart measures the process's memory.
	err = alone.close()
	alone = nil
	return err
}

// checkResident checks every vector of the corpus opt describes is resident in store
// when the corpus fits the vector cache's bound (int8 rows of dims + 156 bytes); past it
// the scopes warmed first have given way, as in a bot, which progress reports.
func checkResident(store *ltm.Store, opt Options, progress func(format string, args ...any)) error {
	st := store.Recall.EmbedStatus()
	if st.Vectors == opt.Memories {
		return nil
	}
	if int64(opt.Memories)*int64(opt.Dims+156) <= ltm.DefaultVectorCacheBytes {
		return fmt.Errorf("vector index holds %d memories, want %d", st.Vectors, opt.Memories)
	}
	progress("vector index holds %d of %d memories within its bound", st.Vectors, opt.Memories)
	return nil
}

// open opens the store at path with the corpus's embedder.
func (r *run) open(ctx context.Context, path string) (*ltm.Store, error) {
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	r.setup(store)
	return store, nil
}

func (r *run) setup(store *ltm.Store) {
	// A synthetic corpus of any size in one scope: the per-scope caps guard live servers.
	store.MaxServerMemories = -1
	store.MaxMemberMemories = -1
	c := r.c
	store.Recall.SetEmbedder(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = c.vector(t)
		}
		return out, nil
	}, "bench-synthetic")
}

// warm builds the vector and keyword indexes of every scope of the corpus in store, the
// hot guild last: when the indexes' bounds cannot hold every scope, the least recently
// used give way, and in a bot the guild asked most is never that one.
func (r *run) warm(ctx context.Context, store *ltm.Store) error {
	for i := len(r.c.scopes) - 1; i >= 0; i-- {
		owner := r.owner(i)
		if err := store.Recall.WarmVectors(ctx, owner); err != nil {
			return err
		}
		if err := store.Recall.WarmKeywordIndex(ctx, owner); err != nil {
			return err
		}
	}
	return nil
}

// owner is the owner of scope s.
func (r *run) owner(s int) memory.Owner {
	sc := r.c.scopes[s]
	if sc.personal {
		return memory.PersonalOwner(sc.id)
	}
	return memory.ServerOwner(sc.id)
}

func (r *run) search(q query, keywordOnly bool) memory.SearchQuery {
	return memory.SearchQuery{Text: q.text, Owners: []memory.Owner{r.owner(q.scope)}, Limit: 10, AskedAt: q.askedAt, KeywordOnly: keywordOnly}
}
