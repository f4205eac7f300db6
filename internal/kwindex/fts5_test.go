package kwindex_test

import (
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// evalSet is the part of an eval dataset (SPEC §8) these tests read.
type evalSet struct {
	Scopes []struct {
		Memories []struct{ Content, Author string }
		Queries  []struct{ Text string }
	}
}

// corpus returns every memory (as search texts) and query of the repo's eval sets.
func corpus(t *testing.T) (docs []kwindex.Doc, queries []string) {
	t.Helper()
	files, err := filepath.Glob("../../testdata/eval/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no eval sets: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var set evalSet
		if err := json.Unmarshal(b, &set); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, sc := range set.Scopes {
			for _, m := range sc.Memories {
				docs = append(docs, kwindex.Doc{ID: int64(len(docs) + 1), Content: memory.SearchText(m.Content),
					Author: memory.SearchText(m.Author)})
			}
			for _, q := range sc.Queries {
				queries = append(queries, q.Text)
			}
		}
	}
	return docs, queries
}

func openFTS(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "fts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE VIRTUAL TABLE f USING fts5(content, author_name, content = '', contentless_delete = 1,
			tokenize = 'porter unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestTokenizeAgreesWithFTS5 checks the Go tokenizer against SQLite's own on every memory
// and author name of the eval sets: the in-memory index and the durable full-text index
// must agree on what each term is.
func TestTokenizeAgreesWithFTS5(t *testing.T) {
	docs, _ := corpus(t)
	db := openFTS(t)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if _, err := tx.Exec(`INSERT INTO f(rowid, content, author_name) VALUES (?, ?, ?)`, d.ID, d.Content, d.Author); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// One pass over the vocabulary: every token of every row, in order.
	rows, err := db.Query(`SELECT doc, col, term FROM v ORDER BY doc, col, offset`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]int64][]string{}
	for rows.Next() {
		var (
			doc       int64
			col, term string
		)
		if err := rows.Scan(&doc, &col, &term); err != nil {
			t.Fatal(err)
		}
		k := [2]int64{doc, 0}
		if col == "author_name" {
			k[1] = 1
		}
		want[k] = append(want[k], term)
	}
	rows.Close()
	bad := 0
	for _, d := range docs {
		for col, text := range []string{d.Content, d.Author} {
			var got []string
			kwindex.Tokenize(text, func(tok string, _ bool) { got = append(got, tok) })
			w := want[[2]int64{d.ID, int64(col)}]
			if strings.Join(got, "\x00") != strings.Join(w, "\x00") {
				bad++
				if bad <= 5 {
					t.Errorf("%q:\n got %q\nwant %q", text, got, w)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts tokenized differently", bad, 2*len(docs))
	}
}

// TestMatchesFTS5BM25 checks the scoring against SQLite's bm25() for one scope with b =
// 0.75: every query of the eval sets (terms and adjacent pairs, as the keyword leg asks)
// returns the same documents with the same scores.
func TestMatchesFTS5BM25(t *testing.T) {
	docs, queries := corpus(t)
	db := openFTS(t)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if _, err := tx.Exec(`INSERT INTO f(rowid, content, author_name) VALUES (?, ?, ?)`, d.ID, d.Content, d.Author); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	idx := kwindex.NewScope(kwindex.Params{K1: 1.2, B: 0.75, AuthorWeight: 2})
	idx.Put(docs...)
	checked := 0
	for _, text := range queries {
		plan := recall.Analyze(text)
		expr := ftsExpr(&plan)
		if expr == "" {
			continue
		}
		rows, err := db.Query(`SELECT rowid, -bm25(f, 1.0, 2.0) FROM f WHERE f MATCH ? ORDER BY 2 DESC, rowid`, expr)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		want := map[int64]float64{}
		for rows.Next() {
			var id int64
			var x float64
			if err := rows.Scan(&id, &x); err != nil {
				t.Fatal(err)
			}
			want[id] = x
		}
		rows.Close()
		got := idx.Search(kwindex.Query{Terms: plan.Terms, Pairs: plan.Pairs})
		if len(got) != len(want) {
			t.Errorf("%q: %d hits, FTS5 %d", text, len(got), len(want))
			continue
		}
		for _, h := range got {
			if x, ok := want[h.ID]; !ok || math.Abs(x-h.Score) > 1e-9*math.Max(1, x) {
				t.Errorf("%q: doc %d scores %.12f, FTS5 %.12f (found %v)", text, h.ID, h.Score, x, ok)
				break
			}
		}
		checked++
	}
	if checked < 200 {
		t.Fatalf("only %d queries checked", checked)
	}
}

func ftsExpr(p *recall.Plan) string {
	var parts []string
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	for _, t := range p.Terms {
		parts = append(parts, quote(t))
	}
	for _, pr := range p.Pairs {
		parts = append(parts, quote(pr[0]+" "+pr[1]))
	}
	return strings.Join(parts, " OR ")
}
