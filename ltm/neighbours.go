package ltm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// conversationHit is a strong match whose neighbours smoothing may lift: its id, scope key
// and origin channel.
type conversationHit struct {
	id             int64
	scope, channel string
	// question marks a hit that asks something: the turns after it are loaded as far as
	// its answers may be (recall.Smoothing.Answers).
	question bool
}

// loadNeighbours loads, for each hit, the k live memories written just before and just
// after it in the same conversation (scope and channel; migration 0011 indexes them), inside
// the same scope, filters and audience as the search (where and args), leaving out those in
// have. Two statements whatever the database size: the ids by index range reads, then the
// rows. recall.Smooth keeps only those of a hit's own session.
func (s searcher) loadNeighbours(ctx context.Context, hits []conversationHit, k int, have map[int64]bool, where string, args []any) ([]*memory.Memory, error) {
	var parts []string
	var idArgs []any
	for _, h := range hits {
		if h.channel == "" {
			continue // commands and facts without a channel are not conversation
		}
		parts = append(parts,
			`SELECT id FROM (SELECT id FROM memories WHERE scope_key = ? AND channel_id = ? AND deleted_at IS NULL AND id < ? ORDER BY id DESC LIMIT ?) AS n`,
			`SELECT id FROM (SELECT id FROM memories WHERE scope_key = ? AND channel_id = ? AND deleted_at IS NULL AND id > ? ORDER BY id LIMIT ?) AS n`)
		after := k
		if h.question {
			// The asker may add a turn before someone answers.
			after = max(k, 2*rankSmoothing.Answers)
		}
		idArgs = append(idArgs, h.scope, h.channel, h.id, k, h.scope, h.channel, h.id, after)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	rows, err := s.db.read.QueryContext(ctx, strings.Join(parts, " UNION ALL "), idArgs...)
	if err != nil {
		return nil, fmt.Errorf("couldn't find neighbouring memories: %w", err)
	}
	var ids []int64
	seen := make(map[int64]bool)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("couldn't find neighbouring memories: %w", err)
		}
		if !have[id] && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't find neighbouring memories: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return s.loadCandidates(ctx, ids, where, args)
}

// rankSmoothing sets neighbourhood smoothing (docs/recall.md gives the measurements).
var rankSmoothing = recall.Smoothing{Lambda: 0.5, K: 1, Hits: 10, Cap: 2, Gap: 30 * time.Minute,
	Answers: 2, AnswerLambda: 0.7, AnswerDecay: 0.7}

// withNeighbours adds to mems the memories around the best matches, which smoothing may
// lift; without smoothing it returns mems as they are.
func (s searcher) withNeighbours(ctx context.Context, mems []*memory.Memory, kw map[int64]float64, vec *vectorLegResult, plan *recall.Plan, now time.Time, where string, args []any) ([]*memory.Memory, error) {
	if !rankSmoothing.On() || len(mems) == 0 {
		return mems, nil
	}
	cands := s.candidates(mems, kw, vec, now)
	top := recall.Rank(cands, plan, recall.Options{Alpha: s.db.Alpha, VectorLeg: vec.q != nil, Limit: rankSmoothing.Hits, Stages: s.db.Stages})
	hits := make([]conversationHit, len(top))
	for i, r := range top {
		c := &cands[r.Index]
		hits[i] = conversationHit{id: c.ID, scope: c.Scope, channel: c.Channel,
			question: rankSmoothing.Answers > 0 && recall.IsQuestion(c.Content)}
	}
	have := make(map[int64]bool, len(mems))
	for _, m := range mems {
		have[m.ID] = true
	}
	more, err := s.loadNeighbours(ctx, hits, rankSmoothing.K, have, where, args)
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
	return recall.Smooth(cands, recall.Rank(cands, plan, opt), rankSmoothing, minScore, limit, opt.Why)
}
