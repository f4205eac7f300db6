//go:build measure

package postgres_test

import (
	"context"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/eval"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
)

// evalTolerance is how far PostgreSQL's keyword recall@10 may fall below SQLite's on a dev
// set (issue #19: within 0.02).
const evalTolerance = 0.02

// TestPostgresEvalMatchesSQLite runs the retrieval eval's dev sets through both stores'
// recall and compares recall@10, with keyword recall alone (no embedding model) and hybrid
// (the fake provider's deterministic hashing embedder, the same on both stores, so the
// comparison is of the stores' vector legs and fusion, not of a model): the dataset is
// loaded through each store's write path with its authors and times, every question asked
// in its server at its asked time, and scored as internal/eval scores (|relevant ∩ top 10| /
// |relevant|, a memory counting for every dataset message it absorbed).
func TestPostgresEvalMatchesSQLite(t *testing.T) {
	pgtest.URL(t)
	modes := []struct {
		name  string
		embed ltm.EmbedFunc
	}{{"keyword", nil}, {"hybrid", hashEmbed}}
	for _, mode := range modes {
		for _, name := range []string{"dev-en", "dev-ja", "dev-conv-en", "dev-conv-ja"} {
			t.Run(mode.name+"/"+name, func(t *testing.T) {
				d, err := eval.Load(repoFile(t, "testdata/eval/"+name+".json"))
				if err != nil {
					t.Fatal(err)
				}
				opt := eval.Options{Dir: t.TempDir()}
				if mode.embed != nil {
					opt.Embed, opt.EmbedModel = mode.embed, hashModel
				}
				lite, err := eval.RunDataset(t.Context(), d, opt)
				if err != nil {
					t.Fatal(err)
				}
				pg, queries := postgresRecall10(t, d, mode.embed)
				t.Logf("%s %s: recall@10 %.3f on PostgreSQL, %.3f on SQLite (%d questions)", mode.name, name, pg, lite.Overall.Recall[10], queries)
				if pg < lite.Overall.Recall[10]-evalTolerance {
					t.Errorf("%s %s: recall@10 %.3f on PostgreSQL, more than %.2f below SQLite's %.3f", mode.name, name, pg, evalTolerance, lite.Overall.Recall[10])
				}
			})
		}
	}
}

// hashModel names hashEmbed's vectors.
const hashModel = "fake-hash-256"

// hashEmbed is the fake provider's embedder (hashed words and CJK bigrams, 256 dimensions).
func hashEmbed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		out[i] = fakeopenai.EmbedText(text, 256)
	}
	return out, nil
}

// postgresRecall10 loads d into a fresh PostgreSQL store (with embed as its embedding model
// when not nil) and returns its mean recall@10 and the number of questions asked.
func postgresRecall10(t *testing.T, d eval.Dataset, embed ltm.EmbedFunc) (float64, int) {
	s := pgtest.Open(t)
	if embed != nil {
		s.Recall.SetEmbedder(embed, hashModel)
	}
	var clock atomic.Int64
	s.Now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	clock.Store(time.Now().UnixNano())
	var sum float64
	n := 0
	for _, sc := range d.Scopes {
		if newest := newestOf(sc); !newest.IsZero() {
			clock.Store(newest.UnixNano())
		}
		owner := memory.ServerOwner(sc.GuildID)
		absorbed := map[int64][]string{}
		loaded := map[string]bool{}
		for _, e := range sc.Memories {
			m := memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID, Content: e.Content, Source: memory.SourceImport,
				Provenance: memory.Provenance{Author: e.Author, ChannelID: "eval"}, CreatedAt: e.CreatedAt, UpdatedAt: e.CreatedAt}
			if m.Prepare() != nil {
				continue // refused by the write path on both stores
			}
			res, err := s.Memories.Remember(t.Context(), m, "eval")
			if err != nil {
				t.Fatal(err)
			}
			absorbed[res.Memory.ID] = append(absorbed[res.Memory.ID], e.ID)
			loaded[e.ID] = true
		}
		for _, q := range sc.Queries {
			rel := map[string]bool{}
			for _, r := range q.Relevant {
				if loaded[r] {
					rel[r] = true
				}
			}
			if len(rel) == 0 {
				continue
			}
			asked, _ := sc.AskedAt(q)
			if asked.IsZero() {
				asked = s.Now()
			}
			clock.Store(asked.UnixNano())
			res, err := s.Recall.Search(t.Context(), memory.SearchQuery{Text: q.Text, Owners: []memory.Owner{owner}, Limit: 10, AskedAt: asked})
			if err != nil {
				t.Fatal(err)
			}
			found := map[string]bool{}
			for _, r := range res[:min(10, len(res))] {
				for _, id := range absorbed[r.Memory.ID] {
					if rel[id] {
						found[id] = true
					}
				}
			}
			sum += float64(len(found)) / float64(len(rel))
			n++
		}
	}
	if n == 0 {
		t.Fatal("no question was asked")
	}
	return sum / float64(n), n
}

func newestOf(sc eval.Scope) time.Time {
	var t time.Time
	for _, m := range sc.Memories {
		if m.CreatedAt.After(t) {
			t = m.CreatedAt
		}
	}
	return t
}

// repoFile is the path of a file of the repository, from this package's directory.
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("couldn't locate the test file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", rel)
}
