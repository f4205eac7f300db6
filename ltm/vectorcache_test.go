package ltm_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

const cacheDims = 64

func cacheStore(t *testing.T, path string) *ltm.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Recall.SetEmbedder(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, text := range texts {
			out[i] = fakeopenai.EmbedText(text, cacheDims)
		}
		return out, nil
	}, "fake-embed")
	return s
}

func nearestIDs(s *ltm.Store, owner memory.Owner, text string) []int64 {
	var out []int64
	for _, h := range s.Recall.NearestMemories(owner, fakeopenai.EmbedText(text, cacheDims), 50, true) {
		out = append(out, h.ID)
	}
	return out
}

// TestVectorCacheLazyEvictReload: a scope's vectors load on its first recall, not at open
// and not on a write; past the bound the least recently used scope leaves; a memory
// forgotten while its scope was resident, while it was evicted (by this process or another
// one) is absent after the reload; a reloaded scope holds its own memories only.
func TestVectorCacheLazyEvictReload(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kioku.db")
	s := cacheStore(t, path)
	g1, g2, alice := memory.ServerOwner("g1"), memory.ServerOwner("g2"), memory.PersonalOwner("u1")
	var g1IDs []int64
	for _, c := range []string{"The kiln fires on Tuesdays", "Glaze buckets stay by the sink", "Clay is recycled weekly"} {
		g1IDs = append(g1IDs, testkit.MustRemember(t, s, server("g1", c)).ID)
	}
	g2Note := testkit.MustRemember(t, s, server("g2", "The choir meets on Thursday"))
	private := testkit.MustRemember(t, s, personal("u1", "g1", "My kiln password is taped under the shelf"))

	if n := s.Recall.EmbedStatus().Vectors; n != 0 {
		t.Fatalf("%d vectors resident after writes only, want none before a recall", n)
	}
	if got := nearestIDs(s, g1, "kiln"); len(got) != 3 {
		t.Fatalf("g1 answers %v on its first recall, want its 3 memories", got)
	}
	if n := s.Recall.EmbedStatus().Vectors; n != 3 {
		t.Fatalf("%d vectors resident after g1's first recall, want 3", n)
	}
	// A write to a scope not resident stays in the database only.
	testkit.MustRemember(t, s, server("g3", "The garden gate sticks"))
	if n := s.Recall.EmbedStatus().Vectors; n != 3 {
		t.Fatalf("a write to g3 made %d vectors resident, want g1's 3 only", n)
	}

	// Forget one while resident, then evict g1 by loading g2 under a bound of 2 rows.
	forgotten := g1IDs[0]
	if _, err := s.Memories.Forget(ctx, g1, []int64{forgotten}, "user:u9", ""); err != nil {
		t.Fatal(err)
	}
	perRow := s.Recall.VectorIndexStats().Bytes / int64(s.Recall.EmbedStatus().Vectors)
	s.Recall.SetVectorCache(2 * perRow)
	if err := s.Recall.WarmVectors(ctx, g2); err != nil {
		t.Fatal(err)
	}
	if st := s.Recall.VectorIndexStats(); st.Scopes != 1 || st.Vectors != 1 {
		t.Fatalf("after g2 loaded under a 2-row bound: %+v, want g1 evicted", st)
	}
	// Another process forgets a second g1 memory while g1 is out.
	other := cacheStore(t, path)
	if _, err := other.Memories.Forget(ctx, g1, []int64{g1IDs[1]}, "user:u9", ""); err != nil {
		t.Fatal(err)
	}
	s.Recall.SetVectorCache(ltm.DefaultVectorCacheBytes)
	got := nearestIDs(s, g1, "kiln")
	if !slices.Equal(got, g1IDs[2:]) {
		t.Fatalf("reloaded g1 answers %v, want only %v (forgotten ones absent)", got, g1IDs[2:])
	}
	for _, id := range []int64{private.ID, g2Note.ID} {
		if slices.Contains(got, id) {
			t.Fatalf("reloaded g1 returned memory %d of another scope", id)
		}
	}
	res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "kiln password", Owners: []memory.Owner{g1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Memory.ID == private.ID || r.Memory.ID == forgotten || r.Memory.ID == g1IDs[1] {
			t.Fatalf("g1 recall after reload returned memory %d", r.Memory.ID)
		}
	}
	if got := nearestIDs(s, alice, "kiln password"); !slices.Equal(got, []int64{private.ID}) {
		t.Fatalf("u1's personal scope answers %v, want only their memory", got)
	}
}

// TestTrackerSyncsResidentScopes: the tracker drops from a resident scope what another
// process forgot and adds what it wrote, and leaves scopes that are not resident unloaded.
func TestTrackerSyncsResidentScopes(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kioku.db")
	s := cacheStore(t, path)
	g1 := memory.ServerOwner("g1")
	a := testkit.MustRemember(t, s, server("g1", "Rehearsal starts at seven"))
	testkit.MustRemember(t, s, server("g2", "Bring the music stands"))
	if err := s.Recall.WarmVectors(ctx, g1); err != nil {
		t.Fatal(err)
	}
	other := cacheStore(t, path)
	if _, err := other.Memories.Forget(ctx, g1, []int64{a.ID}, "user:u9", ""); err != nil {
		t.Fatal(err)
	}
	b := testkit.MustRemember(t, other, server("g1", "The hall key is at the bar"))
	if _, err := s.Recall.TrackEmbeddings(ctx, memory.EmbedTrackOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := s.Recall.VectorIndexStats(); st.Scopes != 1 || st.Vectors != 1 {
		t.Fatalf("after the tracker: %+v, want g1 alone with one vector", st)
	}
	if got := nearestIDs(s, g1, "hall key"); !slices.Equal(got, []int64{b.ID}) {
		t.Fatalf("g1 answers %v, want only memory %d", got, b.ID)
	}
}

// TestQuantizedCosines: by default recall's vector scores are the float32 cosines of the
// stored vectors; with QuantizedCosines they are the int8 index's, within 0.01 of them.
func TestQuantizedCosines(t *testing.T) {
	ctx := t.Context()
	s := cacheStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	g1 := memory.ServerOwner("g1")
	texts := []string{"The kiln fires on Tuesdays", "Glaze buckets stay by the sink", "Clay is recycled weekly in the back room"}
	for _, c := range texts {
		testkit.MustRemember(t, s, server("g1", c))
	}
	const query = "when does the kiln fire"
	want := map[string]float64{}
	q := fakeopenai.EmbedText(query, cacheDims)
	for _, c := range texts {
		var d float64
		for i, x := range fakeopenai.EmbedText(c, cacheDims) {
			d += float64(x) * float64(q[i])
		}
		want[c] = d
	}
	for _, exact := range []bool{true, false} {
		s.QuantizedCosines = !exact
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: query, Owners: []memory.Owner{g1}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(texts) {
			t.Fatalf("exact=%v: %d results, want %d", exact, len(res), len(texts))
		}
		tol := 0.01
		if exact {
			tol = 1e-5
		}
		for _, r := range res {
			if d := r.Vector - want[r.Memory.Content]; d > tol || d < -tol {
				t.Fatalf("exact=%v: %q scored cosine %.6f, float32 cosine %.6f", exact, r.Memory.Content, r.Vector, want[r.Memory.Content])
			}
		}
	}
}
