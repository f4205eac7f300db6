package ltm

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/kioku-bot/kioku/memory"
)

// Visible names one slice of memory a recall may read: an owner's scope, optionally narrowed
// to personal memories that originated in one guild (the rule for using someone's personal
// memory in a guild they have not opted into cross-server use for).
type Visible struct {
	Owner memory.Owner
	// OriginGuildID, for a personal owner, restricts to memories made in that guild. Empty
	// means any origin (DMs, or a user who opted into cross-server use).
	OriginGuildID string
}

// SearchQuery describes one recall.
type SearchQuery struct {
	Text string
	// Owners lists whole scopes to search. Each is put in the SQL WHERE clause.
	Owners []memory.Owner
	// Visible lists narrowed scopes (personal memories by origin). Owners and Visible add up.
	Visible []Visible
	Limit   int // default 10, at most 100
	// MinScore drops results scoring below it (0–1).
	MinScore float64
	// Filters.
	Types         []memory.Type
	Tags          []string
	ImportanceMin float64
	Since         time.Time
	PinnedOnly    bool
	// KeywordOnly skips the vector leg even when an embedder is configured.
	KeywordOnly bool
}

// Result is one recalled memory with its scores.
type Result struct {
	Memory  *memory.Memory
	Score   float64 // final score, higher is better
	Keyword float64 // normalized keyword score in [0,1), 0 when the keyword leg missed
	Vector  float64 // cosine similarity in [-1,1], 0 when the vector leg missed or was off
}

func (q *SearchQuery) visible() []Visible {
	out := make([]Visible, 0, len(q.Owners)+len(q.Visible))
	for _, o := range q.Owners {
		out = append(out, Visible{Owner: o})
	}
	return append(out, q.Visible...)
}

// scopeClause renders the visibility rules as SQL over the memories table alias m.
func scopeClause(vis []Visible) (string, []any, error) {
	if len(vis) == 0 {
		return "", nil, memory.Errorf(memory.EINVALID, "A search needs at least one scope.")
	}
	parts := make([]string, 0, len(vis))
	args := make([]any, 0, len(vis)*2)
	for _, v := range vis {
		if err := v.Owner.Validate(); err != nil {
			return "", nil, err
		}
		if v.Owner.Scope == memory.ScopePersonal && v.OriginGuildID != "" {
			parts = append(parts, "(m.scope_key = ? AND m.guild_id = ?)")
			args = append(args, v.Owner.Key(), v.OriginGuildID)
			continue
		}
		parts = append(parts, "m.scope_key = ?")
		args = append(args, v.Owner.Key())
	}
	return "(" + strings.Join(parts, " OR ") + ")", args, nil
}

func filterClause(q *SearchQuery) (string, []any) {
	var parts []string
	var args []any
	if len(q.Types) > 0 {
		ph := strings.TrimSuffix(strings.Repeat("?,", len(q.Types)), ",")
		parts = append(parts, "m.type IN ("+ph+")")
		for _, t := range q.Types {
			args = append(args, t)
		}
	}
	for _, tag := range q.Tags {
		parts = append(parts, "EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)")
		args = append(args, strings.ToLower(tag))
	}
	if q.ImportanceMin > 0 {
		parts = append(parts, "m.importance >= ?")
		args = append(args, q.ImportanceMin)
	}
	if !q.Since.IsZero() {
		parts = append(parts, "m.created_at >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if q.PinnedOnly {
		parts = append(parts, "m.pinned = 1")
	}
	if len(parts) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(parts, " AND "), args
}

// Search recalls the memories that best match q.Text inside the visible scopes.
func (s *Store) Search(ctx context.Context, q SearchQuery) ([]Result, error) {
	if q.Limit <= 0 {
		q.Limit = 10
	}
	q.Limit = min(q.Limit, 100)
	scope, scopeArgs, err := scopeClause(q.visible())
	if err != nil {
		return nil, err
	}
	filter, filterArgs := filterClause(&q)
	where := scope + filter
	args := append(scopeArgs, filterArgs...)

	scores := make(map[int64]float64)
	if expr := ftsQuery(q.Text); expr != "" {
		if err := s.keywordLeg(ctx, "memories_fts", expr, where, args, q.Limit*4, scores); err != nil {
			return nil, err
		}
	}
	if expr := trigramQuery(q.Text); expr != "" {
		if err := s.keywordLeg(ctx, "memories_tri", expr, where, args, q.Limit*4, scores); err != nil {
			return nil, err
		}
	}
	if len(scores) == 0 {
		return nil, nil
	}
	ids := make([]int64, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	mems, err := s.loadMemories(ctx, ids, where, args)
	if err != nil {
		return nil, err
	}
	results := make([]Result, 0, len(mems))
	for _, m := range mems {
		kw := scores[m.ID]
		r := Result{Memory: m, Keyword: kw, Score: kw}
		if r.Score < q.MinScore {
			continue
		}
		results = append(results, r)
	}
	sort.Slice(results, func(i, j int) bool {
		if results[i].Score != results[j].Score {
			return results[i].Score > results[j].Score
		}
		return results[i].Memory.ID > results[j].Memory.ID
	})
	if len(results) > q.Limit {
		results = results[:q.Limit]
	}
	return results, nil
}

// keywordLeg runs one FTS5 query and merges normalized scores into out (keeping the best
// per memory). FTS5's bm25() is negative with better matches more negative; x = -bm25 is
// mapped through x/(1+x), so a better match scores higher and scores stay in [0,1).
func (s *Store) keywordLeg(ctx context.Context, table, expr, where string, args []any, limit int, out map[int64]float64) error {
	query := fmt.Sprintf(`SELECT m.id, bm25(%[1]s) FROM %[1]s JOIN memories m ON m.id = %[1]s.rowid
		WHERE %[1]s MATCH ? AND m.deleted_at IS NULL AND %[2]s ORDER BY bm25(%[1]s) LIMIT ?`, table, where)
	qargs := make([]any, 0, len(args)+2)
	qargs = append(qargs, expr)
	qargs = append(qargs, args...)
	qargs = append(qargs, limit)
	rows, err := s.read.QueryContext(ctx, query, qargs...)
	if err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   int64
			bm25 float64
		)
		if err := rows.Scan(&id, &bm25); err != nil {
			return fmt.Errorf("couldn't read search row: %w", err)
		}
		x := math.Abs(bm25)
		if sc := x / (1 + x); sc > out[id] {
			out[id] = sc
		}
	}
	return rows.Err()
}

func (s *Store) loadMemories(ctx context.Context, ids []int64, where string, args []any) ([]*memory.Memory, error) {
	ph := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
	qargs := make([]any, 0, len(ids)+len(args))
	for _, id := range ids {
		qargs = append(qargs, id)
	}
	qargs = append(qargs, args...)
	rows, err := s.read.QueryContext(ctx, `SELECT `+prefixed("m.", memoryColumns)+` FROM memories m
		WHERE m.id IN (`+ph+`) AND m.deleted_at IS NULL AND `+where, qargs...)
	if err != nil {
		return nil, fmt.Errorf("couldn't load recalled memories: %w", err)
	}
	return collectMemories(rows)
}

func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// ftsQuery turns free text into an FTS5 expression: each word quoted (so user text can
// never be FTS syntax) and OR-ed, so a memory matching some words still scores.
func ftsQuery(text string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	seen := make(map[string]bool, len(words))
	terms := make([]string, 0, len(words))
	for _, w := range words {
		if seen[w] || isCJKWord(w) {
			continue
		}
		seen[w] = true
		terms = append(terms, `"`+w+`"`)
	}
	return strings.Join(terms, " OR ")
}

// trigramQuery builds a trigram-index expression for the unsegmented (CJK) parts of text:
// every three-character window, OR-ed, so more shared windows rank higher.
func trigramQuery(text string) string {
	var terms []string
	seen := make(map[string]bool)
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return !isCJK(r) }) {
		rs := []rune(run)
		for i := 0; i+3 <= len(rs); i++ {
			t := string(rs[i : i+3])
			if !seen[t] {
				seen[t] = true
				terms = append(terms, `"`+t+`"`)
			}
		}
	}
	return strings.Join(terms, " OR ")
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー'
}

func isCJKWord(w string) bool {
	for _, r := range w {
		if isCJK(r) {
			return true
		}
	}
	return false
}

// recallState holds the in-memory vector index; it is kept current by every write.
type recallState struct{}

func (r *recallState) init()                       {}
func (r *recallState) close()                      {}
func (r *recallState) indexMemory(*memory.Memory)  {}
func (r *recallState) removeMemory(*memory.Memory) {}
