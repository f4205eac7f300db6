package ltm_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// TestVectorsWaitingToBeStored: a new memory's vector answers recall at once, from the
// vector index and from a reload of its scope, while it waits to be stored; it is stored
// with the others of its batch, and by Close, so another process finds them.
func TestVectorsWaitingToBeStored(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kioku.db")
	s := cacheStore(t, path)
	s.VectorWriteDelay = time.Hour
	g1 := memory.ServerOwner("g1")
	texts := []string{"The kiln fires on Thursday", "Glaze orders go to Mina", "The wheel room opens at nine"}
	var mems []*memory.Memory
	for _, c := range texts {
		mems = append(mems, testkit.MustRemember(t, s, server("g1", c)))
	}
	if n := embeddingRows(t, s); n != 0 {
		t.Fatalf("%d vectors stored before the delay ran out; the test needs them waiting", n)
	}
	nearest := func(text string) int64 {
		ids := nearestIDs(s, g1, text)
		if len(ids) == 0 {
			return 0
		}
		return ids[0]
	}
	for i, c := range texts {
		if got := nearest(c); got != mems[i].ID {
			t.Errorf("%q: nearest memory #%d, want #%d", c, got, mems[i].ID)
		}
	}
	// The scope reloads from the database: the waiting vectors are found there too.
	s.Recall.SetVectorCache(1)
	s.Recall.SetVectorCache(ltm.DefaultVectorCacheBytes)
	if err := s.Recall.WarmVectors(ctx, g1); err != nil {
		t.Fatal(err)
	}
	if got := nearest(texts[1]); got != mems[1].ID {
		t.Errorf("after a reload: nearest memory #%d, want #%d", got, mems[1].ID)
	}
	// (TestExactCopiesRankAsStoredVectors checks recall's exact cosines from waiting vectors.)
	res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: texts[2], Owners: []memory.Owner{g1}})
	if err != nil || len(res) == 0 || res[0].Memory.ID != mems[2].ID || res[0].Vector == 0 {
		t.Fatalf("search %q: %+v, %v; want #%d first, found by its vector too", texts[2], res, err, mems[2].ID)
	}

	if err := s.Recall.FlushVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if n := embeddingRows(t, s); n != 3 {
		t.Fatalf("%d vectors stored after the flush, want 3", n)
	}
	last := testkit.MustRemember(t, s, server("g1", "Clay is stacked by the door"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := cacheStore(t, path)
	if n := embeddingRows(t, s2); n != 4 {
		t.Fatalf("another process finds %d stored vectors, want 4 (Close stores the waiting one)", n)
	}
	if err := s2.Recall.WarmVectors(ctx, g1); err != nil {
		t.Fatal(err)
	}
	if ids := nearestIDs(s2, g1, last.Content); len(ids) == 0 || ids[0] != last.ID {
		t.Errorf("another process: nearest %v, want #%d first", ids, last.ID)
	}
}

// TestVectorOfForgottenMemoryIsNotStored: a memory forgotten before its vector was stored
// leaves no vector of its words; recovered, it is embedded again.
func TestVectorOfForgottenMemoryIsNotStored(t *testing.T) {
	ctx := t.Context()
	s := cacheStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	s.VectorWriteDelay = time.Hour
	g1 := memory.ServerOwner("g1")
	m := testkit.MustRemember(t, s, server("g1", "The old door code is 4411"))
	if _, err := s.Memories.Forget(ctx, g1, []int64{m.ID}, "user:u1", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Recall.FlushVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if n := embeddingRows(t, s); n != 0 {
		t.Fatalf("%d vectors stored of a memory forgotten before the store", n)
	}
	if _, err := s.Memories.Recover(ctx, g1, m.ID, 0, "user:u1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Recall.FlushVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if n := embeddingRows(t, s); n != 1 {
		t.Fatalf("%d vectors stored after the memory was recovered, want 1", n)
	}
	if ids := s.Recall.NearestMemories(g1, fakeopenai.EmbedText(m.Content, cacheDims), 1, true); len(ids) != 1 || ids[0].ID != m.ID {
		t.Errorf("recovered memory not found by its vector: %v", ids)
	}
}
