package ltm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// Undo reverts the newest change made to memory id in owner's scope, as a new change by
// actor whose history reason is "undo of change N" (N the reverted history row), so the
// undo can itself be undone. version, when not zero, is the version the change to undo
// produced (what the caller saw after it): the undo works only while the memory is still
// at that version, and otherwise fails with ECONFLICT wrapping memory.ErrChangedSince, as
// it does when the memory's current version was not made by a change history records.
//
// Undoing a forget recovers the memory (inside the recover window), undoing an edit
// restores the content, type, tags, pin, importance and origin it had before, and undoing
// a creation (or a recovery) forgets the memory. Each goes through the same write path as
// the change it mirrors: duplicates, credentials, search text and history all apply.
func (s *Memories) Undo(ctx context.Context, owner memory.Owner, id int64, version int, actor memory.Actor) (memory.Undone, error) {
	return s.undo(ctx, nil, owner, id, version, actor)
}

// UndoAs is Undo for a writer in a place: only a memory the writer can see blocks the
// restored content as a duplicate, and an edit is not undone when the version it would
// restore was learned in a channel the writer's audience does not include.
func (s *Memories) UndoAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, version int, actor memory.Actor) (memory.Undone, error) {
	return s.undo(ctx, &w, owner, id, version, actor)
}

func (s *Memories) undo(ctx context.Context, w *memory.WriteContext, owner memory.Owner, id int64, version int, actor memory.Actor) (memory.Undone, error) {
	if err := owner.Validate(); err != nil {
		return memory.Undone{}, err
	}
	var out memory.Undone
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		cur, err := findMemory(ctx, tx, owner, id, true)
		if err != nil {
			return err
		}
		if version != 0 && version != cur.Version {
			return changedSince(id, cur.Version, version)
		}
		ev, err := lastChangeTx(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if ev.Version != cur.Version {
			return changedSince(id, cur.Version, ev.Version)
		}
		reason := fmt.Sprintf("undo of change %d", ev.ID)
		out.Change = ev
		switch ev.Action {
		case memory.ActionDelete:
			out.Action = memory.ActionRecover
			out.Memory, err = s.db.writes.recoverTx(ctx, tx, w, owner, id, cur.Version, actor, reason)
			return err
		case memory.ActionCreate, memory.ActionImport, memory.ActionRecover:
			out.Action = memory.ActionDelete
			gone, err := s.db.writes.forgetTx(ctx, tx, owner, []int64{id}, actor, reason)
			if err != nil {
				return err
			}
			out.Memory = gone[0]
			return nil
		}
		ch, err := undoChange(ev, cur, reason)
		if err != nil {
			return err
		}
		if w != nil && !w.Audience.Allows(restoredOrigin(cur, ch)) {
			return memory.Errorf(memory.EFORBIDDEN, "Memory #%d can't be undone here: the version before that change was learned in a channel you can't see.", id)
		}
		out.Action = memory.ActionUpdate
		out.Memory, err = s.db.writes.modifyTx(ctx, tx, w, owner, id, ch, actor)
		return err
	})
	if err != nil {
		return memory.Undone{}, err
	}
	if out.Action == memory.ActionDelete {
		s.db.written(ctx, nil, []*memory.Memory{out.Memory})
	} else {
		s.db.written(ctx, []*memory.Memory{out.Memory}, nil)
	}
	return out, nil
}

// changedSince refuses an undo of the change that made version of memory id, which is now
// at current.
func changedSince(id int64, current, version int) error {
	return fmt.Errorf("%w: %w", memory.ErrChangedSince, memory.Errorf(memory.ECONFLICT,
		"Memory #%d changed since (it is at version %d, not %d); see its history.", id, current, version))
}

// lastChangeTx returns the newest history row of memory id that changed it. Rows of
// proposals the pipeline recorded without applying them, and review notes, changed nothing
// and are passed over.
func lastChangeTx(ctx context.Context, tx *txn, owner memory.Owner, id int64) (memory.HistoryEvent, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+historyColumns+` FROM memory_history
		WHERE memory_id = ? AND scope_key = ? AND action IN (?, ?, ?, ?, ?) ORDER BY id DESC LIMIT 1`,
		id, owner.Key(), memory.ActionCreate, memory.ActionImport, memory.ActionUpdate, memory.ActionDelete, memory.ActionRecover)
	if err != nil {
		return memory.HistoryEvent{}, fmt.Errorf("couldn't read history of memory %d: %w", id, err)
	}
	events, err := collectHistory(rows)
	if err != nil {
		return memory.HistoryEvent{}, err
	}
	if len(events) == 0 {
		// History older than its retention is gone; without it there is nothing to go back to.
		return memory.HistoryEvent{}, memory.Errorf(memory.EINVALID, "Memory #%d has no recorded change to undo.", id)
	}
	return events[0], nil
}

// editMetadata is what modifyTx records of an edit besides the content: each field, when
// present, holds the values before and after (pinned only the value after).
type editMetadata struct {
	Type       []memory.Type  `json:"type"`
	Pinned     *bool          `json:"pinned"`
	Importance []float64      `json:"importance"`
	Tags       [][]string     `json:"tags"`
	ChannelID  []string       `json:"channel_id"`
	GuildID    []string       `json:"guild_id"`
	State      []memory.State `json:"state"`
	StateRef   []int64        `json:"state_ref"`
}

// undoChange is the change that puts back what the edit ev changed in cur.
func undoChange(ev memory.HistoryEvent, cur *memory.Memory, reason string) (memory.Change, error) {
	if ev.Action != memory.ActionUpdate {
		return memory.Change{}, memory.Errorf(memory.EINVALID, "Change %d (%s) can't be undone.", ev.ID, ev.Action)
	}
	if ev.OldContent == "" {
		// A repair that removed a credential keeps no old content, on purpose.
		return memory.Change{}, memory.Errorf(memory.EINVALID, "History does not hold what memory #%d said before change %d, so it can't be undone.", cur.ID, ev.ID)
	}
	var meta editMetadata
	if len(ev.Metadata) > 0 {
		if err := json.Unmarshal(ev.Metadata, &meta); err != nil {
			return memory.Change{}, fmt.Errorf("couldn't read history entry %d: %w", ev.ID, err)
		}
	}
	ch := memory.Change{IfVersion: cur.Version, Reason: reason}
	if ev.OldContent != cur.Content {
		ch.Content = &ev.OldContent
	}
	if len(meta.Type) == 2 {
		ch.Type = &meta.Type[0]
	}
	if meta.Pinned != nil {
		was := !*meta.Pinned
		ch.Pinned = &was
	}
	if len(meta.Importance) == 2 {
		ch.Importance = &meta.Importance[0]
	}
	if len(meta.Tags) == 2 {
		ch.Tags = &meta.Tags[0]
	}
	if len(meta.ChannelID) == 2 {
		ch.ChannelID = &meta.ChannelID[0]
	}
	if len(meta.GuildID) == 2 {
		ch.GuildID = &meta.GuildID[0]
	}
	if len(meta.State) == 2 && len(meta.StateRef) == 2 {
		ch.State, ch.StateRef = &meta.State[0], meta.StateRef[0]
	}
	if ch.Content == nil && ch.Type == nil && ch.Pinned == nil && ch.Importance == nil && ch.Tags == nil &&
		ch.ChannelID == nil && ch.GuildID == nil && ch.State == nil {
		return memory.Change{}, memory.Errorf(memory.EINVALID, "History does not record what change %d changed in memory #%d, so it can't be undone.", ev.ID, cur.ID)
	}
	return ch, nil
}

// restoredOrigin is cur with the guild and channel ch would give it back: where the
// restored version was learned, which decides who may see it.
func restoredOrigin(cur *memory.Memory, ch memory.Change) *memory.Memory {
	m := *cur
	if ch.ChannelID != nil {
		m.Provenance.ChannelID = *ch.ChannelID
	}
	if ch.GuildID != nil {
		m.GuildID = *ch.GuildID
	}
	return &m
}

// nonNilTags makes a memory without tags record [] rather than null, so the old tags of
// an edit read back as "none" and not as "not recorded".
func nonNilTags(tags []string) []string {
	if tags == nil {
		return []string{}
	}
	return tags
}
