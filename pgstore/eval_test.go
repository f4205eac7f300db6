//go:build measure

package pgstore_test

import (
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/eval"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/pgstore/pgtest"
)

// evalTolerance is how far PostgreSQL's keyword recall@10 may fall below SQLite's on a dev
// set (issue #19: within 0.02).
const evalTolerance = 0.02

// TestPostgresEvalMatchesSQLite runs the retrieval eval's dev sets through both stores'
// keyword recall (no embedding model) and compares recall@10: the dataset is loaded through
// each store's write path with its authors and times, every question asked in its server
// at its asked time, and scored as internal/eval scores (|relevant ∩ top 10| / |relevant|,
// a memory counting for every dataset message it absorbed).
func TestPostgresEvalMatchesSQLite(t *testing.T) {
	pgtest.URL(t)
	for _, name := range []string{"dev-en", "dev-ja", "dev-conv-en", "dev-conv-ja"} {
		t.Run(name, func(t *testing.T) {
			d, err := eval.Load(repoFile(t, "testdata/eval/"+name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			lite, err := eval.RunDataset(t.Context(), d, eval.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			pg, queries := postgresRecall10(t, d)
			t.Logf("%s: recall@10 %.3f on PostgreSQL, %.3f on SQLite (%d questions)", name, pg, lite.Overall.Recall[10], queries)
			if pg < lite.Overall.Recall[10]-evalTolerance {
				t.Errorf("%s: recall@10 %.3f on PostgreSQL, more than %.2f below SQLite's %.3f", name, pg, evalTolerance, lite.Overall.Recall[10])
			}
		})
	}
}

// postgresRecall10 loads d into a fresh PostgreSQL store and returns its mean recall@10 and
// the number of questions asked.
func postgresRecall10(t *testing.T, d eval.Dataset) (float64, int) {
	s := pgtest.Open(t)
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
	return filepath.Join(filepath.Dir(file), "..", rel)
}
