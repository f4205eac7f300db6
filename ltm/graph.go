package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

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

// decisionMeta protects a new memory that states a decision (graph.ProtectDecision: the
// importance of a decision, and its type when none was chosen) and returns the history
// metadata that says so, or nil.
func decisionMeta(m *memory.Memory) json.RawMessage {
	if !graph.ProtectDecision(m) {
		return nil
	}
	return json.RawMessage(`{"decision":true}`)
}

// linkContext is what the linker knows of a memory besides its content.
func linkContext(m *memory.Memory) graph.Context {
	return graph.Context{AuthorID: m.Provenance.AuthorID, AuthorName: m.Provenance.Author}
}

// linkMemoryTx links memory m to the entities its content mentions, in m's scope, creating
// the entities that do not exist yet. Links that exist already are kept. The statements do
// not grow with the number of entities a memory names: one lookup of all their names, one
// insert of the names they lacked and one of the links.
func (s *db) linkMemoryTx(ctx context.Context, tx *txn, m *memory.Memory) error {
	return s.linkEntitiesTx(ctx, tx, m, graph.Link(m.Content, linkContext(m)), nil)
}

// linkEntitiesTx is linkMemoryTx with the entities m's content names already found. members,
// when not nil, carries the members' entities already resolved in tx (a bulk write's batch).
func (s *db) linkEntitiesTx(ctx context.Context, tx *txn, m *memory.Memory, ents []graph.Entity, members memberEntities) error {
	if len(ents) == 0 {
		return nil
	}
	q := s.stmts.on(tx)
	ids, err := resolveEntitiesTx(ctx, q, m.Owner().Key(), ents, s.nowMillis(), members)
	if err != nil {
		return fmt.Errorf("couldn't link memory %d: %w", m.ID, err)
	}
	if _, err := q.ExecContext(ctx, linkEntitiesSQL, m.ID, idArray(ids)); err != nil {
		return fmt.Errorf("couldn't link memory %d: %w", m.ID, err)
	}
	return nil
}

// The statements that link a memory have fixed texts, the lists they carry passed as one
// JSON array, so the writer keeps them prepared (writeStmts): every write links its memory,
// and compiling a statement whose text changes with the number of names cost about a third
// of linking.
const (
	linkEntitiesSQL = `INSERT INTO memory_entities (memory_id, entity_id)
	SELECT ?, value FROM json_each(?) WHERE true ON CONFLICT (memory_id, entity_id) DO NOTHING`
	lookupAliasesSQL = `SELECT a.alias, e.id, e.kind, e.mentions FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
	WHERE a.scope_key = ? AND a.alias IN (SELECT value FROM json_each(?))`
	lookupAliasSQL = `SELECT e.id, e.kind FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
	WHERE a.scope_key = ? AND a.alias IN (SELECT value FROM json_each(?))
	ORDER BY e.kind = ? DESC, e.mentions DESC, e.id LIMIT 1`
	// addAliasesSQL takes the scope and a JSON array of [entity id, alias] pairs.
	addAliasesSQL = `INSERT INTO entity_aliases (entity_id, scope_key, alias)
	SELECT value ->> 0, ?, value ->> 1 FROM json_each(?) WHERE true ON CONFLICT (entity_id, alias) DO NOTHING`
	memberEntitySQL = `SELECT id, name FROM entities WHERE scope_key = ? AND user_id = ?`
	insertEntitySQL = `INSERT INTO entities (scope_key, name, normalized, kind, user_id, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`
)

// graphQueries are the linking statements writeStmts keeps prepared.
var graphQueries = []string{linkEntitiesSQL, lookupAliasesSQL, lookupAliasSQL, addAliasesSQL, memberEntitySQL, insertEntitySQL}

// aliasPairs builds addAliasesSQL's array of [entity id, alias] pairs.
type aliasPairs []any

func (p *aliasPairs) add(id int64, alias string) { *p = append(*p, []any{id, alias}) }

func (p aliasPairs) String() string { return string(mustJSON([]any(p))) }

// aliasHit is an entity that one of the looked-up names already finds.
type aliasHit struct {
	id       int64
	kind     graph.Kind
	mentions int
}

// memberEntities remembers, within one transaction, the entity each member of a scope
// resolved to and the display name it then had. Resolving the same member under the same
// name again finds that entity, renames nothing and adds no alias it lacks, so a bulk write
// skips those statements for the author's next memories in the batch; a different name
// takes the whole way (the entity is renamed) and is remembered instead.
type memberEntities map[memberKey]memberEntity

type memberKey struct{ scope, user string }

type memberEntity struct {
	id   int64
	name string
}

// resolveEntitiesTx returns, in order, the id of the entity of scopeKey each of ents names
// (see resolveEntityTx), looking up the names of all of them at once. members may be nil.
func resolveEntitiesTx(ctx context.Context, tx querier, scopeKey string, ents []graph.Entity, now int64, members memberEntities) ([]int64, error) {
	ids := make([]int64, len(ents))
	aliases := make([][]string, len(ents))
	var all []string
	for i, e := range ents {
		if e.UserID != "" {
			continue
		}
		aliases[i] = e.Aliases()
		all = append(all, aliases[i]...)
	}
	hits := map[string][]aliasHit{}
	if len(all) > 0 {
		if err := queryEach(ctx, tx, lookupAliasesSQL, []any{scopeKey, string(mustJSON(all))}, func(rows *sql.Rows) error {
			var (
				alias string
				h     aliasHit
			)
			err := rows.Scan(&alias, &h.id, &h.kind, &h.mentions)
			hits[alias] = append(hits[alias], h)
			return err
		}); err != nil {
			return nil, fmt.Errorf("couldn't look up entities: %w", err)
		}
	}
	var missing aliasPairs // names an entity does not have yet
	for i, e := range ents {
		if e.UserID != "" {
			key := memberKey{scopeKey, e.UserID}
			if known, ok := members[key]; ok && known.name == e.Name {
				ids[i] = known.id
				continue
			}
			id, err := resolveEntityTx(ctx, tx, scopeKey, e, now)
			if err != nil {
				return nil, err
			}
			ids[i] = id
			if members != nil && !strings.HasPrefix(e.Name, "<@") {
				members[key] = memberEntity{id, e.Name}
			}
			continue
		}
		best, found := bestHit(hits, aliases[i], e.Kind)
		var err error
		switch {
		case found:
			ids[i] = best.id
			if best.kind == graph.KindOther && e.Kind != graph.KindOther {
				// A cue in a later mention says what the entity is ("Falcon" → "the Falcon repo").
				if _, err := tx.ExecContext(ctx, `UPDATE entities SET kind = ?, updated_at = ? WHERE id = ?`, e.Kind, now, best.id); err != nil {
					return nil, fmt.Errorf("couldn't update entity %d: %w", best.id, err)
				}
			}
		case e.Kind == graph.KindPerson:
			ids[i], _, err = findSpellingVariantTx(ctx, tx, scopeKey, e.Key())
			if errors.Is(err, sql.ErrNoRows) {
				ids[i], err = insertEntityTx(ctx, tx, scopeKey, e, nil, now)
			}
		default:
			ids[i], err = insertEntityTx(ctx, tx, scopeKey, e, nil, now)
		}
		if err != nil {
			return nil, fmt.Errorf("couldn't look up entity %q: %w", e.Name, err)
		}
		for _, a := range aliases[i] {
			if !slices.ContainsFunc(hits[a], func(h aliasHit) bool { return h.id == ids[i] }) {
				missing.add(ids[i], a)
				hits[a] = append(hits[a], aliasHit{id: ids[i], kind: e.Kind})
			}
		}
	}
	if len(missing) > 0 {
		if _, err := tx.ExecContext(ctx, addAliasesSQL, scopeKey, missing.String()); err != nil {
			return nil, fmt.Errorf("couldn't record the names of entities: %w", err)
		}
	}
	return ids, nil
}

// bestHit picks, among the entities the names find, one of the same kind first, then the
// most mentioned, then the oldest: the order resolveEntityTx's lookup uses.
func bestHit(hits map[string][]aliasHit, names []string, kind graph.Kind) (aliasHit, bool) {
	var best aliasHit
	found := false
	better := func(h aliasHit) bool {
		if (h.kind == kind) != (best.kind == kind) {
			return h.kind == kind
		}
		if h.mentions != best.mentions {
			return h.mentions > best.mentions
		}
		return h.id < best.id
	}
	for _, n := range names {
		for _, h := range hits[n] {
			if !found || better(h) {
				best, found = h, true
			}
		}
	}
	return best, found
}

// relinkMemoryTx replaces m's links with those of its current content. Entities left with
// no mention are collected by retention.
func (s *db) relinkMemoryTx(ctx context.Context, tx *txn, m *memory.Memory) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM memory_entities WHERE memory_id = ?`, m.ID); err != nil {
		return fmt.Errorf("couldn't unlink memory %d: %w", m.ID, err)
	}
	return s.linkMemoryTx(ctx, tx, m)
}

// resolveEntityTx returns the id of the entity of scopeKey that e names, creating it when
// there is none: by user id for a member, else by any of its aliases (an entity of the same
// kind first), else, for a person, by a spelling variant of a known name.
func resolveEntityTx(ctx context.Context, tx querier, scopeKey string, e graph.Entity, now int64) (int64, error) {
	aliases := e.Aliases()
	var (
		id   int64
		name string
		kind graph.Kind
	)
	if e.UserID != "" {
		err := tx.QueryRowContext(ctx, memberEntitySQL, scopeKey, e.UserID).Scan(&id, &name)
		switch {
		case err == nil:
			if name != e.Name && !strings.HasPrefix(e.Name, "<@") {
				// The member's latest display name is the entity's name.
				if _, err := tx.ExecContext(ctx, `UPDATE entities SET name = ?, normalized = ?, updated_at = ? WHERE id = ?`,
					e.Name, e.Key(), now, id); err != nil {
					return 0, fmt.Errorf("couldn't rename entity %d: %w", id, err)
				}
			}
			return id, addAliasesTx(ctx, tx, scopeKey, id, aliases)
		case !errors.Is(err, sql.ErrNoRows):
			return 0, fmt.Errorf("couldn't look up the entity of member %s: %w", e.UserID, err)
		}
		return insertEntityTx(ctx, tx, scopeKey, e, aliases, now)
	}
	err := tx.QueryRowContext(ctx, lookupAliasSQL, scopeKey, string(mustJSON(aliases)), e.Kind).Scan(&id, &kind)
	if errors.Is(err, sql.ErrNoRows) && e.Kind == graph.KindPerson {
		id, kind, err = findSpellingVariantTx(ctx, tx, scopeKey, e.Key())
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return insertEntityTx(ctx, tx, scopeKey, e, aliases, now)
	case err != nil:
		return 0, fmt.Errorf("couldn't look up entity %q: %w", e.Name, err)
	}
	if kind == graph.KindOther && e.Kind != graph.KindOther {
		// A cue in a later mention says what the entity is ("Falcon" → "the Falcon repo").
		if _, err := tx.ExecContext(ctx, `UPDATE entities SET kind = ?, updated_at = ? WHERE id = ?`, e.Kind, now, id); err != nil {
			return 0, fmt.Errorf("couldn't update entity %d: %w", id, err)
		}
	}
	return id, addAliasesTx(ctx, tx, scopeKey, id, aliases)
}

// findSpellingVariantTx finds a person of the scope with a name that is a spelling variant
// of key (Katia, Katya): among the person aliases that start with key's first letter.
func findSpellingVariantTx(ctx context.Context, tx querier, scopeKey, key string) (int64, graph.Kind, error) {
	if key == "" || key[0] >= utf8.RuneSelf || strings.Contains(key, " ") {
		return 0, "", sql.ErrNoRows
	}
	rows, err := tx.QueryContext(ctx, `SELECT a.alias, a.entity_id FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
		WHERE a.scope_key = ? AND a.alias >= ? AND a.alias < ? AND e.kind = 'person' ORDER BY e.mentions DESC LIMIT 200`,
		scopeKey, key[:1], string(rune(key[0]+1)))
	if err != nil {
		return 0, "", err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			alias string
			id    int64
		)
		if err := rows.Scan(&alias, &id); err != nil {
			return 0, "", err
		}
		if graph.SpellingVariant(alias, key) {
			return id, graph.KindPerson, nil
		}
	}
	if err := rows.Err(); err != nil {
		return 0, "", err
	}
	return 0, "", sql.ErrNoRows
}

func insertEntityTx(ctx context.Context, tx querier, scopeKey string, e graph.Entity, aliases []string, now int64) (int64, error) {
	var id int64
	if err := tx.QueryRowContext(ctx, insertEntitySQL, scopeKey, e.Name, e.Key(), e.Kind, e.UserID, now, now).Scan(&id); err != nil {
		return 0, fmt.Errorf("couldn't add entity %q: %w", e.Name, err)
	}
	return id, addAliasesTx(ctx, tx, scopeKey, id, aliases)
}

func addAliasesTx(ctx context.Context, tx querier, scopeKey string, id int64, aliases []string) error {
	if len(aliases) == 0 {
		return nil
	}
	var pairs aliasPairs
	for _, a := range aliases {
		pairs.add(id, a)
	}
	if _, err := tx.ExecContext(ctx, addAliasesSQL, scopeKey, pairs.String()); err != nil {
		return fmt.Errorf("couldn't record the names of entity %d: %w", id, err)
	}
	return nil
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

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
			srcID, err := resolveEntityTx(ctx, q, scopeKey, e.src, now)
			if err != nil {
				return err
			}
			dstID, err := resolveEntityTx(ctx, q, scopeKey, e.dst, now)
			if err != nil {
				return err
			}
			if srcID == dstID {
				continue
			}
			var relID int64
			if err := tx.QueryRowContext(ctx, `INSERT INTO relations (scope_key, source_id, target_id, type, mentions, confidence,
				created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?)
				ON CONFLICT (source_id, target_id, type) DO UPDATE SET mentions = mentions + 1,
					confidence = (confidence * mentions + excluded.confidence) / (mentions + 1), updated_at = excluded.updated_at
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
			if err := s.db.linkMemoryTx(ctx, tx, m); err != nil {
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
	return execCount(ctx, tx, `DELETE FROM entities WHERE id IN (SELECT id FROM entities WHERE mentions <= 0 LIMIT ?)`, limit)
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
