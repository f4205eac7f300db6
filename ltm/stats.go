package ltm

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// Stats counts rows across the store and runs the engine's integrity check (on SQLite a
// read of the whole file). scopeKey, when not empty, narrows memory counts to one scope (a
// guild's "g:<id>").
func (s *Health) Stats(ctx context.Context, scopeKey string) (maintenance.Stats, error) {
	st, err := s.Counts(ctx, scopeKey)
	if err != nil {
		return st, err
	}
	problem, err := s.db.upkeep.Integrity(ctx)
	if err != nil {
		return st, err
	}
	st.IntegrityOK, st.IntegrityErr = problem == "", problem
	return st, nil
}

// Counts is Stats without the integrity check, for views anyone may open: the check reads
// the whole database file, which is an operator's or a server manager's call to make, not
// something any member should be able to set off at will. IntegrityOK is false (unknown).
// DBBytes is the space the engine reports for the store's data (Upkeep.SizeBytes).
func (s *Health) Counts(ctx context.Context, scopeKey string) (maintenance.Stats, error) {
	st := maintenance.Stats{Jobs: map[string]int{}}
	memWhere, args := "", []any{}
	if scopeKey != "" {
		memWhere, args = " AND scope_key = ?", []any{scopeKey}
	}
	counts := []struct {
		query string
		args  []any
		dst   *int
	}{
		{`SELECT count(*) FROM memories WHERE deleted_at IS NULL` + memWhere, args, &st.Memories},
		{`SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL` + memWhere, args, &st.Forgotten},
		{`SELECT count(*) FROM embeddings`, nil, &st.Embeddings},
		{`SELECT count(*) FROM memory_history`, nil, &st.HistoryRows},
		{`SELECT count(*) FROM transcripts`, nil, &st.Turns},
		{`SELECT count(*) FROM schema_migrations`, nil, &st.Migrations},
	}
	for _, c := range counts {
		if err := s.db.read.QueryRowContext(ctx, c.query, c.args...).Scan(c.dst); err != nil {
			return st, fmt.Errorf("couldn't read store stats: %w", err)
		}
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT state, count(*) FROM memory_jobs GROUP BY state`)
	if err != nil {
		return st, fmt.Errorf("couldn't read job stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			state string
			n     int
		)
		if err := rows.Scan(&state, &n); err != nil {
			return st, fmt.Errorf("couldn't read job stats: %w", err)
		}
		st.Jobs[state] = n
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("couldn't read job stats: %w", err)
	}
	if st.DBBytes, err = s.db.upkeep.SizeBytes(ctx); err != nil {
		return st, err
	}
	return st, nil
}

// MemoryCounts counts live memories by scope and type in one grouped query, for the
// operator's metrics; only pairs that have memories are listed. It reads every live row's
// two columns, so a caller polling it caches the answer.
func (s *Health) MemoryCounts(ctx context.Context) ([]memory.MemoryCount, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT scope, type, count(*) FROM memories
		WHERE deleted_at IS NULL GROUP BY scope, type ORDER BY scope, type`)
	if err != nil {
		return nil, fmt.Errorf("couldn't count memories: %w", err)
	}
	defer rows.Close()
	var out []memory.MemoryCount
	for rows.Next() {
		var c memory.MemoryCount
		if err := rows.Scan(&c.Scope, &c.Type, &c.Count); err != nil {
			return nil, fmt.Errorf("couldn't count memories: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't count memories: %w", err)
	}
	return out, nil
}

// GuildMemoryCounts counts the memories of guildID.
func (s *Health) GuildMemoryCounts(ctx context.Context, guildID string) (memory.GuildMemoryCounts, error) {
	return s.GuildMemoryCountsWithin(ctx, guildID, nil)
}

// GuildMemoryCountsWithin counts the memories of guildID that aud allows (nil: all of
// them). A member's counts must not move when a memory is saved in a channel they cannot
// view: a count is a small oracle too.
func (s *Health) GuildMemoryCountsWithin(ctx context.Context, guildID string, aud *memory.Audience) (memory.GuildMemoryCounts, error) {
	c := memory.GuildMemoryCounts{ServerByType: map[memory.Type]int{}}
	cond, condArgs := audienceClause(aud, "")
	if cond != "" {
		cond = " AND " + cond
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT scope, type, deleted_at IS NOT NULL, count(*) FROM memories
		WHERE guild_id = ?`+cond+` GROUP BY 1, 2, 3`, append([]any{guildID}, condArgs...)...)
	if err != nil {
		return c, fmt.Errorf("couldn't count memories of guild %s: %w", guildID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			scope, typ string
			deleted    bool
			n          int
		)
		if err := rows.Scan(&scope, &typ, &deleted, &n); err != nil {
			return c, fmt.Errorf("couldn't count memories of guild %s: %w", guildID, err)
		}
		switch {
		case scope == string(memory.ScopeServer) && deleted:
			c.Forgotten += n
		case scope == string(memory.ScopeServer):
			c.Server += n
			c.ServerByType[memory.Type(typ)] += n
		case !deleted:
			c.Personal += n
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("couldn't count memories of guild %s: %w", guildID, err)
	}
	return c, nil
}
