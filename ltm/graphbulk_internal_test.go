package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// A bulk write links exactly as the same memories written one by one: the same entities,
// names, kinds and mentions, the same aliases and links, although it finds the entities
// ahead on another core (bulkAnalysis) and links a batch in one transaction. The authors
// here change display names mid-write and back, and are mentioned by nickname and by <@id>.
func TestBulkLinkingMatchesOneByOne(t *testing.T) {
	ctx := context.Background()
	type said struct{ id, name, content string }
	script := []said{
		{"50", "Katherine", "Kate is bringing the projector to Osaka"},
		{"50", "Katherine", "the Falcon build is green again"},
		{"51", "Bill", "Katherine said the venue is booked"},
		{"50", "Kat", "renamed myself, still running the Falcon build"},
		{"51", "William", "<@50> and I will stream Valheim on Friday"},
		{"50", "Katherine", "back to my old name, Bill owes me a coffee"},
		{"52", "<@52>", "Marisol joined the Osaka trip"},
		{"51", "Bill", "Kate, Katya and Marisel are on the Falcon team"},
	}
	mems := make([]memory.Memory, len(script))
	for i, s := range script {
		mems[i] = memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: s.content,
			Provenance: memory.Provenance{AuthorID: s.id, Author: s.name}}
	}
	open := func() *Store {
		s, err := OpenTestStore(ctx, filepath.Join(t.TempDir(), "kioku.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	single, bulk := open(), open()
	for _, m := range mems {
		if _, err := single.Memories.Remember(ctx, m, memory.UserActor("1")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bulk.Transfer.RememberMany(ctx, slices.Clone(mems), memory.UserActor("1")); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT name, normalized, kind, user_id, mentions FROM entities ORDER BY id`,
		`SELECT e.name, a.alias FROM entity_aliases a JOIN entities e ON e.id = a.entity_id ORDER BY e.id, a.alias`,
		`SELECT m.content, e.name FROM memory_entities me JOIN memories m ON m.id = me.memory_id
			JOIN entities e ON e.id = me.entity_id ORDER BY m.id, e.id`,
	} {
		want, got := tableRows(t, single.read.db, q), tableRows(t, bulk.read.db, q)
		if !slices.Equal(got, want) {
			t.Errorf("%s\nbulk:       %q\none by one: %q", q, got, want)
		}
	}
	if rows := tableRows(t, bulk.read.db, `SELECT name FROM entities WHERE user_id = '50'`); !slices.Equal(rows, []string{"[Katherine]"}) {
		t.Errorf("member 50's entity after Katherine, Kat, Katherine: %q", rows)
	}
}

// tableRows is every row of query, each printed as a slice.
func tableRows(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals))
	}
	return out
}
