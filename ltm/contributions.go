package ltm

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// maxContributions bounds each list of Contributions: the busiest channels and authors are
// what a glance needs; the rest are a filter away.
const maxContributions = 50

// Contributions counts owner's live memories that the default listing shows (every one but
// the forgotten and the shelved) by origin channel and by author, most first, under aud:
// a channel aud does not allow is neither listed nor counted, and neither is any author's
// memory learned there. Memories learned in no channel count under the channel "".
func (s *Overview) Contributions(ctx context.Context, owner memory.Owner, aud *memory.Audience) (memory.Contributions, error) {
	var out memory.Contributions
	if err := owner.Validate(); err != nil {
		return out, err
	}
	where := "scope_key = ? AND deleted_at IS NULL AND state NOT IN ('" + joinStates(memory.ShelvedStates, "', '") + "')"
	args := []any{owner.Key()}
	if cond, condArgs := audienceClause(aud, ""); cond != "" {
		where, args = where+" AND "+cond, append(args, condArgs...)
	}
	var err error
	out.Channels, err = s.countBy(ctx, `SELECT channel_id, '', count(*) FROM memories WHERE `+where+
		` GROUP BY channel_id ORDER BY count(*) DESC, channel_id LIMIT ?`, args)
	if err != nil {
		return out, fmt.Errorf("couldn't count the memories of %s by channel: %w", owner.Key(), err)
	}
	out.Authors, err = s.countBy(ctx, `SELECT author_id, max(author_name), count(*) FROM memories WHERE `+where+
		` AND author_id <> '' GROUP BY author_id ORDER BY count(*) DESC, author_id LIMIT ?`, args)
	if err != nil {
		return out, fmt.Errorf("couldn't count the memories of %s by author: %w", owner.Key(), err)
	}
	return out, nil
}

// countBy runs one of Contributions' GROUP BY reads.
func (s *Overview) countBy(ctx context.Context, query string, args []any) ([]memory.ContributionCount, error) {
	rows, err := s.db.read.QueryContext(ctx, query, append(args, maxContributions)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.ContributionCount
	for rows.Next() {
		var c memory.ContributionCount
		if err := rows.Scan(&c.ID, &c.Name, &c.Count); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
