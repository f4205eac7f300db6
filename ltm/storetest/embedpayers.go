package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// EmbeddingRecaller is a Recaller that embeds: the cases of who pays for embedding calls
// run on stores whose Recall satisfies it.
type EmbeddingRecaller interface {
	SetEmbedder(fn ltm.EmbedFunc, model string)
	TrackEmbeddings(ctx context.Context, opt memory.EmbedTrackOptions) (memory.EmbedTrackResult, error)
}

// payerLog is an embedder that records who pays for each call (memory.PayerFrom) and the
// texts it carries, and refuses the calls of the payers in spent as a metered embedder
// over budget would.
type payerLog struct {
	mu    sync.Mutex
	calls []payerCall
	spent map[string]bool
}

type payerCall struct {
	payer string
	user  string
	texts []string
}

func (l *payerLog) embed(ctx context.Context, texts []string) ([][]float32, error) {
	p, _ := memory.PayerFrom(ctx)
	if l.spent[p.Key()] {
		memory.NoteSpendLimited(ctx)
		return nil, fmt.Errorf("%w: %s", memory.ErrSpendLimited, p.Key())
	}
	l.mu.Lock()
	l.calls = append(l.calls, payerCall{payer: p.Key(), user: p.UserID, texts: slices.Clone(texts)})
	l.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{1, float32(len(s)), float32(strings.Count(s, "e"))}
	}
	return out, nil
}

func (l *payerLog) taken() []payerCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// testEmbeddingPayers: the embedding tracker charges each call to the memories' own payer
// (their server, or for a DM-origin personal memory its member's DMs), one payer per call; a
// payer over its budget waits for a later run while the others' memories get their vectors,
// and the provider is not marked down for anyone. A cached query vector answers only the
// same member's search of the same scopes.
func testEmbeddingPayers(t *testing.T, open func(t *testing.T) Stores) {
	s := open(t)
	rec, ok := s.Recall.(EmbeddingRecaller)
	if !ok {
		t.Skip("the store's recall does not embed")
	}
	ctx := t.Context()
	mustRemember(t, s, server("g1", "apples grow in the first server"))
	mustRemember(t, s, server("g2", "pears grow in the second server"))
	dm := personal("u1", "", "cherries are what u1 told me in a DM")
	dm.Provenance.ChannelID = "dm-u1"
	mustRemember(t, s, dm)

	log := &payerLog{spent: map[string]bool{"g:g2": true}}
	rec.SetEmbedder(log.embed, "payer-model")
	res, err := rec.TrackEmbeddings(ctx, memory.EmbedTrackOptions{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls != 2 || res.Embedded+res.Refreshed != 2 || res.Deferred != 1 || res.Missing != 1 || res.Skipped != "" {
		t.Fatalf("tracker run with g2 over budget: %+v; want 2 calls, 2 embedded, 1 deferred and missing, nothing skipped", res)
	}
	var payers []string
	for _, c := range log.taken() {
		payers = append(payers, c.payer)
		if len(c.texts) != 1 || !strings.Contains(c.texts[0], map[string]string{"g:g1": "apples", "dm:dm-u1": "cherries"}[c.payer]) {
			t.Errorf("call charged to %q carried %q", c.payer, c.texts)
		}
	}
	slices.Sort(payers)
	if !slices.Equal(payers, []string{"dm:dm-u1", "g:g1"}) {
		t.Fatalf("tracker calls charged to %q, want g:g1 and dm:dm-u1", payers)
	}

	// Once g2 has budget again, the next run embeds its memory: it was never marked failed.
	log.spent = nil
	if res, err := rec.TrackEmbeddings(ctx, memory.EmbedTrackOptions{Batch: 10}); err != nil || res.Embedded+res.Refreshed != 1 || res.Missing != 0 {
		t.Fatalf("tracker run with budget again: %+v, %v; want g2's memory embedded", res, err)
	}

	search := func(user string) {
		t.Helper()
		pctx := memory.WithPayer(ctx, memory.Payer{GuildID: "g1", ChannelID: "c1", UserID: user})
		if _, err := s.Recall.Search(pctx, memory.SearchQuery{Text: "apples", Owners: []memory.Owner{memory.ServerOwner("g1")}, Limit: 5}); err != nil {
			t.Fatal(err)
		}
	}
	before := len(log.taken())
	search("alice")
	search("alice")
	search("bob")
	var asked []string
	for _, c := range log.taken()[before:] {
		asked = append(asked, c.payer+"/"+c.user)
	}
	if !slices.Equal(asked, []string{"g:g1/alice", "g:g1/bob"}) {
		t.Fatalf("query embedding calls %q, want one for alice (her repeat cached) and one for bob", asked)
	}
}
