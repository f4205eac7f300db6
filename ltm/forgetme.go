package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// ForgetMeSummary counts what the bot holds about a user.
type ForgetMeSummary struct {
	Token     string // set by PreviewForgetMe; ConfirmForgetMe needs it
	Memories  int    // personal memories, live and forgotten
	Turns     int    // transcript turns
	ExpiresAt time.Time
}

// PreviewForgetMe counts everything stored about userID and returns a single-use token.
func (s *Store) PreviewForgetMe(ctx context.Context, userID string) (ForgetMeSummary, error) {
	owner := memory.PersonalOwner(userID)
	if err := owner.Validate(); err != nil {
		return ForgetMeSummary{}, err
	}
	var sum ForgetMeSummary
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE scope_key = ?`, owner.Key()).Scan(&sum.Memories); err != nil {
		return sum, fmt.Errorf("couldn't count memories of user %s: %w", userID, err)
	}
	var err error
	if sum.Turns, err = s.CountTurns(ctx, userID); err != nil {
		return sum, err
	}
	sum.Token, sum.ExpiresAt, err = s.createConfirmation(ctx, owner, confirmForgetMe, userID, memory.UserActor(userID))
	return sum, err
}

// ConfirmForgetMe erases userID's personal memories (live and forgotten), their history
// content, unshared embeddings and the user's transcript turns, in one transaction. Unlike
// forget, this is immediate and not recoverable: the preview and confirmation are the
// safety net, and a person asking to be forgotten expects nothing to linger. One history
// row without content records that it happened.
func (s *Store) ConfirmForgetMe(ctx context.Context, userID, token string) (ForgetMeSummary, error) {
	owner := memory.PersonalOwner(userID)
	if err := owner.Validate(); err != nil {
		return ForgetMeSummary{}, err
	}
	var sum ForgetMeSummary
	var ids []int64
	err := s.withWriteTx(ctx, func(tx *sql.Tx) error {
		var who string
		if err := s.useConfirmation(ctx, tx, owner, confirmForgetMe, token, &who); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM memories WHERE scope_key = ?`, owner.Key())
		if err != nil {
			return fmt.Errorf("couldn't list memories of user %s: %w", userID, err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("couldn't list memories of user %s: %w", userID, err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		steps := []struct {
			query string
			count *int
		}{
			{`DELETE FROM memories WHERE scope_key = ?`, &sum.Memories},
			{`DELETE FROM memory_history WHERE scope_key = ?`, nil},
			{`DELETE FROM transcripts WHERE user_id = ?`, &sum.Turns},
			{`DELETE FROM confirmations WHERE scope_key = ? AND used_at IS NULL`, nil},
		}
		for i, st := range steps {
			arg := owner.Key()
			if i == 2 {
				arg = userID
			}
			res, err := tx.ExecContext(ctx, st.query, arg)
			if err != nil {
				return fmt.Errorf("couldn't erase data of user %s: %w", userID, err)
			}
			if st.count != nil {
				n, _ := res.RowsAffected()
				*st.count = int(n)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM embeddings WHERE content_hash NOT IN (SELECT content_hash FROM memories)`); err != nil {
			return fmt.Errorf("couldn't erase embeddings of user %s: %w", userID, err)
		}
		return s.addHistory(ctx, tx, memory.HistoryEvent{ScopeKey: owner.Key(), Action: memory.ActionPurge,
			Actor: memory.UserActor(userID), Reason: "forget me",
			Metadata: mustJSON(map[string]int{"memories": sum.Memories, "turns": sum.Turns})})
	})
	if err != nil {
		return ForgetMeSummary{}, err
	}
	for _, id := range ids {
		s.unindexMemory(&memory.Memory{ID: id, Scope: memory.ScopePersonal, UserID: userID})
	}
	return sum, nil
}
