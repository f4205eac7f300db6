package ltm

import (
	"context"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// relatedDeadline bounds AboutSameEntities. The pipeline asks it in the background, where a
// memory it misses is a contradiction left unseen, so it is not held to recall's interactive
// GraphDeadline (20 ms, which a busy machine overruns).
const relatedDeadline = 5 * time.Second

// AboutSameEntities returns up to q.Limit live memories that name one of the entities
// q.Text names (by the linker's names and aliases, so "Kate" meets "Katherine"), newest
// first, inside q's scopes, filters and audience like every recall query. The pipeline
// compares a new fact with them: a fact can replace a memory it shares no word with.
func (s *Graph) AboutSameEntities(ctx context.Context, q memory.SearchQuery) ([]*memory.Memory, error) {
	if q.Limit <= 0 {
		q.Limit = 10
	}
	if err := q.ValidateFilters(); err != nil {
		return nil, err
	}
	vis := visibleScopes(&q)
	scope, args, err := scopeClause(vis)
	if err != nil {
		return nil, err
	}
	filter, filterArgs := filterClause(&q, s.db.Now(), s.db.dialect)
	where := scope + filter
	args = append(args, filterArgs...)
	ctx, cancel := context.WithTimeout(ctx, relatedDeadline)
	defer cancel()
	g := &graphHits{link: map[int64]recall.GraphLink{}, mentions: map[int64][]int{}}
	if err := s.db.graphLinks(ctx, g, q.Text, vis, nil, where, args); err != nil {
		return nil, err
	}
	var ids []int64
	for _, id := range g.extra {
		if g.link[id] == recall.GraphDirect && len(ids) < q.Limit {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE m.id IN (`+placeholders(len(ids))+
		`) AND m.deleted_at IS NULL AND `+where+` ORDER BY m.id DESC`, append(int64Args(ids), args...)...)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the memories about the same entities: %w", err)
	}
	return collectMemories(rows)
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
