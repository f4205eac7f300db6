//go:build measure

package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
)

// writeSteps are the table sizes at which TestPostgresWritesStayFlat reports the write rate
// of the memories written since the previous one.
var writeSteps = []int{1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000, 100_000}

// TestPostgresWritesStayFlat writes one server's memories one Remember at a time, as the
// tools and `kioku bench --store postgres` do, from 1,000 to 100,000 memories (or
// KIOKU_MEASURE_WRITES), and logs the write rate of each step with the plan the duplicate
// lookup of the next write gets. Nothing analyzes the table in between, as on a database
// whose autovacuum has not come round yet. It fails when the last step writes at less than
// half the rate of the first: a write's cost must not grow with the scope.
func TestPostgresWritesStayFlat(t *testing.T) {
	pgtest.URL(t)
	limit := writeSteps[len(writeSteps)-1]
	if v := os.Getenv("KIOKU_MEASURE_WRITES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < writeSteps[0] {
			t.Fatalf("KIOKU_MEASURE_WRITES=%q: want a number of at least %d", v, writeSteps[0])
		}
		limit = n
	}
	cfg := pgtest.Schema(t)
	s, err := postgres.OpenConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.MaxServerMemories = -1
	explain, err := pgx.ConnectConfig(t.Context(), cfg.ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer explain.Close(context.Background())

	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"raid", "tea", "lamp", "river", "code", "piano", "train", "garden", "boss", "patch"}
	text := func(i int) string {
		var b strings.Builder
		for range 8 + rng.IntN(8) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString(strconv.Itoa(rng.IntN(500)))
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "note %d", i)
		return b.String()
	}
	written, first, last := 0, 0.0, 0.0
	for _, step := range writeSteps {
		if step > limit {
			break
		}
		start := time.Now()
		for ; written < step; written++ {
			if _, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: text(written),
				Provenance: memory.Provenance{Author: "Member", AuthorID: "u1", ChannelID: "c1"}}, memory.ActorCLI); err != nil {
				t.Fatal(err)
			}
		}
		rate := float64(step-prevStep(step)) / time.Since(start).Seconds()
		if first == 0 {
			first = rate
		}
		last = rate
		t.Logf("%7d memories: %6.0f writes/s since %d; duplicate lookup: %s", step, rate, prevStep(step), lookupPlan(t, explain))
	}
	t.Logf("last step at %.2f× the first step's rate", last/first)
	if last < first/2 {
		t.Errorf("writes slowed from %.0f/s to %.0f/s as the scope grew", first, last)
	}
}

// prevStep is the step before step in writeSteps, or 0.
func prevStep(step int) int {
	prev := 0
	for _, s := range writeSteps {
		if s >= step {
			break
		}
		prev = s
	}
	return prev
}

// lookupPlan is the plan, with its run time and buffers, that the duplicate lookup of a
// write gets on a connection that prepared it (as pgx does): after five runs PostgreSQL may
// keep one generic plan for all parameters.
func lookupPlan(t *testing.T, conn *pgx.Conn) string {
	ctx := t.Context()
	const lookup = `SELECT * FROM memories WHERE scope_key = $1 AND content_hash = $2 AND deleted_at IS NULL ORDER BY id LIMIT 1`
	// A fresh statement each time: the plan a connection that prepares it now would keep.
	name := fmt.Sprintf("dup_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, `PREPARE `+name+`(text, text) AS `+lookup); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), `DEALLOCATE `+name)
	for i := range 6 {
		if _, err := conn.Exec(ctx, `EXECUTE `+name+`('g:g1', '`+strconv.Itoa(i)+`')`); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := conn.Query(ctx, `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE `+name+`('g:g1', 'absent')`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, l := range lines {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "->"))
		if strings.HasPrefix(l, "Planning") {
			continue
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, " | ")
}
