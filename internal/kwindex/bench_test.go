package kwindex_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/memory/recall"
)

// A synthetic chat corpus: a Zipf-distributed vocabulary, so common words have long
// posting lists and rare ones short, like real messages.
var (
	benchOnce    sync.Once
	benchDocs    []kwindex.Doc
	benchQueries []recall.Plan
)

func benchCorpus(n int) ([]kwindex.Doc, []recall.Plan) {
	benchOnce.Do(func() {
		r := rand.New(rand.NewPCG(7, 9))
		vocab := make([]string, 20000)
		for i := range vocab {
			vocab[i] = fmt.Sprintf("w%dx%c", i, 'a'+rune(i%26))
		}
		zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
		authors := []string{"alice", "bob", "carol", "dmitri", "emeka", "fatima"}
		for i := range n {
			words := make([]string, 4+r.IntN(24))
			for j := range words {
				words[j] = vocab[zipf.Uint64()]
			}
			benchDocs = append(benchDocs, kwindex.Doc{ID: int64(i + 1), Content: strings.Join(words, " "), Author: authors[r.IntN(len(authors))]})
		}
		for range 300 {
			words := make([]string, 1+r.IntN(6))
			for j := range words {
				words[j] = vocab[zipf.Uint64()]
			}
			benchQueries = append(benchQueries, recall.Analyze(strings.Join(words, " ")))
		}
	})
	return benchDocs, benchQueries
}

// BenchmarkSearch100k times the in-memory keyword leg at 100k memories in one scope;
// BenchmarkFTS5Search100k times SQLite's bm25() over the same rows and queries, the
// baseline to compare against in the same run.
func BenchmarkSearch100k(b *testing.B) {
	docs, queries := benchCorpus(100_000)
	idx := kwindex.NewScope(kwindex.DefaultParams)
	idx.Put(docs...)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := queries[i%len(queries)]
		idx.Search(kwindex.Query{Terms: q.Terms, Pairs: q.Pairs, Limit: 50})
	}
}

// BenchmarkSearch100kCommon times short queries of the corpus's most common words, whose
// postings are the longest: the case early termination is for.
func BenchmarkSearch100kCommon(b *testing.B) {
	docs, _ := benchCorpus(100_000)
	idx := kwindex.NewScope(kwindex.DefaultParams)
	idx.Put(docs...)
	r := rand.New(rand.NewPCG(5, 6))
	queries := make([]recall.Plan, 100)
	for i := range queries {
		words := make([]string, 1+r.IntN(3))
		for j := range words {
			n := r.IntN(30)
			words[j] = fmt.Sprintf("w%dx%c", n, 'a'+rune(n%26))
		}
		queries[i] = recall.Analyze(strings.Join(words, " "))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := queries[i%len(queries)]
		idx.Search(kwindex.Query{Terms: q.Terms, Pairs: q.Pairs, Limit: 50})
	}
}

func BenchmarkFTS5Search100k(b *testing.B) {
	docs, queries := benchCorpus(100_000)
	db, err := sql.Open("sqlite", filepath.Join(b.TempDir(), "fts.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE f USING fts5(content, author_name, content = '', contentless_delete = 1,
		tokenize = 'porter unicode61 remove_diacritics 2')`); err != nil {
		b.Fatal(err)
	}
	tx, _ := db.Begin()
	for _, d := range docs {
		if _, err := tx.Exec(`INSERT INTO f(rowid, content, author_name) VALUES (?, ?, ?)`, d.ID, d.Content, d.Author); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	exprs := make([]string, len(queries))
	for i := range queries {
		exprs[i] = ftsExpr(&queries[i])
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		rows, err := db.Query(`SELECT rowid, -bm25(f, 1.0, 2.0) AS x FROM f WHERE f MATCH ? ORDER BY x DESC LIMIT 50`, exprs[i%len(exprs)])
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
		}
		rows.Close()
	}
}

func BenchmarkBuild100k(b *testing.B) {
	docs, _ := benchCorpus(100_000)
	b.ReportAllocs()
	for b.Loop() {
		idx := kwindex.NewScope(kwindex.DefaultParams)
		idx.Put(docs...)
	}
}

// BenchmarkBuildSmallScopes builds 100 scopes of 1,000 memories each, as a server's index
// is built on its first search.
func BenchmarkBuildSmallScopes(b *testing.B) {
	docs, _ := benchCorpus(100_000)
	b.ReportAllocs()
	for b.Loop() {
		for i := range 100 {
			idx := kwindex.NewScope(kwindex.DefaultParams)
			idx.Put(docs[i*1000 : (i+1)*1000]...)
		}
	}
}
