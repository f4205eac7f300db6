package postgres_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/ltm/storetest"
	"github.com/kioku-bot/kioku/memory"
)

// Recall keeps vectors current for the pipeline's embedding tracker.
var _ pipeline.Embeddings = (*ltm.Recall)(nil)

// wordDims is the test embedding model, ltm's tests': every listed word is one unit along
// its dimension, so words sharing a dimension are synonyms (cosine 1) that the keyword
// leg sees as different words. Text with no listed word embeds to the zero vector.
var wordDims = map[string]int{
	"car": 0, "automobile": 0,
	"lamp": 1, "lantern": 1,
	"coffee": 2, "espresso": 2,
	"dog": 3, "puppy": 3, "hound": 3,
	"pizza":  4,
	"guitar": 5, "ukulele": 5,
}

const wordModelDims = 8

func wordVector(text string) []float32 {
	v := make([]float32, wordModelDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if d, ok := wordDims[w]; ok {
			v[d]++
		}
	}
	return v
}

// wordEmbedder is the EmbedFunc of these tests. It counts calls and texts; failFrom makes
// every call from that number on fail, as a provider that went down.
type wordEmbedder struct {
	calls    atomic.Int64
	texts    atomic.Int64
	failFrom atomic.Int64 // 0: never
}

var errProviderDown = errors.New("embedding provider is down")

func (e *wordEmbedder) embed(_ context.Context, texts []string) ([][]float32, error) {
	n := e.calls.Add(1)
	if f := e.failFrom.Load(); f > 0 && n >= f {
		return nil, errProviderDown
	}
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = wordVector(t)
	}
	return out, nil
}

func withWords(stores ...*postgres.Store) *wordEmbedder {
	e := &wordEmbedder{}
	for _, s := range stores {
		s.Recall.SetEmbedder(e.embed, "words")
	}
	return e
}

func remember(t *testing.T, s *postgres.Store, owner memory.Owner, content string) *memory.Memory {
	t.Helper()
	m := memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID, UserID: owner.UserID, Content: content}
	res, err := s.Memories.Remember(t.Context(), m, memory.ActorCLI)
	if err != nil || !res.Created {
		t.Fatalf("remember %q: %+v %v", content, res, err)
	}
	return res.Memory
}

// nearest is the vector leg of owner's scope alone, from s's in-process index: the ids
// whose vector is close to word's.
func nearest(t *testing.T, s *postgres.Store, owner memory.Owner, word string) []int64 {
	t.Helper()
	var out []int64
	for _, h := range s.Recall.NearestMemories(owner, wordVector(word), 10, false) {
		if h.Cosine > 0.5 {
			out = append(out, h.ID)
		}
	}
	return out
}

func syncChanges(t *testing.T, s *postgres.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := s.SyncChanges(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresHybridRecall: with an embedding model the vector leg finds a paraphrase the
// keyword leg cannot (no shared word), fused by recall.Rank with its cosine; the vector is
// stored as ltm stores it (little-endian float32 bytes), so rows copy between the stores.
func TestPostgresHybridRecall(t *testing.T) {
	s := pgtest.Open(t)
	e := withWords(s)
	g := memory.ServerOwner("g1")
	car := remember(t, s, g, "My automobile is parked in the north lot")
	remember(t, s, g, "The espresso machine on the second floor is broken")
	for _, c := range []string{"The quiz night moved to Thursday", "Bring a jacket to the rooftop party", "The north lot closes at ten"} {
		remember(t, s, g, c)
	}
	ask := func(keywordOnly bool) []memory.SearchResult {
		res, err := s.Recall.Search(t.Context(), memory.SearchQuery{Text: "where is my car", Owners: []memory.Owner{g}, Limit: 5, KeywordOnly: keywordOnly})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if slices.Contains(resultIDs(ask(true)), car.ID) {
		t.Fatal("keyword recall found the paraphrase: the test proves nothing")
	}
	res := ask(false)
	if len(res) == 0 || res[0].Memory.ID != car.ID {
		t.Fatalf("hybrid recall ranked %v first, want #%d (automobile)", resultIDs(res), car.ID)
	}
	if math.Abs(res[0].Vector-1) > 1e-3 || res[0].Keyword != 0 {
		t.Errorf("the paraphrase scored vector %.4f keyword %.4f, want 1 and 0", res[0].Vector, res[0].Keyword)
	}
	st := s.Recall.EmbedStatus()
	// The other memories hold no word of the model: their zero vectors are not indexed.
	if st.Model != "words" || st.Vectors != 2 || st.Down {
		t.Errorf("embed status %+v, want model words, 2 vectors, up", st)
	}
	var blob []byte
	if err := s.Pool().QueryRow(t.Context(), `SELECT vector FROM embeddings WHERE content_hash = $1 AND model = 'words'`, car.Hash).Scan(&blob); err != nil {
		t.Fatal(err)
	}
	want := wordVector(car.Content)
	if len(blob) != 4*len(want) {
		t.Fatalf("stored vector has %d bytes, want %d", len(blob), 4*len(want))
	}
	for i, x := range want {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:])); got != x {
			t.Fatalf("stored coordinate %d is %v, want %v (little-endian float32, as ltm)", i, got, x)
		}
	}
	// A query embedded once is cached: the same question asks the provider nothing.
	before := e.calls.Load()
	ask(false)
	if e.calls.Load() != before {
		t.Error("the same query was embedded again")
	}
}

// TestPostgresVectorsAcrossProcesses: two stores on one database are two processes, each
// with its own vector index. A memory forgotten through one leaves the other's index at once
// (its notice, not a reload or a check against the rows, takes it out), and a reload does
// not bring it back; an edit through one is re-embedded and the other's index answers with
// the new content's vector.
func TestPostgresVectorsAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	a, b := stores[0], stores[1]
	e := withWords(a, b)
	g := memory.ServerOwner("g1")
	dog := remember(t, a, g, "The puppy sleeps by the door")
	coffee := remember(t, a, g, "We drink espresso after lunch")
	if got := nearest(t, b, g, "dog"); !slices.Equal(got, []int64{dog.ID}) {
		t.Fatalf("the other store's index finds %v for dog, want #%d", got, dog.ID)
	}

	t.Run("ForgetLeavesTheOtherIndex", func(t *testing.T) {
		if _, err := a.Memories.Forget(t.Context(), g, []int64{dog.ID}, memory.ActorCLI, ""); err != nil {
			t.Fatal(err)
		}
		syncChanges(t, b)
		if got := nearest(t, b, g, "dog"); len(got) != 0 {
			t.Fatalf("the other store's index still finds %v for dog after the memory was forgotten", got)
		}
		res, err := b.Recall.Search(t.Context(), memory.SearchQuery{Text: "hound", Owners: []memory.Owner{g}})
		if err != nil || slices.Contains(resultIDs(res), dog.ID) {
			t.Fatalf("the other store recalls %v (%v) for hound", resultIDs(res), err)
		}
		// The index is emptied (as a model change does) and loaded again from the rows.
		b.Recall.SetEmbedder(nil, "")
		b.Recall.SetEmbedder(e.embed, "words")
		if got := nearest(t, b, g, "dog"); len(got) != 0 {
			t.Fatalf("a reload brought back %v for dog", got)
		}
		if got := nearest(t, b, g, "coffee"); !slices.Equal(got, []int64{coffee.ID}) {
			t.Fatalf("the reloaded index finds %v for coffee, want #%d", got, coffee.ID)
		}
	})

	t.Run("EditIsReembedded", func(t *testing.T) {
		text := "We play guitar after lunch"
		if _, err := a.Memories.Modify(t.Context(), g, coffee.ID, memory.Change{Content: &text}, memory.ActorCLI); err != nil {
			t.Fatal(err)
		}
		syncChanges(t, b)
		if got := nearest(t, b, g, "coffee"); len(got) != 0 {
			t.Errorf("the other store's index still answers coffee with %v after the edit", got)
		}
		if got := nearest(t, b, g, "ukulele"); !slices.Equal(got, []int64{coffee.ID}) {
			t.Errorf("the other store's index finds %v for the edited content, want #%d", got, coffee.ID)
		}
		res, err := b.Recall.Search(t.Context(), memory.SearchQuery{Text: "ukulele", Owners: []memory.Owner{g}, Limit: 3})
		if err != nil || len(res) == 0 || res[0].Memory.ID != coffee.ID || res[0].Memory.Content != text || res[0].Vector < 0.99 {
			t.Fatalf("the other store recalls %+v (%v) for ukulele, want the edited memory by its vector", res, err)
		}
	})
}

// TestPostgresChangeFeedReconnects: when the change feed's connection is killed, the
// changes made while it was down are not lost: the feed reconnects, drops every resident
// scope (so a memory forgotten meanwhile is not served from the index), announces the
// forget-mes of the gap and then a resync to its hooks, and later changes arrive through
// the new connection.
func TestPostgresChangeFeedReconnects(t *testing.T) {
	stores := openShared(t, 2)
	a, b := stores[0], stores[1]
	withWords(a, b)
	ctx := t.Context()
	var (
		changes = make(chan postgres.Change, 100)
		seen    []postgres.Change
	)
	b.OnChange(func(c postgres.Change) { changes <- c })
	drain := func() {
		for {
			select {
			case c := <-changes:
				seen = append(seen, c)
			default:
				return
			}
		}
	}
	g := memory.ServerOwner("g1")
	dog := remember(t, a, g, "The puppy sleeps by the door")
	car := remember(t, a, g, "My automobile is red")
	const alice = "100000000000000001"
	remember(t, a, memory.PersonalOwner(alice), "My lantern is blue")
	if got := nearest(t, b, g, "dog"); !slices.Equal(got, []int64{dog.ID}) {
		t.Fatalf("the other store's index finds %v for dog, want #%d", got, dog.ID)
	}

	release := b.HoldReconnect()
	pid := b.ListenerPID()
	if _, err := a.Pool().Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFeedDown(ctx); err != nil {
		t.Fatal(err)
	}
	// Written while the feed is down: no notice reaches b.
	if _, err := a.Memories.Forget(ctx, g, []int64{dog.ID}, memory.ActorCLI, ""); err != nil {
		t.Fatal(err)
	}
	preview, err := a.Confirmations.PreviewForgetMe(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Confirmations.ConfirmForgetMe(ctx, alice, preview.Token); err != nil {
		t.Fatal(err)
	}
	release()
	syncChanges(t, b)
	if b.ListenerPID() == pid || b.ListenerPID() == 0 {
		t.Fatalf("the feed's connection is %d after reconnecting, was %d", b.ListenerPID(), pid)
	}
	if got := nearest(t, b, g, "dog"); len(got) != 0 {
		t.Fatalf("after the reconnect the index still finds %v for dog, forgotten while the feed was down", got)
	}
	drain()
	forgot, resynced := -1, -1
	for i, c := range seen {
		switch {
		case c.Kind == postgres.MemberForgotten && c.UserID == alice:
			forgot = i
		case c.Kind == postgres.ChangesResynced:
			resynced = i
		}
	}
	if forgot < 0 || resynced < 0 || forgot > resynced {
		t.Fatalf("hooks saw %+v, want alice's forget-me and then a resync", seen)
	}

	// A change after the reconnect arrives as a notice on the new connection.
	if got := nearest(t, b, g, "car"); !slices.Equal(got, []int64{car.ID}) {
		t.Fatalf("the index finds %v for car, want #%d", got, car.ID)
	}
	seen = nil
	if _, err := a.Memories.Forget(ctx, g, []int64{car.ID}, memory.ActorCLI, ""); err != nil {
		t.Fatal(err)
	}
	syncChanges(t, b)
	drain()
	if !slices.ContainsFunc(seen, func(c postgres.Change) bool {
		return c.Kind == postgres.MemoriesChanged && c.ScopeKey == g.Key() && slices.Contains(c.IDs, car.ID)
	}) {
		t.Errorf("hooks saw %+v, want the forget of #%d", seen, car.ID)
	}
	if got := nearest(t, b, g, "car"); len(got) != 0 {
		t.Errorf("the index still finds %v for car after a forget through the new connection", got)
	}
}

// TestPostgresForgetMeRemovesVectors: forget-me through one store removes the member's
// vectors from the database and from both stores' indexes, empties the other store's
// query vector cache (keyed by what people searched), and tells its hooks once; another
// member's vectors stay.
func TestPostgresForgetMeRemovesVectors(t *testing.T) {
	stores := openShared(t, 2)
	a, b := stores[0], stores[1]
	e := withWords(a, b)
	ctx := t.Context()
	const alice, bob = "100000000000000001", "200000000000000002"
	aliceMe, bobMe := memory.PersonalOwner(alice), memory.PersonalOwner(bob)
	hers := remember(t, a, aliceMe, "My puppy is called quokka")
	his := remember(t, a, bobMe, "My hound is called rex")
	var forgotten atomic.Int32
	b.OnChange(func(c postgres.Change) {
		if c.Kind == postgres.MemberForgotten && c.UserID == alice {
			forgotten.Add(1)
		}
	})
	for _, s := range stores {
		if got := nearest(t, s, aliceMe, "dog"); !slices.Equal(got, []int64{hers.ID}) {
			t.Fatalf("her scope's index finds %v, want #%d", got, hers.ID)
		}
	}
	question := memory.SearchQuery{Text: "what is my puppy called", Owners: []memory.Owner{aliceMe}}
	if _, err := b.Recall.Search(ctx, question); err != nil {
		t.Fatal(err)
	}
	preview, err := a.Confirmations.PreviewForgetMe(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Confirmations.ConfirmForgetMe(ctx, alice, preview.Token); err != nil {
		t.Fatal(err)
	}
	syncChanges(t, b)
	for i, s := range stores {
		if got := nearest(t, s, aliceMe, "dog"); len(got) != 0 {
			t.Errorf("store %d's index still finds %v in her scope", i, got)
		}
	}
	count := func(hash string) (n int) {
		if err := a.Pool().QueryRow(ctx, `SELECT count(*) FROM embeddings WHERE content_hash = $1`, hash).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(hers.Hash); n != 0 {
		t.Errorf("%d vectors of her memory are left in the database", n)
	}
	if n := count(his.Hash); n != 1 {
		t.Errorf("%d vectors of his memory are in the database, want 1", n)
	}
	if got := nearest(t, b, bobMe, "dog"); !slices.Equal(got, []int64{his.ID}) {
		t.Errorf("his scope's index finds %v, want #%d", got, his.ID)
	}
	if n := forgotten.Load(); n != 1 {
		t.Errorf("the other store's hooks were told of her forget-me %d times, want once", n)
	}
	// Her question is no longer cached: asking it again embeds it again.
	before := e.calls.Load()
	if _, err := b.Recall.Search(ctx, question); err != nil {
		t.Fatal(err)
	}
	if e.calls.Load() == before {
		t.Error("the other store still had her question's vector cached after her forget-me")
	}
}

// TestPostgresTrackEmbeddings: memories written while the provider is down are stored
// without vectors; the tracker fills them in batches, and a run stops at the first provider
// failure: that batch stores nothing and no further call is made, while what earlier batches
// stored is kept and found.
func TestPostgresTrackEmbeddings(t *testing.T) {
	s := pgtest.Open(t)
	clock := storetest.NewClock(storetest.Epoch)
	s.Now = clock.Now
	e := withWords(s)
	e.failFrom.Store(1)
	g := memory.ServerOwner("g1")
	var mems []*memory.Memory
	for _, c := range []string{"The puppy sleeps", "Our automobile is red", "Espresso at noon", "A lantern by the gate", "Pizza on Friday"} {
		mems = append(mems, remember(t, s, g, c))
	}
	coverage := func() int {
		c, err := s.Recall.EmbeddingCoverage(t.Context(), "words")
		if err != nil || c.Live != len(mems) {
			t.Fatalf("coverage %+v %v, want %d live", c, err, len(mems))
		}
		return c.Embedded
	}
	if n := coverage(); n != 0 {
		t.Fatalf("%d memories have vectors though the provider was down", n)
	}
	track := func(opt memory.EmbedTrackOptions) memory.EmbedTrackResult {
		res, err := s.Recall.TrackEmbeddings(t.Context(), opt)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Marked down after the first failure: the run asks nothing.
	calls := e.calls.Load()
	if res := track(memory.EmbedTrackOptions{}); res.Calls != 0 || !strings.Contains(res.Skipped, "marked down") || e.calls.Load() != calls {
		t.Fatalf("a run while marked down: %+v", res)
	}
	clock.Advance(time.Hour)
	// Still failing: one call, nothing stored.
	res := track(memory.EmbedTrackOptions{Batch: 2})
	if res.Calls != 1 || res.Embedded != 0 || res.Missing != len(mems) || !strings.Contains(res.Skipped, errProviderDown.Error()) {
		t.Fatalf("a run on a failing provider: %+v", res)
	}
	if n := coverage(); n != 0 {
		t.Fatalf("a failed run stored %d vectors", n)
	}
	if _, err := s.Maintenance.EmbedMissing(t.Context()); err == nil {
		t.Error("EmbedMissing reported success while the provider is marked down")
	}
	// Back up for one call only: the first batch is stored, the run stops at the second.
	clock.Advance(time.Hour)
	e.failFrom.Store(e.calls.Load() + 2)
	res = track(memory.EmbedTrackOptions{Batch: 2})
	if res.Calls != 2 || res.Embedded != 2 || res.Missing != len(mems)-2 || res.Skipped == "" {
		t.Fatalf("a run that failed on its second call: %+v", res)
	}
	if n := coverage(); n != 2 {
		t.Fatalf("%d vectors stored, want the first batch's 2", n)
	}
	clock.Advance(time.Hour)
	e.failFrom.Store(0)
	res = track(memory.EmbedTrackOptions{Batch: 2})
	if res.Embedded != len(mems)-2 || res.Missing != 0 || res.Skipped != "" || res.Calls != 2 {
		t.Fatalf("the catch-up run: %+v", res)
	}
	if n := coverage(); n != len(mems) {
		t.Fatalf("%d vectors stored, want %d", n, len(mems))
	}
	if got := nearest(t, s, g, "hound"); !slices.Equal(got, []int64{mems[0].ID}) {
		t.Errorf("the index finds %v for hound, want #%d", got, mems[0].ID)
	}
	if res := track(memory.EmbedTrackOptions{}); res.Calls != 0 || res.Missing != 0 {
		t.Errorf("a run with nothing to do: %+v", res)
	}
}

// TestPostgresPrefetchEmbeddings: a text embedded ahead of its write is not embedded again
// when the memory is written.
func TestPostgresPrefetchEmbeddings(t *testing.T) {
	s := pgtest.Open(t)
	e := withWords(s)
	text := "The lantern festival is in August"
	if err := s.Facts.PrefetchEmbeddings(t.Context(), []string{text}); err != nil {
		t.Fatal(err)
	}
	texts := e.texts.Load()
	m := remember(t, s, memory.ServerOwner("g1"), text)
	if e.texts.Load() != texts {
		t.Error("the write embedded a text that was prefetched")
	}
	if got := nearest(t, s, memory.ServerOwner("g1"), "lamp"); !slices.Equal(got, []int64{m.ID}) {
		t.Errorf("the index finds %v for lamp, want #%d", got, m.ID)
	}
}

// TestPostgresVectorCacheLazyAndBounded: a process holds only the scopes it recalled:
// nothing at open or after writes, a scope from its first recall, and past the byte bound
// the least recently recalled scope leaves until its next recall loads it again.
func TestPostgresVectorCacheLazyAndBounded(t *testing.T) {
	stores := openShared(t, 2)
	a, b := stores[0], stores[1]
	withWords(a, b)
	g1, g2 := memory.ServerOwner("g1"), memory.ServerOwner("g2")
	dog := remember(t, a, g1, "The puppy sleeps by the door")
	car := remember(t, a, g2, "My automobile is red")
	if st := b.Recall.VectorIndexStats(); st.Vectors != 0 || st.Scopes != 0 {
		t.Fatalf("a store that recalled nothing holds %+v", st)
	}
	if got := nearest(t, b, g1, "dog"); !slices.Equal(got, []int64{dog.ID}) {
		t.Fatalf("g1 finds %v, want #%d", got, dog.ID)
	}
	if st := b.Recall.VectorIndexStats(); st.Vectors != 1 || st.Scopes != 1 {
		t.Fatalf("after recalling g1 the index holds %+v, want g1's one vector", st)
	}
	b.Recall.SetVectorCache(1) // one scope at most
	if got := nearest(t, b, g2, "car"); !slices.Equal(got, []int64{car.ID}) {
		t.Fatalf("g2 finds %v, want #%d", got, car.ID)
	}
	if st := b.Recall.VectorIndexStats(); st.Scopes != 1 || st.Vectors != 1 {
		t.Fatalf("past the bound the index holds %+v, want g2 alone", st)
	}
	if got := nearest(t, b, g1, "dog"); !slices.Equal(got, []int64{dog.ID}) {
		t.Fatalf("g1 reloaded finds %v, want #%d", got, dog.ID)
	}
}
