package vecindex_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// TestQuantizedRecallAgainstFloat32: on a seeded clustered corpus, the int8 index's top 10
// (shortlist search above 4096 rows, full scan below) overlaps the exact float32 top 10 by
// at least 0.98, and its cosines are within 0.01 of the float32 ones.
func TestQuantizedRecallAgainstFloat32(t *testing.T) {
	const dims, k, topics = 384, 10, 200
	for _, n := range []int{2_000, 10_000} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(n)))
			centres := make([][]float32, topics)
			for i := range centres {
				centres[i] = unit(rng, dims)
			}
			x := vecindex.New()
			rows := make([][]float32, n)
			for i := range n {
				rows[i] = near(rng, centres[i%topics], 0.05)
				x.Upsert("g:1", int64(i), "", vecindex.Meta{}, rows[i])
			}
			var overlap, total int
			worst := 0.0
			for range 100 {
				q := near(rng, centres[rng.IntN(topics)], 0.05)
				exact := floatTop(rows, q, k)
				hits := x.Search("g:1", q, k, nil, false)
				if len(hits) != k {
					t.Fatalf("%d hits, want %d", len(hits), k)
				}
				for _, h := range hits {
					if slices.Contains(exact, h.ID) {
						overlap++
					}
					worst = max(worst, math.Abs(float64(h.Cosine)-float64(cos(rows[h.ID], q))))
				}
				total += k
			}
			share := float64(overlap) / float64(total)
			t.Logf("overlap@%d with float32 %.4f, worst cosine error %.5f", k, share, worst)
			if share < 0.98 {
				t.Fatalf("int8 index overlaps the float32 top %d by %.4f, want ≥ 0.98", k, share)
			}
			if worst > 0.01 {
				t.Fatalf("int8 cosine off by %.4f, want ≤ 0.01", worst)
			}
		})
	}
}

func cos(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// floatTop is the brute-force float32 top k.
func floatTop(rows [][]float32, q []float32, k int) []int64 {
	type hit struct {
		id int64
		c  float32
	}
	var top []hit
	for i, r := range rows {
		c := cos(r, q)
		if len(top) == k && c <= top[k-1].c {
			continue
		}
		j := len(top)
		if j < k {
			top = append(top, hit{})
		} else {
			j = k - 1
		}
		for ; j > 0 && top[j-1].c < c; j-- {
			top[j] = top[j-1]
		}
		top[j] = hit{int64(i), c}
	}
	out := make([]int64, len(top))
	for i, h := range top {
		out[i] = h.id
	}
	return out
}

// store is a durable store for the loader: rows per scope, read under a lock, counting
// loads. A scope in hold has its loads blocked, after their snapshot, until the channel is
// closed.
type store struct {
	mu    sync.Mutex
	rows  map[string]map[int64][]float32
	loads map[string]int
	hold  map[string]chan struct{}
	fail  error
}

func newStore() *store {
	return &store{rows: map[string]map[int64][]float32{}, loads: map[string]int{}, hold: map[string]chan struct{}{}}
}

// waitLoad waits until key's load has started.
func (s *store) waitLoad(key string) {
	for s.loadCount(key) == 0 {
		runtime.Gosched()
	}
}

func (s *store) set(key string, id int64, v []float32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rows[key] == nil {
		s.rows[key] = map[int64][]float32{}
	}
	s.rows[key][id] = v
}

func (s *store) del(key string, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rows[key], id)
}

func (s *store) load(_ context.Context, key string, put func(int64, string, vecindex.Meta, []float32)) error {
	s.mu.Lock()
	s.loads[key]++
	hold, fail := s.hold[key], s.fail
	snapshot := map[int64][]float32{}
	for id, v := range s.rows[key] {
		snapshot[id] = v
	}
	s.mu.Unlock()
	if fail != nil {
		return fail
	}
	if hold != nil {
		<-hold
	}
	for id, v := range snapshot {
		put(id, "", vecindex.Meta{OriginGuild: key}, v)
	}
	return nil
}

func (s *store) loadCount(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads[key]
}

// bytesFor is the index's bound for n rows of dims: rows cost the same whatever the scope.
func bytesFor(t *testing.T, dims, n int) int64 {
	t.Helper()
	x := vecindex.New()
	x.Upsert("g:probe", 1, "", vecindex.Meta{}, axis(dims, 0))
	return x.Stats().Bytes * int64(n)
}

// TestLazyLoadingEvictsLeastRecentlyUsed: scopes load on first use, writes to a scope not
// resident leave it unloaded, the least recently used scope leaves when the bound is passed,
// and an evicted scope answers again, reloaded, with its own rows only.
func TestLazyLoadingEvictsLeastRecentlyUsed(t *testing.T) {
	const dims = 8
	st := newStore()
	for s, key := range []string{"g:a", "g:b", "g:c"} {
		for i := range 10 {
			st.set(key, int64(100*s+i), axis(dims, (s+i)%dims))
		}
	}
	x := vecindex.New()
	// Room for 25 rows: two scopes of 10, not three.
	x.SetLoader(st.load, bytesFor(t, dims, 25))
	ctx := t.Context()

	if x.Resident("g:a") || x.Len() != 0 {
		t.Fatal("a scope is resident before its first use")
	}
	if !x.Upsert("g:a", 999, "h", vecindex.Meta{}, axis(dims, 1)) || x.Resident("g:a") {
		t.Fatal("a write to a scope not resident was refused or loaded it")
	}
	for _, key := range []string{"g:a", "g:b"} {
		if err := x.Ensure(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if x.Len() != 20 || !x.Resident("g:a") || !x.Resident("g:b") {
		t.Fatalf("%d rows held after loading two scopes", x.Len())
	}
	// g:a is used again, so g:b is the least recently used when g:c arrives.
	if err := x.Ensure(ctx, "g:a"); err != nil {
		t.Fatal(err)
	}
	if err := x.Ensure(ctx, "g:c"); err != nil {
		t.Fatal(err)
	}
	if x.Resident("g:b") || !x.Resident("g:a") || !x.Resident("g:c") || x.Len() != 20 {
		t.Fatalf("after g:c: a=%v b=%v c=%v rows=%d, want g:b evicted", x.Resident("g:a"), x.Resident("g:b"), x.Resident("g:c"), x.Len())
	}
	if st.loadCount("g:a") != 1 {
		t.Fatalf("g:a loaded %d times while resident", st.loadCount("g:a"))
	}
	if hits := x.Search("g:b", axis(dims, 1), 5, nil, false); len(hits) != 0 {
		t.Fatalf("an evicted scope answered %v before its reload", hits)
	}

	// A row written to the durable store while g:b was out is there after the reload; the
	// reload holds g:b's rows only.
	fresh := []float32{1, 1, 1, 0, 0, 0, 0, 0}
	st.set("g:b", 150, fresh)
	if err := x.Ensure(ctx, "g:b"); err != nil {
		t.Fatal(err)
	}
	if st.loadCount("g:b") != 2 {
		t.Fatalf("g:b loaded %d times, want 2", st.loadCount("g:b"))
	}
	hits := x.Search("g:b", fresh, 20, nil, false)
	if len(hits) != 11 {
		t.Fatalf("reloaded g:b has %d rows, want 11", len(hits))
	}
	for _, h := range hits {
		if h.ID < 100 || h.ID >= 200 {
			t.Fatalf("reloaded g:b returned row %d of another scope", h.ID)
		}
	}
	if hits[0].ID != 150 {
		t.Fatalf("best hit %d, want the row written while evicted", hits[0].ID)
	}
	if x.Stats().Bytes > bytesFor(t, dims, 25) {
		t.Fatalf("index holds %d bytes over its bound", x.Stats().Bytes)
	}
}

// TestReloadNeverResurrects: a row deleted while its scope was evicted, or while the scope
// was loading from a snapshot that still had it, is absent after the load.
func TestReloadNeverResurrects(t *testing.T) {
	const dims = 8
	ctx := t.Context()
	t.Run("DeletedWhileEvicted", func(t *testing.T) {
		st := newStore()
		st.set("g:a", 1, axis(dims, 0))
		st.set("g:a", 2, axis(dims, 1))
		st.set("g:b", 3, axis(dims, 2))
		x := vecindex.New()
		x.SetLoader(st.load, bytesFor(t, dims, 1))
		if err := x.Ensure(ctx, "g:a"); err != nil {
			t.Fatal(err)
		}
		st.del("g:a", 1)
		x.Remove("g:a", 1)
		if err := x.Ensure(ctx, "g:b"); err != nil { // evicts g:a
			t.Fatal(err)
		}
		if x.Resident("g:a") {
			t.Fatal("g:a not evicted")
		}
		if err := x.Ensure(ctx, "g:a"); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(x.IDs("g:a"), 1) || x.Has("g:a", 1, "") {
			t.Fatalf("deleted row back after reload: %v", x.IDs("g:a"))
		}
	})
	t.Run("DeletedDuringTheLoad", func(t *testing.T) {
		st := newStore()
		st.set("g:a", 1, axis(dims, 0))
		st.set("g:a", 2, axis(dims, 1))
		hold := make(chan struct{})
		st.hold["g:a"] = hold
		x := vecindex.New()
		x.SetLoader(st.load, 0)
		done := make(chan error)
		go func() { done <- x.Ensure(ctx, "g:a") }()
		st.waitLoad("g:a")
		// The load has its snapshot with row 1; the delete and a new write land now.
		st.del("g:a", 1)
		x.Remove("g:a", 1)
		x.Upsert("g:a", 2, "new", vecindex.Meta{}, axis(dims, 5))
		close(hold)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := x.IDs("g:a"); !slices.Equal(got, []int64{2}) {
			t.Fatalf("rows %v after the load, want [2]", got)
		}
		if !x.Has("g:a", 2, "new") {
			t.Fatal("the load overwrote the vector written while it ran")
		}
	})
}

// TestConcurrentSearchDuringLoad: searches of a scope that is loading wait for the one
// load and then see the whole scope; searches of other scopes are not held up; writes
// from other goroutines go on. Run under -race.
func TestConcurrentSearchDuringLoad(t *testing.T) {
	const dims, n = 64, 3000
	rng := rand.New(rand.NewPCG(3, 3))
	st := newStore()
	for i := range n {
		st.set("g:big", int64(i), unit(rng, dims))
	}
	st.set("g:small", 1_000_000, unit(rng, dims))
	hold := make(chan struct{})
	st.hold["g:big"] = hold
	x := vecindex.New()
	x.SetLoader(st.load, 0)
	ctx := t.Context()

	var wg sync.WaitGroup
	var bad atomic.Value
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := x.Ensure(ctx, "g:big"); err != nil {
				bad.Store(err)
				return
			}
			hits := x.Search("g:big", unit(rand.New(rand.NewPCG(uint64(g), 1)), dims), n+10, nil, false)
			if len(hits) < n {
				bad.Store(fmt.Errorf("search after Ensure saw %d rows, want ≥ %d", len(hits), n))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// As a write path does: commit to the store, then update the index.
		for i := range 200 {
			v := unit(rand.New(rand.NewPCG(9, uint64(i))), dims)
			st.set("g:big", int64(n+i), v)
			x.Upsert("g:big", int64(n+i), "", vecindex.Meta{}, v)
		}
	}()
	// Another scope loads and answers while g:big is held.
	st.waitLoad("g:big")
	if err := x.Ensure(ctx, "g:small"); err != nil {
		t.Fatal(err)
	}
	if hits := x.Search("g:small", unit(rng, dims), 5, nil, false); len(hits) != 1 {
		t.Fatalf("g:small answered %d hits while g:big loaded", len(hits))
	}
	close(hold)
	wg.Wait()
	if err, _ := bad.Load().(error); err != nil {
		t.Fatal(err)
	}
	if st.loadCount("g:big") != 1 {
		t.Fatalf("g:big loaded %d times by concurrent searches, want once", st.loadCount("g:big"))
	}
	if got := len(x.IDs("g:big")); got != n+200 {
		t.Fatalf("g:big holds %d rows, want %d loaded plus 200 written", got, n+200)
	}
}

// TestLoadFailureRetried: a failed load leaves the scope out, and the next use loads again.
func TestLoadFailureRetried(t *testing.T) {
	st := newStore()
	st.set("g:a", 1, axis(4, 0))
	st.fail = errors.New("disk on fire")
	x := vecindex.New()
	x.SetLoader(st.load, 0)
	if err := x.Ensure(t.Context(), "g:a"); err == nil || x.Resident("g:a") {
		t.Fatalf("failed load: err %v, resident %v", err, x.Resident("g:a"))
	}
	st.fail = nil
	if err := x.Ensure(t.Context(), "g:a"); err != nil || len(x.IDs("g:a")) != 1 {
		t.Fatalf("retry: err %v, rows %v", err, x.IDs("g:a"))
	}
}

// TestSettleWaitsForLoads: Settle returns once a load in flight has finished, and not
// before; with ctx ended it returns ctx's error instead of waiting.
func TestSettleWaitsForLoads(t *testing.T) {
	const dims = 32
	rng := rand.New(rand.NewPCG(5, 5))
	st := newStore()
	for i := range 100 {
		st.set("g:slow", int64(i), unit(rng, dims))
	}
	hold := make(chan struct{})
	st.hold["g:slow"] = hold
	x := vecindex.New()
	x.SetLoader(st.load, 0)

	started, cancel := context.WithCancel(t.Context())
	cancel() // Ensure starts the load and returns at once
	_ = x.Ensure(started, "g:slow")
	st.waitLoad("g:slow")

	ended, stop := context.WithCancel(t.Context())
	stop()
	if err := x.Settle(ended); err == nil {
		t.Fatal("Settle with an ended context returned nil while a load was held")
	}
	if x.Ready("g:slow") {
		t.Fatal("scope ready while its load is held")
	}
	settled := make(chan error, 1)
	go func() { settled <- x.Settle(t.Context()) }()
	close(hold)
	if err := <-settled; err != nil {
		t.Fatal(err)
	}
	if !x.Ready("g:slow") || len(x.IDs("g:slow")) != 100 {
		t.Fatalf("after Settle: ready %v, %d rows, want ready with 100", x.Ready("g:slow"), len(x.IDs("g:slow")))
	}
}

// TestSizedLoadAllocatesOnce: with a Sizer a load allocates the scope's arrays once rather
// than growing them row by row, and answers exactly as an unsized load does.
func TestSizedLoadAllocatesOnce(t *testing.T) {
	const dims, n = 128, 20_000
	rng := rand.New(rand.NewPCG(11, 11))
	st := newStore()
	for i := range n {
		st.set("g:big", int64(i), unit(rng, dims))
	}
	query := unit(rng, dims)
	loadAndSearch := func(sized bool) (uint64, []vecindex.Hit) {
		x := vecindex.New()
		x.SetLoader(st.load, 0)
		if sized {
			x.SetSizer(func(_ context.Context, key string) (int, error) { return n, nil })
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := x.Ensure(t.Context(), "g:big"); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if got := len(x.IDs("g:big")); got != n {
			t.Fatalf("sized %v: %d rows loaded, want %d", sized, got, n)
		}
		return after.TotalAlloc - before.TotalAlloc, x.Search("g:big", query, 20, nil, true) // exact: the load order (a map) varies
	}
	grown, want := loadAndSearch(false)
	sized, got := loadAndSearch(true)
	if !slices.Equal(got, want) {
		t.Fatalf("a sized load answers %v, an unsized one %v", got, want)
	}
	if sized*2 > grown {
		t.Fatalf("a sized load allocated %d bytes, an unsized one %d: want less than half", sized, grown)
	}
	t.Logf("allocated by a load of %d rows: %d MB grown, %d MB sized", n, grown>>20, sized>>20)
}

// TestSizedLoadMakesRoomFirst: a sized load into a full index evicts the scopes that must
// give way before it allocates, not row by row as it fills: the old scope is gone by the
// time the first row is in.
func TestSizedLoadMakesRoomFirst(t *testing.T) {
	const dims, n = 16, 60
	rng := rand.New(rand.NewPCG(13, 13))
	st := newStore()
	for i := range n {
		st.set("g:old", int64(i), unit(rng, dims))
		st.set("g:new", int64(1000+i), unit(rng, dims))
	}
	probe := vecindex.New()
	probe.Upsert("g:probe", 1, "", vecindex.Meta{}, unit(rng, dims))
	perRow := probe.Stats().Bytes + probe.Stats().ExactBytes
	x := vecindex.New()
	var oldAfterFirstRow atomic.Int32 // 1: resident, 2: gone
	first := true
	x.SetLoader(func(ctx context.Context, key string, put func(int64, string, vecindex.Meta, []float32)) error {
		if key != "g:new" {
			return st.load(ctx, key, put)
		}
		return st.load(ctx, key, func(id int64, hash string, m vecindex.Meta, v []float32) {
			put(id, hash, m, v)
			if first {
				first = false
				if x.Resident("g:old") {
					oldAfterFirstRow.Store(1)
				} else {
					oldAfterFirstRow.Store(2)
				}
			}
		})
	}, perRow*(n+n/2)) // room for one scope and its copies, not two
	x.SetSizer(func(context.Context, string) (int, error) { return n, nil })
	ctx := t.Context()
	if err := x.Ensure(ctx, "g:old"); err != nil {
		t.Fatal(err)
	}
	if err := x.Ensure(ctx, "g:new"); err != nil {
		t.Fatal(err)
	}
	if got := oldAfterFirstRow.Load(); got != 2 {
		t.Fatalf("g:old still resident after g:new's first row (state %d): the load allocated before making room", got)
	}
	if !x.Resident("g:new") || len(x.IDs("g:new")) != n {
		t.Fatalf("g:new holds %d rows, want %d", len(x.IDs("g:new")), n)
	}
}
