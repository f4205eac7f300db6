package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory/recall"
)

// SQLite's keyword fallback (ltm.KeywordFallback): FTS5's word and trigram indexes answer
// the keyword leg while a visible scope's in-memory index builds, and for every query of a
// store whose in-memory indexes are off (KeywordIndexOff: the eval and bench baselines).
// Its scores are FTS5's BM25, close to the in-memory indexes' (whose tokenizing is FTS5's).

// keywordSearch is FTS5 as the keyword leg's fallback (ltm.KeywordFallback).
type keywordSearch struct{ *db }

// KeywordIndexesCurrent is always true: the change log is a table every process writes,
// never down, so the in-memory indexes answer whenever the visible scopes' are built.
func (keywordSearch) KeywordIndexesCurrent() bool { return true }

// KeywordScores is the keyword leg answered by FTS5: word BM25, n-gram BM25 for CJK text,
// and the lexicon's expansion weighed by lexicon. The expansion is a second query rather
// than more OR-ed terms in the first because FTS5 has no per-term weight: the members would
// otherwise count as much as the question's own words.
func (k keywordSearch) KeywordScores(ctx context.Context, plan *recall.Plan, scopes []string, where string, args []any, limit int,
	lexicon float64) (map[int64]float64, error) {
	out := map[int64]float64{}
	if err := k.keywordLegs(ctx, plan, true, scopes, where, args, limit, out); err != nil {
		return nil, err
	}
	if lexicon <= 0 || len(plan.Expansion) == 0 {
		return out, nil
	}
	exp := plan.ExpansionPlan()
	more := map[int64]float64{}
	if err := k.keywordLegs(ctx, &exp, false, scopes, where, args, limit, more); err != nil {
		return nil, err
	}
	for id, x := range more {
		out[id] += lexicon * x
	}
	return out, nil
}

// keywordLegs adds to out the scores of plan's words (and, withPairs, its adjacent pairs)
// from the word index and of its unsegmented text from the scan or the trigram index.
func (k keywordSearch) keywordLegs(ctx context.Context, plan *recall.Plan, withPairs bool, scopes []string, where string, args []any,
	limit int, out map[int64]float64) error {
	if expr := ftsExpr(plan, withPairs); len(plan.Terms) > 0 && expr != "" {
		if err := k.wordLeg(ctx, expr, k.smallShare(ctx, scopes), where, args, limit, out); err != nil {
			return err
		}
	}
	if len(plan.CJK) == 0 {
		return nil
	}
	return k.cjkLeg(ctx, plan, where, args, limit, out)
}

// smallShare reports whether the visible scopes hold under 1/ltm.FallbackTopFactor of the database's
// live memories (memory_counts): the global FTS5 top list of wordLeg would then rarely
// keep enough of their rows, and the scoped query is cheaper on its own. False when the
// counts can't be read.
func (k keywordSearch) smallShare(ctx context.Context, scopes []string) bool {
	var total int
	if err := k.read.QueryRowContext(ctx, `SELECT coalesce(sum(live), 0) FROM memory_counts`).Scan(&total); err != nil {
		return false
	}
	mine := 0
	for _, key := range scopes {
		var n int
		if err := k.read.QueryRowContext(ctx, `SELECT coalesce((SELECT live FROM memory_counts WHERE scope_key = ?), 0)`, key).Scan(&n); err != nil {
			return false
		}
		mine += n
	}
	return mine*ltm.FallbackTopFactor < total
}

// ftsExpr renders the plan as an FTS5 expression: every term and adjacent pair quoted (so
// user text can never be FTS syntax) and OR-ed, so a memory matching some words still
// scores, and one holding a query phrase scores that phrase's weight on top.
func ftsExpr(p *recall.Plan, withPairs bool) string {
	var b strings.Builder
	for _, t := range p.Terms {
		if b.Len() > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(quoteFTS(t))
	}
	if withPairs {
		for _, pr := range p.Pairs {
			b.WriteString(" OR ")
			b.WriteString(quoteFTS(pr[0] + " " + pr[1]))
		}
	}
	return b.String()
}

func quoteFTS(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// wordLeg scores the FTS5 word index. FTS5 ranks its own matches fastest, without a join
// per matching row, so the global top ltm.FallbackTopFactor×limit are ranked first and only those rows
// are checked against the scope and filters. The survivors are the exact top limit of the
// visible scopes whenever at least limit of them survive or the global list was not cut
// (a visible row outside the global top scores no higher than any survivor). Otherwise,
// when the visible scopes are a small part of a large database, the full join runs; small
// says so beforehand (smallShare), and the global list is then not ranked at all.
func (k keywordSearch) wordLeg(ctx context.Context, expr string, small bool, where string, args []any, limit int, out map[int64]float64) error {
	k.indexBeforeQuery(ctx)
	full := fmt.Sprintf(`SELECT m.id, -bm25(memories_fts, 1.0, %g) FROM memories_fts
		JOIN memories m ON m.id = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.deleted_at IS NULL AND %s ORDER BY 2 DESC LIMIT ?`, ltm.AuthorWeight, where)
	if small {
		return k.collectScores(ctx, full, expr, args, limit, 1, out)
	}
	top := ltm.FallbackTopFactor * limit
	global := map[int64]float64{}
	rows, err := k.read.QueryContext(ctx, fmt.Sprintf(`SELECT rowid, -bm25(memories_fts, 1.0, %g) AS x FROM memories_fts
		WHERE memories_fts MATCH ? ORDER BY x DESC LIMIT ?`, ltm.AuthorWeight), expr, top)
	if err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	ids := make([]int64, 0, top)
	for rows.Next() {
		var (
			id int64
			x  float64
		)
		if err := rows.Scan(&id, &x); err != nil {
			rows.Close()
			return fmt.Errorf("couldn't read search row: %w", err)
		}
		global[id] = x
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	visible, err := ltm.VisibleIDs(ctx, k.read, ids, where, args)
	if err != nil {
		return err
	}
	if len(visible) < limit && len(ids) == top {
		return k.collectScores(ctx, full, expr, args, limit, 1, out)
	}
	// ids are best first, so the first limit visible ones are the top limit.
	kept := 0
	for _, id := range ids {
		if kept == limit {
			break
		}
		if _, ok := visible[id]; ok && global[id] > 0 {
			out[id] += global[id]
			kept++
		}
	}
	return nil
}

// collectScores runs a scored FTS query (expr first, then args, then limit) and adds
// weight × score to out.
func (k keywordSearch) collectScores(ctx context.Context, query, expr string, args []any, limit int, weight float64, out map[int64]float64) error {
	qargs := make([]any, 0, len(args)+2)
	qargs = append(qargs, expr)
	qargs = append(qargs, args...)
	qargs = append(qargs, limit)
	rows, err := k.read.QueryContext(ctx, query, qargs...)
	if err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id int64
			x  float64
		)
		if err := rows.Scan(&id, &x); err != nil {
			return fmt.Errorf("couldn't read search row: %w", err)
		}
		if x > 0 {
			out[id] += weight * x
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	return nil
}

// cjkLeg scores unsegmented text. Small scopes are scanned for the query's character
// bigrams in the NFKC-normalized content and scored with BM25 computed here (the scan sees
// every row holding a bigram, so document frequencies are exact); large scopes use the
// trigram FTS index instead.
func (k keywordSearch) cjkLeg(ctx context.Context, plan *recall.Plan, where string, args []any, limit int, out map[int64]float64) error {
	var n int
	if err := k.read.QueryRowContext(ctx, `SELECT count(*) FROM memories m WHERE m.deleted_at IS NULL AND `+where, args...).Scan(&n); err != nil {
		return fmt.Errorf("couldn't count memories: %w", err)
	}
	if n == 0 {
		return nil
	}
	if n > ltm.CJKScanMax {
		tri := plan.CJKGrams(3)
		var terms []string
		for _, t := range tri {
			if len([]rune(t)) >= 3 {
				terms = append(terms, quoteFTS(t))
			}
		}
		if len(terms) == 0 {
			return nil
		}
		k.indexBeforeQuery(ctx)
		query := `SELECT m.id, -bm25(memories_tri) FROM memories_tri JOIN memories m ON m.id = memories_tri.rowid
			WHERE memories_tri MATCH ? AND m.deleted_at IS NULL AND ` + where + ` ORDER BY 2 DESC LIMIT ?`
		return k.collectScores(ctx, query, strings.Join(terms, " OR "), args, limit, ltm.CJKWeight, out)
	}
	grams, words := ltm.ScanTerms(plan)
	conds, condArgs := ltm.ContainsAny(dialect.Instr, slices.Concat(grams, words))
	return ltm.ScoreScanned(ctx, k.read, where, args, conds, condArgs, grams, words, n, limit, ltm.CJKWeight, out)
}

// placeholders returns n comma-separated question marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
