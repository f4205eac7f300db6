package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

const addHistorySQL = `INSERT INTO memory_history (memory_id, scope_key, action, old_content,
	new_content, version, actor, reason, metadata, created_at, ` + historyOriginColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (s memoryWriter) addHistory(ctx context.Context, tx *txn, ev memory.HistoryEvent) error {
	if len(ev.Metadata) == 0 {
		ev.Metadata = []byte(`{}`)
	}
	// A refused proposal records the content it was refused for, which may be the very
	// credential it was refused over: history keeps the words, never the secret.
	ev.OldContent, ev.NewContent, ev.Reason = memory.RedactSecrets(ev.OldContent), memory.RedactSecrets(ev.NewContent), memory.RedactSecrets(ev.Reason)
	if _, found := memory.DetectSecret(string(ev.Metadata)); found {
		if redacted := memory.RedactSecrets(string(ev.Metadata)); json.Valid([]byte(redacted)) {
			ev.Metadata = []byte(redacted)
		} else {
			// A private key block without its footer runs to the end of the text, and
			// here that is the JSON's closing quote: the details go, the row stays.
			ev.Metadata = []byte(`{"redacted":true}`)
		}
	}
	var memoryID any
	if ev.MemoryID != 0 {
		memoryID = ev.MemoryID
	}
	args := []any{memoryID, ev.ScopeKey, ev.Action, ev.OldContent, ev.NewContent, ev.Version, ev.Actor, ev.Reason,
		string(ev.Metadata), s.nowMillis()}
	_, err := s.stmts.on(tx).ExecContext(ctx, addHistorySQL, append(args, OriginArgs(ev)...)...)
	if err != nil {
		return fmt.Errorf("couldn't record history: %w", err)
	}
	return nil
}

// RecordHistory writes one history row on its own, for proposals that change no memory
// (pipeline shadow, skipped and blocked decisions). ev.ScopeKey must be set.
func (s *Memories) RecordHistory(ctx context.Context, ev memory.HistoryEvent) error {
	if ev.ScopeKey == "" {
		return fmt.Errorf("couldn't record history: empty scope key")
	}
	return s.db.withWriteTx(ctx, func(tx *txn) error { return s.db.writes.addHistory(ctx, tx, ev) })
}

// History returns every history row of memory id in owner's scope, oldest first. It works
// for forgotten memories too, so people can see what was removed and recover it.
func (s *Memories) History(ctx context.Context, owner memory.Owner, id int64) ([]memory.HistoryEvent, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+historyColumns+` FROM memory_history
		WHERE memory_id = ? AND scope_key = ? ORDER BY id`, id, owner.Key())
	if err != nil {
		return nil, fmt.Errorf("couldn't read history of memory %d: %w", id, err)
	}
	events, err := collectHistory(rows)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, memory.Errorf(memory.ENOTFOUND, "There is no memory #%d in %s.", id, describeOwner(owner))
	}
	return events, nil
}

// ScopeHistory returns the newest history rows of a whole scope (limit at most 500),
// including proposals that touched no memory.
func (s *Memories) ScopeHistory(ctx context.Context, owner memory.Owner, limit int) ([]memory.HistoryEvent, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 500 {
		limit = 500
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+historyColumns+` FROM memory_history
		WHERE scope_key = ? ORDER BY id DESC LIMIT ?`, owner.Key(), limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't read history: %w", err)
	}
	return collectHistory(rows)
}

const historyColumns = `id, coalesce(memory_id, 0), scope_key, action, old_content, new_content, version, actor, reason, metadata, created_at, ` + historyOriginColumns

func collectHistory(rows *sql.Rows) ([]memory.HistoryEvent, error) {
	defer rows.Close()
	var out []memory.HistoryEvent
	for rows.Next() {
		var (
			ev      memory.HistoryEvent
			meta    string
			created int64
			origins OriginScan
		)
		dest := []any{&ev.ID, &ev.MemoryID, &ev.ScopeKey, &ev.Action, &ev.OldContent, &ev.NewContent,
			&ev.Version, &ev.Actor, &ev.Reason, &meta, &created}
		if err := rows.Scan(append(dest, origins.Targets()...)...); err != nil {
			return nil, fmt.Errorf("couldn't read history row: %w", err)
		}
		ev.Metadata = []byte(meta)
		ev.CreatedAt = fromMillis(created)
		origins.SetOn(&ev)
		out = append(out, ev)
	}
	return out, rows.Err()
}

// Revert restores the content a memory had before the update recorded in history row
// historyID, as a new versioned update (so the revert itself can be reverted). It is how
// an UPDATE made by the pipeline, or anyone, is undone; a DELETE is undone with Recover.
func (s *Memories) Revert(ctx context.Context, owner memory.Owner, id, historyID int64, actor memory.Actor) (*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	var restored *memory.Memory
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		var (
			action memory.Action
			old    string
		)
		err := tx.QueryRowContext(ctx, `SELECT action, old_content FROM memory_history WHERE id = ? AND memory_id = ?
			AND scope_key = ?`, historyID, id, owner.Key()).Scan(&action, &old)
		if errors.Is(err, sql.ErrNoRows) {
			return memory.Errorf(memory.ENOTFOUND, "Memory #%d has no history entry #%d in %s.", id, historyID, describeOwner(owner))
		}
		if err != nil {
			return fmt.Errorf("couldn't read history entry %d: %w", historyID, err)
		}
		if action != memory.ActionUpdate || old == "" {
			return memory.Errorf(memory.EINVALID, "History entry #%d is a %s, not an edit; only edits can be reverted (use recover for a forgotten memory).", historyID, action)
		}
		restored, err = s.db.writes.modifyTx(ctx, tx, nil, owner, id, memory.Change{Content: &old, Reason: fmt.Sprintf("revert of history #%d", historyID)}, actor)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.db.written(ctx, []*memory.Memory{restored}, nil)
	return restored, nil
}
