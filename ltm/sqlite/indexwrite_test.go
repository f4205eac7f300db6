package sqlite

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// queryPlan is SQLite's plan for query, its steps joined by "; ".
func queryPlan(t *testing.T, s *ltm.Store, query string, args ...any) string {
	t.Helper()
	rows, err := engineOf(t, s).read.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+query, args...)
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

func rememberServer(t *testing.T, s *ltm.Store, content string) int64 {
	t.Helper()
	res, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return res.Memory.ID
}

// TestSingleWritesWaitForTheFullTextIndexes: a single write's memory is found by recall at
// once (the in-memory keyword index reads the rows), is not yet in the full-text indexes,
// and is not counted missing from them by the diagnostics while it waits; a flush puts it
// in both as the rule says.
func TestSingleWritesWaitForTheFullTextIndexes(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	s.IndexWriteDelay = time.Hour
	ascii := rememberServer(t, s, "The canoe club meets on Tuesdays")
	cjk := rememberServer(t, s, "カヌー部は火曜日に集まる")
	if got := matchWords(t, s, "memories_fts", "canoe"); len(got) != 0 {
		t.Fatalf("the word index holds %v before the flush", got)
	}
	res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "canoe club", Owners: []memory.Owner{memory.ServerOwner("g1")}, KeywordOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || res[0].Memory.ID != ascii {
		t.Fatalf("recall before the flush found %v, want #%d first", res, ascii)
	}
	d, err := s.Health.Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Index.Words.Rows != 0 || d.Index.Words.OutOfSync() != 0 || d.Index.Trigrams.OutOfSync() != 0 {
		t.Fatalf("diagnostics while waiting: %+v", d.Index)
	}
	if err := s.Memories.FlushIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if got := matchWords(t, s, "memories_fts", "canoe"); !slices.Equal(got, []int64{ascii}) {
		t.Errorf("word index after the flush: %v, want [%d]", got, ascii)
	}
	if got := matchWords(t, s, "memories_tri", `"火曜日"`); !slices.Equal(got, []int64{cjk}) {
		t.Errorf("trigram index after the flush: %v, want [%d]", got, cjk)
	}
	if d, err = s.Health.Diagnose(ctx); err != nil {
		t.Fatal(err)
	}
	if d.Index.Words.Rows != 2 || d.Index.Trigrams.Rows != 1 || d.Index.Words.OutOfSync()+d.Index.Trigrams.OutOfSync() != 0 {
		t.Errorf("diagnostics after the flush: %+v", d.Index)
	}
}

// TestWaitingMemoriesAreIndexedInTheBackground: with the default delay nobody flushes, and
// the memory still reaches the word index.
func TestWaitingMemoriesAreIndexedInTheBackground(t *testing.T) {
	s := openTestStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	id := rememberServer(t, s, "Backups run nightly at two")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got := matchWords(t, s, "memories_fts", "backups"); slices.Equal(got, []int64{id}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the memory never reached the word index")
		}
	}
}

// TestOpenIndexesWhatWasLeftWaiting: a process that stopped without closing leaves its
// memories waiting; the next one to open the database indexes them.
func TestOpenIndexesWhatWasLeftWaiting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	a := openTestStore(t, path)
	a.IndexWriteDelay = time.Hour
	id := rememberServer(t, a, "The raid starts at nine")
	// As a killed process leaves it: the row waits and nothing will flush it.
	if _, err := engineOf(t, a).write.ExecContext(t.Context(), `UPDATE memories SET index_pending = 1 WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if got := matchWords(t, a, "memories_fts", "raid"); len(got) != 0 {
		t.Fatalf("the word index holds %v", got)
	}
	b := openTestStore(t, path)
	if got := matchWords(t, b, "memories_fts", "raid"); !slices.Equal(got, []int64{id}) {
		t.Errorf("after another open the word index holds %v, want [%d]", got, id)
	}
}

// TestIndexAtOnceWhenAskedTo: a store whose keyword queries all read the full-text index
// (KeywordIndexOff), or whose delay is zero, indexes each single write in its own
// transaction.
func TestIndexAtOnceWhenAskedTo(t *testing.T) {
	for name, set := range map[string]func(*ltm.Store){
		"KeywordIndexOff": func(s *ltm.Store) { s.KeywordIndexOff = true; s.IndexWriteDelay = time.Hour },
		"ZeroDelay":       func(s *ltm.Store) { s.IndexWriteDelay = 0 },
	} {
		t.Run(name, func(t *testing.T) {
			s := openTestStore(t, filepath.Join(t.TempDir(), "kioku.db"))
			set(s)
			id := rememberServer(t, s, "Snacks are in the blue cupboard")
			if got := matchWords(t, s, "memories_fts", "cupboard"); !slices.Equal(got, []int64{id}) {
				t.Errorf("the word index holds %v, want [%d]", got, id)
			}
		})
	}
}

// The flush finds the waiting rows through their own partial index, not by reading the
// memories table: it runs every 50 ms of writing, at any size.
func TestIndexFlushSeeksTheWaitingRows(t *testing.T) {
	s := openTestStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	if plan := queryPlan(t, s, indexPendingSQL); !strings.Contains(plan, "USING INDEX memories_index_pending") {
		t.Errorf("the flush plans as %q, want a walk of memories_index_pending", plan)
	}
}
