package ltm

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Sessions are the web dashboard's sign-ins and signed-in browsers (memory.WebSession,
// memory.WebLogin). They live in the database, so any process on it serves any browser, and
// hold hashes of the secrets browsers carry, never the secrets. Forget-me deletes a member's
// sessions with the rest of their data. Rows past their expiry are deleted by the next
// sign-in. See Store.Sessions.
type Sessions struct{ db *db }

// errNoSession is what every refused lookup answers: unknown, expired, revoked or taken by
// another browser read the same.
func errNoSession() error {
	return memory.Errorf(memory.ENOTFOUND, "There is no such session; sign in again.")
}

// StartLogin records a sign-in under way, valid for ttl from the store's clock, and deletes
// the sign-ins that expired.
func (s *Sessions) StartLogin(ctx context.Context, l memory.WebLogin, ttl time.Duration) error {
	if l.StateHash == "" || l.BrowserHash == "" || l.Verifier == "" || ttl <= 0 {
		return memory.Errorf(memory.EINVALID, "A sign-in needs a state, a browser and a verifier.")
	}
	now := s.db.nowMillis()
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_logins WHERE expires_at <= ?`, now); err != nil {
			return fmt.Errorf("couldn't delete expired sign-ins: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO web_logins (state_hash, browser_hash, verifier, expires_at) VALUES (?, ?, ?, ?)`,
			l.StateHash, l.BrowserHash, l.Verifier, now+ttl.Milliseconds()); err != nil {
			return fmt.Errorf("couldn't record a sign-in: %w", err)
		}
		return nil
	})
}

// TakeLogin returns the sign-in whose state hashes to stateHash and deletes it, so a state
// completes at most one sign-in. It is ENOTFOUND when there is none, when it expired, and
// when browserHash is not the browser that started it (the sign-in is spent all the same:
// a state presented by another browser was leaked).
func (s *Sessions) TakeLogin(ctx context.Context, stateHash, browserHash string) (memory.WebLogin, error) {
	var (
		l     memory.WebLogin
		taken bool
	)
	now := s.db.nowMillis()
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		l, taken = memory.WebLogin{}, false
		var expires int64
		err := tx.QueryRowContext(ctx, `SELECT browser_hash, verifier, expires_at FROM web_logins WHERE state_hash = ?`,
			stateHash).Scan(&l.BrowserHash, &l.Verifier, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("couldn't read a sign-in: %w", err)
		}
		// Where writers run at once (PostgreSQL), two requests may read the same row: only
		// the one whose delete takes it completes the sign-in.
		n, err := execCount(ctx, tx, `DELETE FROM web_logins WHERE state_hash = ?`, stateHash)
		if err != nil {
			return fmt.Errorf("couldn't take a sign-in: %w", err)
		}
		taken = n == 1 && expires > now && subtle.ConstantTimeCompare([]byte(l.BrowserHash), []byte(browserHash)) == 1
		l.StateHash, l.ExpiresAt = stateHash, fromMillis(expires)
		return nil
	})
	if err != nil {
		return memory.WebLogin{}, err
	}
	if !taken {
		return memory.WebLogin{}, errNoSession()
	}
	return l, nil
}

// Create stores a signed-in browser, valid for ttl from the store's clock, and returns it
// with its times; sessions that expired are deleted with it.
func (s *Sessions) Create(ctx context.Context, ws memory.WebSession, ttl time.Duration) (memory.WebSession, error) {
	if ws.TokenHash == "" || ws.UserID == "" || ws.CSRF == "" || ttl <= 0 {
		return memory.WebSession{}, memory.Errorf(memory.EINVALID, "A session needs a token, a member and a CSRF secret.")
	}
	if ws.GuildIDs == nil {
		ws.GuildIDs = []string{}
	}
	guilds, err := json.Marshal(ws.GuildIDs)
	if err != nil {
		return memory.WebSession{}, fmt.Errorf("couldn't encode the servers of a session: %w", err)
	}
	members, err := encodeMemberships(ws.Memberships)
	if err != nil {
		return memory.WebSession{}, err
	}
	now := s.db.nowMillis()
	checked := int64(0)
	if ws.Memberships != nil {
		checked = now
	}
	err = s.db.withWriteTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at <= ?`, now); err != nil {
			return fmt.Errorf("couldn't delete expired sessions: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO web_sessions (token_hash, user_id, guild_ids, csrf, created_at, last_seen_at, expires_at,
			memberships, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, ws.TokenHash, ws.UserID, string(guilds), ws.CSRF, now, now,
			now+ttl.Milliseconds(), members, checked); err != nil {
			return fmt.Errorf("couldn't create a session for user %s: %w", ws.UserID, err)
		}
		return nil
	})
	if err != nil {
		return memory.WebSession{}, err
	}
	ws.CreatedAt, ws.LastSeenAt, ws.ExpiresAt = fromMillis(now), fromMillis(now), fromMillis(now+ttl.Milliseconds())
	if checked != 0 {
		ws.CheckedAt = fromMillis(checked)
	}
	return ws, nil
}

// Lookup returns the live session whose token hashes to tokenHash: ENOTFOUND when there is
// none, it was revoked or it expired.
func (s *Sessions) Lookup(ctx context.Context, tokenHash string) (memory.WebSession, error) {
	ws := memory.WebSession{TokenHash: tokenHash}
	var (
		guilds, members                   string
		created, seen, expiresAt, checked int64
	)
	err := s.db.read.QueryRowContext(ctx, `SELECT user_id, guild_ids, csrf, created_at, last_seen_at, expires_at, memberships, checked_at
		FROM web_sessions WHERE token_hash = ?`, tokenHash).Scan(&ws.UserID, &guilds, &ws.CSRF, &created, &seen, &expiresAt, &members, &checked)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.WebSession{}, errNoSession()
	}
	if err != nil {
		return memory.WebSession{}, fmt.Errorf("couldn't read a session: %w", err)
	}
	if expiresAt <= s.db.nowMillis() {
		return memory.WebSession{}, errNoSession()
	}
	if err := json.Unmarshal([]byte(guilds), &ws.GuildIDs); err != nil {
		return memory.WebSession{}, fmt.Errorf("couldn't read the servers of a session of user %s: %w", ws.UserID, err)
	}
	if err := json.Unmarshal([]byte(members), &ws.Memberships); err != nil {
		return memory.WebSession{}, fmt.Errorf("couldn't read the memberships of a session of user %s: %w", ws.UserID, err)
	}
	ws.CreatedAt, ws.LastSeenAt, ws.ExpiresAt = fromMillis(created), fromMillis(seen), fromMillis(expiresAt)
	if checked != 0 {
		ws.CheckedAt = fromMillis(checked)
	}
	return ws, nil
}

// SetMemberships records the member's standing in their servers, as read now, on the
// session whose token hashes to tokenHash; a session that is gone is left gone.
func (s *Sessions) SetMemberships(ctx context.Context, tokenHash string, ms []memory.WebMembership) error {
	members, err := encodeMemberships(ms)
	if err != nil {
		return err
	}
	now := s.db.nowMillis()
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE web_sessions SET memberships = ?, checked_at = ? WHERE token_hash = ?`,
			members, now, tokenHash); err != nil {
			return fmt.Errorf("couldn't record a session's memberships: %w", err)
		}
		return nil
	})
}

// encodeMemberships is the JSON the memberships column holds.
func encodeMemberships(ms []memory.WebMembership) (string, error) {
	if ms == nil {
		ms = []memory.WebMembership{}
	}
	b, err := json.Marshal(ms)
	if err != nil {
		return "", fmt.Errorf("couldn't encode the memberships of a session: %w", err)
	}
	return string(b), nil
}

// Touch records that the session served a request now.
func (s *Sessions) Touch(ctx context.Context, tokenHash string) error {
	now := s.db.nowMillis()
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE web_sessions SET last_seen_at = ? WHERE token_hash = ?`, now, tokenHash); err != nil {
			return fmt.Errorf("couldn't touch a session: %w", err)
		}
		return nil
	})
}

// Revoke deletes the session whose token hashes to tokenHash (signing out); revoking one
// that is gone does nothing.
func (s *Sessions) Revoke(ctx context.Context, tokenHash string) error {
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE token_hash = ?`, tokenHash); err != nil {
			return fmt.Errorf("couldn't revoke a session: %w", err)
		}
		return nil
	})
}

// RevokeUser deletes every session of userID and returns how many there were.
func (s *Sessions) RevokeUser(ctx context.Context, userID string) (int, error) {
	var n int
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		var err error
		if n, err = execCount(ctx, tx, `DELETE FROM web_sessions WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("couldn't revoke the sessions of user %s: %w", userID, err)
		}
		return nil
	})
	return n, err
}
