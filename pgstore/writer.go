package pgstore

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// What is left of the writer paths (ltm's writer.go) is the duplicate check that modifyTx
// and rememberTx make here, and the cross-server setting transfer reads; they go when
// their callers fold.

// findVisibleByHash returns the oldest live memory of scopeKey with the hash that w can see
// there, or nil. It always reads every same-hash row and the writer's settings, so that
// the statements a write runs do not depend on what it may not see. Like findLiveByHash it
// is planned anew each time (planNow).
func findVisibleByHash(ctx context.Context, q querier, w memory.WriteContext, scopeKey, hash string) (*memory.Memory, error) {
	cross, err := crossServerOf(ctx, q, w.WriterID)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE scope_key = ? AND content_hash = ? AND deleted_at IS NULL ORDER BY id`, planNow, scopeKey, hash)
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

// crossServerOf reads a user's cross-server opt-in; a user without settings has it off.
func crossServerOf(ctx context.Context, q querier, userID string) (bool, error) {
	var cross int
	err := q.QueryRowContext(ctx, `SELECT cross_server FROM user_settings WHERE user_id = ?`, userID).Scan(&cross)
	if errNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("couldn't read settings of user %s: %w", userID, err)
	}
	return cross != 0, nil
}

// findDuplicateTx finds the live memory of scopeKey holding hash that blocks a change:
// any such memory when w is nil (writers without a place), else one w can see.
func findDuplicateTx(ctx context.Context, q querier, w *memory.WriteContext, scopeKey, hash string) (*memory.Memory, error) {
	if w == nil {
		return findLiveByHash(ctx, q, scopeKey, hash)
	}
	return findVisibleByHash(ctx, q, *w, scopeKey, hash)
}
