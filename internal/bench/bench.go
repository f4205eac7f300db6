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
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	_ "modernc.org/sqlite" // the baseline opens the benchmark database directly
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

// Report holds the measurements; its JSON keys are those of SPEC §8 plus a few extra.
// Ratios are p99 against p99 of the same run.
type Report struct {
	Memories int `json:"memories"`
	Dims     int `json:"dims"`
	Queries  int `json:"queries"`
	// Scopes is the number of guilds; PersonalScopes the members with personal memory;
	// HotMemories the hot guild's memories (where Queries are asked).
	Scopes         int `json:"scopes"`
	PersonalScopes int `json:"personal_scopes"`
	HotMemories    int `json:"hot_memories"`
	// WritePerS is the bulk write path (RememberMany: validation, dedup, FTS triggers,
	// entity linking, decision detection, history, embedding cache, vector index) in
	// memories per second.
	WritePerS float64 `json:"write_per_s"`
	// RememberPerS is one Remember call per memory, each its own transaction.
	RememberPerS float64 `json:"remember_per_s"`
	// RecallP50Ms and RecallP99Ms time the full hybrid Search (limit 10) in the hot guild.
	RecallP50Ms float64 `json:"recall_p50_ms"`
	RecallP99Ms float64 `json:"recall_p99_ms"`
	// VectorP50Ms times the vector leg alone (NearestMemories, k 10).
	VectorP50Ms float64 `json:"vector_p50_ms"`
	VectorP99Ms float64 `json:"vector_p99_ms"`
	// KeywordP50Ms times keyword-only Search (limit 10): the keyword leg with hydration,
	// ranking stages and no vector leg.
	KeywordP50Ms float64 `json:"keyword_p50_ms"`
	KeywordP99Ms float64 `json:"keyword_p99_ms"`
	// BruteforceP50Ms is an exact float32 scan of the same vectors (k 10).
	BruteforceP50Ms float64 `json:"bruteforce_p50_ms"`
	BruteforceP99Ms float64 `json:"bruteforce_p99_ms"`
	// FTSOnlyP50Ms is a plain FTS5 BM25 query (words OR-ed, ORDER BY bm25 LIMIT 10),
	// limited to the guild's rows when there are several scopes.
	FTSOnlyP50Ms float64 `json:"fts_only_p50_ms"`
	FTSOnlyP99Ms float64 `json:"fts_only_p99_ms"`
	// VectorSpeedup is BruteforceP50Ms / VectorP50Ms.
	VectorSpeedup float64 `json:"vector_speedup"`
	// RecallVsFTS is RecallP99Ms / FTSOnlyP99Ms and KeywordVsFTS KeywordP99Ms /
	// FTSOnlyP99Ms: the Scale issue's targets are ≤ 0.25 and ≤ 0.05.
	RecallVsFTS  float64 `json:"recall_vs_fts_p99"`
	KeywordVsFTS float64 `json:"keyword_vs_fts_p99"`
	// SourceAt10 is the share of queries with a source memory (perturbed, long, short)
	// whose source is in the vector leg's top 10; ExactSourceAt10 the same for the exact
	// scan; OverlapAt10 the mean share of the exact top 10 that the vector leg also returns.
	SourceAt10      float64 `json:"ann_source_at10"`
	ExactSourceAt10 float64 `json:"exact_source_at10"`
	OverlapAt10     float64 `json:"ann_overlap_at10"`
	// HybridSourceAt10 is the share of perturbed and long queries whose source memory full
	// recall ranks in its top 10.
	HybridSourceAt10 float64 `json:"hybrid_source_at10"`
	// KeywordOverlapAt10 is the mean share of the reference ranking's top 10 that
	// keyword-only recall also returns; only with Options.Reference.
	KeywordOverlapAt10 *float64 `json:"keyword_overlap_at10,omitempty"`
	// ByQueryKind splits the hot guild's timings by query shape (queryKinds).
	ByQueryKind map[string]KindReport `json:"by_query_kind"`
	// ByScopeSize times perturbed queries in the other guilds by size bucket (medium,
	// small, personal); only with several scopes.
	ByScopeSize []BucketReport `json:"by_scope_size,omitempty"`
	// AloneRecallP99Ms is the hot guild's recall p99 when it is alone in its database
	// (the same queries, each asked there right after the shared database) and
	// SharedVsAlone RecallP99Ms / AloneRecallP99Ms; only with several scopes.
	AloneRecallP50Ms float64 `json:"alone_recall_p50_ms,omitempty"`
	AloneRecallP99Ms float64 `json:"alone_recall_p99_ms,omitempty"`
	AloneFTSP99Ms    float64 `json:"alone_fts_only_p99_ms,omitempty"`
	SharedVsAlone    float64 `json:"shared_vs_alone_p99,omitempty"`
	// ColdRecallP99Ms times the first recall of each of up to 50 small guilds after the
	// store is reopened, ColdFTSP99Ms a plain FTS5 query for the same guild and text, and
	// ColdVsFTS their ratio; only with several scopes.
	ColdScopes      int     `json:"cold_scopes,omitempty"`
	ColdRecallP50Ms float64 `json:"cold_recall_p50_ms,omitempty"`
	ColdRecallP99Ms float64 `json:"cold_recall_p99_ms,omitempty"`
	ColdFTSP99Ms    float64 `json:"cold_fts_only_p99_ms,omitempty"`
	ColdVsFTS       float64 `json:"cold_vs_fts_p99,omitempty"`
	// OpenMs is start-up: from opening the existing database (migrations checked) to the
	// first recall answered in the hot guild; OpenDBMs the ltm.Open part of it.
	OpenMs   float64 `json:"open_ms"`
	OpenDBMs float64 `json:"open_db_ms"`
	// RSSMB is the peak resident memory (VmHWM) from reopening until every scope was
	// asked once, after the load's memory was handed back and the peak reset (RSSPeak
	// false: the peak could not be reset and RSSMB is the resident memory at the end).
	// BaseRSSMB is what the process held just before reopening; BytesPerMemory is
	// (RSSMB − BaseRSSMB) / Memories; HeapInuseMB the Go heap in use at the end.
	RSSMB          float64 `json:"rss_mb"`
	RSSPeak        bool    `json:"rss_peak"`
	BaseRSSMB      float64 `json:"base_rss_mb"`
	HeapInuseMB    float64 `json:"heap_inuse_mb"`
	BytesPerMemory float64 `json:"bytes_per_memory"`
	// AllScopesMs is how long asking every scope once took after reopening.
	AllScopesMs float64 `json:"all_scopes_ms"`
	// Turns, TurnP50Ms and TurnP99Ms time whole chat turns in the hot guild (intent gate,
	// context build with recall, tool loop with an in-process model that answers at once,
	// transcript writes, short-term capture); TurnRecallP99Ms is the recall inside them,
	// TurnPlainRecallP99Ms the same queries asked as plain recalls between the turns, and
	// TurnVsRecall TurnP99Ms / TurnPlainRecallP99Ms. Only with Options.Turns.
	Turns                int     `json:"turns,omitempty"`
	TurnP50Ms            float64 `json:"turn_p50_ms,omitempty"`
	TurnP99Ms            float64 `json:"turn_p99_ms,omitempty"`
	TurnRecallP99Ms      float64 `json:"turn_recall_p99_ms,omitempty"`
	TurnPlainRecallP99Ms float64 `json:"turn_plain_recall_p99_ms,omitempty"`
	TurnVsRecall         float64 `json:"turn_vs_recall_p99,omitempty"`
	// VectorIndex names the index used for the vector leg.
	VectorIndex string  `json:"vector_index"`
	LoadSeconds float64 `json:"load_s"`
	// Reused is set when the databases of Options.Keep were reused: nothing was loaded and
	// WritePerS, RememberPerS and LoadSeconds are zero.
	Reused bool `json:"reused,omitempty"`
}

// KindReport is the hot guild's timings for one query shape.
type KindReport struct {
	Queries     int     `json:"queries"`
	RecallP50Ms float64 `json:"recall_p50_ms"`
	RecallP99Ms float64 `json:"recall_p99_ms"`
	KeywordP99  float64 `json:"keyword_p99_ms"`
	FTSOnlyP99  float64 `json:"fts_only_p99_ms"`
}

// BucketReport is recall in the guilds of one size bucket.
type BucketReport struct {
	Bucket       string  `json:"bucket"`
	Scopes       int     `json:"scopes"`
	Memories     int     `json:"memories"`
	Queries      int     `json:"queries"`
	RecallP50Ms  float64 `json:"recall_p50_ms"`
	RecallP99Ms  float64 `json:"recall_p99_ms"`
	KeywordP99Ms float64 `json:"keyword_p99_ms"`
	FTSOnlyP99Ms float64 `json:"fts_only_p99_ms"`
}

// run is one benchmark run's state.
type run struct {
	opt      Options
	c        *corpus
	progress func(format string, args ...any)
}

// Run builds the corpus, loads it and measures. It needs no network.
func Run(ctx context.Context, opt Options) (Report, error) {
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
		return Report{}, fmt.Errorf("%d memories are too few for %d scopes: give each at least 20", opt.Memories, opt.Scopes)
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
	// A running bot's indexes are built: build them now, outside the timings (the cold
	// measurement below reopens the database and times the first recall on its own).
	if err := r.warm(ctx, store); err != nil {
		return Report{}, err
	}
	var alone *aloneDB
	if opt.Scopes > 1 {
		if alone, err = r.openAlone(ctx, alonePath); err != nil {
			return Report{}, err
		}
		defer func() { alone.close() }()
	}
	// Every vector is resident when the corpus fits the vector cache's bound (int8 rows of
	// dims + 156 bytes); past it the scopes warmed first have given way, as in a bot.
	if st := store.Recall.EmbedStatus(); st.Vectors != opt.Memories {
		if int64(opt.Memories)*int64(opt.Dims+156) <= ltm.DefaultVectorCacheBytes {
			return Report{}, fmt.Errorf("vector index holds %d memories, want %d", st.Vectors, opt.Memories)
		}
		r.progress("vector index holds %d of %d memories within its bound", st.Vectors, opt.Memories)
	}
	index := make(map[int64]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	raw, err := openRaw(path)
	if err != nil {
		return Report{}, err
	}
	defer raw.Close()

	// One untimed round warms caches and the query-vector cache equally for every leg.
	for _, q := range c.queries[:min(20, len(c.queries))] {
		if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
			return Report{}, err
		}
	}
	if opt.CPUProfile != nil {
		if err := pprof.StartCPUProfile(opt.CPUProfile); err != nil {
			return Report{}, fmt.Errorf("couldn't start CPU profile: %w", err)
		}
	}
	err = r.hot(ctx, store, raw, alone, index, &rep)
	if err == nil && opt.Scopes > 1 {
		err = r.buckets(ctx, store, raw, &rep)
	}
	if opt.CPUProfile != nil {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return Report{}, err
	}

	// Nothing of it may stay reachable: the restart measures the process's memory.
	err = alone.close()
	alone = nil
	if err != nil {
		return Report{}, err
	}
	// Restart: close everything, hand the load's memory back, and open the database as a
	// fresh process would.
	raw.Close()
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

// open opens the store at path with the corpus's embedder.
func (r *run) open(ctx context.Context, path string) (*ltm.Store, error) {
	store, err := ltm.Open(ctx, path)
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

func openRaw(path string) (*sql.DB, error) {
	raw, err := sql.Open("sqlite", ltm.ReadOnlyDSN(path))
	if err != nil {
		return nil, fmt.Errorf("couldn't open baseline connection: %w", err)
	}
	raw.SetMaxOpenConns(1)
	return raw, nil
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

// memory is corpus memory i as an import writes it.
func (r *run) memory(i int) memory.Memory {
	c := r.c
	sc := c.scopes[c.scopeOf[i]]
	a := c.authors[i]
	m := memory.Memory{Scope: memory.ScopeServer, GuildID: sc.id, Content: c.texts[i], Source: memory.SourceImport,
		Provenance: memory.Provenance{Author: cast[a].name, AuthorID: userID(a)}, CreatedAt: c.created[i]}
	if sc.personal {
		m.Scope, m.UserID, m.GuildID = memory.ScopePersonal, sc.id, sc.origin
		m.Provenance.AuthorID = sc.id
	}
	return m
}

// load writes the corpus's memories (only those of members when it is not nil) and returns
// their ids by corpus index. The last ones go through Remember one by one; the rest through
// the bulk path. rep gets the write rates unless members is set.
func (r *run) load(ctx context.Context, store *ltm.Store, members []int, rep *Report) ([]int64, error) {
	order := members
	if order == nil {
		order = make([]int, len(r.c.texts))
		for i := range order {
			order[i] = i
		}
	}
	n := len(order)
	single := min(max(n/50, 200), 2000, n/2)
	bulk := n - single
	ids := make([]int64, len(r.c.texts))
	start := time.Now()
	const chunk = 5000
	for lo := 0; lo < bulk; lo += chunk {
		hi := min(lo+chunk, bulk)
		batch := make([]memory.Memory, 0, hi-lo)
		for _, i := range order[lo:hi] {
			batch = append(batch, r.memory(i))
		}
		res, err := store.Transfer.RememberMany(ctx, batch, "bench")
		if err != nil {
			return nil, err
		}
		for k, id := range res.IDs {
			ids[order[lo+k]] = id
		}
		if lo%(chunk*4) == 0 {
			r.progress("  loaded %d", hi)
		}
	}
	writePerS := 0.0
	if bulk > 0 {
		writePerS = round1(float64(bulk) / time.Since(start).Seconds())
	}
	start1 := time.Now()
	for _, i := range order[bulk:] {
		res, err := store.Memories.Remember(ctx, r.memory(i), "bench")
		if err != nil {
			return nil, err
		}
		ids[i] = res.Memory.ID
	}
	if members == nil {
		rep.WritePerS = writePerS
		rep.RememberPerS = round1(float64(single) / time.Since(start1).Seconds())
		rep.LoadSeconds = round1(time.Since(start).Seconds())
		r.progress("bulk write: %.0f memories/s, one-by-one remember: %.0f memories/s", rep.WritePerS, rep.RememberPerS)
	}
	return ids, nil
}

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

// scopeKey is the baseline's scope restriction: none with one scope (the plain query over
// every row, as before), else the guild's rows.
func (r *run) scopeKey(s int) string {
	if len(r.c.scopes) == 1 {
		return ""
	}
	return r.owner(s).Key()
}

// hot times every leg and both baselines for the hot guild's queries.
func (r *run) hot(ctx context.Context, store *ltm.Store, raw *sql.DB, alone *aloneDB, index map[int64]int, rep *Report) error {
	c := r.c
	var recall, keyword, vector, brute, fts []time.Duration
	kinds := map[string]*[3][]time.Duration{}
	var srcANN, srcExact, srcHybrid, overlap, kwOverlap float64
	var withSource, hybridCounted, refCounted int
	r.progress("running %d queries", len(c.queries))
	for _, q := range c.queries {
		owner := r.owner(q.scope)
		t := time.Now()
		res, err := store.Recall.Search(ctx, r.search(q, false))
		dRecall := time.Since(t)
		if err != nil {
			return err
		}
		if alone != nil {
			if err := alone.time(ctx, r, q); err != nil {
				return err
			}
		}
		if q.source >= 0 && q.kind != "short" {
			hybridCounted++
			for _, h := range res {
				if index[h.Memory.ID] == q.source {
					srcHybrid++
					break
				}
			}
		}

		t = time.Now()
		kwRes, err := store.Recall.Search(ctx, r.search(q, true))
		dKeyword := time.Since(t)
		if err != nil {
			return err
		}
		if r.opt.Reference != nil {
			ref, err := r.opt.Reference(ctx, store, r.search(q, true))
			if err != nil {
				return fmt.Errorf("couldn't compute reference ranking: %w", err)
			}
			if len(ref) > 0 {
				refCounted++
				got := map[int64]bool{}
				for _, h := range kwRes {
					got[h.Memory.ID] = true
				}
				shared := 0
				for _, id := range ref {
					if got[id] {
						shared++
					}
				}
				kwOverlap += float64(shared) / float64(len(ref))
			}
		}

		t = time.Now()
		ann := store.Recall.NearestMemories(owner, q.vec, 10, false)
		vector = append(vector, time.Since(t))

		t = time.Now()
		exact := store.Recall.NearestMemories(owner, q.vec, 10, true)
		brute = append(brute, time.Since(t))

		t = time.Now()
		if err := ftsOnly(ctx, raw, q.text, r.scopeKey(q.scope)); err != nil {
			return err
		}
		dFTS := time.Since(t)
		recall, keyword, fts = append(recall, dRecall), append(keyword, dKeyword), append(fts, dFTS)
		k := kinds[q.kind]
		if k == nil {
			k = &[3][]time.Duration{}
			kinds[q.kind] = k
		}
		k[0], k[1], k[2] = append(k[0], dRecall), append(k[1], dKeyword), append(k[2], dFTS)

		if q.source < 0 {
			continue
		}
		withSource++
		inExact := map[int64]bool{}
		for _, h := range exact {
			inExact[h.ID] = true
			if index[h.ID] == q.source {
				srcExact++
			}
		}
		shared := 0
		for _, h := range ann {
			if inExact[h.ID] {
				shared++
			}
			if index[h.ID] == q.source {
				srcANN++
			}
		}
		overlap += float64(shared) / float64(max(1, len(exact)))
	}
	rep.RecallP50Ms, rep.RecallP99Ms = pct(recall, 0.50), pct(recall, 0.99)
	rep.KeywordP50Ms, rep.KeywordP99Ms = pct(keyword, 0.50), pct(keyword, 0.99)
	rep.VectorP50Ms, rep.VectorP99Ms = pct(vector, 0.50), pct(vector, 0.99)
	rep.BruteforceP50Ms, rep.BruteforceP99Ms = pct(brute, 0.50), pct(brute, 0.99)
	rep.FTSOnlyP50Ms, rep.FTSOnlyP99Ms = pct(fts, 0.50), pct(fts, 0.99)
	rep.VectorSpeedup = ratio(rep.BruteforceP50Ms, rep.VectorP50Ms)
	rep.RecallVsFTS = ratio(rep.RecallP99Ms, rep.FTSOnlyP99Ms)
	rep.KeywordVsFTS = ratio(rep.KeywordP99Ms, rep.FTSOnlyP99Ms)
	if alone != nil {
		rep.AloneRecallP50Ms, rep.AloneRecallP99Ms = pct(alone.recall, 0.50), pct(alone.recall, 0.99)
		rep.AloneFTSP99Ms = pct(alone.fts, 0.99)
		rep.SharedVsAlone = ratio(rep.RecallP99Ms, rep.AloneRecallP99Ms)
	}
	ns := float64(max(withSource, 1))
	rep.SourceAt10 = round4(srcANN / ns)
	rep.ExactSourceAt10 = round4(srcExact / ns)
	rep.OverlapAt10 = round4(overlap / ns)
	rep.HybridSourceAt10 = round4(srcHybrid / float64(max(hybridCounted, 1)))
	if r.opt.Reference != nil {
		v := round4(kwOverlap / float64(max(refCounted, 1)))
		rep.KeywordOverlapAt10 = &v
	}
	rep.ByQueryKind = map[string]KindReport{}
	for name, k := range kinds {
		rep.ByQueryKind[name] = KindReport{Queries: len(k[0]), RecallP50Ms: pct(k[0], 0.50), RecallP99Ms: pct(k[0], 0.99),
			KeywordP99: pct(k[1], 0.99), FTSOnlyP99: pct(k[2], 0.99)}
	}
	return nil
}

// buckets times recall, keyword-only recall and the scoped FTS5 baseline in the medium and
// small guilds and in personal memory.
func (r *run) buckets(ctx context.Context, store *ltm.Store, raw *sql.DB, rep *Report) error {
	for _, b := range []string{"medium", "small", "personal"} {
		qs := r.c.bucketQueries[b]
		if len(qs) == 0 {
			continue
		}
		br := BucketReport{Bucket: b, Queries: len(qs)}
		for _, s := range r.c.scopes {
			if s.bucket == b {
				br.Scopes++
				br.Memories += len(s.members)
			}
		}
		r.progress("running %d queries in %d %s scopes", len(qs), br.Scopes, b)
		var recall, keyword, fts []time.Duration
		for _, q := range qs {
			t := time.Now()
			if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
				return err
			}
			recall = append(recall, time.Since(t))
			t = time.Now()
			if _, err := store.Recall.Search(ctx, r.search(q, true)); err != nil {
				return err
			}
			keyword = append(keyword, time.Since(t))
			t = time.Now()
			if err := ftsOnly(ctx, raw, q.text, r.scopeKey(q.scope)); err != nil {
				return err
			}
			fts = append(fts, time.Since(t))
		}
		br.RecallP50Ms, br.RecallP99Ms = pct(recall, 0.50), pct(recall, 0.99)
		br.KeywordP99Ms, br.FTSOnlyP99Ms = pct(keyword, 0.99), pct(fts, 0.99)
		rep.ByScopeSize = append(rep.ByScopeSize, br)
	}
	return nil
}

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
	store, err := ltm.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	rep.OpenDBMs = ms(time.Since(start))
	r.setup(store)
	first := r.c.queries[0]
	if _, err := store.Recall.Search(ctx, r.search(first, false)); err != nil {
		store.Close()
		return nil, err
	}
	rep.OpenMs = ms(time.Since(start))

	if len(r.c.coldQueries) > 0 {
		raw, err := openRaw(path)
		if err != nil {
			store.Close()
			return nil, err
		}
		defer raw.Close()
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
					store.Close()
					return nil, err
				}
			}
			t := time.Now()
			if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
				store.Close()
				return nil, err
			}
			recall = append(recall, time.Since(t))
			if i%2 == 1 {
				if err := timeFTS(); err != nil {
					store.Close()
					return nil, err
				}
			}
		}
		rep.ColdScopes = len(recall)
		rep.ColdRecallP50Ms, rep.ColdRecallP99Ms = pct(recall, 0.50), pct(recall, 0.99)
		rep.ColdFTSP99Ms = pct(fts, 0.99)
		rep.ColdVsFTS = ratio(rep.ColdRecallP99Ms, rep.ColdFTSP99Ms)
	}

	r.progress("asking each of %d scopes once", len(r.c.scopeQueries))
	start = time.Now()
	for _, q := range r.c.scopeQueries {
		if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
			store.Close()
			return nil, err
		}
	}
	rep.AllScopesMs = ms(time.Since(start))
	// The sweep started background loads (vectors and keyword indexes of large scopes):
	// memory is read once they have finished, as a bot's would be a moment later.
	if err := store.Recall.Settle(ctx); err != nil {
		store.Close()
		return nil, err
	}
	if r.opt.MemProfile != nil {
		runtime.GC()
		if err := pprof.WriteHeapProfile(r.opt.MemProfile); err != nil {
			store.Close()
			return nil, fmt.Errorf("couldn't write heap profile: %w", err)
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
	return store, nil
}

// ftsOnly is the keyword baseline: the query's words OR-ed in a plain FTS5 BM25 query,
// limited to the rows of scopeKey unless it is empty.
func ftsOnly(ctx context.Context, db *sql.DB, text, scopeKey string) error {
	words := strings.Fields(text)
	for i, w := range words {
		words[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	if len(words) == 0 {
		return nil
	}
	var (
		rows *sql.Rows
		err  error
	)
	if scopeKey == "" {
		rows, err = db.QueryContext(ctx, `SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?
		ORDER BY bm25(memories_fts) LIMIT 10`, strings.Join(words, " OR "))
	} else {
		rows, err = db.QueryContext(ctx, `SELECT f.rowid FROM memories_fts f JOIN memories m ON m.id = f.rowid
		WHERE memories_fts MATCH ? AND m.scope_key = ? AND m.deleted_at IS NULL
		ORDER BY bm25(memories_fts) LIMIT 10`, strings.Join(words, " OR "), scopeKey)
	}
	if err != nil {
		return fmt.Errorf("couldn't run FTS baseline: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
	}
	return rows.Err()
}

func pct(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := min(max(int(math.Ceil(p*float64(len(s))))-1, 0), len(s)-1)
	return math.Round(float64(s[i].Microseconds())) / 1000
}

// ratio is a / b to two decimals, 0 when either is not measured.
func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return math.Round(a/b*100) / 100
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }
func mb(b uint64) float64        { return round1(float64(b) / (1 << 20)) }
func round1(x float64) float64   { return math.Round(x*10) / 10 }
func round4(x float64) float64   { return math.Round(x*10000) / 10000 }
