package pgstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// The knowledge graph is ltm's (ltm.Graph, served by the core). What stays here are the
// graph writes of this package's own transactions, copies of ltm's that go when their
// callers fold into the core: linking a memory to the entities it mentions, inside the
// memory's write transaction (memories.go), collecting unmentioned entities (retention.go,
// purge.go) and erasing a member from every graph (forgetme.go).

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
	ents := graph.Link(m.Content, linkContext(m))
	if len(ents) == 0 {
		return nil
	}
	ids, err := resolveEntitiesTx(ctx, tx, m.Owner().Key(), ents, s.nowMillis())
	if err != nil {
		return fmt.Errorf("couldn't link memory %d: %w", m.ID, err)
	}
	args := make([]any, 0, 2*len(ids))
	for _, id := range ids {
		args = append(args, m.ID, id)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO memory_entities (memory_id, entity_id) VALUES `+
		strings.TrimSuffix(strings.Repeat("(?, ?),", len(ids)), ",")+` ON CONFLICT (memory_id, entity_id) DO NOTHING`, args...); err != nil {
		return fmt.Errorf("couldn't link memory %d: %w", m.ID, err)
	}
	return nil
}

// aliasHit is an entity that one of the looked-up names already finds.
type aliasHit struct {
	id       int64
	kind     graph.Kind
	mentions int
}

// resolveEntitiesTx returns, in order, the id of the entity of scopeKey each of ents names
// (see resolveEntityTx), looking up the names of all of them at once.
func resolveEntitiesTx(ctx context.Context, tx *txn, scopeKey string, ents []graph.Entity, now int64) ([]int64, error) {
	ids := make([]int64, len(ents))
	aliases := make([][]string, len(ents))
	var all []any
	for i, e := range ents {
		if e.UserID != "" {
			continue
		}
		aliases[i] = e.Aliases()
		for _, a := range aliases[i] {
			all = append(all, a)
		}
	}
	hits := map[string][]aliasHit{}
	if len(all) > 0 {
		if err := queryEach(ctx, tx, `SELECT a.alias, e.id, e.kind, e.mentions FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
			WHERE a.scope_key = ? AND a.alias IN (`+placeholders(len(all))+`)`, append([]any{scopeKey}, all...), func(rows *sql.Rows) error {
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
	var missing []any // (entity id, scope key, alias) of names an entity does not have yet
	for i, e := range ents {
		if e.UserID != "" {
			id, err := resolveEntityTx(ctx, tx, scopeKey, e, now)
			if err != nil {
				return nil, err
			}
			ids[i] = id
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
			if errNoRows(err) {
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
				missing = append(missing, ids[i], scopeKey, a)
				hits[a] = append(hits[a], aliasHit{id: ids[i], kind: e.Kind})
			}
		}
	}
	if len(missing) > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO entity_aliases (entity_id, scope_key, alias) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?),", len(missing)/3), ",")+` ON CONFLICT (entity_id, alias) DO NOTHING`,
			missing...); err != nil {
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
func resolveEntityTx(ctx context.Context, tx *txn, scopeKey string, e graph.Entity, now int64) (int64, error) {
	aliases := e.Aliases()
	var (
		id   int64
		name string
		kind graph.Kind
	)
	if e.UserID != "" {
		err := tx.QueryRowContext(ctx, `SELECT id, name FROM entities WHERE scope_key = ? AND user_id = ?`, scopeKey, e.UserID).Scan(&id, &name)
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
		case !errNoRows(err):
			return 0, fmt.Errorf("couldn't look up the entity of member %s: %w", e.UserID, err)
		}
		return insertEntityTx(ctx, tx, scopeKey, e, aliases, now)
	}
	err := tx.QueryRowContext(ctx, `SELECT e.id, e.kind FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
		WHERE a.scope_key = ? AND a.alias IN (`+placeholders(len(aliases))+`)
		ORDER BY e.kind = ? DESC, e.mentions DESC, e.id LIMIT 1`,
		append(append([]any{scopeKey}, anySlice(aliases)...), e.Kind)...).Scan(&id, &kind)
	if errNoRows(err) && e.Kind == graph.KindPerson {
		id, kind, err = findSpellingVariantTx(ctx, tx, scopeKey, e.Key())
	}
	switch {
	case errNoRows(err):
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
func findSpellingVariantTx(ctx context.Context, tx *txn, scopeKey, key string) (int64, graph.Kind, error) {
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

func insertEntityTx(ctx context.Context, tx *txn, scopeKey string, e graph.Entity, aliases []string, now int64) (int64, error) {
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO entities (scope_key, name, normalized, kind, user_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, scopeKey, e.Name, e.Key(), e.Kind, e.UserID, now, now).Scan(&id); err != nil {
		return 0, fmt.Errorf("couldn't add entity %q: %w", e.Name, err)
	}
	return id, addAliasesTx(ctx, tx, scopeKey, id, aliases)
}

func addAliasesTx(ctx context.Context, tx *txn, scopeKey string, id int64, aliases []string) error {
	args := make([]any, 0, 3*len(aliases))
	for _, a := range aliases {
		args = append(args, id, scopeKey, a)
	}
	if len(args) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO entity_aliases (entity_id, scope_key, alias) VALUES `+
		strings.TrimSuffix(strings.Repeat("(?, ?, ?),", len(aliases)), ",")+` ON CONFLICT (entity_id, alias) DO NOTHING`, args...); err != nil {
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

func collectOrphansTx(ctx context.Context, tx *txn, limit int) (int, error) {
	// Entities another transaction is linking right now are locked by its mention count
	// update: they are skipped, and collected later if they are still unmentioned.
	return execCount(ctx, tx, `DELETE FROM entities WHERE mentions <= 0 AND id IN (
		SELECT id FROM entities WHERE mentions <= 0 LIMIT ? FOR UPDATE SKIP LOCKED)`, limit)
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
