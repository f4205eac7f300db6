package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
