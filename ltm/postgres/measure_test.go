//go:build measure

package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// TestPostgresLatencyBesideSQLite measures both stores on the same synthetic server: the
// write throughput of Remember (one memory per transaction, as the tools write) and the p50
// and p99 of keyword recall and of hybrid recall (the same deterministic embedder on both).
// It checks only that both answer every query; the numbers are logged for docs/postgres.md.
func TestPostgresLatencyBesideSQLite(t *testing.T) {
	pgtest.URL(t)
	const memories, queries = 5000, 300
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("%s%d", []string{"raid", "tea", "lamp", "river", "code", "piano", "train", "garden"}[i%8], i)
	}
	zipf := rand.NewZipf(rng, 1.1, 4, uint64(len(vocab)-1))
	sentence := func(n int) string {
		words := make([]string, n)
		for i := range words {
			words[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(words, " ")
	}
	texts := make([]string, memories)
	for i := range texts {
		texts[i] = sentence(8 + rng.IntN(8))
	}
	qs := make([]string, queries)
	for i := range qs {
		qs[i] = sentence(2 + rng.IntN(3))
	}
	type store interface {
		Remember(ctx context.Context, m memory.Memory, actor memory.Actor) (memory.WriteResult, error)
	}
	type recaller interface {
		Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
	}
	recallTimes := func(r recaller, keywordOnly bool) (p50, p99 float64) {
		took := make([]time.Duration, 0, queries)
		for _, q := range qs {
			start := time.Now()
			if _, err := r.Search(t.Context(), memory.SearchQuery{Text: q, Owners: []memory.Owner{memory.ServerOwner("g1")}, KeywordOnly: keywordOnly, Limit: 10}); err != nil {
				t.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return float64(took[len(took)/2].Microseconds()) / 1000, float64(took[len(took)*99/100].Microseconds()) / 1000
	}
	// run writes the server, measures keyword recall, then gives every memory its vector
	// (embed) and measures hybrid recall, the first query having loaded the scope.
	run := func(name string, m store, r recaller, loaded func(), embed func()) {
		start := time.Now()
		for _, text := range texts {
			if _, err := m.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: text,
				Provenance: memory.Provenance{Author: "Member", ChannelID: "c1"}}, memory.ActorCLI); err != nil {
				t.Fatal(err)
			}
		}
		writes := float64(memories) / time.Since(start).Seconds()
		loaded()
		p50, p99 := recallTimes(r, true)
		t.Logf("%s: %d memories, %.0f writes/s; keyword recall p50 %.2f ms, p99 %.2f ms (%d queries)", name, memories, writes,
			p50, p99, queries)
		embed()
		recallTimes(r, false) // the scope's first recall loads its vectors
		p50, p99 = recallTimes(r, false)
		t.Logf("%s: hybrid recall (%s) p50 %.2f ms, p99 %.2f ms (%d queries)", name, hashModel, p50, p99, queries)
	}
	track := func(tr interface {
		SetEmbedder(fn ltm.EmbedFunc, model string)
		TrackEmbeddings(ctx context.Context, opt memory.EmbedTrackOptions) (memory.EmbedTrackResult, error)
	}) func() {
		return func() {
			tr.SetEmbedder(hashEmbed, hashModel)
			res, err := tr.TrackEmbeddings(t.Context(), memory.EmbedTrackOptions{})
			if err != nil || res.Missing != 0 {
				t.Fatalf("embedding the server: %+v %v", res, err)
			}
		}
	}
	pg := pgtest.Open(t)
	// Autovacuum analyzes a table this size within a minute of the writes; here it is done
	// at once, so the planner knows the rows as a running bot's would.
	run("PostgreSQL", pg.Memories, pg.Recall, func() {
		if _, err := pg.Pool().Exec(t.Context(), `ANALYZE`); err != nil {
			t.Fatal(err)
		}
	}, track(pg.Recall))
	lite, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	run("SQLite", lite.Memories, lite.Recall, func() {}, track(lite.Recall))
}
