package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// The graph as the bot shows it: what a memory mentions, a scope's most mentioned
// entities, and one entity with its names, relations and memories.

// MemoryEntities returns the entities the live memory id of owner's scope mentions, by
// name. A memory of another scope is ENOTFOUND, as everywhere.
func (g *Graph) MemoryEntities(ctx context.Context, owner memory.Owner, id int64) ([]graph.Node, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	if _, err := findMemory(ctx, g.db.read, owner, id, false); err != nil {
		return nil, err
	}
	rows, err := g.db.read.QueryContext(ctx, `SELECT e.id, e.name, e.kind, e.user_id, e.mentions FROM memory_entities me
		JOIN entities e ON e.id = me.entity_id WHERE me.memory_id = ? AND e.scope_key = ? ORDER BY e.name`, id, owner.Key())
	if err != nil {
		return nil, fmt.Errorf("couldn't read the entities of memory %d: %w", id, err)
	}
	return collectNodes(rows)
}

func collectNodes(rows *sql.Rows) ([]graph.Node, error) {
	defer rows.Close()
	var out []graph.Node
	for rows.Next() {
		var n graph.Node
		if err := rows.Scan(&n.ID, &n.Name, &n.Kind, &n.UserID, &n.Mentions); err != nil {
			return nil, fmt.Errorf("couldn't read entities: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read entities: %w", err)
	}
	return out, nil
}

// TopEntities returns the most mentioned entities of owner's scope, at most limit (default
// 20, at most 500).
func (g *Graph) TopEntities(ctx context.Context, owner memory.Owner, limit int) ([]graph.Node, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 20
	}
	rows, err := g.db.read.QueryContext(ctx, `SELECT id, name, kind, user_id, mentions FROM entities
		WHERE scope_key = ? AND mentions > 0 ORDER BY mentions DESC, name LIMIT ?`, owner.Key(), min(limit, 500))
	if err != nil {
		return nil, fmt.Errorf("couldn't list entities: %w", err)
	}
	return collectNodes(rows)
}

// maxNeighbours bounds the relations and memory ids one Neighbourhood lists.
const maxNeighbours = 100

// Neighbourhood returns the entity of owner's scope that name names (by any alias; the most
// mentioned one when several do) with its aliases, relations and the live memories that
// mention it. ENOTFOUND when the scope has no such entity.
func (g *Graph) Neighbourhood(ctx context.Context, owner memory.Owner, name string) (graph.Neighbourhood, error) {
	var nb graph.Neighbourhood
	if err := owner.Validate(); err != nil {
		return nb, err
	}
	key := graph.Normalize(name)
	scopeKey := owner.Key()
	keys := []any{key}
	if canon := graph.Normalize(graph.CanonicalPerson(name)); canon != key {
		keys = append(keys, canon)
	}
	err := g.db.read.QueryRowContext(ctx, `SELECT e.id, e.name, e.kind, e.user_id, e.mentions FROM entity_aliases a
		JOIN entities e ON e.id = a.entity_id WHERE a.scope_key = ? AND a.alias IN (`+placeholders(len(keys))+`)
		ORDER BY e.mentions DESC, e.id LIMIT 1`, append([]any{scopeKey}, keys...)...).
		Scan(&nb.Entity.ID, &nb.Entity.Name, &nb.Entity.Kind, &nb.Entity.UserID, &nb.Entity.Mentions)
	if errors.Is(err, sql.ErrNoRows) {
		return nb, memory.Errorf(memory.ENOTFOUND, "There is no entity %q in %s.", name, describeOwner(owner))
	}
	if err != nil {
		return nb, fmt.Errorf("couldn't look up entity %q: %w", name, err)
	}
	id := nb.Entity.ID
	if err := queryEach(ctx, g.db.read, `SELECT alias FROM entity_aliases WHERE entity_id = ? ORDER BY alias`, []any{id},
		func(rows *sql.Rows) error {
			var a string
			err := rows.Scan(&a)
			nb.Aliases = append(nb.Aliases, a)
			return err
		}); err != nil {
		return nb, fmt.Errorf("couldn't read the aliases of entity %d: %w", id, err)
	}
	if err := queryEach(ctx, g.db.read, `SELECT r.type, r.mentions, r.confidence,
			s.id, s.name, s.kind, s.user_id, s.mentions, t.id, t.name, t.kind, t.user_id, t.mentions
		FROM relations r JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id
		WHERE r.scope_key = ? AND (r.source_id = ? OR r.target_id = ?) ORDER BY r.mentions DESC, r.id LIMIT ?`,
		[]any{scopeKey, id, id, maxNeighbours}, func(rows *sql.Rows) error {
			var e graph.Edge
			err := rows.Scan(&e.Type, &e.Mentions, &e.Confidence, &e.Source.ID, &e.Source.Name, &e.Source.Kind, &e.Source.UserID,
				&e.Source.Mentions, &e.Target.ID, &e.Target.Name, &e.Target.Kind, &e.Target.UserID, &e.Target.Mentions)
			nb.Relations = append(nb.Relations, e)
			return err
		}); err != nil {
		return nb, fmt.Errorf("couldn't read the relations of entity %d: %w", id, err)
	}
	if err := queryEach(ctx, g.db.read, `SELECT m.id FROM memory_entities me JOIN memories m ON m.id = me.memory_id
		WHERE me.entity_id = ? AND m.scope_key = ? AND m.deleted_at IS NULL ORDER BY m.id DESC LIMIT ?`,
		[]any{id, scopeKey, maxNeighbours}, func(rows *sql.Rows) error {
			var mid int64
			err := rows.Scan(&mid)
			nb.Memories = append(nb.Memories, mid)
			return err
		}); err != nil {
		return nb, fmt.Errorf("couldn't read the memories of entity %d: %w", id, err)
	}
	return nb, nil
}

// maxMentionedWith bounds the co-mentioned entities one call lists.
const maxMentionedWith = 100

// MentionedWith returns the entities that share live memories of vis with entity entityID,
// by how many they share (most first, then name), at most limit (default 10, at most
// 100). Only memories aud allows are read, so neither a name nor a count tells of a memory
// from a channel the asker cannot view; a nil aud reads all of vis (the operator CLI).
// An entity no visible memory mentions has none.
func (g *Graph) MentionedWith(ctx context.Context, vis memory.Visible, entityID int64, aud *memory.Audience, limit int) ([]graph.CoMention, error) {
	if err := vis.Owner.Validate(); err != nil {
		return nil, err
	}
	out, err := g.coMentions(ctx, vis, aud, "?", []any{entityID}, limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the entities mentioned with entity %d: %w", entityID, err)
	}
	return out, nil
}

// MemoryMentionedWith is MentionedWith for all the entities live memory id mentions at
// once: the other entities that share visible memories with any of them, each memory
// counted once. The memory itself must be in vis and allowed by aud; otherwise it is
// ENOTFOUND, as a memory of another scope is everywhere.
func (g *Graph) MemoryMentionedWith(ctx context.Context, vis memory.Visible, id int64, aud *memory.Audience, limit int) ([]graph.CoMention, error) {
	if err := vis.Owner.Validate(); err != nil {
		return nil, err
	}
	m, err := findMemory(ctx, g.db.read, vis.Owner, id, false)
	if err != nil {
		return nil, err
	}
	if !aud.Allows(m) || (vis.Owner.Scope == memory.ScopePersonal && vis.OriginGuildID != "" && m.GuildID != vis.OriginGuildID) {
		return nil, memory.Errorf(memory.ENOTFOUND, "There is no memory #%d in %s.", id, describeOwner(vis.Owner))
	}
	out, err := g.coMentions(ctx, vis, aud, `SELECT entity_id FROM memory_entities WHERE memory_id = ?`, []any{id}, limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the entities mentioned with those of memory %d: %w", id, err)
	}
	return out, nil
}

// coMentions counts, for the entities seed selects (SQL over seedArgs), the other entities
// that live memories of vis allowed by aud mention together with one of them. The count
// is of distinct memories, so a memory that mentions two seeds counts once; the seeds
// themselves are not listed.
func (g *Graph) coMentions(ctx context.Context, vis memory.Visible, aud *memory.Audience, seed string, seedArgs []any, limit int) ([]graph.CoMention, error) {
	scope, args, err := visibleClause(vis, aud)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 10
	}
	query := `SELECT e.id, e.name, e.kind, e.user_id, count(DISTINCT m.id) AS shared
		FROM memory_entities mine
		JOIN memories m ON m.id = mine.memory_id
		JOIN memory_entities other ON other.memory_id = mine.memory_id
		JOIN entities e ON e.id = other.entity_id
		WHERE mine.entity_id IN (` + seed + `) AND other.entity_id NOT IN (` + seed + `)
			AND m.deleted_at IS NULL AND ` + scope + ` AND e.scope_key = ?
		GROUP BY e.id, e.name, e.kind, e.user_id
		ORDER BY shared DESC, e.name, e.id LIMIT ?`
	all := append(append(append(slices.Clone(seedArgs), seedArgs...), args...), vis.Owner.Key(), min(limit, maxMentionedWith))
	var out []graph.CoMention
	err = queryEach(ctx, g.db.read, query, all, func(rows *sql.Rows) error {
		var c graph.CoMention
		err := rows.Scan(&c.Node.ID, &c.Node.Name, &c.Node.Kind, &c.Node.UserID, &c.Count)
		out = append(out, c)
		return err
	})
	return out, err
}

// queryEach runs query and calls scan for each row.
func queryEach(ctx context.Context, q querier, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
