package ltm

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// queryPlan is SQLite's plan for query, its steps joined by "; ".
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.read.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "; ")
}

// Every lookup by content hash seeks one of migration 0017's indexes, and a walk reads an
// index alone, never the memories' rows in turn: the write's duplicate check, the vector keep-alive questions of forget-me, guild purge,
// repairs and retention, the embedding tracker's walk and the check of a resident scope.
func TestContentHashLookupsSeekTheirIndexes(t *testing.T) {
	s, err := OpenTestStore(context.Background(), filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const hash = "0123abcd"
	for _, c := range []struct {
		name, query string
		args        []any
		want        []string
	}{
		{"duplicate check", findLiveByHashSQL, []any{"g:1", hash}, []string{"memories_hash_live"}},
		{"bulk duplicate check", `SELECT id FROM memories WHERE scope_key = ? AND deleted_at IS NULL AND content_hash IN (?, ?)`,
			[]any{"g:1", hash, hash + "0"}, []string{"memories_hash_live"}},
		{"any memory holds it", `SELECT 1 WHERE ` + memoryHoldsHash("?1"), []any{hash},
			[]string{"memories_hash_live", "memories_hash_gone"}},
		{"every memory's hash", anyMemoryHashes, nil, []string{"COVERING INDEX memories_hash_gone"}},
		{"the embedding tracker's walk", `SELECT m.id FROM memories m INDEXED BY memories_hash_live
			WHERE m.deleted_at IS NULL`, nil, []string{"COVERING INDEX memories_hash_live"}},
		{"retention's kept tombstones", `SELECT 1 FROM memories m WHERE m.content_hash = ?
			AND m.deleted_at IS NOT NULL AND m.deleted_at >= ?`, []any{hash, 5}, []string{"memories_hash_gone"}},
		{"stored vectors by content", cachedVectorsSQL(s.dialect), []any{"m", `["` + hash + `"]`}, []string{"embeddings_keys (content_hash=? AND model=?)"}},
		{"a resident scope's ids and hashes", `SELECT id, content_hash FROM memories INDEXED BY memories_scope_live
			WHERE scope_key = ? AND deleted_at IS NULL`, []any{"g:1"}, []string{"COVERING INDEX memories_scope_live"}},
	} {
		plan := queryPlan(t, s, c.query, c.args...)
		for _, w := range c.want {
			if !strings.Contains(plan, w) {
				t.Errorf("%s plans as %q, want %s", c.name, plan, w)
			}
		}
		for _, step := range strings.Split(plan, "; ") {
			if strings.HasPrefix(step, "SCAN m") && !strings.Contains(step, "COVERING INDEX") {
				t.Errorf("%s reads memories' rows in turn: %q", c.name, plan)
			}
		}
	}
}
