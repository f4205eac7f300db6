package ltm

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// TestGraphBackfill seeds memories the way versions before migration 0010 left them (rows
// with no graph links), runs the link-graph repair interrupted after one batch, resumes it
// from its saved cursor, and checks that every memory, live or forgotten, ends up linked
// exactly once, as the write path would have linked it.
func TestGraphBackfill(t *testing.T) {
	ctx := t.Context()
	s, err := OpenTestStore(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exec := func(query string, args ...any) {
		t.Helper()
		if err := s.withWriteTx(ctx, func(tx *txn) error {
			_, err := tx.ExecContext(ctx, query, args...)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	contents := []string{
		"Kate is hosting the Minecraft server this weekend",
		"Bill moved to Osaka in March",
		"Katherine prefers the Falcon repo over the old one",
		"the weekly sync is on Thursdays",
		"Katie and Bill are playing Valheim tonight",
	}
	var ids []int64
	for i, c := range contents {
		var deleted any
		if i == 4 {
			deleted = int64(1) // forgotten, still recoverable: linked too
		}
		var id int64
		if err := s.withWriteTx(ctx, func(tx *txn) error {
			return tx.QueryRowContext(ctx, `INSERT INTO memories (scope, scope_key, guild_id, type, content, normalized,
				content_hash, source, created_at, updated_at, deleted_at) VALUES ('server', 'g:1', '1', 'fact', ?, ?, ?, 'tool', 1, 1, ?)
				RETURNING id`, c, memory.Normalize(c), memory.Hash(c), deleted).Scan(&id)
		}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	exec(`UPDATE store_repairs SET cursor = 0, done_at = NULL WHERE name = ?`, repairLinkGraph)

	t.Run("InterruptedAfterOneBatch", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		_, err := s.Maintenance.runRepairs(ctx, repairConfig{batch: 2, afterBatch: func(name string, _ int64) {
			if name == repairLinkGraph {
				cancel()
			}
		}})
		if err == nil {
			t.Fatal("an interrupted repair reported no error")
		}
		var cursor int64
		var done sql.NullInt64
		if err := s.read.QueryRowContext(t.Context(), `SELECT cursor, done_at FROM store_repairs WHERE name = ?`, repairLinkGraph).
			Scan(&cursor, &done); err != nil {
			t.Fatal(err)
		}
		if cursor != ids[1] || done.Valid {
			t.Fatalf("cursor after one batch of 2: %d (done %v), want %d", cursor, done.Valid, ids[1])
		}
		var linked int
		if err := s.read.QueryRowContext(t.Context(), `SELECT count(DISTINCT memory_id) FROM memory_entities`).Scan(&linked); err != nil {
			t.Fatal(err)
		}
		if linked != 2 {
			t.Fatalf("%d memories linked after one batch, want 2", linked)
		}
	})
	t.Run("ResumesAndLinksEverything", func(t *testing.T) {
		var batches []int64
		rep, err := s.Maintenance.runRepairs(ctx, repairConfig{batch: 2, afterBatch: func(name string, cursor int64) {
			if name == repairLinkGraph {
				batches = append(batches, cursor)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(batches) == 0 || batches[0] != ids[3] {
			t.Errorf("the resumed repair's batches ended at %v, want the first at %d", batches, ids[3])
		}
		if rep.Linked != 3 || !slices.Contains(rep.Finished, repairLinkGraph) {
			t.Errorf("report %+v, want 3 memories linked and the repair finished", rep)
		}
		owner := memory.ServerOwner("1")
		want := map[int64][]string{
			ids[0]: {"Katherine", "Minecraft"},
			ids[1]: {"Osaka", "William"},
			ids[2]: {"Falcon", "Katherine"},
			ids[3]: nil,
		}
		for id, names := range want {
			got, err := s.Graph.MemoryEntities(ctx, owner, id)
			if err != nil {
				t.Fatal(err)
			}
			if n := nodeNames(got); !slices.Equal(n, names) {
				t.Errorf("memory %d links %v, want %v", id, n, names)
			}
		}
		// Kate, Katherine and Katie are one person, mentioned by three memories (the
		// forgotten one included); Bill by two.
		top, err := s.Graph.TopEntities(ctx, owner, 10)
		if err != nil {
			t.Fatal(err)
		}
		mentions := map[string]int{}
		for _, n := range top {
			mentions[n.Name] = n.Mentions
		}
		if mentions["Katherine"] != 3 || mentions["William"] != 2 || mentions["Valheim"] != 1 {
			t.Errorf("mentions %v", mentions)
		}
	})
	t.Run("FinishedDoesNothing", func(t *testing.T) {
		rep, err := s.Maintenance.RunRepairs(ctx)
		if err != nil || !rep.Empty() {
			t.Errorf("a second run: %+v %v", rep, err)
		}
	})
}

func nodeNames(ns []graph.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}
