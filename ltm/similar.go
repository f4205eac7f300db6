package ltm

import (
	"context"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/similar"
)

// similarCandidates is how many memories recall hands the near-duplicate check: a paraphrase
// shares most of its words or its meaning with the memory it repeats, so it ranks among the
// first few; ten leave room for a scope full of memories on the same topic.
const similarCandidates = 10

// Similar returns the live memory of owner's scope that content says again in other words
// (similar.Compare, or similar.CompareCosine when embeddings are on), nil when there is
// none, for writers without a place (the operator's CLI): the whole scope is searched. An
// identical memory is a near-duplicate too, the closest one; the write path's hash dedup
// answers for it. Content is checked as a write checks it (empty, too long, a secret), so
// what a write would refuse is never searched for.
func (s *Duplicates) Similar(ctx context.Context, owner memory.Owner, content string) (*memory.Memory, error) {
	return s.similar(ctx, nil, owner, content)
}

// SimilarAs is Similar for a writer in a place: only the memories w may see there
// (WriteContext.CanSee) are candidates, and the search itself is limited to them (the
// scope, the origin guild, the author and the channels in its SQL), so that the answer
// never depends on a memory the writer may not see (SPEC §2).
func (s *Duplicates) SimilarAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, content string) (*memory.Memory, error) {
	return s.similar(ctx, &w, owner, content)
}

func (s *Duplicates) similar(ctx context.Context, w *memory.WriteContext, owner memory.Owner, content string) (*memory.Memory, error) {
	return s.similarExcept(ctx, w, owner, content, nil, false)
}

// similarExcept is similar among the memories skip does not hold (an import's own); by
// words alone when keywordOnly (an import checks each of thousands of memories: a query
// embedding each would cost a model call apiece).
func (s *Duplicates) similarExcept(ctx context.Context, w *memory.WriteContext, owner memory.Owner, content string, skip map[int64]bool,
	keywordOnly bool) (*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	content, err := memory.CleanContent(content)
	if err != nil {
		return nil, err
	}
	var cross bool
	if w != nil {
		// Read whatever the write may see, so the statements do not depend on it.
		if cross, err = crossServerOf(ctx, s.db.read, w.WriterID); err != nil {
			return nil, err
		}
	}
	q, ok := similarQuery(w, owner, content, cross)
	if !ok {
		return nil, nil
	}
	q.KeywordOnly = keywordOnly
	results, err := s.recall.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	now := s.db.Now()
	var (
		best      *memory.Memory
		bestScore float64
	)
	for _, r := range results {
		m := r.Memory
		if (w != nil && !w.CanSee(m, cross)) || skip[m.ID] {
			continue
		}
		v := similar.Against(content, now, m, r.Vector)
		if !v.Similar {
			continue
		}
		// The closest by words, then the oldest: not the search's order, whose keyword
		// statistics may count memories the writer cannot see (SECURITY.md).
		if best == nil || v.Score > bestScore || (v.Score == bestScore && m.ID < best.ID) {
			best, bestScore = m, v.Score
		}
	}
	return best, nil
}

// similarQuery is the recall that finds near-duplicate candidates of content in owner's
// scope for w (nil: the whole scope): matches only, and for a writer in a place only what
// CanSee allows, said in the query so that no hidden memory takes a candidate's place. ok
// is false when w may see nothing of the scope.
func similarQuery(w *memory.WriteContext, owner memory.Owner, content string, cross bool) (memory.SearchQuery, bool) {
	q := memory.SearchQuery{Text: content, Limit: similarCandidates, MatchesOnly: true}
	if w == nil {
		q.Owners = []memory.Owner{owner}
		return q, true
	}
	if w.WriterID == "" {
		return q, false
	}
	q.Audience = w.Audience
	switch {
	case owner.Scope == memory.ScopeServer:
		if w.GuildID == "" || owner.GuildID != w.GuildID {
			return q, false
		}
		q.Owners = []memory.Owner{owner}
	case owner.UserID == w.WriterID && w.GuildID != "" && !cross:
		q.Visible = []memory.Visible{{Owner: owner, OriginGuildID: w.GuildID}}
	case owner.UserID == w.WriterID:
		q.Owners = []memory.Owner{owner}
	default:
		// Someone else's personal memory: only what the writer authored there.
		q.Owners = []memory.Owner{owner}
		if !isDiscordID(w.WriterID) {
			return q, false // recall filters authors by Discord id only: look at nothing rather than filter after it
		}
		q.AuthorID = w.WriterID
	}
	return q, true
}

// isDiscordID reports whether id is a Discord id (digits), the only author ids recall
// filters on.
func isDiscordID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}
