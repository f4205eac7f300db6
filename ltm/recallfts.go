package ltm

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kioku-bot/kioku/memory/recall"
)

// SQLite's keyword fallback: FTS5's word and trigram indexes answer the keyword leg while
// a visible scope's in-memory index builds (an engine with its own, KeywordFallback, answers
// with that instead).

// wordLeg scores the FTS5 word index. FTS5 ranks its own matches fastest, without a join
// per matching row, so the global top topFactor×limit are ranked first and only those rows
// are checked against the scope and filters. The survivors are the exact top limit of the
// visible scopes whenever at least limit of them survive or the global list was not cut
// (a visible row outside the global top scores no higher than any survivor). Otherwise,
// when the visible scopes are a small part of a large database, the full join runs; small
// says so beforehand (smallShare), and the global list is then not ranked at all.
func (s searcher) wordLeg(ctx context.Context, expr string, small bool, where string, args []any, limit int, out map[int64]float64) error {
	s.db.indexBeforeQuery(ctx)
	full := fmt.Sprintf(`SELECT m.id, -bm25(memories_fts, 1.0, %g) FROM memories_fts
		JOIN memories m ON m.id = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.deleted_at IS NULL AND %s ORDER BY 2 DESC LIMIT ?`, authorWeight, where)
	if small {
		return s.collectScores(ctx, full, expr, args, limit, 1, out)
	}
	top := topFactor * limit
	global := map[int64]float64{}
	rows, err := s.db.read.QueryContext(ctx, fmt.Sprintf(`SELECT rowid, -bm25(memories_fts, 1.0, %g) AS x FROM memories_fts
		WHERE memories_fts MATCH ? ORDER BY x DESC LIMIT ?`, authorWeight), expr, top)
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
	visible, err := s.visibleIDs(ctx, ids, where, args)
	if err != nil {
		return err
	}
	if len(visible) < limit && len(ids) == top {
		return s.collectScores(ctx, full, expr, args, limit, 1, out)
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
func (s searcher) collectScores(ctx context.Context, query, expr string, args []any, limit int, weight float64, out map[int64]float64) error {
	qargs := make([]any, 0, len(args)+2)
	qargs = append(qargs, expr)
	qargs = append(qargs, args...)
	qargs = append(qargs, limit)
	rows, err := s.db.read.QueryContext(ctx, query, qargs...)
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
func (s searcher) cjkLeg(ctx context.Context, plan *recall.Plan, where string, args []any, limit int, out map[int64]float64) error {
	var n int
	if err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM memories m WHERE m.deleted_at IS NULL AND `+where, args...).Scan(&n); err != nil {
		return fmt.Errorf("couldn't count memories: %w", err)
	}
	if n == 0 {
		return nil
	}
	if n > cjkScanMax {
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
		s.db.indexBeforeQuery(ctx)
		query := `SELECT m.id, -bm25(memories_tri) FROM memories_tri JOIN memories m ON m.id = memories_tri.rowid
			WHERE memories_tri MATCH ? AND m.deleted_at IS NULL AND ` + where + ` ORDER BY 2 DESC LIMIT ?`
		return s.collectScores(ctx, query, strings.Join(terms, " OR "), args, limit, cjkWeight, out)
	}
	// Latin words written inside Japanese text ("ＡＰＩのrate limit") are one token to
	// unicode61, so the scan looks for the query's words too.
	grams := plan.CJKGrams(2)
	var words []string
	for _, t := range plan.Terms {
		if len(t) >= 2 {
			words = append(words, t)
		}
	}
	if len(grams)+len(words) == 0 {
		return nil
	}
	conds := make([]string, 0, len(grams)+len(words))
	qargs := make([]any, 0, len(args)+len(grams)+len(words))
	qargs = append(qargs, args...)
	for _, g := range slices.Concat(grams, words) {
		conds = append(conds, "instr(m.normalized || ' ' || lower(m.author_name), ?) > 0")
		qargs = append(qargs, g)
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT m.id, m.normalized || ' ' || lower(m.author_name) FROM memories m WHERE m.deleted_at IS NULL AND `+
		where+` AND (`+strings.Join(conds, " OR ")+`)`, qargs...)
	if err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	var (
		ids  []int64
		docs []string
	)
	for rows.Next() {
		var (
			id   int64
			text string
		)
		if err := rows.Scan(&id, &text); err != nil {
			rows.Close()
			return fmt.Errorf("couldn't read search row: %w", err)
		}
		ids = append(ids, id)
		docs = append(docs, text)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	if len(docs) == 0 {
		return nil
	}
	xs := recall.ScanBM25(docs, grams, words, n)
	scored := make([]struct {
		id int64
		x  float64
	}, len(docs))
	for i := range docs {
		scored[i].id, scored[i].x = ids[i], xs[i]
	}
	sort.Slice(scored, func(i, j int) bool { return scored[i].x > scored[j].x })
	for _, sc := range scored[:min(limit, len(scored))] {
		if sc.x > 0 {
			out[sc.id] += cjkWeight * sc.x
		}
	}
	return nil
}
