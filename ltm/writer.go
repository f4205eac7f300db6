package ltm

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/kioku-bot/kioku/memory"
)

// RememberAs is Remember for a writer in a place: m is deduplicated only against the live
// memories of its scope that w can see (WriteContext.CanSee); when there is none, a fresh
// row is inserted even if an identical memory the writer cannot see exists. evidence, when
// given, links the memory (new or existing) to the messages it was taken from.
func (s *Memories) RememberAs(ctx context.Context, w memory.WriteContext, m memory.Memory, actor memory.Actor, evidence ...memory.MessageRef) (memory.WriteResult, error) {
	if err := m.Prepare(); err != nil {
		return memory.WriteResult{}, err
	}
	var res memory.WriteResult
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		if err := s.db.eng.LockKey(ctx, tx, m.Owner().Key()); err != nil {
			return err
		}
		dup, err := findVisibleByHash(ctx, s.db.stmts.on(tx), w, m.Owner().Key(), m.Hash)
		if err != nil {
			return err
		}
		if dup != nil {
			res = memory.WriteResult{Memory: dup}
		} else if res, err = s.db.writes.insertMemoryTx(ctx, tx, &m, actor, ""); err != nil {
			return err
		}
		return addEvidenceTx(ctx, tx, res.Memory.ID, evidence)
	})
	if err != nil {
		return memory.WriteResult{}, err
	}
	if res.Created {
		s.db.written(ctx, []*memory.Memory{res.Memory}, nil)
	}
	return res, nil
}

// written brings what this process keeps of memories beside the database up to date with a
// committed write: the vector index takes the memories it stored or changed and drops those
// it forgot, then the engine is told (Engine.Written).
func (s *db) written(ctx context.Context, changed, removed []*memory.Memory) {
	s.vectors.indexMemories(ctx, changed...)
	for _, m := range removed {
		s.vectors.unindexMemory(m)
	}
	s.eng.Written(ctx, changed, removed)
}

// findVisibleByHash returns the oldest live memory of scopeKey with the hash that w can see
// there, or nil. It always reads every same-hash row and the writer's settings, so that
// the statements a write runs do not depend on what it may not see. Like findLiveByHash it
// reads the live hash index.
func findVisibleByHash(ctx context.Context, q querier, w memory.WriteContext, scopeKey, hash string) (*memory.Memory, error) {
	cross, err := crossServerOf(ctx, q, w.WriterID)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE scope_key = ? AND content_hash = ? AND deleted_at IS NULL ORDER BY id`, scopeKey, hash)
	if err != nil {
		return nil, fmt.Errorf("couldn't look up duplicate: %w", err)
	}
	same, err := collectMemories(rows)
	if err != nil {
		return nil, err
	}
	for _, m := range same {
		if w.CanSee(m, cross) {
			return m, nil
		}
	}
	return nil, nil
}

const crossServerSQL = `SELECT cross_server FROM user_settings WHERE user_id = ?`

// crossServerOf reads a user's cross-server opt-in; a user without settings has it off.
func crossServerOf(ctx context.Context, q querier, userID string) (bool, error) {
	var cross int
	err := q.QueryRowContext(ctx, crossServerSQL, userID).Scan(&cross)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("couldn't read settings of user %s: %w", userID, err)
	}
	return cross != 0, nil
}

// addEvidenceTx links memory id to the messages it was taken from; links that exist
// already are kept.
func addEvidenceTx(ctx context.Context, tx *txn, id int64, evidence []memory.MessageRef) error {
	for _, ev := range evidence {
		if ev.MessageID == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO memory_evidence (memory_id, message_id, user_id) VALUES (?, ?, ?)
			ON CONFLICT (memory_id, message_id) DO NOTHING`, id, ev.MessageID, ev.AuthorID); err != nil {
			return fmt.Errorf("couldn't record the source of memory %d: %w", id, err)
		}
	}
	return nil
}

// Evidence returns the messages memory id was learned from, as recorded.
func (s *Memories) Evidence(ctx context.Context, id int64) ([]memory.MessageRef, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT message_id, user_id FROM memory_evidence WHERE memory_id = ? ORDER BY message_id`, id)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the sources of memory %d: %w", id, err)
	}
	defer rows.Close()
	var out []memory.MessageRef
	for rows.Next() {
		var ref memory.MessageRef
		if err := rows.Scan(&ref.MessageID, &ref.AuthorID); err != nil {
			return nil, fmt.Errorf("couldn't read the sources of memory %d: %w", id, err)
		}
		out = append(out, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read the sources of memory %d: %w", id, err)
	}
	return out, nil
}

// ModifyAs is Modify for a writer in a place: the content it sets conflicts only with a
// memory the writer can see; an identical memory it cannot see does not stop the change.
func (s *Memories) ModifyAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error) {
	return s.modify(ctx, &w, owner, id, ch, actor)
}

// RecoverAs is Recover for a writer in a place: only a live memory the writer can see
// holding the same content stops the recovery.
func (s *Memories) RecoverAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, ifVersion int, actor memory.Actor) (*memory.Memory, error) {
	return s.recover(ctx, &w, owner, id, ifVersion, actor)
}

// findDuplicateTx finds the live memory of scopeKey holding hash that blocks a change:
// any such memory when w is nil (writers without a place), else one w can see.
func findDuplicateTx(ctx context.Context, q querier, w *memory.WriteContext, scopeKey, hash string) (*memory.Memory, error) {
	if w == nil {
		return findLiveByHash(ctx, q, scopeKey, hash)
	}
	return findVisibleByHash(ctx, q, *w, scopeKey, hash)
}

// PinnedVersion returns a counter of changes to the pinned memories of owner's scope: it
// moves whenever a pinned memory is added, changed, unpinned, forgotten or erased, by any
// path and any process (migration 0006 keeps it with triggers). A cache of pinned memories
// compares it before serving.
func (s *Memories) PinnedVersion(ctx context.Context, owner memory.Owner) (int64, error) {
	var v int64
	err := s.db.read.QueryRowContext(ctx, `SELECT version FROM pinned_changes WHERE scope_key = ?`, owner.Key()).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't read pinned memory version: %w", err)
	}
	return v, nil
}

// liveIDsByHash returns, for each scope and content of batch, the oldest live memory already
// holding it; with a writer w, the oldest one w can see. Like findVisibleByHash it reads the
// same rows whatever the writer may see.
func liveIDsByHash(ctx context.Context, tx *txn, w *memory.WriteContext, batch []memory.Memory) (map[hashSlot]int64, error) {
	var cross bool
	if w != nil {
		var err error
		if cross, err = crossServerOf(ctx, tx, w.WriterID); err != nil {
			return nil, err
		}
	}
	byScope := map[string][]any{}
	for i := range batch {
		k := batch[i].Owner().Key()
		byScope[k] = append(byScope[k], batch[i].Hash)
	}
	out := map[hashSlot]int64{}
	for key, hashes := range byScope {
		for lo := 0; lo < len(hashes); lo += 500 {
			part := hashes[lo:min(lo+500, len(hashes))]
			// No ORDER BY: with one, SQLite walks the scope's whole live index in id order
			// (memories_scope_live) instead of seeking each hash (memories_hash_live), which
			// made a bulk write's dedup cost grow with the scope. Oldest first is restored here.
			rows, err := tx.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories
				WHERE scope_key = ? AND deleted_at IS NULL AND content_hash IN (`+placeholders(len(part))+`)`,
				append([]any{key}, part...)...)
			if err != nil {
				return nil, fmt.Errorf("couldn't look up duplicates: %w", err)
			}
			mems, err := collectMemories(rows)
			if err != nil {
				return nil, err
			}
			slices.SortFunc(mems, func(a, b *memory.Memory) int { return cmp.Compare(a.ID, b.ID) })
			for _, m := range mems {
				slot := hashSlot{key, m.Hash}
				if _, found := out[slot]; !found && (w == nil || w.CanSee(m, cross)) {
					out[slot] = m.ID
				}
			}
		}
	}
	return out, nil
}
