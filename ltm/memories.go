package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kioku-bot/kioku/memory"
)

// memoryColumns is the column list scanMemory expects, in order.
const memoryColumns = `id, scope, guild_id, user_id, type, content, normalized, content_hash, confidence,
	importance, pinned, tags, source, author_id, author_name, channel_id, message_id, created_at,
	updated_at, accessed_at, access_count, version, deleted_at, subject_id, refers_to, refers_to_end, state, state_ref`

// memoryWriter is the store's handle on the write path inside a transaction: inserting,
// changing, forgetting and recovering memories with their history, the owners' caps and
// the memories' graph links. It is the same db (db.writes), split out so each part of the
// handle stays small.
type memoryWriter struct{ *db }

type scanner interface{ Scan(dest ...any) error }

func scanMemory(row scanner) (*memory.Memory, error) {
	var (
		m                              memory.Memory
		tags                           string
		created, updated, accessed     int64
		deleted, refersTo, refersToEnd sql.NullInt64
		pinned                         int
	)
	err := row.Scan(&m.ID, &m.Scope, &m.GuildID, &m.UserID, &m.Type, &m.Content, &m.Normalized, &m.Hash,
		&m.Confidence, &m.Importance, &pinned, &tags, &m.Source, &m.Provenance.AuthorID, &m.Provenance.Author,
		&m.Provenance.ChannelID, &m.Provenance.MessageID, &created, &updated, &accessed, &m.AccessCount,
		&m.Version, &deleted, &m.SubjectID, &refersTo, &refersToEnd, &m.State, &m.StateRef)
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
	m.RefersTo, m.RefersToEnd = spanOf(refersTo, refersToEnd)
	return &m, nil
}

func encodeTags(tags []string) string {
	if len(tags) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(tags) // []string always marshals
	return string(b)
}

// Remember stores m (raw-first: the row exists before any embedding work) and returns it
// with its id. A memory whose normalized content already exists live in the same scope is
// not duplicated: the existing memory is returned with Created false.
func (s *Memories) Remember(ctx context.Context, m memory.Memory, actor memory.Actor) (memory.WriteResult, error) {
	if err := m.Prepare(); err != nil {
		return memory.WriteResult{}, err
	}
	var res memory.WriteResult
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		var err error
		res, err = s.db.writes.rememberTx(ctx, tx, &m, actor, "")
		return err
	})
	if err != nil {
		return memory.WriteResult{}, err
	}
	if res.Created {
		s.db.written(ctx, []*memory.Memory{res.Memory}, nil)
	}
	return res, nil
}

// rememberTx inserts a prepared memory unless its hash is live in the scope already.
func (s memoryWriter) rememberTx(ctx context.Context, tx *txn, m *memory.Memory, actor memory.Actor, reason string) (memory.WriteResult, error) {
	owner := m.Owner()
	if err := s.eng.LockKey(ctx, tx, owner.Key()); err != nil {
		return memory.WriteResult{}, err
	}
	existing, err := findLiveByHash(ctx, s.stmts.on(tx), owner.Key(), m.Hash)
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
func (s memoryWriter) insertMemoryTx(ctx context.Context, tx *txn, m *memory.Memory, actor memory.Actor, reason string) (memory.WriteResult, error) {
	owner := m.Owner()
	q := s.stmts.on(tx)
	if err := s.checkCapTx(ctx, q, owner, 1); err != nil {
		return memory.WriteResult{}, err
	}
	meta := decisionMeta(m)
	insert := insertMemorySQL(1)
	if d, ok := s.eng.(DeferredIndexing); ok && d.DeferIndexing() {
		insert = insertPendingMemorySQL
	}
	row := q.QueryRowContext(ctx, insert, s.appendInsertArgs(nil, m, s.nowMillis())...)
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
	if err := s.markWordsTx(ctx, tx, stored.ID); err != nil {
		return memory.WriteResult{}, err
	}
	return memory.WriteResult{Memory: stored, Created: true}, nil
}

// insertMemorySQL inserts rows new memories (version 1), taking the values of
// appendInsertArgs for each, and returns them.
func insertMemorySQL(rows int) string { return insertMemoriesSQL(rows, false) }

// insertPendingMemorySQL is insertMemorySQL(1) for a memory the full-text indexes take a
// moment later, with others (DeferredIndexing).
var insertPendingMemorySQL = insertMemoriesSQL(1, true)

// insertMemoriesSQL leaves index_pending to its default (indexed at once) unless pending:
// only an engine with DeferredIndexing (SQLite's) has the column.
func insertMemoriesSQL(rows int, pending bool) string {
	cols, vals := "", ""
	if pending {
		cols, vals = ", index_pending", ", 1"
	}
	return `INSERT INTO memories (scope, scope_key, guild_id, user_id, type, content,
		normalized, content_hash, confidence, importance, pinned, tags, source, author_id, author_name,
		channel_id, message_id, created_at, updated_at, subject_id, search_text, search_author, refers_to, refers_to_end,
		version` + cols + `) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1"+vals+"),", rows), ",") +
		` RETURNING ` + memoryColumns
}

// insertArgsPerRow is how many values appendInsertArgs adds for one memory.
const insertArgsPerRow = 24

// appendInsertArgs appends the insertMemorySQL values of m to args; a zero creation time
// is now, a zero update time the creation time. The span the content names is computed
// here, against the creation time stored, whatever m.RefersTo says: every new memory,
// single or bulk, takes this path.
func (s memoryWriter) appendInsertArgs(args []any, m *memory.Memory, now int64) []any {
	created, updated := millis(m.CreatedAt), millis(m.UpdatedAt)
	if created == 0 {
		created = now
	}
	if updated == 0 {
		updated = created
	}
	refersTo, refersToEnd := spanColumns(referredSpan(m.Content, created))
	return append(args, m.Scope, m.Owner().Key(), m.GuildID, m.UserID, m.Type, m.Content, m.Normalized, m.Hash,
		m.Confidence, m.Importance, boolInt(m.Pinned), encodeTags(m.Tags), m.Source, m.Provenance.AuthorID,
		m.Provenance.Author, m.Provenance.ChannelID, m.Provenance.MessageID, created, updated, m.SubjectID,
		s.dialect.searchTextColumn(m.Content), s.dialect.searchTextColumn(m.Provenance.Author), refersTo, refersToEnd)
}

// createAction is the history action of a memory's creation.
func createAction(m *memory.Memory) memory.Action {
	if m.Source == memory.SourceImport {
		return memory.ActionImport
	}
	return memory.ActionCreate
}

const findLiveByHashSQL = `SELECT ` + memoryColumns + ` FROM memories
	WHERE scope_key = ? AND content_hash = ? AND deleted_at IS NULL ORDER BY id LIMIT 1`

// findLiveByHash returns the oldest live memory of the scope holding hash, whoever may see
// it: the dedup of writers without a place (see WriteContext for those with one). It reads
// one entry of the live hash index (scope, hash, id), however large the scope.
func findLiveByHash(ctx context.Context, q querier, scopeKey, hash string) (*memory.Memory, error) {
	m, err := scanMemory(q.QueryRowContext(ctx, findLiveByHashSQL, scopeKey, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't look up duplicate: %w", err)
	}
	return m, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Get returns the live memory id in owner's scope. Memories of other scopes and forgotten
// memories are reported as not found, so ids reveal nothing across scopes.
func (s *Memories) Get(ctx context.Context, owner memory.Owner, id int64) (*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	return findMemory(ctx, s.db.read, owner, id, false)
}

func findMemory(ctx context.Context, q querier, owner memory.Owner, id int64, includeDeleted bool) (*memory.Memory, error) {
	query := `SELECT ` + memoryColumns + ` FROM memories WHERE id = ? AND scope_key = ?`
	if !includeDeleted {
		query += ` AND deleted_at IS NULL`
	}
	m, err := scanMemory(q.QueryRowContext(ctx, query, id, owner.Key()))
	if errors.Is(err, sql.ErrNoRows) {
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

// Modify applies ch to the live memory id in owner's scope, bumps its version and records
// the old and new content in history.
func (s *Memories) Modify(ctx context.Context, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error) {
	return s.modify(ctx, nil, owner, id, ch, actor)
}

// modify is Modify and ModifyAs: w, when not nil, limits the duplicate check to what the
// writer can see.
func (s *Memories) modify(ctx context.Context, w *memory.WriteContext, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	var updated *memory.Memory
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		var err error
		updated, err = s.db.writes.modifyTx(ctx, tx, w, owner, id, ch, actor)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.db.written(ctx, []*memory.Memory{updated}, nil)
	return updated, nil
}

func (s memoryWriter) modifyTx(ctx context.Context, tx *txn, w *memory.WriteContext, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error) {
	if err := s.eng.LockKey(ctx, tx, owner.Key()); err != nil {
		return nil, err
	}
	cur, err := findMemory(ctx, tx, owner, id, false)
	if err != nil {
		return nil, err
	}
	if ch.IfVersion != 0 && ch.IfVersion != cur.Version {
		// ErrChangedSince in the chain lets a caller tell a stale view from a duplicate.
		return nil, fmt.Errorf("%w: %w", memory.ErrChangedSince, memory.Errorf(memory.ECONFLICT,
			"Memory #%d changed since you looked (now version %d, you had %d); look again and retry.", id, cur.Version, ch.IfVersion))
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
	if ch.State != nil {
		if err := s.checkStateTx(ctx, tx, cur, *ch.State, ch.StateRef); err != nil {
			return nil, err
		}
		next.State, next.StateRef = *ch.State, ch.StateRef
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
	// The span is recomputed against when the memory was first said: an edit corrects the
	// words, it does not move the day they were said on.
	refersTo, refersToEnd := spanColumns(referredSpan(next.Content, millis(cur.CreatedAt)))
	row := tx.QueryRowContext(ctx, `UPDATE memories SET content = ?, normalized = ?, content_hash = ?, search_text = ?,
		type = ?, importance = ?, pinned = ?, tags = ?, channel_id = ?, guild_id = ?, refers_to = ?, refers_to_end = ?,
		state = ?, state_ref = ?, updated_at = ?, version = version + 1
		WHERE id = ? AND scope_key = ? AND deleted_at IS NULL RETURNING `+memoryColumns,
		next.Content, next.Normalized, next.Hash, s.dialect.SearchText(next.Content), next.Type, next.Importance, boolInt(next.Pinned),
		encodeTags(next.Tags), next.Provenance.ChannelID, next.GuildID, refersTo, refersToEnd, next.State, next.StateRef,
		now, id, owner.Key())
	updated, err := scanMemory(row)
	if err != nil {
		return nil, fmt.Errorf("couldn't update memory %d: %w", id, err)
	}
	if updated.Content != cur.Content {
		if err := s.relinkMemoryTx(ctx, tx, updated); err != nil {
			return nil, err
		}
	}
	if updated.Content != cur.Content || bucketOf(updated) != bucketOf(cur) {
		if err := s.markWordsTx(ctx, tx, id); err != nil {
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
	if cur.State != updated.State || cur.StateRef != updated.StateRef {
		// Kept so that an undo can put the old state back.
		meta["state"] = []memory.State{cur.State, updated.State}
		meta["state_ref"] = []int64{cur.StateRef, updated.StateRef}
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

// Forget soft-deletes the given live memories of owner's scope. It is all or nothing: if any
// id is not a live memory of the scope, nothing changes and the error names it.
func (s *Memories) Forget(ctx context.Context, owner memory.Owner, ids []int64, actor memory.Actor, reason string) ([]*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, memory.Errorf(memory.EINVALID, "Name at least one memory to forget.")
	}
	var forgotten []*memory.Memory
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		var err error
		forgotten, err = s.db.writes.forgetTx(ctx, tx, owner, ids, actor, reason)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.db.written(ctx, nil, forgotten)
	return forgotten, nil
}

// ForgetAt is Forget of memories each still at the version a person saw (versions maps id
// to version): all or nothing, and when any changed since it forgets none and its error
// (ECONFLICT) holds memory.ErrChangedSince.
func (s *Memories) ForgetAt(ctx context.Context, owner memory.Owner, versions map[int64]int, actor memory.Actor, reason string) ([]*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	if len(versions) == 0 {
		return nil, memory.Errorf(memory.EINVALID, "Name at least one memory to forget.")
	}
	ids := slices.Sorted(maps.Keys(versions))
	var forgotten []*memory.Memory
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		// Edits of the scope take the same lock (modifyTx), so no version moves between
		// this check and the forget.
		if err := s.db.eng.LockKey(ctx, tx, owner.Key()); err != nil {
			return err
		}
		for _, id := range ids {
			cur, err := findMemory(ctx, tx, owner, id, false)
			if err != nil {
				return err
			}
			if cur.Version != versions[id] {
				return fmt.Errorf("%w: %w", memory.ErrChangedSince, memory.Errorf(memory.ECONFLICT,
					"Memory #%d changed since you looked (now version %d, you had %d).", id, cur.Version, versions[id]))
			}
		}
		var err error
		forgotten, err = s.db.writes.forgetTx(ctx, tx, owner, ids, actor, reason)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.db.written(ctx, nil, forgotten)
	return forgotten, nil
}

func (s memoryWriter) forgetTx(ctx context.Context, tx *txn, owner memory.Owner, ids []int64, actor memory.Actor, reason string) ([]*memory.Memory, error) {
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
	forgotten := make([]int64, len(out))
	for i, m := range out {
		forgotten[i] = m.ID
	}
	if err := s.markWordsTx(ctx, tx, forgotten...); err != nil {
		return nil, err
	}
	return out, nil
}

// Recover restores a forgotten memory of owner's scope. It fails with ENOTDELETED when the
// memory is live, EEXPIRED when the recover window has passed, and ECONFLICT when ifVersion
// is stale or the same content has been remembered again since.
func (s *Memories) Recover(ctx context.Context, owner memory.Owner, id int64, ifVersion int, actor memory.Actor) (*memory.Memory, error) {
	return s.recover(ctx, nil, owner, id, ifVersion, actor)
}

func (s *Memories) recover(ctx context.Context, w *memory.WriteContext, owner memory.Owner, id int64, ifVersion int, actor memory.Actor) (*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	var restored *memory.Memory
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		var err error
		restored, err = s.db.writes.recoverTx(ctx, tx, w, owner, id, ifVersion, actor, "")
		return err
	})
	if err != nil {
		return nil, err
	}
	s.db.written(ctx, []*memory.Memory{restored}, nil)
	return restored, nil
}

// recoverTx brings back the forgotten memory id of owner's scope inside tx, recording
// reason in its history row.
func (s memoryWriter) recoverTx(ctx context.Context, tx *txn, w *memory.WriteContext, owner memory.Owner, id int64, ifVersion int, actor memory.Actor, reason string) (*memory.Memory, error) {
	if err := s.eng.LockKey(ctx, tx, owner.Key()); err != nil {
		return nil, err
	}
	cur, err := findMemory(ctx, tx, owner, id, true)
	if err != nil {
		return nil, err
	}
	if !cur.Deleted() {
		return nil, memory.Errorf(memory.ENOTDELETED, "Memory #%d is not forgotten, so there is nothing to recover.", id)
	}
	if s.Now().Sub(cur.DeletedAt) > s.RecoverWindow {
		return nil, memory.Errorf(memory.EEXPIRED, "Memory #%d was forgotten on %s, longer ago than the %d-day recover window.",
			id, cur.DeletedAt.Format("2006-01-02"), int(s.RecoverWindow.Hours()/24))
	}
	if ifVersion != 0 && ifVersion != cur.Version {
		return nil, memory.Errorf(memory.ECONFLICT, "Memory #%d changed since you looked (now version %d, you had %d).", id, cur.Version, ifVersion)
	}
	dup, err := findDuplicateTx(ctx, tx, w, owner.Key(), cur.Hash)
	if err != nil {
		return nil, err
	}
	if dup != nil {
		return nil, memory.Errorf(memory.ECONFLICT, "The same memory exists again as #%d.", dup.ID)
	}
	if err := s.checkCapTx(ctx, tx, owner, 1); err != nil {
		return nil, err
	}
	now := s.nowMillis()
	restored, err := scanMemory(tx.QueryRowContext(ctx, `UPDATE memories SET deleted_at = NULL, updated_at = ?,
		version = version + 1 WHERE id = ? AND scope_key = ? RETURNING `+memoryColumns, now, id, owner.Key()))
	if err != nil {
		return nil, fmt.Errorf("couldn't recover memory %d: %w", id, err)
	}
	if err := s.markWordsTx(ctx, tx, id); err != nil {
		return nil, err
	}
	if err := s.addHistory(ctx, tx, memory.HistoryEvent{MemoryID: id, ScopeKey: owner.Key(), Action: memory.ActionRecover,
		NewContent: restored.Content, NewOrigin: memory.OriginOf(restored), Version: restored.Version, Actor: actor, Reason: reason}); err != nil {
		return nil, err
	}
	return restored, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}
