package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory/recall"
)

// Recall on PostgreSQL is the service's (ltm.Recall): its keyword leg is the service's
// in-memory index, as on SQLite (keywords.go); while a scope's index builds, or while the
// change feed is down, the database answers with its own indexes (ltm.KeywordFallback), and
// the keyword score each candidate carries is on the same scale (the keyword index's BM25: k1 1.2, b 0.3, the author column weighed
// twice), so the normalization k = x/(1+xmax) and the fusion with a vector leg behave alike:
//
//   - Words: a generated tsvector per memory, content through the english configuration
//     (stemmed, weight A) and the author's name through simple (weight B). The query's terms
//     and phrases select candidates with the GIN index; BM25 is then computed here from
//     each candidate's term frequencies and the scope's document frequencies.
//   - Unsegmented (CJK) text: the same scan and BM25 as SQLite's small scopes
//     (recall.ScanBM25) over the memories holding one of the query's character bigrams;
//     a scope larger than ltm.CJKScanMax is narrowed by trigrams through pg_trgm's GIN index.
//
// The vector leg, the ranking and its stages are the service's, as on SQLite.

// BM25's parameters are the keyword index's on SQLite (internal/kwindex): k1 1.2, b 0.3 and
// the smoothed idf, so both stores rank by the same formula.
var (
	bm25K1 = kwindex.DefaultParams.K1
	bm25B  = kwindex.DefaultParams.B
)

// keywordFallback answers the keyword leg from the database (ltm.KeywordFallback) while
// the in-memory indexes can't.
type keywordFallback struct{ db *db }

// KeywordIndexesCurrent reports whether the change feed is up: while it is down, the
// in-memory indexes may miss what other processes write, and the database answers.
func (e engine) KeywordIndexesCurrent() bool { return e.d.changes.isUp() }

// KeywordScores is the keyword leg answered by the database: word BM25, n-gram BM25 for CJK
// text, and the lexicon's expansion weighed by lexicon, on the in-memory indexes' scale.
func (e engine) KeywordScores(ctx context.Context, plan *recall.Plan, _ []string, where string, args []any, limit int, lexicon float64) (map[int64]float64, error) {
	return keywordFallback{e.d}.scores(ctx, plan, where, args, limit, lexicon)
}

func (s keywordFallback) scores(ctx context.Context, plan *recall.Plan, where string, args []any, limit int, lexicon float64) (map[int64]float64, error) {
	out := map[int64]float64{}
	if err := s.wordLeg(ctx, plan.Terms, plan.Pairs, where, args, limit, 1, out); err != nil {
		return nil, err
	}
	if len(plan.CJK) > 0 {
		if err := s.cjkLeg(ctx, plan, where, args, limit, 1, out); err != nil {
			return nil, err
		}
	}
	if lexicon > 0 && len(plan.Expansion) > 0 {
		exp := plan.ExpansionPlan()
		if err := s.wordLeg(ctx, exp.Terms, nil, where, args, limit, lexicon, out); err != nil {
			return nil, err
		}
		if len(exp.CJK) > 0 {
			if err := s.cjkLeg(ctx, &exp, where, args, limit, lexicon, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// wordLeg adds weight × the BM25 of the best limit memories matching terms (each stemmed
// in content, as is in author names) or pairs (phrases in content) to out.
//
// One statement finds the matches in the visible scopes with the GIN index, counts each
// term's document frequency over all of them (window aggregates, before the cut) and the
// scopes' size, analyses the terms as the index does (their lexemes), and returns the top
// ltm.FallbackTopFactor×limit by ts_rank with their tsvectors; the exact BM25 is computed here, so the
// scale is FTS5's.
func (s keywordFallback) wordLeg(ctx context.Context, terms []string, pairs [][2]string, where string, args []any, limit int, weight float64, out map[int64]float64) error {
	if len(terms)+len(pairs) == 0 {
		return nil
	}
	var (
		cols, conds, dfs, hits, lexCols []string
		qargs, lexArgs                  []any
	)
	for i, t := range terms {
		cols = append(cols, fmt.Sprintf("plainto_tsquery('english', ?) || plainto_tsquery('simple', ?) AS t%d", i))
		qargs = append(qargs, t, t)
		conds = append(conds, fmt.Sprintf("q.t%d", i))
		dfs = append(dfs, fmt.Sprintf("count(*) FILTER (WHERE m.search_tsv @@ q.t%d) OVER ()", i))
		lexCols = append(lexCols, "array_to_string(tsvector_to_array(to_tsvector('english', ?::text)), ' ')",
			"array_to_string(tsvector_to_array(to_tsvector('simple', ?::text)), ' ')")
		lexArgs = append(lexArgs, t, t)
	}
	for i, p := range pairs {
		cols = append(cols, fmt.Sprintf("phraseto_tsquery('english', ?) AS p%d", i))
		qargs = append(qargs, p[0]+" "+p[1])
		conds = append(conds, fmt.Sprintf("q.p%d", i))
		dfs = append(dfs, fmt.Sprintf("count(*) FILTER (WHERE m.search_tsv @@ q.p%d) OVER ()", i))
		hits = append(hits, fmt.Sprintf("(m.search_tsv @@ q.p%d)::int", i))
	}
	phraseHits := "''"
	if len(hits) > 0 {
		phraseHits = "concat(" + strings.Join(hits, ", ") + ")"
	}
	match := "(" + strings.Join(conds, " || ") + ")"
	extra := append(slices.Clone(lexCols), dfs...)
	query := `WITH q AS (SELECT ` + strings.Join(cols, ", ") + `)
		SELECT m.id, m.search_tsv::text, ` + phraseHits + `,
			(SELECT count(*) FROM memories m WHERE m.deleted_at IS NULL AND ` + where + `), ` + strings.Join(extra, ", ") + `
		FROM memories m, q WHERE m.deleted_at IS NULL AND ` + where + ` AND m.search_tsv @@ ` + match + `
		ORDER BY ts_rank('{0.1, 0.2, 1.0, 0.5}', m.search_tsv, ` + match + `) DESC, m.id DESC LIMIT ?`
	qargs = slices.Concat(qargs, args, lexArgs, args, []any{ltm.FallbackTopFactor * limit})
	rows, err := s.db.read.QueryContext(ctx, query, qargs...)
	if err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	type doc struct {
		id     int64
		tsv    string
		phrase string
	}
	var (
		docs    []doc
		n       int64
		lexText = make([][2]string, len(terms))
		df      = make([]int64, len(terms)+len(pairs))
	)
	for rows.Next() {
		var d doc
		dest := []any{&d.id, &d.tsv, &d.phrase, &n}
		for i := range lexText {
			dest = append(dest, &lexText[i][0], &lexText[i][1])
		}
		for i := range df {
			dest = append(dest, &df[i])
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return fmt.Errorf("couldn't read search row: %w", err)
		}
		docs = append(docs, d)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	if len(docs) == 0 {
		return nil
	}
	lex := make([]lexemes, len(terms))
	for i, l := range lexText {
		lex[i] = lexemes{strings.Fields(l[0]), strings.Fields(l[1])}
	}
	// Term frequencies per document and column (content A, author B), and the lengths.
	type counts struct {
		tf          [][2]float64
		lenA, lenB  float64
		phraseMatch string
	}
	parsed := make([]counts, len(docs))
	var sumA, sumB float64
	for i, d := range docs {
		c := counts{tf: make([][2]float64, len(terms)), phraseMatch: d.phrase}
		for _, e := range parseTSVector(d.tsv) {
			c.lenA += float64(e.a)
			c.lenB += float64(e.b)
			for j := range terms {
				if e.a > 0 && slices.Contains(lex[j].english, e.lexeme) {
					c.tf[j][0] += float64(e.a)
				}
				if e.b > 0 && slices.Contains(lex[j].simple, e.lexeme) {
					c.tf[j][1] += float64(e.b)
				}
			}
		}
		sumA, sumB = sumA+c.lenA, sumB+c.lenB
		parsed[i] = c
	}
	avgA, avgB := sumA/float64(len(docs)), sumB/float64(len(docs))
	bm := func(tf, dl, avg, idf float64) float64 {
		if tf == 0 {
			return 0
		}
		norm := 1.0
		if avg > 0 {
			norm = 1 - bm25B + bm25B*dl/avg
		}
		return idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
	}
	idf := make([]float64, len(df))
	for i, f := range df {
		// The smoothed idf of the keyword index, positive for every term.
		idf[i] = math.Log1p((float64(n) - float64(f) + 0.5) / (float64(f) + 0.5))
	}
	type scored struct {
		id int64
		x  float64
	}
	all := make([]scored, len(docs))
	for i, c := range parsed {
		var x float64
		for j := range terms {
			x += bm(c.tf[j][0], c.lenA, avgA, idf[j]) + ltm.AuthorWeight*bm(c.tf[j][1], c.lenB, avgB, idf[j])
		}
		for j := range pairs {
			if j < len(c.phraseMatch) && c.phraseMatch[j] == '1' {
				x += bm(1, c.lenA, avgA, idf[len(terms)+j])
			}
		}
		all[i] = scored{docs[i].id, x}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].x > all[j].x })
	for _, sc := range all[:min(limit, len(all))] {
		if sc.x > 0 {
			out[sc.id] += weight * sc.x
		}
	}
	return nil
}

// lexemes are a query term as each configuration indexes it.
type lexemes struct{ english, simple []string }

// scopeSize counts the live memories inside the scope and filters: BM25's N.
func (s keywordFallback) scopeSize(ctx context.Context, where string, args []any) (int, error) {
	var n int
	if err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM memories m WHERE m.deleted_at IS NULL AND `+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("couldn't count memories: %w", err)
	}
	return n, nil
}

// tsEntry is one lexeme of a tsvector with its number of positions of weight A and B.
type tsEntry struct {
	lexeme string
	a, b   int
}

// parseTSVector reads PostgreSQL's text form of a tsvector ('word':1A,4B 'other':2),
// counting the positions of each lexeme by weight (D, the default, counts as A: the
// content's weight).
func parseTSVector(s string) []tsEntry {
	var out []tsEntry
	i := 0
	for i < len(s) {
		if s[i] != '\'' {
			i++
			continue
		}
		i++
		var lex strings.Builder
		for i < len(s) {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				lex.WriteByte(s[i+1])
				i += 2
				continue
			}
			if c == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					lex.WriteByte('\'')
					i += 2
					continue
				}
				i++
				break
			}
			lex.WriteByte(c)
			i++
		}
		e := tsEntry{lexeme: lex.String()}
		if i < len(s) && s[i] == ':' {
			i++
			for i < len(s) && s[i] != ' ' {
				// one position: digits then an optional weight letter
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				w := byte('D')
				if i < len(s) && s[i] >= 'A' && s[i] <= 'D' {
					w = s[i]
					i++
				}
				if w == 'B' {
					e.b++
				} else {
					e.a++
				}
				if i < len(s) && s[i] == ',' {
					i++
				}
			}
		} else {
			e.a = 1 // a lexeme without positions still occurs
		}
		out = append(out, e)
	}
	return out
}

// cjkLeg scores unsegmented text as ltm's small-scope scan does: the memories holding one
// of the query's character bigrams (or a Latin word written inside CJK text) are read and
// scored with recall.ScanBM25. In a scope larger than ltm.CJKScanMax the scan is narrowed to
// memories holding one of the query's trigrams, which pg_trgm's GIN index finds.
func (s keywordFallback) cjkLeg(ctx context.Context, plan *recall.Plan, where string, args []any, limit int, weight float64, out map[int64]float64) error {
	n, err := s.scopeSize(ctx, where, args)
	if err != nil || n == 0 {
		return err
	}
	grams, words := ltm.ScanTerms(plan)
	if len(grams)+len(words) == 0 {
		return nil
	}
	var (
		conds    []string
		condArgs []any
	)
	if n > s.db.cjkScanMax && s.db.trigramsCJK {
		for _, t := range plan.CJKGrams(3) {
			if len([]rune(t)) >= 3 {
				conds = append(conds, "m.normalized LIKE ?")
				condArgs = append(condArgs, "%"+escapeLike(t)+"%")
			}
		}
	} else {
		conds, condArgs = ltm.ContainsAny(dialect.Instr, slices.Concat(grams, words))
	}
	return ltm.ScoreScanned(ctx, s.db.read, where, args, conds, condArgs, grams, words, n, limit, weight*ltm.CJKWeight, out)
}

// escapeLike quotes LIKE's wildcards in s (the default escape character is \).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
