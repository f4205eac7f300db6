package ltm

import (
	"context"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Lifecycle states. A state is an edit like any other (modifyTx): it bumps the version, is
// recorded in history with its actor and the state before it, and an undo puts that back.
// What differs is the rule on the memory a state names: a memory is superseded only by one
// whose every reader may see it, so the state never tells anyone of a memory they could
// not see (memory.Memory.SeenByAllWhoSee).

// checkStateTx refuses moving cur to state naming ref unless the rule above holds and ref
// is a live memory of cur's scope.
func (s memoryWriter) checkStateTx(ctx context.Context, tx *txn, cur *memory.Memory, state memory.State, ref int64) error {
	if !state.Valid() {
		return memory.Errorf(memory.EINVALID, "Unknown lifecycle state %q: use superseded, disputed, archived or active.", string(state))
	}
	named := state == memory.StateSuperseded || state == memory.StateDisputed
	switch {
	case !named && ref != 0:
		return memory.Errorf(memory.EINVALID, "A memory %s names no other memory.", stateWord(state))
	case !named:
		return nil
	case ref == 0 || ref == cur.ID:
		return memory.Errorf(memory.EINVALID, "A %s memory must name another memory.", state)
	}
	other, err := findMemory(ctx, tx, cur.Owner(), ref, false)
	if err != nil {
		return err
	}
	ok := other.SeenByAllWhoSee(cur)
	if state == memory.StateDisputed {
		ok = ok || cur.SeenByAllWhoSee(other)
	}
	if !ok {
		return memory.Errorf(memory.EFORBIDDEN, "Memory #%d can't be %s by #%d: not everyone who may see #%d may see #%d.",
			cur.ID, state, ref, ref, cur.ID)
	}
	return nil
}

func stateWord(s memory.State) string {
	if s == memory.StateActive {
		return "that is active"
	}
	return "that is " + string(s)
}

// Supersede marks old as superseded by newer, both live memories of owner's scope; everyone
// who may see newer must be able to see old. The old memory keeps its words and history and
// leaves chat context and default search.
func (s *Review) Supersede(ctx context.Context, owner memory.Owner, old, newer int64, actor memory.Actor, reason string) (*memory.Memory, error) {
	st := memory.StateSuperseded
	return (&Memories{s.db}).Modify(ctx, owner, old, memory.Change{State: &st, StateRef: newer, Reason: reason}, actor)
}

// Dispute marks a and b, live memories of owner's scope, as disputed with each other in one
// transaction: both stay in use, marked, and wait in the review queue until someone keeps
// one, replaces one with the other or merges them.
func (s *Review) Dispute(ctx context.Context, owner memory.Owner, a, b int64, actor memory.Actor, reason string) ([]*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	st := memory.StateDisputed
	var out []*memory.Memory
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		out = out[:0]
		for _, pair := range [][2]int64{{a, b}, {b, a}} {
			m, err := s.db.writes.modifyTx(ctx, tx, nil, owner, pair[0], memory.Change{State: &st, StateRef: pair[1], Reason: reason}, actor)
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.db.written(ctx, out, nil)
	return out, nil
}

// SetState moves memory id to state (active, archived), which names no other memory: how
// people archive a memory, take one back out of the archive, or keep one of a disputed pair.
// Keeping a disputed memory also ends the dispute of the memory it named, when that one
// still names it.
func (s *Review) SetState(ctx context.Context, owner memory.Owner, id int64, state memory.State, actor memory.Actor, reason string) (*memory.Memory, error) {
	if state == memory.StateSuperseded || state == memory.StateDisputed {
		return nil, memory.Errorf(memory.EINVALID, "A memory becomes %s through another memory; use supersede or dispute.", state)
	}
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	var changed []*memory.Memory
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		changed = changed[:0]
		cur, err := findMemory(ctx, tx, owner, id, false)
		if err != nil {
			return err
		}
		m, err := s.db.writes.modifyTx(ctx, tx, nil, owner, id, memory.Change{State: &state, Reason: reason}, actor)
		if err != nil {
			return err
		}
		changed = append(changed, m)
		if cur.State != memory.StateDisputed {
			return nil
		}
		other, err := s.db.writes.endDisputeTx(ctx, tx, owner, cur.StateRef, id, actor, reason)
		if other != nil {
			changed = append(changed, other)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	s.db.written(ctx, changed, nil)
	return changed[0], nil
}

// endDisputeTx makes memory id active again when it is disputed with partner (and nil when
// it is not, or is gone): the dispute between them is settled.
func (s memoryWriter) endDisputeTx(ctx context.Context, tx *txn, owner memory.Owner, id, partner int64, actor memory.Actor, reason string) (*memory.Memory, error) {
	m, err := findMemory(ctx, tx, owner, id, false)
	if err != nil {
		if memory.ErrorCode(err) == memory.ENOTFOUND {
			return nil, nil
		}
		return nil, err
	}
	if m.State != memory.StateDisputed || m.StateRef != partner {
		return nil, nil
	}
	active := memory.StateActive
	updated, err := s.modifyTx(ctx, tx, nil, owner, id, memory.Change{State: &active, Reason: reason}, actor)
	if err != nil {
		return nil, fmt.Errorf("couldn't end the dispute of memory %d: %w", id, err)
	}
	return updated, nil
}

// ActorRetention is the actor of the changes retention makes (archiving past memories).
const ActorRetention memory.Actor = "retention"

// archivePastTx archives up to limit active, unpinned memories whose span ended more than
// after ago (none when after is 0), each through the versioned write path with a history
// row retention signs, so an undo brings it back. A memory changed within after (taken
// back out of the archive, edited) waits that long again. It returns what it archived.
func (s *Maintenance) archivePastTx(ctx context.Context, tx *txn, now time.Time, after time.Duration, limit int) ([]*memory.Memory, error) {
	if after <= 0 {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE deleted_at IS NULL AND state = ''
		AND pinned = 0 AND refers_to_end < ?1 AND updated_at < ?1 ORDER BY refers_to_end LIMIT ?2`, millis(now.Add(-after)), limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't find past memories to archive: %w", err)
	}
	due, err := collectMemories(rows)
	if err != nil {
		return nil, err
	}
	archived := memory.StateArchived
	reason := fmt.Sprintf("past for more than %d days", int(after.Hours()/24))
	out := make([]*memory.Memory, 0, len(due))
	for _, m := range due {
		changed, err := s.db.writes.modifyTx(ctx, tx, nil, m.Owner(), m.ID,
			memory.Change{State: &archived, IfVersion: m.Version, Reason: reason}, ActorRetention)
		if err != nil {
			return out, fmt.Errorf("couldn't archive memory %d: %w", m.ID, err)
		}
		out = append(out, changed)
	}
	return out, nil
}
