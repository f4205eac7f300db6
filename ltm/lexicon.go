package ltm

import (
	"context"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// expansionLeg runs the keyword leg once more for the members of the everyday categories
// the question names (recall.Plan.Expansion: "hobbies" → bouldering, knitting…) and adds
// their scores to out at Stages.Lexicon of their weight. It is a second query rather
// than more OR-ed terms in the first because FTS5 has no per-term weight: the members
// would otherwise count as much as the question's own words. A question naming no
// category runs nothing.
func (s searcher) expansionLeg(ctx context.Context, plan *recall.Plan, q *memory.SearchQuery, vis []memory.Visible, where string, args []any, limit int, out map[int64]float64) error {
	if s.db.Stages.Lexicon <= 0 || len(plan.Expansion) == 0 {
		return nil
	}
	exp := plan.ExpansionPlan()
	more := map[int64]float64{}
	if err := s.words(ctx, &exp, false, q, vis, where, args, limit, more); err != nil {
		return err
	}
	if err := s.cjk(ctx, &exp, q, vis, where, args, limit, more); err != nil {
		return err
	}
	for id, x := range more {
		out[id] += s.db.Stages.Lexicon * x
	}
	return nil
}
