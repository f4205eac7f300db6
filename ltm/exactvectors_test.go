package ltm_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestExactCopiesRankAsStoredVectors: hybrid recall ranks and scores the same whether the
// vector index re-scores from its float32 copies or, once they were dropped for room, from
// the vectors stored in the database.
func TestExactCopiesRankAsStoredVectors(t *testing.T) {
	ctx := t.Context()
	s := cacheStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	s.VectorWriteDelay = time.Hour // read first while waiting to be stored, then stored
	g1 := memory.ServerOwner("g1")
	topics := []string{"kiln", "glaze", "clay", "wheel", "studio", "firing", "bisque", "slip"}
	for i := range 120 {
		testkit.MustRemember(t, s, server("g1", fmt.Sprintf("note %d about the %s and the %s", i, topics[i%len(topics)], topics[(i*3+1)%len(topics)])))
	}
	// The words of the notes are counted together before the searches, so that all of them
	// read the same counts.
	if err := s.Recall.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Recall.WarmVectors(ctx, g1); err != nil {
		t.Fatal(err)
	}
	queries := []string{"when is the kiln firing", "glaze and slip", "studio wheel", "bisque", "nothing matches this"}
	search := func() [][]memory.SearchResult {
		var out [][]memory.SearchResult
		for _, q := range queries {
			res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: q, Owners: []memory.Owner{g1}, Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res)
		}
		return out
	}
	withCopies := search()
	if st := s.Recall.VectorIndexStats(); st.ExactVectors != 120 {
		t.Fatalf("index stats %+v, want float32 copies of all 120 vectors", st)
	}
	// A bound that fits the int8 rows but no copy.
	s.Recall.SetVectorCache(s.Recall.VectorIndexStats().Bytes)
	if st := s.Recall.VectorIndexStats(); st.ExactVectors != 0 || st.Vectors != 120 {
		t.Fatalf("index stats %+v, want 120 rows without copies", st)
	}
	for _, stored := range []bool{false, true} {
		if stored {
			if err := s.Recall.FlushVectors(ctx); err != nil {
				t.Fatal(err)
			}
		}
		fromStore := search()
		for i := range queries {
			a, b := withCopies[i], fromStore[i]
			if len(a) != len(b) {
				t.Fatalf("%q: %d results with copies, %d from the store (stored %v)", queries[i], len(a), len(b), stored)
			}
			for j := range a {
				if a[j].Memory.ID != b[j].Memory.ID || a[j].Score != b[j].Score || a[j].Vector != b[j].Vector {
					t.Fatalf("%q result %d: #%d %v/%v with copies, #%d %v/%v from the store (stored %v)", queries[i], j,
						a[j].Memory.ID, a[j].Score, a[j].Vector, b[j].Memory.ID, b[j].Score, b[j].Vector, stored)
				}
			}
		}
	}
}

// TestLargeScopeFirstRecallFromStore: after a start, the first recall of a scope too large
// to load inline answers at once, its keyword matches scored with the exact cosines of
// their stored vectors, while the scope's vectors load in the background; once loaded,
// recall finds by vector alone too.
func TestLargeScopeFirstRecallFromStore(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kioku.db")
	s := cacheStore(t, path)
	g1 := memory.ServerOwner("g1")
	batch := make([]memory.Memory, 0, 300)
	for i := range 300 {
		batch = append(batch, server("g1", fmt.Sprintf("filler note number %d about the weekly schedule", i)))
	}
	batch = append(batch, server("g1", "The kiln password is on the whiteboard"))
	if _, err := s.Transfer.RememberMany(ctx, batch, "test"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = cacheStore(t, path)
	query := memory.SearchQuery{Text: "kiln password", Owners: []memory.Owner{g1}}
	first, err := s.Recall.Search(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) == 0 || first[0].Memory.Content != "The kiln password is on the whiteboard" || first[0].Vector <= 0 {
		t.Fatalf("first recall after the start answered %+v, want the kiln memory with its cosine", first)
	}
	if err := s.Recall.WarmVectors(ctx, g1); err != nil { // waits for the background load
		t.Fatal(err)
	}
	if n := s.Recall.EmbedStatus().Vectors; n != 301 {
		t.Fatalf("%d vectors resident after the load, want 301", n)
	}
	again, err := s.Recall.Search(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Memory.ID != first[0].Memory.ID || again[0].Vector != first[0].Vector {
		t.Fatalf("after the load the kiln memory scores %v (#%d), before it %v (#%d)", again[0].Vector, again[0].Memory.ID,
			first[0].Vector, first[0].Memory.ID)
	}
}

// TestSearchResultsAreWholeMemories: candidates are ranked from a few columns, but every
// result carries the whole stored memory, as Memories.Get returns it.
func TestSearchResultsAreWholeMemories(t *testing.T) {
	ctx := t.Context()
	s := cacheStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	g1 := memory.ServerOwner("g1")
	m := server("g1", "The kiln is fired on Tuesdays by Dana")
	m.Tags = []string{"pottery", "schedule"}
	m.Provenance = memory.Provenance{AuthorID: "u1", Author: "Dana", ChannelID: "c1", MessageID: "m1"}
	stored := testkit.MustRemember(t, s, m)
	testkit.MustRemember(t, s, server("g1", "Glaze buckets stay by the sink"))
	res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "kiln tuesday", Owners: []memory.Owner{g1}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Memories.Get(ctx, g1, stored.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || res[0].Memory.ID != want.ID {
		t.Fatalf("search answered %+v, want memory %d first", res, want.ID)
	}
	if got := res[0].Memory; fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", *want) {
		t.Fatalf("result memory\n%+v\nwant the stored one\n%+v", *got, *want)
	}
}
