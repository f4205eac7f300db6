package kwindex_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kioku-bot/kioku/internal/kwindex"
)

// memSource is a store in memory: rows by id and a change log of the ids each write
// touched, which trim can cut from the front.
type memSource struct {
	mu    sync.Mutex
	rows  map[int64]kwindex.Row
	log   [][]int64 // position first+i names log[i]
	first int64
	// beforeLoad runs when a build has read the log's position and not yet the rows,
	// afterLoad when it has read the rows; onSize when a query asks a scope's size.
	beforeLoad, afterLoad, onSize func()
	// loads counts the scopes' loads: one per build.
	loads atomic.Int32
}

func newMemSource() *memSource { return &memSource{rows: map[int64]kwindex.Row{}, first: 1} }

func (m *memSource) write(key string, id int64, content string, live bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[id] = kwindex.Row{Doc: kwindex.Doc{ID: id, Content: content}, ScopeKey: key, Live: live}
	m.log = append(m.log, []int64{id})
}

func (m *memSource) trim() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.first += int64(len(m.log))
	m.log = nil
}

func (m *memSource) Size(_ context.Context, key string) (int, error) {
	if m.onSize != nil {
		m.onSize()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, r := range m.rows {
		if r.ScopeKey == key && r.Live {
			n++
		}
	}
	return n, nil
}

func (m *memSource) Load(_ context.Context, key string) ([]kwindex.Doc, error) {
	m.loads.Add(1)
	if m.beforeLoad != nil {
		m.beforeLoad()
		m.beforeLoad = nil
	}
	m.mu.Lock()
	var out []kwindex.Doc
	for _, r := range m.rows {
		if r.ScopeKey == key && r.Live {
			out = append(out, r.Doc)
		}
	}
	m.mu.Unlock()
	if m.afterLoad != nil {
		m.afterLoad()
		m.afterLoad = nil
	}
	return out, nil
}

func (m *memSource) Read(_ context.Context, ids []int64) ([]kwindex.Row, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []kwindex.Row
	for _, id := range ids {
		if r, ok := m.rows[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *memSource) Ends(context.Context) (last, first int64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.first + int64(len(m.log)) - 1, m.first, nil
}

func (m *memSource) Changed(_ context.Context, from, to int64) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if from+1 < m.first {
		return nil, fmt.Errorf("trimmed: %w", kwindex.ErrLogTrimmed)
	}
	var ids []int64
	for pos := from + 1; pos <= to && pos-m.first < int64(len(m.log)); pos++ {
		ids = append(ids, m.log[pos-m.first]...)
	}
	return ids, nil
}

func searchIDs(t *testing.T, k *kwindex.Indexes, key, word string) []int64 {
	t.Helper()
	if err := k.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	idx, err := k.Ready(t.Context(), key)
	if err != nil || idx == nil {
		t.Fatalf("scope %s not ready: %v", key, err)
	}
	var ids []int64
	for _, h := range idx.Search(kwindex.Query{Terms: []string{word}, Limit: 10}) {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	return ids
}

// Indexes built from a Source follow its change log: writes, edits, deletes and moves
// between scopes reach the ready scopes by the next Sync, and a write made while a scope
// was being built is in it when it turns ready.
func TestIndexesFollowTheChangeLog(t *testing.T) {
	src := newMemSource()
	k := kwindex.NewIndexes(src, func() kwindex.Settings {
		return kwindex.Settings{Params: kwindex.DefaultParams, SyncBuild: 100}
	})
	defer k.Close()
	src.write("a", 1, "lantern parade", true)
	src.write("a", 2, "lantern snacks", true)
	src.write("b", 3, "torch parade", true)
	// One write lands between the build's reading of the log and of the rows, another
	// after the rows were read: the next Sync brings it.
	src.beforeLoad = func() { src.write("a", 4, "lantern workshop", true) }
	src.afterLoad = func() { src.write("a", 5, "lantern oil", true) }
	if got := searchIDs(t, k, "a", "lantern"); !slices.Equal(got, []int64{1, 2, 4}) {
		t.Fatalf("after the build: %v", got)
	}
	if got := searchIDs(t, k, "a", "lantern"); !slices.Equal(got, []int64{1, 2, 4, 5}) {
		t.Fatalf("after the next sync: %v", got)
	}
	searchIDs(t, k, "b", "torch")

	src.write("a", 1, "torch parade", true) // edited
	src.write("a", 2, "lantern snacks", false)
	src.write("b", 4, "lantern workshop", true) // moved from a to b
	if got := searchIDs(t, k, "a", "lantern"); !slices.Equal(got, []int64{5}) {
		t.Errorf("a: lantern after the changes: %v, want [5]", got)
	}
	if got := searchIDs(t, k, "a", "torch"); !slices.Equal(got, []int64{1}) {
		t.Errorf("a: torch after the edit: %v", got)
	}
	if got := searchIDs(t, k, "b", "lantern"); !slices.Equal(got, []int64{4}) {
		t.Errorf("b: lantern after the move: %v", got)
	}
	if k.Holds("snacks") || k.Has(2) {
		t.Error("the deleted document is still held")
	}
}

// When the log lost changes the indexes never applied, every ready scope is dropped and
// rebuilt from the rows on its next use.
func TestIndexesRebuildAfterTrimmedLog(t *testing.T) {
	src := newMemSource()
	k := kwindex.NewIndexes(src, func() kwindex.Settings {
		return kwindex.Settings{Params: kwindex.DefaultParams, SyncBuild: 100}
	})
	defer k.Close()
	src.write("a", 1, "lantern parade", true)
	searchIDs(t, k, "a", "lantern")
	src.write("a", 1, "lantern parade", false)
	src.write("a", 2, "lantern snacks", true)
	src.trim()
	src.write("a", 3, "lantern workshop", true)
	if err := k.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k.Has(1) {
		t.Error("a scope that missed changes is still ready")
	}
	if got := searchIDs(t, k, "a", "lantern"); !slices.Equal(got, []int64{2, 3}) {
		t.Errorf("after the rebuild: %v, want [2 3]", got)
	}
}

// Past the bound the least recently used scopes are dropped; the one just built stays.
func TestIndexesEvict(t *testing.T) {
	src := newMemSource()
	k := kwindex.NewIndexes(src, func() kwindex.Settings {
		return kwindex.Settings{Params: kwindex.DefaultParams, SyncBuild: 100, Max: 3}
	})
	defer k.Close()
	for i, key := range []string{"a", "b", "c"} {
		src.write(key, int64(2*i+1), "word"+key, true)
		src.write(key, int64(2*i+2), "word"+key, true)
	}
	if err := k.Warm(t.Context(), "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	if k.Holds("worda") || k.Holds("wordb") || !k.Holds("wordc") {
		t.Errorf("after warming a, b and c with room for 3 documents: a %v b %v c %v",
			k.Holds("worda"), k.Holds("wordb"), k.Holds("wordc"))
	}
}

// TestIndexesBuildAScopeOnce: two queries find a small scope not ready; the one that
// reaches the build after the other built it uses that index instead of building (and
// swapping in) another, which queries already searching the first would race with.
func TestIndexesBuildAScopeOnce(t *testing.T) {
	src := newMemSource()
	for id := range int64(3) {
		src.write("s", id+1, fmt.Sprintf("raid night %d", id), true)
	}
	k := kwindex.NewIndexes(src, func() kwindex.Settings { return kwindex.Settings{Params: kwindex.DefaultParams, SyncBuild: 100} })
	// The first query to ask the scope's size waits there until the second has built it.
	var sized atomic.Int32
	waiting, built := make(chan struct{}), make(chan struct{})
	src.onSize = func() {
		if sized.Add(1) == 1 {
			close(waiting)
			<-built
		}
	}
	late := make(chan *kwindex.Scope, 1)
	go func() {
		idx, err := k.Ready(t.Context(), "s")
		if err != nil {
			t.Error(err)
		}
		late <- idx
	}()
	<-waiting
	first, err := k.Ready(t.Context(), "s")
	if err != nil || first == nil {
		t.Fatalf("the scope was not built: %v", err)
	}
	close(built)
	if second := <-late; second != first {
		t.Errorf("the later query got index %p, want the one built (%p)", second, first)
	}
	if n := src.loads.Load(); n != 1 {
		t.Errorf("the scope was loaded %d times, want once", n)
	}
}
