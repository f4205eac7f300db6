package bench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kioku-bot/kioku/internal/bench"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
)

// TestCompareStores: the store comparison writes one corpus into SQLite and a PostgreSQL
// schema of its own, times the same queries on both with keyword and with hybrid recall,
// finds the memories queries were made from on both alike, and drops its schema afterwards.
func TestCompareStores(t *testing.T) {
	url := pgtest.URL(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	schemaLeft := func(schema string) bool {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		// Other tests may run benches at the same time: only this run's schema counts.
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	rep, err := bench.CompareStores(ctx, bench.Options{Memories: 200, Queries: 40, Dims: 32, Dir: t.TempDir()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dims != 32 {
		t.Errorf("report names %d dims, want 32", rep.Dims)
	}
	if len(rep.Stores) != 2 || rep.Stores[0].Store != "sqlite" || rep.Stores[1].Store != "postgres" {
		t.Fatalf("stores %+v, want sqlite then postgres", rep.Stores)
	}
	for _, s := range rep.Stores {
		if s.RememberPerS <= 0 || s.RecallP50Ms <= 0 || s.RecallP99Ms < s.RecallP50Ms {
			t.Errorf("%s: implausible timings %+v", s.Store, s)
		}
		if s.HybridP50Ms <= 0 || s.HybridP99Ms < s.HybridP50Ms {
			t.Errorf("%s: implausible hybrid timings %+v", s.Store, s)
		}
		if s.HitAt10 < 0.5 || s.HybridHitAt10 < 0.5 {
			t.Errorf("%s finds the source memory of %.0f%% of its queries with keywords, %.0f%% with hybrid recall, want at least half",
				s.Store, 100*s.HitAt10, 100*s.HybridHitAt10)
		}
	}
	if !strings.HasPrefix(rep.Schema, "kioku_bench_") || schemaLeft(rep.Schema) {
		t.Errorf("the bench schema %q was left behind", rep.Schema)
	}
}
