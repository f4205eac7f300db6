package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Held writes: a save that a near-duplicate answer stopped waits here, under a single-use
// token, until its writer keeps both, replaces or merges (or lets it expire). It is a
// confirmation of its own kind, so it shares the table's expiry and pruning, and forget-me
// and a guild's purge remove it with the rest: by its scope, its writer, the member whose
// words it holds (subject_id) and the guild it was made in (guild_id).
const confirmWrite = "write"

// heldWrite is a held write as stored: flat, so that subject_id and guild_id are keys the
// erasing statements can read on both engines.
type heldWrite struct {
	SubjectID string              `json:"subject_id,omitempty"`
	GuildID   string              `json:"guild_id,omitempty"`
	Scope     memory.Scope        `json:"scope"`
	UserID    string              `json:"user_id,omitempty"`
	Type      memory.Type         `json:"type,omitempty"`
	Content   string              `json:"content"`
	Tags      []string            `json:"tags,omitempty"`
	Pinned    bool                `json:"pinned,omitempty"`
	Source    memory.Source       `json:"source,omitempty"`
	Prov      memory.Provenance   `json:"provenance"`
	Evidence  []memory.MessageRef `json:"evidence,omitempty"`
}

// HoldWrite keeps w, checked as a write checks it (scope, content, tags: nothing a write
// would refuse, a credential least of all, is ever held), for actor, and returns the
// single-use token that finds it again until it expires (ConfirmTTL). Nothing is saved yet.
func (s *Confirmations) HoldWrite(ctx context.Context, w memory.HeldWrite, actor memory.Actor) (string, time.Time, error) {
	m := w.Memory
	if err := m.Prepare(); err != nil {
		return "", time.Time{}, err
	}
	if actor == "" {
		return "", time.Time{}, memory.Errorf(memory.EINVALID, "A held write needs its writer.")
	}
	h := heldWrite{SubjectID: m.SubjectID, GuildID: m.GuildID, Scope: m.Scope, UserID: m.UserID, Type: m.Type,
		Content: m.Content, Tags: m.Tags, Pinned: m.Pinned, Source: m.Source, Prov: m.Provenance, Evidence: w.Evidence}
	return s.db.createConfirmation(ctx, m.Owner(), confirmWrite, h, actor)
}

// HeldWrite returns the write held under token in owner's scope for actor, without using
// it: the writer's choice may still fail (a full scope, a memory changed meanwhile), and
// then the write waits for another try. A token of another scope or writer, an unknown or
// dropped one is not found; an expired one says so.
func (s *Confirmations) HeldWrite(ctx context.Context, owner memory.Owner, token string, actor memory.Actor) (memory.HeldWrite, error) {
	if err := owner.Validate(); err != nil {
		return memory.HeldWrite{}, err
	}
	var (
		body    string
		expires int64
	)
	err := s.db.read.QueryRowContext(ctx, `SELECT payload, expires_at FROM confirmations
		WHERE token = ? AND scope_key = ? AND kind = ? AND actor = ? AND used_at IS NULL`,
		token, owner.Key(), confirmWrite, actor).Scan(&body, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.HeldWrite{}, memory.Errorf(memory.ENOTFOUND, "That save is not waiting any more; run the command again.")
	}
	if err != nil {
		return memory.HeldWrite{}, fmt.Errorf("couldn't read held write: %w", err)
	}
	if s.db.nowMillis() > expires {
		return memory.HeldWrite{}, memory.Errorf(memory.EEXPIRED, "That save waited too long; run the command again.")
	}
	var h heldWrite
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		return memory.HeldWrite{}, fmt.Errorf("couldn't decode held write: %w", err)
	}
	return memory.HeldWrite{Memory: memory.Memory{Scope: h.Scope, GuildID: h.GuildID, UserID: h.UserID, Type: h.Type,
		Content: h.Content, Tags: h.Tags, Pinned: h.Pinned, Source: h.Source, Provenance: h.Prov, SubjectID: h.SubjectID},
		Evidence: h.Evidence}, nil
}

// DropWrite deletes the write held under token in owner's scope for actor, once the choice
// it waited for is made: its words leave the table at once rather than at the next prune.
// Dropping a write that is gone already is not an error.
func (s *Confirmations) DropWrite(ctx context.Context, owner memory.Owner, token string, actor memory.Actor) error {
	if err := owner.Validate(); err != nil {
		return err
	}
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM confirmations WHERE token = ? AND scope_key = ? AND kind = ? AND actor = ?`,
			token, owner.Key(), confirmWrite, actor); err != nil {
			return fmt.Errorf("couldn't drop held write: %w", err)
		}
		return nil
	})
}
