package ltm

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// What the store holds about a member outside their own personal scope, for the member to
// see ("My memory" on the web dashboard). Forget-me (forgetme.go) erases the same memories:
// those whose subject is the member.

// AboutMember returns up to limit of the live memories whose subject is userID outside
// their own personal scope (server facts about them, other members' Remember-this copies of
// their messages), newest first, and how many there are. The caller decides which of them
// the member may see; the others it may only count.
func (s *Overview) AboutMember(ctx context.Context, userID string, limit int) ([]*memory.Memory, int, error) {
	own := memory.PersonalOwner(userID)
	if err := own.Validate(); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 500)
	const where = ` FROM memories WHERE subject_id = ? AND scope_key <> ? AND deleted_at IS NULL`
	var total int
	if err := s.db.read.QueryRowContext(ctx, `SELECT count(*)`+where, userID, own.Key()).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("couldn't count memories about user %s: %w", userID, err)
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+memoryColumns+where+` ORDER BY id DESC LIMIT ?`, userID, own.Key(), limit)
	if err != nil {
		return nil, 0, fmt.Errorf("couldn't list memories about user %s: %w", userID, err)
	}
	out, err := collectMemories(rows)
	return out, total, err
}
