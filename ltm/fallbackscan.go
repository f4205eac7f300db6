package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/kioku-bot/kioku/memory/recall"
)

// What an engine's keyword fallback (KeywordFallback) shares with the service: the check
// that the ids an index returned are live and inside the scope, and the scan that scores
// unsegmented (CJK) text by reading it, whose rules must not differ between engines.

// The keyword legs' settings, the same in the in-memory index and in every engine's
// fallback (docs/recall.md gives the measurements behind them).
const (
	// CJKWeight weighs the CJK n-gram leg's BM25 against the word leg's.
	CJKWeight = 1.0
	// CJKScanMax is the largest scope whose rows a fallback scans for CJK bigrams
	// (two-character words a trigram index cannot match); larger scopes are narrowed by
	// trigrams.
	CJKScanMax = 20000
	// AuthorWeight is the BM25 weight of the author column relative to content (1).
	AuthorWeight = 2.0
	// FallbackTopFactor sizes the database-wide top list a fallback ranks before it keeps
	// the scope's rows: FallbackTopFactor × limit.
	FallbackTopFactor = 4
)

// Querier runs a read written with ? placeholders (an engine's reader pool).
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// VisibleIDs returns which of ids are live memories of the memories m matching where.
func VisibleIDs(ctx context.Context, q Querier, ids []int64, where string, args []any) (map[int64]struct{}, error) {
	qargs := make([]any, 0, len(ids)+len(args))
	for _, id := range ids {
		qargs = append(qargs, id)
	}
	qargs = append(qargs, args...)
	rows, err := q.QueryContext(ctx, `SELECT m.id FROM memories m WHERE m.id IN (`+placeholders(len(ids))+`)
		AND m.deleted_at IS NULL AND `+where, qargs...)
	if err != nil {
		return nil, fmt.Errorf("couldn't check recalled memories: %w", err)
	}
	defer rows.Close()
	out := make(map[int64]struct{}, len(ids))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("couldn't read search row: %w", err)
		}
		out[id] = struct{}{}
	}
	return out, rows.Err()
}

// ScanTerms are what the scan of unsegmented text looks for: the query's character bigrams,
// and its Latin words of two letters or more ("ＡＰＩのrate limit": a tokenizer reads the
// words inside Japanese text as one token, so the scan looks for them too).
func ScanTerms(plan *recall.Plan) (grams, words []string) {
	grams = plan.CJKGrams(2)
	for _, t := range plan.Terms {
		if len(t) >= 2 {
			words = append(words, t)
		}
	}
	return grams, words
}

// scanText is what the scan reads of a memory: its normalized content and its author.
const scanText = "m.normalized || ' ' || lower(m.author_name)"

// ContainsAny is the condition that a memory's scanned text holds one of terms, written
// with the dialect's substring position function (Dialect.Instr), and its arguments.
func ContainsAny(instr string, terms []string) (conds []string, args []any) {
	for _, t := range terms {
		conds = append(conds, instr+"("+scanText+", ?) > 0")
		args = append(args, t)
	}
	return conds, args
}

// ScoreScanned reads the live memories matching where (with args) and any of conds (with
// condArgs), scores their text with BM25 for grams and words computed here (n is the scope's
// size, so document frequencies are exact for what the conditions find), and adds weight
// times the best limit positive scores to out.
func ScoreScanned(ctx context.Context, q Querier, where string, args []any, conds []string, condArgs []any,
	grams, words []string, n, limit int, weight float64, out map[int64]float64) error {
	if len(conds) == 0 {
		return nil
	}
	qargs := make([]any, 0, len(args)+len(condArgs))
	qargs = append(append(qargs, args...), condArgs...)
	rows, err := q.QueryContext(ctx, `SELECT m.id, `+scanText+` FROM memories m WHERE m.deleted_at IS NULL AND `+
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
			id  int64
			doc string
		)
		if err := rows.Scan(&id, &doc); err != nil {
			rows.Close()
			return fmt.Errorf("couldn't read search row: %w", err)
		}
		ids = append(ids, id)
		docs = append(docs, doc)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	if len(docs) == 0 {
		return nil
	}
	xs := recall.ScanBM25(docs, grams, words, n)
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return xs[order[a]] > xs[order[b]] })
	for _, i := range order[:min(limit, len(order))] {
		if xs[i] > 0 {
			out[ids[i]] += weight * xs[i]
		}
	}
	return nil
}
