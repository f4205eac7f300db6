package pgstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// Search recalls the memories that best match q.Text inside the visible scopes, as ltm's
// does: the keyword leg (recall.go) and, when an embedding model is set, the vector leg
// (vector.go) find candidates; every candidate gets both scores, and recall.Rank fuses
// them (alpha×vector + (1−alpha)×normalized keyword). Scope and filters are part of every
// query that loads rows, so a vector the index still holds for a memory forgotten
// elsewhere is never returned; deleted memories never are. If the embedding provider
// fails, recall answers from the keyword leg alone.
func (s *Recall) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	if q.Limit <= 0 {
		q.Limit = 10
	}
	q.Limit = min(q.Limit, 100)
	if err := q.ValidateFilters(); err != nil {
		return nil, err
	}
	now := s.db.Now()
	vis := visibleScopes(&q)
	scope, scopeArgs, err := scopeClause(vis)
	if err != nil {
		return nil, err
	}
	filter, filterArgs := filterClause(&q, now)
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
		wg.Go(func() { vec = s.vectorLeg(ctx, e, &q, vis, pool) })
	}
	kw, kwErr := s.keywordLeg(ctx, &plan, &q, where, args, pool)
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
	if !q.MatchesOnly {
		if mems, err = s.withNeighbours(ctx, mems, kw, &vec, &plan, now, where, args); err != nil {
			return nil, err
		}
	}
	s.db.recall.exactCosines(ctx, &vec, mems)
	cands := s.candidates(mems, kw, &vec, now)
	ranked := rankSmoothed(cands, &plan, recall.Options{Alpha: s.db.Alpha, VectorLeg: vec.q != nil, MinScore: q.MinScore,
		Limit: q.Limit, Stages: rankStages, Dampen: s.db.Dampen})
	out := make([]memory.SearchResult, len(ranked))
	for i, r := range ranked {
		out[i] = memory.SearchResult{Memory: mems[r.Index], Score: r.Score, Keyword: r.Keyword, Vector: r.Vector}
	}
	if q.CountAccess && len(out) > 0 {
		// A database that refuses writes (read-only, full) still answers recall, as ltm's
		// does: the count is bookkeeping, and its loss only leaves the decay as it was.
		if err := s.countAccess(ctx, out, now); err != nil && memory.ErrorCode(err) != memory.EUNAVAILABLE {
			return nil, err
		}
	}
	return out, nil
}

// candidates gives recall.Rank the loaded memories with their leg scores and their
// importance decayed to now, as ltm's does: a keyword-only candidate still gets its cosine
// (exact, or the index's), and a memory no leg found is a neighbour.
func (s *Recall) candidates(mems []*memory.Memory, kw map[int64]float64, vec *vectorLegResult, now time.Time) []recall.Candidate {
	vecOn := vec.q != nil
	cands := make([]recall.Candidate, len(mems))
	for i, m := range mems {
		c := recall.Candidate{ID: m.ID, Keyword: kw[m.ID], CreatedAt: m.CreatedAt, Content: m.Content,
			Importance: m.EffectiveImportance(now), Pinned: m.Pinned, AccessCount: m.AccessCount, Type: m.Type,
			Scope: m.Owner().Key(), Channel: m.Provenance.ChannelID, AuthorName: m.Provenance.Author, Subject: m.SubjectID}
		if vecOn {
			if cos, ok := vec.hits[m.ID]; ok {
				c.Vector = float64(cos)
			} else if cos, ok := vec.exact[m.ID]; ok {
				c.Vector = float64(cos)
			} else if cos, ok := s.db.recall.vectors.Cosine(m.Owner().Key(), vec.q, m.ID); ok {
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

// countAccess records the results as used now, which resets their decay. ltm batches these
// writes in memory; here every process writes its own at once, so no count waits in a
// process that may stop.
func (s *Recall) countAccess(ctx context.Context, res []memory.SearchResult, now time.Time) error {
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Memory.ID
	}
	_, err := s.db.read.ExecContext(ctx, `UPDATE memories SET access_count = access_count + 1,
		accessed_at = greatest(accessed_at, ?) WHERE id = ANY(?) AND deleted_at IS NULL`, now.UnixMilli(), ids)
	if err != nil {
		return storageError(fmt.Errorf("couldn't count recalled memories: %w", err))
	}
	return nil
}
