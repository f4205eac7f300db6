package pgstore

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// Stats counts rows across the store, as Counts, and checks the store's integrity the way
// PostgreSQL allows cheaply: every index of kioku's tables is valid and ready (an index
// left invalid by an interrupted build answers no query and enforces nothing). PostgreSQL
// checks pages itself as it reads them; a full scan such as SQLite's quick_check would cost
// a read of every table for little more. scopeKey, when not empty, narrows the memory
// counts to one scope.
func (s *Maintenance) Stats(ctx context.Context, scopeKey string) (ltm.Stats, error) {
	st, err := s.Counts(ctx, scopeKey)
	if err != nil {
		return st, err
	}
	var invalid string
	err = s.db.read.QueryRowContext(ctx, `SELECT coalesce(string_agg(c.relname, ', ' ORDER BY c.relname), '')
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND NOT (i.indisvalid AND i.indisready)`).Scan(&invalid)
	if err != nil {
		return st, fmt.Errorf("couldn't check the indexes: %w", err)
	}
	st.IntegrityOK = invalid == ""
	if !st.IntegrityOK {
		st.IntegrityErr = "invalid indexes (rebuild each with REINDEX INDEX CONCURRENTLY): " + invalid
	}
	return st, nil
}

// Counts is Stats without the integrity check, for views anyone may open; IntegrityOK is
// false (unknown). DBBytes is the size of kioku's tables with their indexes, not of the
// whole database, which may hold other applications' data.
func (s *Maintenance) Counts(ctx context.Context, scopeKey string) (ltm.Stats, error) {
	st := ltm.Stats{Jobs: map[string]int{}}
	memWhere, args := "", []any{}
	if scopeKey != "" {
		memWhere, args = " AND scope_key = ?", []any{scopeKey}
	}
	counts := []struct {
		query string
		args  []any
		dst   any
	}{
		{`SELECT count(*) FROM memories WHERE deleted_at IS NULL` + memWhere, args, &st.Memories},
		{`SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL` + memWhere, args, &st.Forgotten},
		{`SELECT count(*) FROM embeddings`, nil, &st.Embeddings},
		{`SELECT count(*) FROM memory_history`, nil, &st.HistoryRows},
		{`SELECT count(*) FROM transcripts`, nil, &st.Turns},
		{`SELECT count(*) FROM schema_migrations`, nil, &st.Migrations},
		{`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`, nil, &st.DBBytes},
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
	return st, nil
}

// MemoryCounts counts live memories by scope and type in one grouped query, for the
// operator's metrics; only pairs that have memories are listed.
func (s *Maintenance) MemoryCounts(ctx context.Context) ([]memory.MemoryCount, error) {
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

// GuildMemoryCounts counts the memories made in guildID, for /kioku status: the server's
// own memory by type, its forgotten ones still recoverable, and its members' personal
// memories as one total (a count, never whose or what).
func (s *Maintenance) GuildMemoryCounts(ctx context.Context, guildID string) (ltm.GuildMemoryCounts, error) {
	return s.GuildMemoryCountsWithin(ctx, guildID, nil)
}

// GuildMemoryCountsWithin counts the memories of guildID that aud allows (nil: all of
// them). A member's counts must not move when a memory is saved in a channel they cannot
// view: a count is a small oracle too.
func (s *Maintenance) GuildMemoryCountsWithin(ctx context.Context, guildID string, aud *memory.Audience) (ltm.GuildMemoryCounts, error) {
	c := ltm.GuildMemoryCounts{ServerByType: map[memory.Type]int{}}
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
