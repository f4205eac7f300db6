package pgstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// Neighbourhood smoothing, as ltm runs it (docs/recall.md): the memories written just
// before and after the best matches in the same conversation are loaded too, and
// recall.Smooth lifts those of a hit's own session.

// rankSmoothing is ltm's smoothing setting.
var rankSmoothing = recall.Smoothing{Lambda: 0.5, K: 1, Hits: 10, Cap: 2, Gap: 30 * time.Minute}

// withNeighbours adds to mems the memories around the best matches.
func (s *Recall) withNeighbours(ctx context.Context, mems []*memory.Memory, kw map[int64]float64, vec *vectorLegResult, plan *recall.Plan, now time.Time, where string, args []any) ([]*memory.Memory, error) {
	if !rankSmoothing.On() || len(mems) == 0 {
		return mems, nil
	}
	cands := s.candidates(mems, kw, vec, now)
	top := recall.Rank(cands, plan, recall.Options{Alpha: s.db.Alpha, VectorLeg: vec.q != nil, Limit: rankSmoothing.Hits, Stages: rankStages})
	have := make(map[int64]bool, len(mems))
	for _, m := range mems {
		have[m.ID] = true
	}
	var (
		parts  []string
		idArgs []any
	)
	for _, r := range top {
		c := &cands[r.Index]
		if c.Channel == "" {
			continue // commands and facts without a channel are not conversation
		}
		parts = append(parts,
			`(SELECT id FROM memories WHERE scope_key = ? AND channel_id = ? AND deleted_at IS NULL AND id < ? ORDER BY id DESC LIMIT ?)`,
			`(SELECT id FROM memories WHERE scope_key = ? AND channel_id = ? AND deleted_at IS NULL AND id > ? ORDER BY id LIMIT ?)`)
		idArgs = append(idArgs, c.Scope, c.Channel, c.ID, rankSmoothing.K, c.Scope, c.Channel, c.ID, rankSmoothing.K)
	}
	if len(parts) == 0 {
		return mems, nil
	}
	// One statement: the neighbours' ids by index range reads, then their rows inside the
	// search's scope and filters.
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+prefixed("m.", memoryColumns)+` FROM memories m
		WHERE m.id IN (`+strings.Join(parts, " UNION ALL ")+`) AND m.deleted_at IS NULL AND `+where, append(idArgs, args...)...)
	if err != nil {
		return nil, fmt.Errorf("couldn't find neighbouring memories: %w", err)
	}
	found, err := collectMemories(rows)
	if err != nil {
		return nil, fmt.Errorf("couldn't load neighbouring memories: %w", err)
	}
	more := found[:0]
	for _, m := range found {
		if !have[m.ID] {
			more = append(more, m)
		}
	}
	return append(mems, more...), nil
}

// rankSmoothed is recall.Rank followed by neighbourhood smoothing.
func rankSmoothed(cands []recall.Candidate, plan *recall.Plan, opt recall.Options) []recall.Ranked {
	if !rankSmoothing.On() {
		return recall.Rank(cands, plan, opt)
	}
	minScore, limit := opt.MinScore, opt.Limit
	opt.MinScore, opt.Limit = 0, 0
	return recall.Smooth(cands, recall.Rank(cands, plan, opt), rankSmoothing, minScore, limit)
}
