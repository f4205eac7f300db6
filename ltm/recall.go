package ltm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// DefaultAlpha weighs the vector leg in the blend alpha×vector + (1−alpha)×keyword.
const DefaultAlpha = recall.DefaultAlpha

// Candidate search constants (docs/recall.md explains each with the measurements behind
// it); the scoring constants are memory/recall's.
const (
	// candidatePool is how many candidates each leg contributes before the blend.
	candidatePool = 50
)

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

// visibleClause is scopeClause for one visible scope and audienceClause over the same
// alias m: what one asker may see of rows that carry a memory's scope key, guild and
// channel (memories, and the tables kept per such bucket).
func visibleClause(v memory.Visible, aud *memory.Audience) (string, []any, error) {
	where, args, err := scopeClause([]memory.Visible{v})
	if err != nil {
		return "", nil, err
	}
	if cond, condArgs := audienceClause(aud, "m."); cond != "" {
		where += " AND " + cond
		args = append(args, condArgs...)
	}
	return where, args, nil
}

// decayedImportanceSQL is memory.(*Memory).EffectiveImportance over the memories table alias
// m, for the importance_min filter: the filter must run inside the candidate queries, before
// any top k, so it cannot wait for the rows to reach Go. Its one argument is now in Unix
// milliseconds; the integer division counts whole days as memory.DecayDays does, and the
// greater of it and 0 clamps a last access in the future to 0 days.
func decayedImportanceSQL(d *Dialect) string {
	return fmt.Sprintf(`(CASE WHEN m.pinned = 1 OR m.type = '%s' THEN m.importance
	ELSE m.importance * pow(%g, %s(0, (? - CASE WHEN m.accessed_at != 0 THEN m.accessed_at ELSE m.created_at END) / %d))
	END)`, memory.TypeDecision, memory.ImportanceDecayPerDay, d.Greatest, (24 * time.Hour).Milliseconds())
}

// filterClause renders the query's filters as SQL over the memories table alias m in the
// engine's dialect; now is the clock the importance filter decays by.
func filterClause(q *memory.SearchQuery, now time.Time, d *Dialect) (string, []any) {
	var parts []string
	var args []any
	if len(q.Types) > 0 {
		parts = append(parts, "m.type IN ("+placeholders(len(q.Types))+")")
		for _, t := range q.Types {
			args = append(args, t)
		}
	}
	for _, tag := range q.Tags {
		parts = append(parts, d.TagsHold("m.tags"))
		args = append(args, strings.ToLower(tag))
	}
	if q.ImportanceMin > 0 {
		parts = append(parts, decayedImportanceSQL(d)+" >= ?")
		args = append(args, now.UnixMilli(), q.ImportanceMin)
	}
	if !q.Since.IsZero() {
		parts = append(parts, "m.created_at >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		parts = append(parts, "m.created_at <= ?")
		args = append(args, q.Until.UnixMilli())
	}
	if q.AuthorID != "" {
		parts = append(parts, "m.author_id = ?")
		args = append(args, q.AuthorID)
	}
	if q.PinnedOnly {
		parts = append(parts, "m.pinned = 1")
	}
	switch hidden := q.HiddenStates(); {
	case len(q.Include) == 0:
		parts = append(parts, hideShelvedSQL)
	case len(hidden) > 0:
		// Written out, not bound: the states are the store's own words, and a statement
		// whose text depends only on the filters keeps its prepared plan.
		parts = append(parts, "m.state NOT IN ('"+joinStates(hidden, "', '")+"')")
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

// searcher is Recall seen by the work of one search: its keyword, vector and graph legs,
// loading and completing the candidates, and ranking them. Search drives it; it is split
// from Recall so each part stays small.
type searcher struct{ *Recall }

// Search recalls the memories that best match q.Text inside the visible scopes.
//
// Two legs find candidates: the keyword leg (BM25 over words with Porter stemming, author
// names and query phrases, plus character n-grams for CJK text, from the in-memory keyword
// indexes or the engine's full-text search while they build) and, when an
// embedding model is configured, the vector leg (cosine over the in-memory index). Every
// candidate gets both scores when both legs ran, and recall.Rank blends them (alpha×vector
// + (1−alpha)×normalized keyword), applies the query's boosts and tie-breakers and drops
// results under q.MinScore. Scope and filters are part of every SQL query (a bad filter is
// refused, memory.SearchQuery.ValidateFilters); deleted memories are never returned. If the embedding provider fails, recall answers from the
// keyword leg alone (and stops asking the provider for EmbedRetryAfter).
//
// Importance, in the ranking and in q.ImportanceMin, is the effective importance decayed to
// the store's clock (memory.Memory.EffectiveImportance); the stored column stays the base.
// Only a query with q.CountAccess records its results as accessed, which resets their decay.
func (s *Recall) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	if q.Limit <= 0 {
		q.Limit = 10
	}
	q.Limit = min(q.Limit, 100)
	if err := q.ValidateFilters(); err != nil {
		return nil, err
	}
	// One reading of the clock for the whole search: the filter, the ranking and the access
	// time agree on what now is.
	now := s.db.Now()
	vis := visibleScopes(&q)
	scope, scopeArgs, err := scopeClause(vis)
	if err != nil {
		return nil, err
	}
	filter, filterArgs := filterClause(&q, now, s.db.dialect)
	where := scope + filter
	args := append(scopeArgs, filterArgs...)
	asked := q.AskedAt
	if asked.IsZero() {
		asked = now
	}
	plan := recall.AnalyzeAt(q.Text, asked)
	pool := max(candidatePool, 3*q.Limit)

	var (
		vec vectorLegResult
		wg  sync.WaitGroup
	)
	if e := s.db.recall.emb.Load(); e != nil && !q.KeywordOnly && strings.TrimSpace(q.Text) != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vec = s.searcher.vectorLeg(ctx, e, &q, vis, pool)
		}()
	}
	kw, kwErr := s.searcher.keywordLeg(ctx, &plan, &q, vis, where, args, pool)
	if kwErr == nil && !q.MatchesOnly {
		kwErr = s.searcher.coMentionLeg(ctx, kw, &q, vis, where, args, pool)
	}
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
	g := s.searcher.graphLookup(ctx, q.Text, vis, ids, where, args)
	if g != nil && !q.MatchesOnly {
		ids = append(ids, g.extra...)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	mems, err := s.searcher.loadCandidates(ctx, ids, where, args)
	if err != nil {
		return nil, err
	}
	if !q.MatchesOnly {
		if mems, err = s.searcher.withNeighbours(ctx, mems, kw, &vec, &plan, now, where, args); err != nil {
			return nil, err
		}
	}
	if q.NowOnly && plan.Current && plan.Window.IsZero() {
		// A question about now: what has already happened is not its answer.
		mems = slices.DeleteFunc(mems, func(m *memory.Memory) bool { return m.TimingAt(asked) == memory.TimingPast })
	}
	s.db.vectors.exactCosines(ctx, vec.model, &vec, mems)
	out, err := s.searcher.complete(ctx, s.searcher.rank(mems, kw, &vec, g, &plan, &q, now, asked))
	if err != nil {
		return nil, err
	}
	if q.CountAccess {
		recalled := make([]int64, len(out))
		for i, r := range out {
			recalled[i] = r.Memory.ID
		}
		if !s.db.dialect.SharedByProcesses {
			s.db.recall.access.record(recalled, now.UnixMilli())
		} else if err := countAccessNow(ctx, s.db, recalled, now.UnixMilli()); err != nil &&
			memory.ErrorCode(err) != memory.EUNAVAILABLE {
			// A database that refuses writes (read-only, full) still answers recall: the count
			// is bookkeeping, and its loss only leaves the decay as it was.
			return nil, err
		}
	}
	return out, nil
}

// rank hands the loaded candidates with their leg scores and their importance decayed to
// now to recall.Rank and returns its ranking as results.
func (s searcher) rank(mems []*memory.Memory, kw map[int64]float64, vec *vectorLegResult, g *graphHits, plan *recall.Plan, q *memory.SearchQuery, now, asked time.Time) []memory.SearchResult {
	vecOn := vec.q != nil
	cands := s.candidates(mems, kw, vec, now)
	g.annotate(cands)
	opt := recall.Options{Alpha: s.db.Alpha, VectorLeg: vecOn, MinScore: q.MinScore, Limit: q.Limit,
		Stages: s.db.Stages, Dampen: s.db.Dampen, Asked: asked}
	if q.Explain {
		opt.Why = make([][]recall.Factor, len(cands))
	}
	ranked := rankSmoothed(cands, plan, opt)
	out := make([]memory.SearchResult, len(ranked))
	for i, r := range ranked {
		out[i] = memory.SearchResult{Memory: mems[r.Index], Score: r.Score, Keyword: r.Keyword, Vector: r.Vector}
		if q.Explain {
			out[i].Why = opt.Why[r.Index]
		}
	}
	return out
}

// candidates gives recall.Rank the loaded memories with their leg scores and their
// importance decayed to now.
func (s searcher) candidates(mems []*memory.Memory, kw map[int64]float64, vec *vectorLegResult, now time.Time) []recall.Candidate {
	vecOn := vec.q != nil
	cands := make([]recall.Candidate, len(mems))
	for i, m := range mems {
		c := recall.Candidate{ID: m.ID, Keyword: kw[m.ID], CreatedAt: m.CreatedAt, RefersTo: refersToOf(m), Content: m.Content,
			Importance: m.EffectiveImportance(now), Pinned: m.Pinned, AccessCount: m.AccessCount, Type: m.Type,
			Scope: m.Owner().Key(), Channel: m.Provenance.ChannelID, AuthorName: m.Provenance.Author, Subject: m.SubjectID}
		if vecOn {
			if cos, ok := vec.hits[m.ID]; ok {
				c.Vector = float64(cos)
			} else if cos, ok := vec.exact[m.ID]; ok {
				c.Vector = float64(cos)
			} else if cos, ok := s.db.recall.vectors.Cosine(m.Owner().Key(), vec.q, m.ID); ok {
				// A keyword-only candidate still gets its cosine from the index of its scope.
				c.Vector = float64(cos)
			}
		}
		_, inKw := kw[m.ID]
		_, inVec := vec.hits[m.ID]
		c.Neighbour = !inKw && !inVec
		cands[i] = c
	}
	return cands
}

type vectorLegResult struct {
	q     []float32 // the unit query vector; nil when the leg did not run or failed
	model string
	hits  map[int64]float32
	// exact are the float32 cosines of loaded candidates the leg did not return
	// (exactCosines); a candidate missing from both falls back to the index's int8 cosine.
	exact map[int64]float32
}

// vectorLeg embeds the query and searches the index of every visible scope. Any failure
// leaves the result empty: recall then runs on keywords alone.
func (s searcher) vectorLeg(ctx context.Context, e *embedder, q *memory.SearchQuery, vis []memory.Visible, k int) vectorLegResult {
	qv, err := s.queryVector(ctx, e, q)
	if err != nil {
		return vectorLegResult{}
	}
	res := vectorLegResult{q: qv, model: e.model, hits: map[int64]float32{}}
	for _, v := range vis {
		// The scope's vectors are loaded on its first recall (and after an eviction; a
		// large scope in the background, ensureScope); the int8 index picks the candidates
		// and their float32 vectors score them (QuantizedCosines: the int8 cosines do).
		if !s.db.vectors.ensureScope(ctx, v.Owner.Key(), false) {
			continue
		}
		hits := s.db.recall.vectors.Search(v.Owner.Key(), qv, k+rescoreExtra, vectorFilter(v, q), false)
		for _, h := range s.db.vectors.rescore(ctx, e.model, v.Owner.Key(), qv, hits, k) {
			if c, ok := res.hits[h.ID]; !ok || h.Cosine > c {
				res.hits[h.ID] = h.Cosine
			}
		}
	}
	return res
}

// coMentionLeg adds to kw, weighed by Stages.CoMention, the keyword scores of the words the
// visible memories most often hold beside the question's (associated): "what are we playing
// on Friday?" also finds "Catan night again!" when the scope's memories often put Catan and
// Friday together. A search people read as matches (q.MatchesOnly) does not run it: a
// memory that holds none of the words is not a match.
func (s searcher) coMentionLeg(ctx context.Context, kw map[int64]float64, q *memory.SearchQuery, vis []memory.Visible,
	where string, args []any, limit int) error {
	weight := s.db.Stages.CoMention
	if weight <= 0 {
		return nil
	}
	words, err := associated(ctx, s.db.read, q.Text, vis, q.Audience)
	if err != nil || len(words) == 0 {
		return err
	}
	var plan recall.Plan
	for _, w := range words {
		if strings.ContainsFunc(w, memory.IsCJK) {
			plan.CJK = append(plan.CJK, w)
		} else {
			plan.Terms = append(plan.Terms, w)
		}
	}
	more, err := s.keywordLeg(ctx, &plan, q, vis, where, args, limit)
	if err != nil {
		return err
	}
	for id, x := range more {
		kw[id] += weight * x
	}
	return nil
}

// keywordLeg returns the raw keyword score x ≥ 0 (higher is better) of the best-matching
// memories: word BM25 plus, for CJK text, n-gram BM25, and the lexicon's expansion. The
// in-memory indexes answer when every visible scope's is ready and the change log is up;
// the engine's database otherwise (KeywordFallback).
func (s searcher) keywordLeg(ctx context.Context, plan *recall.Plan, q *memory.SearchQuery, vis []memory.Visible, where string, args []any, limit int) (map[int64]float64, error) {
	fb := s.db.keywords
	if fb.KeywordIndexesCurrent() {
		out, ok, err := indexedKeywordLeg(ctx, s.Recall, plan, q, where, args, limit)
		if (err != nil && !errors.Is(err, ErrChangesDown)) || ok {
			return out, err
		}
	}
	scopes := make([]string, len(vis))
	for i, v := range vis {
		scopes[i] = v.Owner.Key()
	}
	return fb.KeywordScores(ctx, plan, scopes, where, args, limit, s.db.Stages.Lexicon)
}

func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// hideShelvedSQL and shelvedStateNames are the default search's state filter, built once.
var (
	hideShelvedSQL    = "m.state NOT IN ('" + joinStates(memory.ShelvedStates, "', '") + "')"
	shelvedStateNames = func() []string {
		out := make([]string, len(memory.ShelvedStates))
		for i, st := range memory.ShelvedStates {
			out[i] = string(st)
		}
		return out
	}()
)

func joinStates(states []memory.State, sep string) string {
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = string(st)
	}
	return strings.Join(parts, sep)
}
