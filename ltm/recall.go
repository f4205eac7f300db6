package ltm

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
)

// Recall scoring constants (docs/recall.md explains each with the measurements behind it).
const (
	// DefaultAlpha weighs the vector leg in the blend alpha×vector + (1−alpha)×keyword.
	DefaultAlpha = 0.7
	// candidatePool is how many candidates each leg contributes before the blend.
	candidatePool = 50
	// topFactor sizes the global FTS5 top list ranked before the scope join (wordLeg).
	topFactor = 4
	// authorWeight is the BM25 weight of the author column relative to content (1).
	authorWeight = 2.0
	// currentBoost scales relevance by 1 + currentBoost×recency for "what is it now"
	// questions, so the newer of two matching statements wins.
	currentBoost = 0.5
	// whenBoost scales relevance by 1 + whenBoost for memories stating a date or time
	// when the question asks when.
	whenBoost = 0.3
	// monthBoost scales relevance by 1 + monthBoost for memories created in a month the
	// query names ("what did we decide in september").
	monthBoost = 0.2
	// cjkWeight weighs the CJK n-gram leg's BM25 against the word leg's.
	cjkWeight = 1.0
	// cjkScanMax is the largest scope whose rows are scanned for CJK bigrams (two-character
	// words the trigram index cannot match); larger scopes use the trigram index alone.
	cjkScanMax = 20000
	// tieBreak bounds the signals added after the blend: at most 0.01, so they reorder
	// only near-equal matches.
	tieBreak = 0.01
)

// visibleScopes lists every slice of memory q may read: its whole owners, then its narrowed ones.
func visibleScopes(q *memory.SearchQuery) []memory.Visible {
	out := make([]memory.Visible, 0, len(q.Owners)+len(q.Visible))
	for _, o := range q.Owners {
		out = append(out, memory.Visible{Owner: o})
	}
	return append(out, q.Visible...)
}

// scopeClause renders the visibility rules as SQL over the memories table alias m.
func scopeClause(vis []memory.Visible) (string, []any, error) {
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

func filterClause(q *memory.SearchQuery) (string, []any) {
	var parts []string
	var args []any
	if len(q.Types) > 0 {
		parts = append(parts, "m.type IN ("+placeholders(len(q.Types))+")")
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
	if cond, condArgs := audienceClause(q.Audience, "m."); cond != "" {
		parts = append(parts, cond)
		args = append(args, condArgs...)
	}
	if len(parts) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(parts, " AND "), args
}

// audienceClause renders memory.Audience.Allows as SQL over the memories columns with the
// given prefix ("m." or ""): memories without an origin channel or learned in DMs pass, the
// others only from the audience's channels. A nil audience restricts nothing.
func audienceClause(a *memory.Audience, prefix string) (string, []any) {
	if a == nil {
		return "", nil
	}
	open := "(" + prefix + "channel_id = '' OR " + prefix + "guild_id = ''"
	ids := make([]string, 0, len(a.Channels))
	for id, ok := range a.Channels {
		if ok && id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return open + ")", nil
	}
	slices.Sort(ids)
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return open + " OR " + prefix + "channel_id IN (" + placeholders(len(ids)) + "))", args
}

// keepFunc mirrors the scope and filter rules the vector index can check without SQL
// (origin guild, type, pinned, since, importance, tags, audience), so its shortlist is spent only on
// rows that can pass: a filter applied after the top k would let failing rows crowd out
// passing ones. SQL re-checks everything when the rows are loaded.
func keepFunc(v memory.Visible, q *memory.SearchQuery) func(*vecMeta) bool {
	origin := ""
	if v.Owner.Scope == memory.ScopePersonal {
		origin = v.OriginGuildID
	}
	since := millis(q.Since)
	if origin == "" && len(q.Types) == 0 && !q.PinnedOnly && since == 0 && q.ImportanceMin <= 0 && len(q.Tags) == 0 && q.Audience == nil {
		return nil
	}
	tags := make([]string, len(q.Tags))
	for i, t := range q.Tags {
		tags[i] = strings.ToLower(t)
	}
	return func(m *vecMeta) bool {
		if (origin != "" && m.originGuild != origin) ||
			(len(q.Types) > 0 && !slices.Contains(q.Types, m.typ)) ||
			(q.PinnedOnly && !m.pinned) || m.createdAt < since ||
			(q.ImportanceMin > 0 && m.importance < q.ImportanceMin) ||
			(q.Audience != nil && m.channel != "" && m.originGuild != "" && !q.Audience.Channels[m.channel]) {
			return false
		}
		for _, t := range tags {
			if !slices.Contains(m.tags, t) {
				return false
			}
		}
		return true
	}
}

// Search recalls the memories that best match q.Text inside the visible scopes.
//
// Two legs find candidates: the keyword leg (FTS5 BM25 over words with Porter stemming,
// author names and query phrases, plus character n-grams for CJK text) and, when an
// embedding model is configured, the vector leg (cosine over the in-memory index). Every
// candidate gets both scores when both legs ran:
//
//	keyword k = x / (1 + xmax)         x = −bm25 (FTS5's bm25 is negative, better = more
//	                                   negative), xmax the best x of this query, so k ∈ [0,1)
//	                                   and a better match scores higher
//	vector  v = max(0, cos)
//	rel       = alpha·v + (1−alpha)·k  when both legs scored; else k or v alone
//	rel      ×= 1 + 0.5·recency        "now" questions ("what time is standup now")
//	rel      ×= 1 + 0.3                "when" questions, memory states a date or time
//	rel      ×= 1 + 0.2                the memory was created in a month the query names
//	score     = rel + 0.01·(0.5·recency + 0.3·importance + 0.2·access)
//
// recency is the memory's creation time scaled to [0,1] across the candidates (newest 1),
// importance is in [0,1] (pinned counts as 1), and access is log(1+count) scaled by the
// largest among the candidates: tie-breakers that reorder near-equal matches only. Results
// under q.MinScore are dropped. Scope and filters are part of every SQL query; deleted
// memories are never returned. If the embedding provider fails, recall answers from the
// keyword leg alone (and stops asking the provider for EmbedRetryAfter).
func (s *Store) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	if q.Limit <= 0 {
		q.Limit = 10
	}
	q.Limit = min(q.Limit, 100)
	vis := visibleScopes(&q)
	scope, scopeArgs, err := scopeClause(vis)
	if err != nil {
		return nil, err
	}
	filter, filterArgs := filterClause(&q)
	where := scope + filter
	args := append(scopeArgs, filterArgs...)
	plan := analyzeQuery(q.Text)
	pool := max(candidatePool, 3*q.Limit)

	var (
		vec vectorLegResult
		wg  sync.WaitGroup
	)
	if e := s.recall.emb.Load(); e != nil && !q.KeywordOnly && strings.TrimSpace(q.Text) != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vec = s.vectorLeg(ctx, e, &q, vis, pool)
		}()
	}
	kw, kwErr := s.keywordLeg(ctx, &plan, where, args, pool)
	wg.Wait()
	if kwErr != nil {
		return nil, kwErr
	}

	ids := make([]int64, 0, len(kw)+len(vec.hits))
	for id := range kw {
		ids = append(ids, id)
	}
	for id := range vec.hits {
		if _, ok := kw[id]; !ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	mems, err := s.loadMemories(ctx, ids, where, args)
	if err != nil {
		return nil, err
	}
	results := s.score(mems, kw, &vec, &plan, vis)
	out := results[:0]
	for _, r := range results {
		if r.Score >= q.MinScore {
			out = append(out, r)
		}
	}
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	recalled := make([]int64, len(out))
	for i, r := range out {
		recalled[i] = r.Memory.ID
	}
	s.recall.access.record(recalled, s.nowMillis())
	return out, nil
}

// score blends the legs and applies the documented boosts and tie-breakers; the result is
// sorted best first.
func (s *Store) score(mems []*memory.Memory, kw map[int64]float64, vec *vectorLegResult, plan *queryPlan, vis []memory.Visible) []memory.SearchResult {
	var xmax float64
	for _, x := range kw {
		xmax = max(xmax, x)
	}
	kwOn, vecOn := xmax > 0, vec.q != nil
	var (
		oldest, newest int64 = math.MaxInt64, math.MinInt64
		maxAccess      int
	)
	for _, m := range mems {
		c := millis(m.CreatedAt)
		oldest, newest = min(oldest, c), max(newest, c)
		maxAccess = max(maxAccess, m.AccessCount)
	}
	alpha := s.Alpha
	results := make([]memory.SearchResult, 0, len(mems))
	for _, m := range mems {
		r := memory.SearchResult{Memory: m}
		if x := kw[m.ID]; x > 0 {
			r.Keyword = x / (1 + xmax)
		}
		if vecOn {
			if c, ok := vec.hits[m.ID]; ok {
				r.Vector = float64(c)
			} else if c, ok := s.cosineOf(vec.q, m, vis); ok {
				r.Vector = float64(c)
			}
		}
		var rel float64
		switch {
		case kwOn && vecOn:
			rel = alpha*max(0, r.Vector) + (1-alpha)*r.Keyword
		case vecOn:
			rel = max(0, r.Vector)
		default:
			rel = r.Keyword
		}
		recency := 1.0
		if newest > oldest {
			recency = float64(millis(m.CreatedAt)-oldest) / float64(newest-oldest)
		}
		if plan.current {
			rel *= 1 + currentBoost*recency
		}
		if plan.when && hasDateOrTime(m.Content) {
			rel *= 1 + whenBoost
		}
		if len(plan.months) > 0 && slices.Contains(plan.months, m.CreatedAt.Month()) {
			rel *= 1 + monthBoost
		}
		importance := m.Importance
		if m.Pinned {
			importance = 1
		}
		access := 0.0
		if maxAccess > 0 {
			access = math.Log1p(float64(m.AccessCount)) / math.Log1p(float64(maxAccess))
		}
		r.Score = rel + tieBreak*(0.5*recency+0.3*importance+0.2*access)
		results = append(results, r)
	}
	sort.Slice(results, func(i, j int) bool {
		if results[i].Score != results[j].Score {
			return results[i].Score > results[j].Score
		}
		return results[i].Memory.ID > results[j].Memory.ID
	})
	return results
}

// cosineOf looks up the cosine of a keyword-only candidate in the index of its scope.
func (s *Store) cosineOf(q []float32, m *memory.Memory, vis []memory.Visible) (float32, bool) {
	sv := s.recall.vectors.scope(m.Owner().Key())
	if sv == nil {
		return 0, false
	}
	return sv.cosine(q, m.ID)
}

type vectorLegResult struct {
	q    []float32 // the unit query vector; nil when the leg did not run or failed
	hits map[int64]float32
}

// vectorLeg embeds the query and searches the index of every visible scope. Any failure
// leaves the result empty: recall then runs on keywords alone.
func (s *Store) vectorLeg(ctx context.Context, e *embedder, q *memory.SearchQuery, vis []memory.Visible, k int) vectorLegResult {
	qv, err := s.queryVector(ctx, e, q.Text)
	if err != nil {
		return vectorLegResult{}
	}
	res := vectorLegResult{q: qv, hits: map[int64]float32{}}
	for _, v := range vis {
		sv := s.recall.vectors.scope(v.Owner.Key())
		if sv == nil {
			continue
		}
		for _, h := range sv.search(qv, k, keepFunc(v, q), false) {
			if c, ok := res.hits[h.id]; !ok || h.cos > c {
				res.hits[h.id] = h.cos
			}
		}
	}
	return res
}

// keywordLeg returns the raw keyword score x ≥ 0 (higher is better) of the best-matching
// memories: word BM25 plus, for CJK text, n-gram BM25.
func (s *Store) keywordLeg(ctx context.Context, plan *queryPlan, where string, args []any, limit int) (map[int64]float64, error) {
	out := map[int64]float64{}
	if expr := plan.ftsExpr(true); expr != "" {
		if err := s.wordLeg(ctx, expr, where, args, limit, out); err != nil {
			return nil, err
		}
	}
	if len(plan.cjk) > 0 {
		if err := s.cjkLeg(ctx, plan, where, args, limit, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// wordLeg scores the FTS5 word index. FTS5 ranks its own matches fastest, without a join
// per matching row, so the global top topFactor×limit are ranked first and only those rows
// are checked against the scope and filters. The survivors are the exact top limit of the
// visible scopes whenever at least limit of them survive or the global list was not cut
// (a visible row outside the global top scores no higher than any survivor). Otherwise,
// when the visible scopes are a small part of a large database, the full join runs.
func (s *Store) wordLeg(ctx context.Context, expr, where string, args []any, limit int, out map[int64]float64) error {
	top := topFactor * limit
	global := map[int64]float64{}
	rows, err := s.read.QueryContext(ctx, fmt.Sprintf(`SELECT rowid, -bm25(memories_fts, 1.0, %g) AS x FROM memories_fts
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
		full := fmt.Sprintf(`SELECT m.id, -bm25(memories_fts, 1.0, %g) FROM memories_fts
			JOIN memories m ON m.id = memories_fts.rowid
			WHERE memories_fts MATCH ? AND m.deleted_at IS NULL AND %s ORDER BY 2 DESC LIMIT ?`, authorWeight, where)
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

// visibleIDs returns which of ids are live memories inside the scope and filters.
func (s *Store) visibleIDs(ctx context.Context, ids []int64, where string, args []any) (map[int64]struct{}, error) {
	qargs := make([]any, 0, len(ids)+len(args))
	for _, id := range ids {
		qargs = append(qargs, id)
	}
	qargs = append(qargs, args...)
	rows, err := s.read.QueryContext(ctx, `SELECT m.id FROM memories m WHERE m.id IN (`+placeholders(len(ids))+`)
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

// collectScores runs a scored FTS query (expr first, then args, then limit) and adds
// weight × score to out.
func (s *Store) collectScores(ctx context.Context, query, expr string, args []any, limit int, weight float64, out map[int64]float64) error {
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
func (s *Store) cjkLeg(ctx context.Context, plan *queryPlan, where string, args []any, limit int, out map[int64]float64) error {
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM memories m WHERE m.deleted_at IS NULL AND `+where, args...).Scan(&n); err != nil {
		return fmt.Errorf("couldn't count memories: %w", err)
	}
	if n == 0 {
		return nil
	}
	if n > cjkScanMax {
		tri := plan.cjkGrams(3)
		var terms []string
		for _, t := range tri {
			if len([]rune(t)) >= 3 {
				terms = append(terms, quoteFTS(t))
			}
		}
		if len(terms) == 0 {
			return nil
		}
		query := `SELECT m.id, -bm25(memories_tri) FROM memories_tri JOIN memories m ON m.id = memories_tri.rowid
			WHERE memories_tri MATCH ? AND m.deleted_at IS NULL AND ` + where + ` ORDER BY 2 DESC LIMIT ?`
		return s.collectScores(ctx, query, strings.Join(terms, " OR "), args, limit, cjkWeight, out)
	}
	// Latin words written inside Japanese text ("ＡＰＩのrate limit") are one token to
	// unicode61, so the scan looks for the query's words too.
	grams := plan.cjkGrams(2)
	latinFrom := len(grams)
	for _, t := range plan.terms {
		if len(t) >= 2 {
			grams = append(grams, t)
		}
	}
	if len(grams) == 0 {
		return nil
	}
	conds := make([]string, len(grams))
	qargs := make([]any, 0, len(args)+len(grams))
	qargs = append(qargs, args...)
	for i, g := range grams {
		conds[i] = "instr(m.normalized || ' ' || lower(m.author_name), ?) > 0"
		qargs = append(qargs, g)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT m.id, m.normalized || ' ' || lower(m.author_name) FROM memories m WHERE m.deleted_at IS NULL AND `+
		where+` AND (`+strings.Join(conds, " OR ")+`)`, qargs...)
	if err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	type doc struct {
		id   int64
		text string
	}
	var docs []doc
	var totalLen int
	for rows.Next() {
		var d doc
		if err := rows.Scan(&d.id, &d.text); err != nil {
			rows.Close()
			return fmt.Errorf("couldn't read search row: %w", err)
		}
		docs = append(docs, d)
		totalLen += len([]rune(d.text))
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("couldn't search memories: %w", err)
	}
	if len(docs) == 0 {
		return nil
	}
	// BM25 (k1 1.2, b 0.75) over bigrams; the average length is taken over the matching
	// rows, a fair stand-in for the scope's.
	const k1, b = 1.2, 0.75
	avg := float64(totalLen) / float64(len(docs))
	tf := make([][]int, len(docs))
	df := make([]int, len(grams))
	for i, d := range docs {
		tf[i] = make([]int, len(grams))
		for j, g := range grams {
			count := strings.Count
			if j >= latinFrom {
				count = countWholeWord
			}
			if c := count(d.text, g); c > 0 {
				tf[i][j] = c
				df[j]++
			}
		}
	}
	scored := make([]struct {
		id int64
		x  float64
	}, len(docs))
	for i, d := range docs {
		var x float64
		dl := float64(len([]rune(d.text)))
		for j := range grams {
			if tf[i][j] == 0 {
				continue
			}
			idf := math.Log(1 + (float64(n)-float64(df[j])+0.5)/(float64(df[j])+0.5))
			f := float64(tf[i][j])
			x += idf * f * (k1 + 1) / (f + k1*(1-b+b*dl/avg))
		}
		scored[i].id, scored[i].x = d.id, x
	}
	sort.Slice(scored, func(i, j int) bool { return scored[i].x > scored[j].x })
	for _, sc := range scored[:min(limit, len(scored))] {
		if sc.x > 0 {
			out[sc.id] += cjkWeight * sc.x
		}
	}
	return nil
}

// countWholeWord counts the occurrences of a Latin word that are whole words: inside CJK
// text ("明日のdeployは") or standing alone, but not inside another word ("api" in "rapid").
// The scan reads the NFKC-folded text, so full-width ＡＰＩ counts as api.
func countWholeWord(text, word string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return n
		}
		start, end := i+j, i+j+len(word)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if !isWordRune(before) && !isWordRune(after) {
			n++
		}
		i = end
	}
}

// isWordRune reports a Latin-script letter or digit: a rune that would continue a Latin word.
func isWordRune(r rune) bool {
	return r != utf8.RuneError && !memory.IsCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func (s *Store) loadMemories(ctx context.Context, ids []int64, where string, args []any) ([]*memory.Memory, error) {
	qargs := make([]any, 0, len(ids)+len(args))
	for _, id := range ids {
		qargs = append(qargs, id)
	}
	qargs = append(qargs, args...)
	rows, err := s.read.QueryContext(ctx, `SELECT `+prefixed("m.", memoryColumns)+` FROM memories m
		WHERE m.id IN (`+placeholders(len(ids))+`) AND m.deleted_at IS NULL AND `+where, qargs...)
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
