package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
)

// TestPostgresDuplicateLookupReadsOneEntry: the duplicate check of a write reads a handful
// of rows however large the scope, whatever the planner knew when the connection first ran
// it: on a table never analyzed (a fresh database autovacuum has not reached), on one
// analyzed while it was small and not since (autovacuum off or behind), and on one whose
// rows arrived behind the store's back (a restore, which does not analyze). Each case writes
// a few memories on the store's one connection (PostgreSQL settles on a plan for a prepared
// statement after five runs), grows the scope to thousands of memories, then writes through both
// dedup paths (Remember and RememberAs) a new memory and its duplicate, and counts the rows
// of memories the connection read meanwhile: walking the scope reads them all on every write. The
// store learns of rows it did not write from its next write, which it lets pass first.
func TestPostgresDuplicateLookupReadsOneEntry(t *testing.T) {
	for _, c := range []struct {
		name               string
		analyzed, restored bool
		// bulk is how many memories the scope grows by: a restored table of 5,000 may still
		// be read well by chance, one of 20,000 is not.
		bulk int
	}{{"never_analyzed", false, false, 5000}, {"analyzed_small", true, false, 5000}, {"restored", false, true, 20_000}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			cfg := pgtest.Schema(t)
			// One connection: the test's statements see the store's and flush its counters.
			cfg.MaxConns = 1
			s, err := postgres.OpenConfig(ctx, cfg)
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
				if i == 5 && c.analyzed {
					exec(t, s.Pool(), `ANALYZE memories`)
				}
			}
			if c.restored {
				exec(t, s.Pool(), fmt.Sprintf(`INSERT INTO memories (scope, scope_key, guild_id, type, content, normalized,
					content_hash, source, created_at, updated_at)
					SELECT 'server', 'g:g1', 'g1', 'fact', 'restored ' || i, 'restored ' || i, md5('restored ' || i), 'import', 1, 1
					FROM generate_series(1, %d) AS i`, c.bulk-1))
				remember("the first memory after the restore")
			} else {
				load := make([]memory.Memory, c.bulk)
				for i := range load {
					load[i] = memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: fmt.Sprintf("bulk memory %d", i)}
				}
				if res, err := s.Transfer.RememberMany(ctx, load, memory.ActorCLI); err != nil || res.Created != c.bulk {
					t.Fatalf("bulk load: %+v %v", res, err)
				}
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
				t.Errorf("three writes read %d rows of memories in a scope of %d: the duplicate lookup walks the scope", read, c.bulk+10)
			}
			if n, err := s.Memories.LiveCount(ctx, owner); err != nil || n != c.bulk+11 {
				t.Errorf("live memories %d (%v), want %d", n, err, c.bulk+11)
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

// TestPostgresLiveHashUpgrade: 0010 rebuilds memories_live_hash on a database's existing
// memories with the id after the hash, and the duplicate check finds the oldest live
// memory of a content as before, passing over a forgotten one and a later copy.
func TestPostgresLiveHashUpgrade(t *testing.T) {
	ctx := t.Context()
	cfg, p, all := migratedBefore(t, "0010")
	m := memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raids start at nine"}
	if err := m.Prepare(); err != nil {
		t.Fatal(err)
	}
	// A forgotten copy first, then the live one, then a later live copy (a writer who could
	// not see the first wrote it again).
	for i, deleted := range []any{int64(5), nil, nil} {
		if _, err := p.Exec(ctx, `INSERT INTO memories (scope, scope_key, guild_id, type, content, normalized, content_hash,
			source, created_at, updated_at, deleted_at) VALUES ('server', 'g:g1', 'g1', 'fact', $1, $2, $3, 'tool', $4, $4, $5)`,
			m.Content, m.Normalized, m.Hash, i+1, deleted); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := postgres.Migrate(ctx, p, all); err != nil {
		t.Fatal(err)
	}
	var def string
	if err := p.QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'memories_live_hash'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "(scope_key, content_hash, id) WHERE (deleted_at IS NULL)") {
		t.Errorf("memories_live_hash after the upgrade: %s", def)
	}
	s, err := postgres.OpenConfig(ctx, cfg.Copy())
	if err != nil {
		t.Fatalf("open after the upgrade: %v", err)
	}
	defer s.Close()
	res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: m.Content}, memory.ActorCLI)
	if err != nil || res.Created || res.Memory.ID != 2 {
		t.Errorf("remember an existing content after the upgrade: memory %d created %v (%v), want the oldest live one, 2", res.Memory.ID, res.Created, err)
	}
}
