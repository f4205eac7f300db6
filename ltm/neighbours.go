package ltm

import (
	"context"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// neighbourSpan is how many ids either side of a hit the neighbour query reads: memories
// are numbered as they are written, so a conversation's messages sit close together, with
// room for other channels' and servers' messages written in between.
const neighbourSpan = 16

// loadNeighbours loads the live memories written around the hits (ids within
// neighbourSpan, looked up by primary key), inside the same scope and filters as the search (where and args: scope,
// filters and audience), leaving out those in have. One query, so it costs the same at any
// database size; recall.Smooth keeps only those of a hit's own
// channel and session.
func (s *Recall) loadNeighbours(ctx context.Context, hits []int64, have map[int64]bool, where string, args []any) ([]*memory.Memory, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	// An explicit id list, not ranges: SQLite looks each id up by primary key, where
	// ranges OR-ed with the scope clause let it scan the whole scope instead.
	ids := make([]int64, 0, len(hits)*(2*neighbourSpan+1))
	seen := make(map[int64]bool, cap(ids))
	for _, h := range hits {
		for id := max(1, h-neighbourSpan); id <= h+neighbourSpan; id++ {
			if !have[id] && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	qargs := make([]any, 0, len(ids)+len(args))
	for _, id := range ids {
		qargs = append(qargs, id)
	}
	qargs = append(qargs, args...)
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+prefixed("m.", memoryColumns)+` FROM memories m
		WHERE m.id IN (`+placeholders(len(ids))+`) AND m.deleted_at IS NULL AND `+where, qargs...)
	if err != nil {
		return nil, fmt.Errorf("couldn't load neighbouring memories: %w", err)
	}
	return collectMemories(rows)
}

// rankSmoothing sets neighbourhood smoothing (docs/recall.md gives the measurements).
var rankSmoothing = recall.Smoothing{Lambda: 0.5, K: 1, Hits: 10, Cap: 2, Gap: 30 * time.Minute}

// withNeighbours adds to mems the memories around the best matches, which smoothing may
// lift; without smoothing it returns mems as they are.
func (s *Recall) withNeighbours(ctx context.Context, mems []*memory.Memory, kw map[int64]float64, vec *vectorLegResult, plan *recall.Plan, now time.Time, where string, args []any) ([]*memory.Memory, error) {
	if !rankSmoothing.On() || len(mems) == 0 {
		return mems, nil
	}
	cands := s.candidates(mems, kw, vec, now)
	top := recall.Rank(cands, plan, recall.Options{Alpha: s.db.Alpha, VectorLeg: vec.q != nil, Limit: rankSmoothing.Hits, Stages: rankStages})
	hits := make([]int64, len(top))
	for i, r := range top {
		hits[i] = cands[r.Index].ID
	}
	have := make(map[int64]bool, len(mems))
	for _, m := range mems {
		have[m.ID] = true
	}
	more, err := s.loadNeighbours(ctx, hits, have, where, args)
	if err != nil {
		return nil, err
	}
	return append(mems, more...), nil
}

// rankSmoothed is recall.Rank followed by neighbourhood smoothing when it is on.
func rankSmoothed(cands []recall.Candidate, plan *recall.Plan, opt recall.Options) []recall.Ranked {
	if opt.Stages.Coverage > 0 && plan.Common && opt.Limit > 0 {
		// The coverage stage reorders from beyond the limit, so it sees the uncut ranking.
		limit := opt.Limit
		opt.Limit = 0
		return recall.Cover(cands, rankSmoothed(cands, plan, opt), plan, opt.Stages, limit)
	}
	if !rankSmoothing.On() {
		return recall.Rank(cands, plan, opt)
	}
	minScore, limit := opt.MinScore, opt.Limit
	opt.MinScore, opt.Limit = 0, 0
	return recall.Smooth(cands, recall.Rank(cands, plan, opt), rankSmoothing, minScore, limit)
}
