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
func (s memoryWriter) linkMemoryTx(ctx context.Context, tx *txn, m *memory.Memory) error {
	return s.linkEntitiesTx(ctx, tx, m, graph.Link(m.Content, linkContext(m)), nil)
}

// linkEntitiesTx is linkMemoryTx with the entities m's content names already found. members,
// when not nil, carries the members' entities already resolved in tx (a bulk write's batch).
func (s memoryWriter) linkEntitiesTx(ctx context.Context, tx *txn, m *memory.Memory, ents []graph.Entity, members memberEntities) error {
	if len(ents) == 0 {
		return nil
	}
	q := s.stmts.on(tx)
	ids, err := s.graphSQL.resolveEntitiesTx(ctx, q, m.Owner().Key(), ents, s.nowMillis(), members)
	if err != nil {
		return fmt.Errorf("couldn't link memory %d: %w", m.ID, err)
	}
	if _, err := q.ExecContext(ctx, s.graphSQL.linkEntities, m.ID, idArray(ids)); err != nil {
		return fmt.Errorf("couldn't link memory %d: %w", m.ID, err)
	}
	return nil
}

// graphSQL are the statements that link a memory, in the engine's dialect. Their texts
// are fixed, the lists they carry passed as one JSON array, so the writer keeps them
// prepared (writeStmts): every write links its memory, and compiling a statement whose text
// changes with the number of names cost about a third of linking.
type graphSQL struct {
	linkEntities, lookupAliases, lookupAlias string
	// addAliases takes the scope and a JSON array of [entity id, alias] pairs.
	addAliases string
}

func newGraphSQL(d *Dialect) *graphSQL {
	return &graphSQL{
		linkEntities: `INSERT INTO memory_entities (memory_id, entity_id)
	SELECT ?, CAST(value AS BIGINT) FROM ` + d.JSONArrayTexts + ` WHERE true ON CONFLICT (memory_id, entity_id) DO NOTHING`,
		lookupAliases: `SELECT a.alias, e.id, e.kind, e.mentions FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
	WHERE a.scope_key = ? AND a.alias IN (SELECT value FROM ` + d.JSONArrayTexts + `)`,
		lookupAlias: `SELECT e.id, e.kind FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
	WHERE a.scope_key = ? AND a.alias IN (SELECT value FROM ` + d.JSONArrayTexts + `)
	ORDER BY e.kind = ? DESC, e.mentions DESC, e.id LIMIT 1`,
		addAliases: `INSERT INTO entity_aliases (entity_id, scope_key, alias)
	SELECT CAST(value ->> 0 AS BIGINT), ?, value ->> 1 FROM ` + d.JSONArrayValues + ` WHERE true ON CONFLICT (entity_id, alias) DO NOTHING`,
	}
}

// The linking statements every engine spells alike.
const (
	// user_id <> '' repeats the member index's condition (entities_user is partial), so a
	// plan made for any user id, as a prepared statement's is, can use the index; without it
	// PostgreSQL walked the scope's every entity version, and each mention count's update
	// leaves one more (0.86 ms a write at 40,000 memories, growing).
	memberEntitySQL = `SELECT id, name FROM entities WHERE scope_key = ? AND user_id = ? AND user_id <> ''`
	insertEntitySQL = `INSERT INTO entities (scope_key, name, normalized, kind, user_id, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`
)

// queries are the linking statements writeStmts keeps prepared.
func (g *graphSQL) queries() []string {
	return []string{g.linkEntities, g.lookupAliases, g.lookupAlias, g.addAliases, memberEntitySQL, insertEntitySQL}
}

// aliasPairs builds graphSQL.addAliases' array of [entity id, alias] pairs.
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
func (g *graphSQL) resolveEntitiesTx(ctx context.Context, tx querier, scopeKey string, ents []graph.Entity, now int64, members memberEntities) ([]int64, error) {
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
		if err := queryEach(ctx, tx, g.lookupAliases, []any{scopeKey, string(mustJSON(all))}, func(rows *sql.Rows) error {
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
			id, err := g.resolveEntityTx(ctx, tx, scopeKey, e, now)
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
				ids[i], err = g.insertEntityTx(ctx, tx, scopeKey, e, nil, now)
			}
		default:
			ids[i], err = g.insertEntityTx(ctx, tx, scopeKey, e, nil, now)
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
		if _, err := tx.ExecContext(ctx, g.addAliases, scopeKey, missing.String()); err != nil {
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
func (s memoryWriter) relinkMemoryTx(ctx context.Context, tx *txn, m *memory.Memory) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM memory_entities WHERE memory_id = ?`, m.ID); err != nil {
		return fmt.Errorf("couldn't unlink memory %d: %w", m.ID, err)
	}
	return s.linkMemoryTx(ctx, tx, m)
}

// resolveEntityTx returns the id of the entity of scopeKey that e names, creating it when
// there is none: by user id for a member, else by any of its aliases (an entity of the same
// kind first), else, for a person, by a spelling variant of a known name.
func (g *graphSQL) resolveEntityTx(ctx context.Context, tx querier, scopeKey string, e graph.Entity, now int64) (int64, error) {
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
			return id, g.addAliasesTx(ctx, tx, scopeKey, id, aliases)
		case !errors.Is(err, sql.ErrNoRows):
			return 0, fmt.Errorf("couldn't look up the entity of member %s: %w", e.UserID, err)
		}
		return g.insertEntityTx(ctx, tx, scopeKey, e, aliases, now)
	}
	err := tx.QueryRowContext(ctx, g.lookupAlias, scopeKey, string(mustJSON(aliases)), e.Kind).Scan(&id, &kind)
	if errors.Is(err, sql.ErrNoRows) && e.Kind == graph.KindPerson {
		id, kind, err = findSpellingVariantTx(ctx, tx, scopeKey, e.Key())
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return g.insertEntityTx(ctx, tx, scopeKey, e, aliases, now)
	case err != nil:
		return 0, fmt.Errorf("couldn't look up entity %q: %w", e.Name, err)
	}
	if kind == graph.KindOther && e.Kind != graph.KindOther {
		// A cue in a later mention says what the entity is ("Falcon" → "the Falcon repo").
		if _, err := tx.ExecContext(ctx, `UPDATE entities SET kind = ?, updated_at = ? WHERE id = ?`, e.Kind, now, id); err != nil {
			return 0, fmt.Errorf("couldn't update entity %d: %w", id, err)
		}
	}
	return id, g.addAliasesTx(ctx, tx, scopeKey, id, aliases)
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

func (g *graphSQL) insertEntityTx(ctx context.Context, tx querier, scopeKey string, e graph.Entity, aliases []string, now int64) (int64, error) {
	var id int64
	if err := tx.QueryRowContext(ctx, insertEntitySQL, scopeKey, e.Name, e.Key(), e.Kind, e.UserID, now, now).Scan(&id); err != nil {
		return 0, fmt.Errorf("couldn't add entity %q: %w", e.Name, err)
	}
	return id, g.addAliasesTx(ctx, tx, scopeKey, id, aliases)
}

func (g *graphSQL) addAliasesTx(ctx context.Context, tx querier, scopeKey string, id int64, aliases []string) error {
	if len(aliases) == 0 {
		return nil
	}
	var pairs aliasPairs
	for _, a := range aliases {
		pairs.add(id, a)
	}
	if _, err := tx.ExecContext(ctx, g.addAliases, scopeKey, pairs.String()); err != nil {
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
