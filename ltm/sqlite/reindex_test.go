package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// matchWords returns the rowids the word index holds for an FTS5 query.
func matchWords(t *testing.T, s *ltm.Store, table, query string) []int64 {
	t.Helper()
	rows, err := engineOf(t, s).read.QueryContext(t.Context(), `SELECT rowid FROM `+table+` WHERE `+table+` MATCH ? ORDER BY rowid`, query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// searchColumns returns the stored search-text columns of memory id.
func searchColumns(t *testing.T, s *ltm.Store, id int64) (string, string) {
	t.Helper()
	var text, author string
	if err := engineOf(t, s).read.QueryRowContext(t.Context(), `SELECT search_text, search_author FROM memories WHERE id = ?`, id).
		Scan(&text, &author); err != nil {
		t.Fatal(err)
	}
	return text, author
}

// repairSearchText is the repair that fills the search-text columns of rows written before
// migration 0007 (ltm's).
const repairSearchText = "fill-search-text"

// TestSearchTextRepair: a database written before search text was stored (migrations up to
// 0006, whose triggers called kioku_search_text) is upgraded. Its memories stay searchable
// before the repair fills their columns, while it runs (interrupted after one batch and
// resumed from its cursor), and after.
func TestSearchTextRepair(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kioku.db")
	old := fstest.MapFS{}
	names, err := fs.Glob(Migrations(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if name < "0007" {
			data, err := fs.ReadFile(Migrations(), name)
			if err != nil {
				t.Fatal(err)
			}
			old[name] = &fstest.MapFile{Data: data}
		}
	}
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Migrate(ctx, db, old); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, m := range []struct {
		content, author string
		deleted         bool
	}{
		{"ＡＰＩの上限は毎分60回", "Ｍａｒｉ", false},
		{"明日のdeployは15時から", "", false},
		{"Plain notes need nothing", "Ken", false},
		{"ＶＰＮ was retired", "", true},
	} {
		var deleted any
		if m.deleted {
			deleted = 2
		}
		var id int64
		if err := db.QueryRowContext(ctx, `INSERT INTO memories (scope, scope_key, guild_id, type, content, normalized,
			content_hash, source, author_name, created_at, updated_at, deleted_at)
			VALUES ('server', 'g:1', '1', 'fact', ?, ?, ?, 'tool', ?, 1, 1, ?) RETURNING id`,
			m.content, memory.Normalize(m.content), fmt.Sprint("hash", i), m.author, deleted).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := openTestStore(t, path)
	searchable := func(t *testing.T) {
		t.Helper()
		for query, want := range map[string][]int64{"api": {ids[0]}, "deploy": {ids[1]}, "mari": {ids[0]}, "plain": {ids[2]}, "vpn": nil} {
			if got := matchWords(t, s, "memories_fts", query); !slices.Equal(got, want) {
				t.Errorf("%q matches %v, want %v", query, got, want)
			}
		}
	}
	t.Run("SearchableBeforeTheRepair", searchable)
	t.Run("InterruptedAfterOneBatch", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		_, err := s.Maintenance.RunRepairsWith(ctx, ltm.RepairOptions{Batch: 2, AfterBatch: func(name string, _ int64) {
			if name == repairSearchText {
				cancel()
			}
		}})
		if err == nil {
			t.Fatal("an interrupted repair reported no error")
		}
		var cursor int64
		if err := engineOf(t, s).read.QueryRowContext(t.Context(), `SELECT cursor FROM store_repairs WHERE name = ? AND done_at IS NULL`,
			repairSearchText).Scan(&cursor); err != nil || cursor != ids[1] {
			t.Fatalf("saved cursor %d (%v), want %d", cursor, err, ids[1])
		}
		if text, author := searchColumns(t, s, ids[0]); text != "api の上限は毎分 60 回" || author != "mari" {
			t.Errorf("first batch stored %q, %q", text, author)
		}
		if text, _ := searchColumns(t, s, ids[3]); text != "" {
			t.Errorf("a row after the cursor was filled: %q", text)
		}
		searchable(t)
	})
	t.Run("ResumesAndFinishes", func(t *testing.T) {
		rep, err := s.Maintenance.RunRepairs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep.SearchText != 1 || !slices.Contains(rep.Finished, repairSearchText) {
			t.Errorf("report %+v, want the forgotten memory filled and the repair finished", rep)
		}
		if text, _ := searchColumns(t, s, ids[3]); text != "vpn was retired" {
			t.Errorf("forgotten memory's search text %q", text)
		}
		if text, author := searchColumns(t, s, ids[2]); text != "" || author != "" {
			t.Errorf("an ASCII memory stored %q, %q; its text is its own search text", text, author)
		}
		searchable(t)
		if rep, err := s.Maintenance.RunRepairs(ctx); err != nil || !rep.Empty() {
			t.Errorf("a finished repair ran again: %+v %v", rep, err)
		}
	})
}

// TestSearchTextOnWrite: every write path stores the search text next to what it writes, so
// the word index holds the folded form: a save, an edit, an import, and forget-me's
// anonymisation, which takes the author's name out of the index too.
func TestSearchTextOnWrite(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	owner := memory.ServerOwner("g1")
	saved, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "ＡＰＩ keys rotate monthly",
		Provenance: memory.Provenance{AuthorID: "u1", Author: "Ｍａｒｉ"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	id := saved.Memory.ID
	if err := s.Memories.FlushIndex(ctx); err != nil { // the word index takes single writes a moment later
		t.Fatal(err)
	}
	if got := matchWords(t, s, "memories_fts", "api AND mari"); !slices.Equal(got, []int64{id}) {
		t.Errorf("after a save, %v", got)
	}
	edited := "明日のdeployは15時から"
	if _, err := s.Memories.Modify(ctx, owner, id, memory.Change{Content: &edited}, "test"); err != nil {
		t.Fatal(err)
	}
	if text, _ := searchColumns(t, s, id); text != memory.SearchText(edited) {
		t.Errorf("after an edit the search text is %q", text)
	}
	if got := matchWords(t, s, "memories_fts", "deploy"); !slices.Equal(got, []int64{id}) {
		t.Errorf("after an edit, deploy matches %v", got)
	}
	if got := matchWords(t, s, "memories_fts", "api"); len(got) != 0 {
		t.Errorf("after an edit the old words still match %v", got)
	}
	imported, err := s.Transfer.RememberMany(ctx, []memory.Memory{{Scope: memory.ScopeServer, GuildID: "g1", Content: "ＶＰＮ lives on the wiki"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := matchWords(t, s, "memories_fts", "vpn"); len(got) != 1 || imported.Created != 1 {
		t.Errorf("after an import, vpn matches %v (%+v)", got, imported)
	}
	preview, err := s.Confirmations.PreviewForgetMe(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Confirmations.ConfirmForgetMe(ctx, "u1", preview.Token); err != nil {
		t.Fatal(err)
	}
	if got := matchWords(t, s, "memories_fts", "mari"); len(got) != 0 {
		t.Errorf("after forget-me the author's name still matches %v", got)
	}
}

// TestReindex: reindex rebuilds both full-text indexes from the rows: entries that no row has
// go, every live memory is back with its search text, and forgotten ones stay out.
func TestReindex(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	if rep, err := s.Maintenance.Reindex(ctx); err != nil || rep != (maintenance.ReindexReport{}) {
		t.Fatalf("reindex of an empty store: %+v %v", rep, err)
	}
	var ids []int64
	for _, c := range []string{"ＡＰＩの上限は毎分60回", "The raid is on Friday", "明日のdeployは15時から", "Forgotten tombstone words", "Minecraft night is Saturday"} {
		w, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: c}, "test")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.Memory.ID)
	}
	if _, err := s.Memories.Forget(ctx, memory.ServerOwner("g1"), []int64{ids[3]}, "test", ""); err != nil {
		t.Fatal(err)
	}
	// Break the indexes: words of a row that does not exist, the word index emptied, and a
	// raw row whose search text another client never computed.
	e := engineOf(t, s)
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`INSERT INTO memories_fts (memories_fts) VALUES ('delete-all')`,
			`INSERT INTO memories_fts (rowid, content, author_name) VALUES (999, 'phantom words', '')`,
			`INSERT INTO memories_tri (memories_tri) VALUES ('delete-all')`,
			`UPDATE memories SET search_text = '' WHERE id = ` + fmt.Sprint(ids[0]),
			// As a database upgraded across migration 0018 has it: older rows kept their entries.
			`UPDATE memories_tri_legacy SET max_id = 1000`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.reindexAll(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The trigram index is rebuilt for the memories with text beyond ASCII only.
	if rep != (maintenance.ReindexReport{Memories: 5, SearchText: 1, Words: 4, Trigrams: 2}) {
		t.Errorf("report %+v", rep)
	}
	for query, want := range map[string][]int64{"api": {ids[0]}, "raid": {ids[1]}, "deploy": {ids[2]}, "tombstone": nil,
		"saturday": {ids[4]}, "phantom": nil} {
		if got := matchWords(t, s, "memories_fts", query); !slices.Equal(got, want) {
			t.Errorf("%q matches %v, want %v", query, got, want)
		}
	}
	for query, want := range map[string][]int64{`"毎分60"`: {ids[0]}, `"deploy"`: {ids[2]}, `"Friday"`: nil, `"tombstone"`: nil} {
		if got := matchWords(t, s, "memories_tri", query); !slices.Equal(got, want) {
			t.Errorf("trigram %s matches %v, want %v", query, got, want)
		}
	}
	var legacy int64
	if err := e.read.QueryRowContext(ctx, `SELECT max_id FROM memories_tri_legacy`).Scan(&legacy); err != nil || legacy != 0 {
		t.Errorf("legacy max id after reindex = %d, %v; want 0", legacy, err)
	}
	if text, _ := searchColumns(t, s, ids[0]); !strings.HasPrefix(text, "api の") {
		t.Errorf("search text not recomputed: %q", text)
	}
}
