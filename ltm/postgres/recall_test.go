package postgres_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// searchCorpus is one server's memories in English and Japanese, with an author name that
// only the author column holds.
var searchCorpus = []memory.Memory{
	{Content: "I run every morning before work"},
	{Content: "The marathon runners meet on Sunday"},
	{Content: "東京タワーは夜に赤く光る"},
	{Content: "大阪城の桜がきれい"},
	{Content: "明日のAPIのrate limitは100"},
	{Content: "Bring snacks to the picnic", Provenance: memory.Provenance{AuthorID: "42", Author: "Kate Nakamura"}},
	{Content: "Kate's birthday is in May"},
	{Content: "The release train leaves on Friday"},
}

// searchCases are queries and the memories (indexes into searchCorpus) they must find.
var searchCases = []struct {
	query string
	want  []int
}{
	{"running", []int{0}},    // stemmed: running → run
	{"東京タワー", []int{2}},      // Japanese, no word boundaries
	{"大阪", []int{3}},         // a two-character word (a bigram)
	{"rate limit", []int{4}}, // Latin words inside Japanese text
	{"Nakamura", []int{5}},   // an author's name, found in the author column only
	{"Kate", []int{5, 6}},    // in the author column and in the content
	{"when does the release train leave", []int{7}},
}

func rememberCorpus(t *testing.T, m interface {
	Remember(ctx context.Context, m memory.Memory, actor memory.Actor) (memory.WriteResult, error)
}) []int64 {
	t.Helper()
	ids := make([]int64, len(searchCorpus))
	for i, c := range searchCorpus {
		c.Scope, c.GuildID = memory.ScopeServer, "g1"
		res, err := m.Remember(t.Context(), c, memory.ActorCLI)
		if err != nil {
			t.Fatalf("remember %q: %v", c.Content, err)
		}
		ids[i] = res.Memory.ID
	}
	return ids
}

func search(t *testing.T, r interface {
	Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
}, text string) []memory.SearchResult {
	t.Helper()
	res, err := r.Search(t.Context(), memory.SearchQuery{Text: text, Owners: []memory.Owner{memory.ServerOwner("g1")}, KeywordOnly: true, Limit: 10})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	return res
}

func resultIDs(res []memory.SearchResult) []int64 {
	out := make([]int64, len(res))
	for i, r := range res {
		out[i] = r.Memory.ID
	}
	return out
}

// TestPostgresSearch: stemmed English words, author names, Japanese text without word
// boundaries (bigrams by scan, trigrams through pg_trgm's index in a large scope) and Latin
// words inside Japanese all find exactly their memories, with keyword scores normalized
// into [0,1) as recall.Rank defines.
func TestPostgresSearch(t *testing.T) {
	s := pgtest.Open(t)
	if !s.TrigramsCJK() {
		t.Fatal("pg_trgm drops Japanese characters in this database: it needs a UTF-8 ctype (initdb --locale=C.UTF-8)")
	}
	ids := rememberCorpus(t, s.Memories)
	type searchCase = struct {
		query string
		want  []int
	}
	check := func(t *testing.T, cases []searchCase) {
		for _, c := range cases {
			res := search(t, s.Recall, c.query)
			got := resultIDs(res)
			var want []int64
			for _, i := range c.want {
				want = append(want, ids[i])
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%q found %v, want %v", c.query, got, want)
			}
			for _, r := range res {
				if r.Keyword <= 0 || r.Keyword >= 1 {
					t.Errorf("%q: keyword score %v of #%d is outside (0,1)", c.query, r.Keyword, r.Memory.ID)
				}
			}
		}
	}
	// The in-memory keyword index answers once a scope's is ready; the database's own
	// search answers while it builds, and is checked with the index off.
	t.Run("KeywordIndex", func(t *testing.T) { check(t, searchCases) })
	t.Run("SmallScopeScan", func(t *testing.T) {
		s.KeywordIndexOff = true
		defer func() { s.KeywordIndexOff = false }()
		check(t, searchCases)
	})
	t.Run("LargeScopeTrigrams", func(t *testing.T) {
		s.KeywordIndexOff = true
		defer func() { s.KeywordIndexOff = false }()
		s.SetCJKScanMax(1)
		defer s.SetCJKScanMax(20000)
		check(t, []searchCase{
			{"東京タワー", []int{2}},
			{"大阪城", []int{3}},
			// As on SQLite, a scope too large to scan finds CJK text by trigrams only: a
			// two-character word alone has none.
			{"大阪", nil},
			{"running", []int{0}},
		})
	})
	t.Run("ForgottenAndOtherScopesAreNotFound", func(t *testing.T) {
		if _, err := s.Memories.Forget(t.Context(), memory.ServerOwner("g1"), []int64{ids[2]}, memory.ActorCLI, ""); err != nil {
			t.Fatal(err)
		}
		if got := resultIDs(search(t, s.Recall, "東京タワー")); len(got) != 0 {
			t.Errorf("a forgotten Japanese memory was found: %v", got)
		}
		if _, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "大阪の夜"}, memory.ActorCLI); err != nil {
			t.Fatal(err)
		}
		if got := resultIDs(search(t, s.Recall, "大阪")); !slices.Equal(got, []int64{ids[3]}) {
			t.Errorf("search of g1 for 大阪 found %v, want only #%d", got, ids[3])
		}
	})
}

// TestPostgresSearchMatchesSQLite: the same memories and queries give the same results on
// both stores, with the same best match, and keyword scores on the same scale, so that the
// fusion with a vector leg weighs them alike.
func TestPostgresSearchMatchesSQLite(t *testing.T) {
	pg := pgtest.Open(t)
	lite, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pgIDs, liteIDs := rememberCorpus(t, pg.Memories), rememberCorpus(t, lite.Memories)
	if !slices.Equal(pgIDs, liteIDs) {
		t.Fatalf("ids differ: %v and %v", pgIDs, liteIDs)
	}
	for _, c := range append(searchCases, struct {
		query string
		want  []int
	}{"run on friday or sunday", nil}) {
		p, l := search(t, pg.Recall, c.query), search(t, lite.Recall, c.query)
		pi, li := resultIDs(p), resultIDs(l)
		if len(p) == 0 || len(l) == 0 {
			t.Errorf("%q: PostgreSQL found %v, SQLite %v", c.query, pi, li)
			continue
		}
		if pi[0] != li[0] {
			t.Errorf("%q: best match #%d on PostgreSQL, #%d on SQLite", c.query, pi[0], li[0])
		}
		slices.Sort(pi)
		slices.Sort(li)
		if !slices.Equal(pi, li) {
			t.Errorf("%q: PostgreSQL found %v, SQLite %v", c.query, pi, li)
		}
		t.Logf("%q: best keyword score %.3f on PostgreSQL, %.3f on SQLite", c.query, p[0].Keyword, l[0].Keyword)
		// Both answer from the same in-memory keyword index: the same keyword scores (the
		// final ones also weigh each memory's age, which the two writes set apart).
		liteKeyword := map[int64]float64{}
		for _, r := range l {
			liteKeyword[r.Memory.ID] = r.Keyword
		}
		for _, r := range p {
			if x, ok := liteKeyword[r.Memory.ID]; ok && math.Abs(r.Keyword-x) > 1e-9 {
				t.Errorf("%q: #%d has keyword score %v on PostgreSQL, %v on SQLite", c.query, r.Memory.ID, r.Keyword, x)
			}
		}
	}
}
