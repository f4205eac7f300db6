package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/pgstore"
	"github.com/kioku-bot/kioku/pgstore/pgtest"
)

// TestPostgresDuplicateLookupReadsOneEntry: the duplicate check of a write reads a handful
// of rows however large the scope, whatever the planner knew when the connection first ran
// it: on a table never analyzed (a fresh database autovacuum has not reached) and on one
// analyzed while it was small and not since (autovacuum off or behind). Each case writes a
// few memories on the store's one connection (PostgreSQL settles on a plan for a prepared
// statement after five runs), grows the scope to 5,000 memories through the store's bulk
// path, then writes through both dedup paths (Remember and RememberAs) a new memory and its
// duplicate, and counts the rows of memories the connection read meanwhile: walking the
// scope reads 5,000 per write.
func TestPostgresDuplicateLookupReadsOneEntry(t *testing.T) {
	const bulk = 5000
	for _, analyzed := range []bool{false, true} {
		t.Run(fmt.Sprintf("analyzed_small=%v", analyzed), func(t *testing.T) {
			ctx := t.Context()
			cfg := pgtest.Schema(t)
			// One connection: the test's statements see the store's and flush its counters.
			cfg.MaxConns = 1
			s, err := pgstore.OpenConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			owner := memory.ServerOwner("g1")
			remember := func(content string) memory.WriteResult {
				t.Helper()
				res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content}, memory.ActorCLI)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			for i := range 10 {
				remember(fmt.Sprintf("early memory %d", i))
				if i == 5 && analyzed {
					exec(t, s.Pool(), `ANALYZE memories`)
				}
			}
			load := make([]memory.Memory, bulk)
			for i := range load {
				load[i] = memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: fmt.Sprintf("bulk memory %d", i)}
			}
			if res, err := s.Transfer.RememberMany(ctx, load, memory.ActorCLI); err != nil || res.Created != bulk {
				t.Fatalf("bulk load: %+v %v", res, err)
			}

			before := rowsRead(t, s.Pool())
			first := remember("a new memory after the bulk load")
			again := remember("a new memory after the bulk load")
			place := memory.WriteContext{WriterID: "u1", GuildID: "g1", ChannelID: "c1"}
			seen, err := s.Memories.RememberAs(ctx, place, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
				Content: "a new memory after the bulk load"}, memory.ActorCLI)
			if err != nil {
				t.Fatal(err)
			}
			read := rowsRead(t, s.Pool()) - before

			if !first.Created || again.Created || again.Memory.ID != first.Memory.ID || seen.Created || seen.Memory.ID != first.Memory.ID {
				t.Fatalf("duplicates: first %d created %v, again %d created %v, in a place %d created %v; want one memory",
					first.Memory.ID, first.Created, again.Memory.ID, again.Created, seen.Memory.ID, seen.Created)
			}
			if read > 100 {
				t.Errorf("three writes read %d rows of memories in a scope of %d: the duplicate lookup walks the scope", read, bulk+10)
			}
			if n, err := s.Memories.LiveCount(ctx, owner); err != nil || n != bulk+11 {
				t.Errorf("live memories %d (%v), want %d", n, err, bulk+11)
			}
		})
	}
}

func exec(t *testing.T, p *pgxpool.Pool, stmt string) {
	t.Helper()
	if _, err := p.Exec(t.Context(), stmt); err != nil {
		t.Fatal(err)
	}
}

// rowsRead is how many rows of memories sequential and index scans have read so far, as
// PostgreSQL counts them; it first has the pool's one connection report its own counts.
func rowsRead(t *testing.T, p *pgxpool.Pool) int64 {
	t.Helper()
	exec(t, p, `SELECT pg_stat_force_next_flush()`)
	var n int64
	if err := p.QueryRow(context.WithoutCancel(t.Context()), `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
		FROM pg_stat_user_tables WHERE relid = 'memories'::regclass`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
