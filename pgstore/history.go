package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// History is the service's (ltm.Memories); addHistory stays for forget-me, repairs and the
// write paths kept in memories.go, and goes when they fold.

func (s *db) addHistory(ctx context.Context, tx *txn, ev memory.HistoryEvent) error {
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
	_, err := tx.ExecContext(ctx, `INSERT INTO memory_history (memory_id, scope_key, action, old_content,
		new_content, version, actor, reason, metadata, created_at, `+ltm.HistoryOriginColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, append(args, ltm.OriginArgs(ev)...)...)
	if err != nil {
		return fmt.Errorf("couldn't record history: %w", err)
	}
	return nil
}
