package ltm

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// The knowledge graph (migration 0010, SPEC §4): entities per scope, their aliases, the
// relations extraction finds between them, and the links from memories to the entities
// they mention. Memories are linked inside their own write transaction by the pure linker
// (memory/graph), so a memory and its links commit together and linking makes no network
// call; the pipeline's triples are written after its facts, in a transaction of their own.

// Graph is the knowledge graph. See Store.Graph.
type Graph struct{ db *db }

// AddTriples records the extraction's triples in b.Owner's graph, in one transaction of its
// own: each end becomes an entity (a speaker's name is tied to their user id), each triple a
// relation whose mention count and running-average confidence grow when it is seen again,
// and the batch's speakers its sources. Triples that involve a member whose privacy level
// is partial or full, and every triple of a batch a speaker of which was forgotten since it
// started, are dropped. It returns how many triples were recorded.
func (g *Graph) AddTriples(ctx context.Context, b graph.Batch) (int, error) {
	if err := b.Owner.Validate(); err != nil {
		return 0, err
	}
	if len(b.Triples) == 0 {
		return 0, nil
	}
	c := graph.Context{People: b.People}
	type edge struct {
		src, dst graph.Entity
		typ      string
		conf     float64
	}
	var edges []edge
	members := map[string]bool{}
	for _, s := range b.Sources {
		members[s] = true
	}
	for _, t := range b.Triples {
		src, ok1 := graph.Named(t.Source, c)
		dst, ok2 := graph.Named(t.Target, c)
		typ := graph.RelationType(t.Relationship)
		if !ok1 || !ok2 || typ == "" || src.Key() == dst.Key() && src.UserID == dst.UserID {
			continue
		}
		conf := t.Confidence
		if conf <= 0 || conf > 1 {
			conf = 1
		}
		edges = append(edges, edge{src, dst, typ, conf})
		for _, e := range []graph.Entity{src, dst} {
			if e.UserID != "" {
				members[e.UserID] = true
			}
		}
	}
	if len(edges) == 0 {
		return 0, nil
	}
	ids := make([]string, 0, len(members))
	for id := range members {
		ids = append(ids, id)
	}
	scopeKey := b.Owner.Key()
	recorded := 0
	err := g.db.withWriteTx(ctx, func(tx *txn) error {
		recorded = 0
		// The scope's entities are resolved and created below; another writer linking a
		// memory of the same scope must not create the same entity at the same time.
		if err := g.db.eng.LockKey(ctx, tx, scopeKey); err != nil {
			return err
		}
		fenced, err := fencedSinceTx(ctx, tx, ids, b.StartedAt)
		if err != nil {
			return err
		}
		for _, s := range b.Sources {
			if fenced[s] {
				return nil // a speaker asked to be forgotten after this work began
			}
		}
		private, err := privateMembersTx(ctx, tx, ids)
		if err != nil {
			return err
		}
		now := g.db.nowMillis()
		q := g.db.stmts.on(tx)
		for _, e := range edges {
			if fenced[e.src.UserID] || fenced[e.dst.UserID] || private[e.src.UserID] || private[e.dst.UserID] {
				continue
			}
			srcID, err := g.db.graphSQL.resolveEntityTx(ctx, q, scopeKey, e.src, now)
			if err != nil {
				return err
			}
			dstID, err := g.db.graphSQL.resolveEntityTx(ctx, q, scopeKey, e.dst, now)
			if err != nil {
				return err
			}
			if srcID == dstID {
				continue
			}
			var relID int64
			if err := tx.QueryRowContext(ctx, `INSERT INTO relations (scope_key, source_id, target_id, type, mentions, confidence,
				created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?)
				ON CONFLICT (source_id, target_id, type) DO UPDATE SET mentions = relations.mentions + 1,
					confidence = (relations.confidence * relations.mentions + excluded.confidence) / (relations.mentions + 1),
					updated_at = excluded.updated_at
				RETURNING id`, scopeKey, srcID, dstID, e.typ, e.conf, now, now).Scan(&relID); err != nil {
				return fmt.Errorf("couldn't record relation %q: %w", e.typ, err)
			}
			for _, s := range b.Sources {
				if _, err := tx.ExecContext(ctx, `INSERT INTO relation_sources (relation_id, user_id) VALUES (?, ?)
					ON CONFLICT (relation_id, user_id) DO NOTHING`, relID, s); err != nil {
					return fmt.Errorf("couldn't record the source of relation %d: %w", relID, err)
				}
			}
			recorded++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't record the graph of %s: %w", scopeKey, err)
	}
	return recorded, nil
}

// privateMembersTx returns which of ids have a privacy level that keeps them out of what the
// model learns (partial or full).
func privateMembersTx(ctx context.Context, tx *txn, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT user_id FROM user_settings WHERE privacy <> ? AND user_id IN (`+placeholders(len(ids))+`)`,
		append([]any{memory.PrivacyNormal}, anySlice(ids)...)...)
	if err != nil {
		return nil, fmt.Errorf("couldn't read privacy levels: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("couldn't read privacy levels: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// repairLinkGraph links the memories written before migration 0010 to the entities they
// mention.
const repairLinkGraph = "link-graph"

// linkGraph returns the repair phase that links each memory (live or forgotten, so that a
// recovered memory has its links) after the cursor; links that exist already are kept, so a
// memory written since the migration is not counted twice.
func (s *Maintenance) linkGraph(linked *int) repairPhase {
	return func(ctx context.Context, tx *txn, after int64, limit int) (int64, bool, error) {
		rows, err := tx.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
		if err != nil {
			return 0, false, fmt.Errorf("couldn't read memories: %w", err)
		}
		batch, err := collectMemories(rows)
		if err != nil {
			return 0, false, err
		}
		for _, m := range batch {
			if err := s.db.writes.linkMemoryTx(ctx, tx, m); err != nil {
				return 0, false, err
			}
			*linked++
		}
		return lastID(batch, func(m *memory.Memory) int64 { return m.ID }), len(batch) == limit, nil
	}
}

// CollectOrphans deletes up to limit entities nothing mentions any more (no memory links, no
// relations), with their aliases, and returns how many went. Retention runs it; forget-me
// and the guild purge collect theirs at once.
func (g *Graph) CollectOrphans(ctx context.Context, limit int) (int, error) {
	if limit <= 0 {
		limit = DefaultRetentionBatch
	}
	var n int
	err := g.db.withWriteTx(ctx, func(tx *txn) error {
		var err error
		n, err = collectOrphansTx(ctx, tx, limit)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't collect unmentioned entities: %w", err)
	}
	return n, nil
}

func collectOrphansTx(ctx context.Context, tx *txn, limit int) (int, error) {
	// Where writers run at once, entities another transaction is linking right now are
	// locked by its mention count update: they are skipped, and collected later if they are
	// still unmentioned.
	return execCount(ctx, tx, `DELETE FROM entities WHERE mentions <= 0 AND id IN (
		SELECT id FROM entities WHERE mentions <= 0 LIMIT ?`+tx.eng.Dialect().SkipLocked+`)`, limit)
}

// forgetMeGraphTx removes userID from every graph: their entities (by user id, in every
// scope, with aliases, links and the relations touching them), their personal scope's graph,
// relations learned only from their messages, their id from the sources of the others, and
// the entities this leaves unmentioned.
func forgetMeGraphTx(ctx context.Context, tx *txn, userID string) error {
	for _, st := range []struct {
		what  string
		query string
		args  []any
	}{
		{"entities", `DELETE FROM entities WHERE user_id = ? OR scope_key = ?`, []any{userID, memory.PersonalOwner(userID).Key()}},
		{"relations", `DELETE FROM relations WHERE id IN (SELECT s.relation_id FROM relation_sources s WHERE s.user_id = ?1
			AND NOT EXISTS (SELECT 1 FROM relation_sources o WHERE o.relation_id = s.relation_id AND o.user_id <> ?1))`, []any{userID}},
		{"relation sources", `DELETE FROM relation_sources WHERE user_id = ?`, []any{userID}},
		{"unmentioned entities", `DELETE FROM entities WHERE mentions <= 0`, nil},
	} {
		if _, err := tx.ExecContext(ctx, st.query, st.args...); err != nil {
			return fmt.Errorf("couldn't erase graph %s: %w", st.what, err)
		}
	}
	return nil
}
