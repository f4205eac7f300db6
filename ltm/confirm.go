package ltm

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Confirmation kinds.
const (
	confirmForget   = "forget"
	confirmForgetMe = "forget_me"
)

// confirmPruneAfter is how long an expired confirmation stays, so that a late press reads
// "expired" rather than "not valid".
const confirmPruneAfter = time.Hour

// PreviewForget finds the memories of owner's scope that match query and returns them with
// a single-use token valid for ConfirmTTL. Nothing is deleted yet.
func (s *Confirmations) PreviewForget(ctx context.Context, owner memory.Owner, query string, actor memory.Actor, limit int) (memory.ForgetPreview, error) {
	return s.PreviewForgetWithin(ctx, owner, query, actor, limit, nil)
}

// PreviewForgetWithin is PreviewForget limited to the memories an audience allows: what
// the person asking cannot see, they can neither see in the preview nor forget with it.
func (s *Confirmations) PreviewForgetWithin(ctx context.Context, owner memory.Owner, query string, actor memory.Actor, limit int, aud *memory.Audience) (memory.ForgetPreview, error) {
	if err := owner.Validate(); err != nil {
		return memory.ForgetPreview{}, err
	}
	if limit <= 0 || limit > 25 {
		limit = 25
	}
	// A preview of what to forget is not a use of those memories: CountAccess stays false.
	results, err := s.recaller.Search(ctx, memory.SearchQuery{Text: query, Owners: []memory.Owner{owner}, Limit: limit, KeywordOnly: true, MatchesOnly: true, Audience: aud})
	if err != nil {
		return memory.ForgetPreview{}, err
	}
	if len(results) == 0 {
		return memory.ForgetPreview{}, memory.Errorf(memory.ENOTFOUND, "No memory in %s matches %q.", describeOwner(owner), query)
	}
	ids := make([]int64, len(results))
	matches := make([]*memory.Memory, len(results))
	for i, r := range results {
		ids[i], matches[i] = r.Memory.ID, r.Memory
	}
	token, expires, err := s.db.createConfirmation(ctx, owner, confirmForget, ids, actor)
	if err != nil {
		return memory.ForgetPreview{}, err
	}
	return memory.ForgetPreview{Token: token, Matches: matches, ExpiresAt: expires}, nil
}

// ConfirmForget executes a preview: it forgets the previewed memories that are still live.
// A token from another scope, an unknown, used or expired token deletes nothing.
func (s *Confirmations) ConfirmForget(ctx context.Context, owner memory.Owner, token string, actor memory.Actor) ([]*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	var forgotten []*memory.Memory
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		var ids []int64
		if err := s.db.useConfirmation(ctx, tx, owner, confirmForget, token, &ids); err != nil {
			return err
		}
		live := ids[:0]
		for _, id := range ids {
			if _, err := findMemory(ctx, tx, owner, id, false); err == nil {
				live = append(live, id)
			}
		}
		if len(live) == 0 {
			return nil
		}
		var err error
		forgotten, err = s.db.writes.forgetTx(ctx, tx, owner, live, actor, "forget by query")
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, m := range forgotten {
		s.db.vectors.unindexMemory(m)
	}
	return forgotten, nil
}

func (s *db) createConfirmation(ctx context.Context, owner memory.Owner, kind string, payload any, actor memory.Actor) (string, time.Time, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", time.Time{}, fmt.Errorf("couldn't create confirmation token: %w", err)
	}
	token := hex.EncodeToString(raw[:])
	expires := s.Now().Add(s.ConfirmTTL)
	body, err := json.Marshal(payload)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("couldn't encode confirmation: %w", err)
	}
	err = s.withWriteTx(ctx, func(tx *txn) error {
		// Expired confirmations are useless; clear them while we hold the lock anyway.
		if _, err := tx.ExecContext(ctx, `DELETE FROM confirmations WHERE expires_at < ?`, s.nowMillis()-confirmPruneAfter.Milliseconds()); err != nil {
			return fmt.Errorf("couldn't prune confirmations: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO confirmations (token, scope_key, kind, payload, actor, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, token, owner.Key(), kind, string(body), actor, expires.UnixMilli())
		if err != nil {
			return fmt.Errorf("couldn't store confirmation: %w", err)
		}
		return nil
	})
	return token, expires, err
}

func (s *db) useConfirmation(ctx context.Context, tx *txn, owner memory.Owner, kind, token string, payload any) error {
	var (
		body    string
		expires int64
		used    sql.NullInt64
	)
	// Locked until the transaction ends where writers run at once: the same token confirmed
	// twice together is used once.
	err := tx.QueryRowContext(ctx, `SELECT payload, expires_at, used_at FROM confirmations
		WHERE token = ? AND scope_key = ? AND kind = ?`+s.dialect.LockRow, token, owner.Key(), kind).Scan(&body, &expires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Errorf(memory.ENOTFOUND, "That confirmation is not valid here; run the command again.")
	}
	if err != nil {
		return fmt.Errorf("couldn't read confirmation: %w", err)
	}
	if used.Valid {
		return memory.Errorf(memory.ECONFLICT, "That confirmation was already used.")
	}
	if s.nowMillis() > expires {
		return memory.Errorf(memory.EEXPIRED, "That confirmation expired; run the command again.")
	}
	if _, err := tx.ExecContext(ctx, `UPDATE confirmations SET used_at = ? WHERE token = ?`, s.nowMillis(), token); err != nil {
		return fmt.Errorf("couldn't use confirmation: %w", err)
	}
	if err := json.Unmarshal([]byte(body), payload); err != nil {
		return fmt.Errorf("couldn't decode confirmation: %w", err)
	}
	return nil
}
