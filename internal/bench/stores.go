package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// DefaultStoreMemories is the corpus size of CompareStores: the comparison writes every
// memory one by one through each store, the way a running bot does.
const DefaultStoreMemories = 5000

// StoresReport compares SQLite and PostgreSQL on the same corpus and queries (`kioku bench
// --store postgres`): write throughput, keyword and hybrid recall latency, and recall's hit
// rates as a check that both found what they should.
type StoresReport struct {
	Memories int `json:"memories"`
	// Dims is the size of the corpus's synthetic vectors, which hybrid recall searches.
	Dims    int           `json:"dims"`
	Queries int           `json:"queries"`
	Stores  []StoreTiming `json:"stores"`
	// Schema is the PostgreSQL schema the run wrote in, dropped at its end.
	Schema string `json:"schema"`
}

// StoreTiming is one store's measurements.
type StoreTiming struct {
	Store string `json:"store"`
	// RememberPerS is memories written per second, one Remember (one transaction) each,
	// without an embedding model (the vectors are added afterwards, untimed).
	RememberPerS float64 `json:"remember_per_s"`
	// RecallP50Ms and RecallP99Ms time keyword-only Search (limit 10).
	RecallP50Ms float64 `json:"recall_p50_ms"`
	RecallP99Ms float64 `json:"recall_p99_ms"`
	// HitAt10 is the share of queries made from a memory that keyword recall finds in its
	// top 10.
	HitAt10 float64 `json:"hit_at_10"`
	// HybridP50Ms and HybridP99Ms time full Search (limit 10): the keyword and vector legs
	// fused, with the corpus's deterministic embedder on both stores, every memory's vector
	// stored and the scope's vector index loaded.
	HybridP50Ms float64 `json:"hybrid_p50_ms"`
	HybridP99Ms float64 `json:"hybrid_p99_ms"`
	// HybridHitAt10 is HitAt10 for hybrid recall.
	HybridHitAt10 float64 `json:"hybrid_hit_at_10"`
}

// benchStore is what the comparison needs of a store.
type benchStore struct {
	name     string
	remember func(ctx context.Context, m memory.Memory) (int64, error)
	search   func(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
	recall   embeddingRecall
	close    func() error
}

// embeddingRecall is the part of a store's Recall that gives memories their vectors, builds
// its keyword indexes and waits for its background loads.
type embeddingRecall interface {
	SetEmbedder(fn ltm.EmbedFunc, model string)
	TrackEmbeddings(ctx context.Context, opt memory.EmbedTrackOptions) (memory.EmbedTrackResult, error)
	WarmKeywordIndex(ctx context.Context, owners ...memory.Owner) error
	Settle(ctx context.Context) error
}

// CompareStores loads one corpus (opt.Memories, default DefaultStoreMemories, in one guild)
// into a temporary SQLite database and into a fresh schema of the PostgreSQL database pg
// names, dropped afterwards, and times the same queries on both: keyword-only recall, then
// hybrid recall once every memory has its vector from the corpus's deterministic embedder
// (opt.Dims, default DefaultDims), the same on both, so the comparison is of the stores and
// not of an embedding model.
func CompareStores(ctx context.Context, opt Options, pg *pgxpool.Config) (StoresReport, error) {
	if opt.Memories <= 0 {
		opt.Memories = DefaultStoreMemories
	}
	if opt.Queries <= 0 {
		opt.Queries = DefaultQueries
	}
	if opt.Seed == 0 {
		opt.Seed = DefaultSeed
	}
	if opt.Dims <= 0 {
		opt.Dims = DefaultDims
	}
	opt.Scopes = 1
	r := &run{opt: opt, progress: func(format string, args ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, format+"\n", args...)
		}
	}}
	r.c = newCorpus(opt.Seed, opt.Memories, opt.Dims, opt.Queries, opt.Scopes)
	rep := StoresReport{Memories: opt.Memories, Dims: opt.Dims, Queries: len(r.c.queries)}

	dir, err := os.MkdirTemp(opt.Dir, "kioku-bench-stores-")
	if err != nil {
		return rep, fmt.Errorf("couldn't create the bench directory: %w", err)
	}
	defer os.RemoveAll(dir)
	lite, err := sqlite.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		return rep, err
	}
	lite.MaxServerMemories, lite.MaxMemberMemories = -1, -1
	stores := []benchStore{{name: "sqlite", close: lite.Close, search: lite.Recall.Search, recall: lite.Recall,
		remember: func(ctx context.Context, m memory.Memory) (int64, error) {
			res, err := lite.Memories.Remember(ctx, m, "bench")
			return res.Memory.ID, err
		}}}

	schema, drop, err := benchSchema(ctx, pg)
	if err != nil {
		lite.Close()
		return rep, err
	}
	defer drop()
	rep.Schema = schema
	cfg := pg.Copy()
	cfg.ConnConfig.RuntimeParams["search_path"] = schema + ",public"
	post, err := postgres.OpenConfig(ctx, cfg)
	if err != nil {
		lite.Close()
		return rep, err
	}
	post.MaxServerMemories, post.MaxMemberMemories = -1, -1
	stores = append(stores, benchStore{name: "postgres", close: post.Close, search: post.Recall.Search, recall: post.Recall,
		remember: func(ctx context.Context, m memory.Memory) (int64, error) {
			res, err := post.Memories.Remember(ctx, m, "bench")
			return res.Memory.ID, err
		}})

	for _, s := range stores {
		t, err := r.timeStore(ctx, s)
		if cerr := s.close(); err == nil && cerr != nil {
			err = fmt.Errorf("couldn't close the %s store: %w", s.name, cerr)
		}
		if err != nil {
			return rep, err
		}
		rep.Stores = append(rep.Stores, t)
	}
	return rep, nil
}

// timeStore loads the corpus into s one memory at a time, times every query with keyword
// recall, then gives every memory its vector and times them again with hybrid recall.
func (r *run) timeStore(ctx context.Context, s benchStore) (StoreTiming, error) {
	t := StoreTiming{Store: s.name}
	r.progress("%s: writing %d memories", s.name, len(r.c.texts))
	ids := make([]int64, len(r.c.texts))
	start := time.Now()
	for i := range r.c.texts {
		id, err := s.remember(ctx, r.memory(i))
		if err != nil {
			return t, fmt.Errorf("%s: remember: %w", s.name, err)
		}
		ids[i] = id
	}
	t.RememberPerS = round1(float64(len(ids)) / time.Since(start).Seconds())
	r.progress("%s: timing %d keyword queries", s.name, len(r.c.queries))
	p50, p99, hit, err := r.timeQueries(ctx, s, ids, true)
	if err != nil {
		return t, err
	}
	t.RecallP50Ms, t.RecallP99Ms, t.HitAt10 = p50, p99, hit

	r.progress("%s: embedding %d memories", s.name, len(r.c.texts))
	c := r.c
	s.recall.SetEmbedder(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, text := range texts {
			out[i] = c.vector(text)
		}
		return out, nil
	}, "bench-synthetic")
	res, err := s.recall.TrackEmbeddings(ctx, memory.EmbedTrackOptions{})
	if err != nil {
		return t, fmt.Errorf("%s: embedding the corpus: %w", s.name, err)
	}
	if res.Missing != 0 {
		return t, fmt.Errorf("%s: %d memories left without a vector", s.name, res.Missing)
	}
	r.progress("%s: timing %d hybrid queries", s.name, len(r.c.queries))
	if t.HybridP50Ms, t.HybridP99Ms, t.HybridHitAt10, err = r.timeQueries(ctx, s, ids, false); err != nil {
		return t, err
	}
	return t, nil
}

// timeQueries asks every query of the corpus once, once the keyword indexes are built and
// after an untimed round that warms each store's caches and indexes alike (the first hybrid query loads the scope's vectors), and
// returns the p50 and p99 in milliseconds and the share of queries made from a memory that
// find it in the top 10.
func (r *run) timeQueries(ctx context.Context, s benchStore, ids []int64, keywordOnly bool) (p50, p99, hitAt10 float64, err error) {
	// A scope's keyword index builds in the background on its first query; the timed
	// queries are of a store at rest, as a running bot's are, not of its database's
	// search while the index builds.
	for i := range r.c.scopes {
		if err := s.recall.WarmKeywordIndex(ctx, r.owner(i)); err != nil {
			return 0, 0, 0, fmt.Errorf("%s: warming the keyword index: %w", s.name, err)
		}
	}
	for _, q := range r.c.queries[:min(20, len(r.c.queries))] {
		if _, err := s.search(ctx, r.search(q, keywordOnly)); err != nil {
			return 0, 0, 0, fmt.Errorf("%s: search: %w", s.name, err)
		}
	}
	// The first hybrid query of a large scope starts loading its vectors in the background
	// and answers from keywords meanwhile; the timed queries are of the loaded scope on
	// both stores (PostgreSQL's load, a read of every vector over the network, takes longer).
	if err := s.recall.Settle(ctx); err != nil {
		return 0, 0, 0, fmt.Errorf("%s: waiting for the vector index: %w", s.name, err)
	}
	took := make([]time.Duration, 0, len(r.c.queries))
	hits, sourced := 0, 0
	for _, q := range r.c.queries {
		begin := time.Now()
		res, err := s.search(ctx, r.search(q, keywordOnly))
		took = append(took, time.Since(begin))
		if err != nil {
			return 0, 0, 0, fmt.Errorf("%s: search: %w", s.name, err)
		}
		// Queries made from a memory (perturbed, long) should find it, as the main bench
		// counts them; short ones and those about no memory have no single answer.
		if q.source < 0 || q.kind == "short" {
			continue
		}
		sourced++
		if slices.ContainsFunc(res, func(x memory.SearchResult) bool { return x.Memory.ID == ids[q.source] }) {
			hits++
		}
	}
	slices.Sort(took)
	return ms(pctSorted(took, 50)), ms(pctSorted(took, 99)), round4(float64(hits) / float64(max(sourced, 1))), nil
}

// pctSorted is the p-th percentile of sorted durations.
func pctSorted(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p/100))]
}

// benchSchema creates an empty schema for the run in the database cfg names, so the bench
// never writes into a bot's tables, and returns it with a function that drops it.
func benchSchema(ctx context.Context, cfg *pgxpool.Config) (string, func(), error) {
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return "", nil, fmt.Errorf("couldn't connect to PostgreSQL: %w", err)
	}
	defer conn.Close(context.Background())
	var raw [6]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, err
	}
	schema := "kioku_bench_" + hex.EncodeToString(raw[:])
	// The store's migration creates pg_trgm where the search path says; create it in public
	// first, where a bot's database has it, so the bench schema uses that one.
	_, _ = conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		return "", nil, fmt.Errorf("couldn't create the bench schema: %w", err)
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`)
	}
	return schema, drop, nil
}

// WriteText prints the comparison as a table.
func (r StoresReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d memories in one guild, written one by one; %d queries, keyword-only and hybrid (%d-dim synthetic vectors)\n",
		r.Memories, r.Queries, r.Dims)
	fmt.Fprintf(w, "%-9s %11s  %-28s  %-28s\n", "", "", "keyword recall", "hybrid recall")
	fmt.Fprintf(w, "%-9s %11s  %8s %8s %10s  %8s %8s %10s\n", "store", "remember/s", "p50 ms", "p99 ms", "hit@10", "p50 ms", "p99 ms", "hit@10")
	for _, s := range r.Stores {
		fmt.Fprintf(w, "%-9s %11.1f  %8.3f %8.3f %10.4f  %8.3f %8.3f %10.4f\n", s.Store, s.RememberPerS,
			s.RecallP50Ms, s.RecallP99Ms, s.HitAt10, s.HybridP50Ms, s.HybridP99Ms, s.HybridHitAt10)
	}
	return nil
}

// WriteJSON prints the comparison as one JSON object.
func (r StoresReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
