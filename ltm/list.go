package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Listing a scope's memories a page at a time, with its filters.

// List returns one page of memories in owner's scope, newest first (or by the day they are
// about, with opt.Timing), and the total count.
func (s *Memories) List(ctx context.Context, owner memory.Owner, opt memory.ListOptions) ([]*memory.Memory, int, error) {
	if err := owner.Validate(); err != nil {
		return nil, 0, err
	}
	if opt.Limit <= 0 {
		opt.Limit = 20
	}
	opt.Limit = min(opt.Limit, memory.MaxListLimit)
	from := "memories"
	where := []string{"scope_key = ?"}
	args := []any{owner.Key()}
	if opt.Deleted {
		where = append(where, "deleted_at IS NOT NULL")
	} else {
		where = append(where, "deleted_at IS NULL")
	}
	if opt.Type != "" {
		where = append(where, "type = ?")
		args = append(args, opt.Type)
	}
	if opt.Tag != "" {
		where = append(where, s.db.dialect.TagsHold("memories.tags"))
		args = append(args, strings.ToLower(opt.Tag))
	}
	if opt.Pinned != nil {
		// Written out rather than bound, so the pinned rows' partial index applies; the
		// engine may name it too (Dialect.PinnedLiveMemories).
		if *opt.Pinned {
			where = append(where, "pinned <> 0")
			if !opt.Deleted {
				from = s.db.dialect.PinnedLiveMemories
			}
		} else {
			where = append(where, "pinned = 0")
		}
	}
	if opt.GuildID != "" {
		where = append(where, "guild_id = ?")
		args = append(args, opt.GuildID)
	}
	if opt.AuthorID != "" {
		where = append(where, "author_id = ?")
		args = append(args, opt.AuthorID)
	}
	if opt.ChannelID != "" {
		where = append(where, "channel_id = ?")
		args = append(args, opt.ChannelID)
	}
	if !opt.Since.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, opt.Since.UnixMilli())
	}
	if !opt.Until.IsZero() {
		where = append(where, "created_at <= ?")
		args = append(args, opt.Until.UnixMilli())
	}
	if opt.Contains != "" {
		where = append(where, s.db.dialect.Instr+"(lower(content), lower(?)) > 0")
		args = append(args, opt.Contains)
	}
	if cond, condArgs := audienceClause(opt.Audience, ""); cond != "" {
		where = append(where, cond)
		args = append(args, condArgs...)
	}
	now := opt.Now
	if now.IsZero() {
		now = s.db.Now()
	}
	cond, condArgs, err := lifecycleClause(opt, now)
	if err != nil {
		return nil, 0, err
	}
	if cond != "" {
		where, args = append(where, cond), append(args, condArgs...)
	}
	order := "id DESC"
	if opt.Timing != "" {
		if !opt.Timing.Valid() {
			return nil, 0, memory.Errorf(memory.EINVALID, "Timing %q is not one of upcoming and past.", opt.Timing)
		}
		if opt.Timing == memory.TimingUpcoming {
			where, order = append(where, "refers_to_end > ?"), "refers_to, refers_to_end, id"
		} else {
			where, order = append(where, "refers_to_end <= ?"), "refers_to_end DESC, id DESC"
		}
		args = append(args, now.UnixMilli())
	}
	cond = strings.Join(where, " AND ")
	var total int
	if err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM `+from+` WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("couldn't count memories: %w", err)
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+memoryColumns+` FROM `+from+` WHERE `+cond+
		` ORDER BY `+order+` LIMIT ? OFFSET ?`, append(args, opt.Limit, opt.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("couldn't list memories: %w", err)
	}
	out, err := collectMemories(rows)
	return out, total, err
}

// lifecycleClause is the condition of opt.Lifecycle at now: a stored state by its column,
// active and past (which have none) by the span their words name; no lifecycle lists all
// but the shelved states, as default search does. Forgotten memories are listed whatever
// their state was.
func lifecycleClause(opt memory.ListOptions, now time.Time) (string, []any, error) {
	switch l := opt.Lifecycle; {
	case l == "" && opt.Deleted:
		return "", nil, nil
	case l == "":
		return "state NOT IN ('" + joinStates(memory.ShelvedStates, "', '") + "')", nil, nil
	case !l.Valid():
		return "", nil, memory.Errorf(memory.EINVALID, "Lifecycle %q is not one of active, past, superseded, disputed and archived.", string(l))
	case l == memory.LifecycleActive:
		return "state = '' AND (refers_to_end IS NULL OR refers_to_end > ?)", []any{now.UnixMilli()}, nil
	case l == memory.LifecyclePast:
		return "state = '' AND refers_to_end <= ?", []any{now.UnixMilli()}, nil
	default:
		return "state = ?", []any{string(l)}, nil
	}
}

func collectMemories(rows *sql.Rows) ([]*memory.Memory, error) {
	defer rows.Close()
	var out []*memory.Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, fmt.Errorf("couldn't read memory row: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read memory rows: %w", err)
	}
	return out, nil
}
