package pgstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kioku-bot/kioku/memory"
)

// The memories aggregate is the service's (ltm.Memories, Store.Memories). What is left here
// are the row helpers and write paths that this package's own aggregates still run inside
// their transactions; each goes when its callers fold into ltm: the row scans and columns
// (embedtrack, messages, neighbours, recall, repairs, transfer), rememberTx, insertMemoryTx
// and the insert statement (transfer), findMemory (channels, confirm, graph), modifyTx and
// forgetTx (confirm, messages), mustJSON (forgetme, messages), boolInt (channels,
// settings, transcripts).

// memoryColumns is the column list scanMemory expects, in order.
const memoryColumns = `id, scope, guild_id, user_id, type, content, normalized, content_hash, confidence,
	importance, pinned, tags, source, author_id, author_name, channel_id, message_id, created_at,
	updated_at, accessed_at, access_count, version, deleted_at, subject_id`

func scanMemory(row scanner) (*memory.Memory, error) {
	var (
		m                          memory.Memory
		tags                       string
		created, updated, accessed int64
		deleted                    sql.NullInt64
		pinned                     int
	)
	err := row.Scan(&m.ID, &m.Scope, &m.GuildID, &m.UserID, &m.Type, &m.Content, &m.Normalized, &m.Hash,
		&m.Confidence, &m.Importance, &pinned, &tags, &m.Source, &m.Provenance.AuthorID, &m.Provenance.Author,
		&m.Provenance.ChannelID, &m.Provenance.MessageID, &created, &updated, &accessed, &m.AccessCount,
		&m.Version, &deleted, &m.SubjectID)
	if err != nil {
		return nil, err
	}
	m.Pinned = pinned != 0
	if tags != "" && tags != "[]" {
		if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
			return nil, fmt.Errorf("couldn't decode tags of memory %d: %w", m.ID, err)
		}
	}
	m.CreatedAt, m.UpdatedAt, m.AccessedAt = fromMillis(created), fromMillis(updated), fromMillis(accessed)
	if deleted.Valid {
		m.DeletedAt = fromMillis(deleted.Int64)
	}
	return &m, nil
}

func encodeTags(tags []string) string {
	if len(tags) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(tags) // []string always marshals
	return string(b)
}

// rememberTx inserts a prepared memory unless its hash is live in the scope already.
func (s *db) rememberTx(ctx context.Context, tx *txn, m *memory.Memory, actor memory.Actor, reason string) (memory.WriteResult, error) {
	owner := m.Owner()
	if err := lockKey(ctx, tx, owner.Key()); err != nil {
		return memory.WriteResult{}, err
	}
	existing, err := findLiveByHash(ctx, tx, owner.Key(), m.Hash)
	if err != nil {
		return memory.WriteResult{}, err
	}
	if existing != nil {
		return memory.WriteResult{Memory: existing, Created: false}, nil
	}
	return s.insertMemoryTx(ctx, tx, m, actor, reason)
}

// insertMemoryTx inserts a prepared memory as a new row with its creation history, whatever
// else the scope holds: the one path every new memory takes, deduplicated or not before.
func (s *db) insertMemoryTx(ctx context.Context, tx *txn, m *memory.Memory, actor memory.Actor, reason string) (memory.WriteResult, error) {
	owner := m.Owner()
	if err := s.checkCapTx(ctx, tx, owner, 1); err != nil {
		return memory.WriteResult{}, err
	}
	meta := decisionMeta(m)
	row := tx.QueryRowContext(ctx, insertMemorySQL(1), appendInsertArgs(nil, m, s.nowMillis())...)
	stored, err := scanMemory(row)
	if err != nil {
		return memory.WriteResult{}, fmt.Errorf("couldn't insert memory: %w", err)
	}
	if err := s.addHistory(ctx, tx, memory.HistoryEvent{MemoryID: stored.ID, ScopeKey: owner.Key(), Action: createAction(m),
		NewContent: stored.Content, NewOrigin: memory.OriginOf(stored), Version: 1, Actor: actor, Reason: reason, Metadata: meta}); err != nil {
		return memory.WriteResult{}, err
	}
	if err := s.linkMemoryTx(ctx, tx, stored); err != nil {
		return memory.WriteResult{}, err
	}
	return memory.WriteResult{Memory: stored, Created: true}, nil
}

// insertMemorySQL inserts rows new memories (version 1), taking the values of
// appendInsertArgs for each, and returns them.
func insertMemorySQL(rows int) string {
	return `INSERT INTO memories (scope, scope_key, guild_id, user_id, type, content,
		normalized, content_hash, confidence, importance, pinned, tags, source, author_id, author_name,
		channel_id, message_id, created_at, updated_at, subject_id, search_text, search_author, version) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1),", rows), ",") +
		` RETURNING ` + memoryColumns
}

// insertArgsPerRow is how many values appendInsertArgs adds for one memory.
const insertArgsPerRow = 22

// appendInsertArgs appends the insertMemorySQL values of m to args; a zero creation time
// is now, a zero update time the creation time.
func appendInsertArgs(args []any, m *memory.Memory, now int64) []any {
	created, updated := millis(m.CreatedAt), millis(m.UpdatedAt)
	if created == 0 {
		created = now
	}
	if updated == 0 {
		updated = created
	}
	return append(args, m.Scope, m.Owner().Key(), m.GuildID, m.UserID, m.Type, m.Content, m.Normalized, m.Hash,
		m.Confidence, m.Importance, boolInt(m.Pinned), encodeTags(m.Tags), m.Source, m.Provenance.AuthorID,
		m.Provenance.Author, m.Provenance.ChannelID, m.Provenance.MessageID, created, updated, m.SubjectID,
		storedSearchText(m.Content), storedSearchText(m.Provenance.Author))
}

// createAction is the history action of a memory's creation.
func createAction(m *memory.Memory) memory.Action {
	if m.Source == memory.SourceImport {
		return memory.ActionImport
	}
	return memory.ActionCreate
}

// findLiveByHash returns the oldest live memory of the scope holding hash, whoever may see
// it: the dedup of writers without a place (see WriteContext for those with one). It reads
// one entry of memories_live_hash (0010_live_hash_order.sql), planned anew each time
// (planNow), however large the scope.
func findLiveByHash(ctx context.Context, q querier, scopeKey, hash string) (*memory.Memory, error) {
	m, err := scanMemory(q.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE scope_key = ? AND content_hash = ? AND deleted_at IS NULL ORDER BY id LIMIT 1`, planNow, scopeKey, hash))
	if errNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't look up duplicate: %w", err)
	}
	return m, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func findMemory(ctx context.Context, q querier, owner memory.Owner, id int64, includeDeleted bool) (*memory.Memory, error) {
	query := `SELECT ` + memoryColumns + ` FROM memories WHERE id = ? AND scope_key = ?`
	if !includeDeleted {
		query += ` AND deleted_at IS NULL`
	}
	m, err := scanMemory(q.QueryRowContext(ctx, query, id, owner.Key()))
	if errNoRows(err) {
		return nil, memory.Errorf(memory.ENOTFOUND, "There is no memory #%d in %s.", id, describeOwner(owner))
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't read memory %d: %w", id, err)
	}
	return m, nil
}

func describeOwner(o memory.Owner) string {
	if o.Scope == memory.ScopePersonal {
		return "your personal memory"
	}
	return "this server's memory"
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

func (s *db) modifyTx(ctx context.Context, tx *txn, w *memory.WriteContext, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error) {
	if err := lockKey(ctx, tx, owner.Key()); err != nil {
		return nil, err
	}
	cur, err := findMemory(ctx, tx, owner, id, false)
	if err != nil {
		return nil, err
	}
	if ch.IfVersion != 0 && ch.IfVersion != cur.Version {
		return nil, memory.Errorf(memory.ECONFLICT, "Memory #%d changed since you looked (now version %d, you had %d); look again and retry.", id, cur.Version, ch.IfVersion)
	}
	next := *cur
	if ch.Content != nil {
		next.Content = *ch.Content
	}
	if ch.Type != nil {
		next.Type = *ch.Type
	}
	if ch.Importance != nil {
		next.Importance = *ch.Importance
	}
	if ch.Pinned != nil {
		next.Pinned = *ch.Pinned
	}
	if ch.Tags != nil {
		next.Tags = *ch.Tags
	}
	if ch.ChannelID != nil {
		next.Provenance.ChannelID = *ch.ChannelID
	}
	if ch.GuildID != nil {
		if cur.Scope != memory.ScopePersonal {
			return nil, memory.Errorf(memory.EINVALID, "Memory #%d is server memory and stays in its server.", id)
		}
		next.GuildID = *ch.GuildID
	}
	if err := next.Prepare(); err != nil {
		return nil, err
	}
	if next.Hash != cur.Hash {
		dup, err := findDuplicateTx(ctx, tx, w, owner.Key(), next.Hash)
		if err != nil {
			return nil, err
		}
		if dup != nil {
			return nil, memory.Errorf(memory.ECONFLICT, "That is already remembered as #%d.", dup.ID)
		}
	}
	now := s.nowMillis()
	row := tx.QueryRowContext(ctx, `UPDATE memories SET content = ?, normalized = ?, content_hash = ?, search_text = ?,
		type = ?, importance = ?, pinned = ?, tags = ?, channel_id = ?, guild_id = ?, updated_at = ?, version = version + 1
		WHERE id = ? AND scope_key = ? AND deleted_at IS NULL RETURNING `+memoryColumns,
		next.Content, next.Normalized, next.Hash, storedSearchText(next.Content), next.Type, next.Importance, boolInt(next.Pinned),
		encodeTags(next.Tags), next.Provenance.ChannelID, next.GuildID, now, id, owner.Key())
	updated, err := scanMemory(row)
	if err != nil {
		return nil, fmt.Errorf("couldn't update memory %d: %w", id, err)
	}
	if updated.Content != cur.Content {
		if err := s.relinkMemoryTx(ctx, tx, updated); err != nil {
			return nil, err
		}
	}
	meta := map[string]any{}
	if cur.Type != updated.Type {
		meta["type"] = []memory.Type{cur.Type, updated.Type}
	}
	if cur.Pinned != updated.Pinned {
		meta["pinned"] = updated.Pinned
	}
	if cur.Importance != updated.Importance {
		meta["importance"] = []float64{cur.Importance, updated.Importance}
	}
	if cur.Provenance.ChannelID != updated.Provenance.ChannelID {
		meta["channel_id"] = []string{cur.Provenance.ChannelID, updated.Provenance.ChannelID}
	}
	if cur.GuildID != updated.GuildID {
		meta["guild_id"] = []string{cur.GuildID, updated.GuildID}
	}
	if !slices.Equal(cur.Tags, updated.Tags) {
		// Kept so that an undo can put the old tags back.
		meta["tags"] = [][]string{nonNilTags(cur.Tags), nonNilTags(updated.Tags)}
	}
	if err := s.addHistory(ctx, tx, memory.HistoryEvent{MemoryID: id, ScopeKey: owner.Key(), Action: memory.ActionUpdate,
		OldContent: cur.Content, NewContent: updated.Content, OldOrigin: memory.OriginOf(cur), NewOrigin: memory.OriginOf(updated),
		Version: updated.Version, Actor: actor, Reason: ch.Reason, Metadata: mustJSON(meta)}); err != nil {
		return nil, err
	}
	return updated, nil
}

func (s *db) forgetTx(ctx context.Context, tx *txn, owner memory.Owner, ids []int64, actor memory.Actor, reason string) ([]*memory.Memory, error) {
	now := s.nowMillis()
	seen := make(map[int64]bool, len(ids))
	var out []*memory.Memory
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		cur, err := findMemory(ctx, tx, owner, id, false)
		if err != nil {
			return nil, err
		}
		row := tx.QueryRowContext(ctx, `UPDATE memories SET deleted_at = ?, updated_at = ?, version = version + 1
			WHERE id = ? AND scope_key = ? AND deleted_at IS NULL RETURNING `+memoryColumns, now, now, id, owner.Key())
		m, err := scanMemory(row)
		if err != nil {
			return nil, fmt.Errorf("couldn't forget memory %d: %w", id, err)
		}
		if err := s.addHistory(ctx, tx, memory.HistoryEvent{MemoryID: id, ScopeKey: owner.Key(), Action: memory.ActionDelete,
			OldContent: cur.Content, OldOrigin: memory.OriginOf(cur), Version: m.Version, Actor: actor, Reason: reason}); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// nonNilTags makes a memory without tags record [] rather than null, so the old tags of
// an edit read back as "none" and not as "not recorded".
func nonNilTags(tags []string) []string {
	if tags == nil {
		return []string{}
	}
	return tags
}
