package ltm

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kioku-bot/kioku/memory"
)

// Resolve settles the review item ref of owner's scope with choice, as actor (the person who
// decided): for a pair, keep both, let the newer replace the older (superseded by it), merge
// them into the older with text, or forget the newer; for a proposal, drop it, apply it,
// write text instead, or forget its target. Each change goes through the versioned write
// path, so history records it and an undo reverts it; the item's review rows are marked
// settled in the same transaction. The item is read again inside the transaction under
// aud, so an item aud may not see, or one settled meanwhile, is refused as not found.
func (s *Review) Resolve(ctx context.Context, owner memory.Owner, ref string, choice memory.ReviewChoice, text string,
	actor memory.Actor, aud *memory.Audience) ([]*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	if !choice.Valid() {
		return nil, memory.Errorf(memory.EINVALID, "Unknown choice %q: use keep, replace, merge or forget.", string(choice))
	}
	if choice == memory.ReviewMerge {
		var err error
		if text, err = memory.CleanContent(text); err != nil {
			return nil, err
		}
	}
	var changed, removed []*memory.Memory
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		changed, removed = nil, nil
		if err := s.db.eng.LockKey(ctx, tx, owner.Key()); err != nil {
			return err
		}
		item, rows, err := s.itemTx(ctx, tx, owner, ref, aud)
		if err != nil {
			return err
		}
		r := resolution{s: s, tx: tx, owner: owner, actor: actor, reason: "review: " + string(choice)}
		if item.Other != nil || item.Kind == memory.ReviewDisputed {
			err = r.pair(ctx, item, choice, text)
		} else {
			err = r.proposal(ctx, item, choice, text)
		}
		if err != nil {
			return err
		}
		changed, removed = r.changed, r.removed
		return markReviewedTx(ctx, tx, rows, s.db.nowMillis())
	})
	if err != nil {
		return nil, err
	}
	s.db.written(ctx, changed, removed)
	return append(changed, removed...), nil
}

// itemTx reads item ref as Queue shows it to aud, with the ids of the open review rows it
// settles (the flagged pair's rows on both memories).
func (s *Review) itemTx(ctx context.Context, tx *txn, owner memory.Owner, ref string, aud *memory.Audience) (memory.ReviewItem, []int64, error) {
	gone := memory.Errorf(memory.ENOTFOUND, "Review item %q is not waiting here; look at the queue again.", ref)
	id, err := strconv.ParseInt(ref[min(1, len(ref)):], 10, 64)
	if err != nil || id <= 0 || (ref[0] != 'd' && ref[0] != 'h') {
		return memory.ReviewItem{}, nil, gone
	}
	items, err := s.items(ctx, tx, owner, aud)
	if err != nil {
		return memory.ReviewItem{}, nil, err
	}
	for _, it := range items {
		if it.Ref != ref {
			continue
		}
		if it.Kind == memory.ReviewDisputed {
			return it, nil, nil
		}
		rows := []int64{id}
		if it.Other != nil {
			if rows, err = pairRowsTx(ctx, tx, owner, it.Memory.ID, it.Other.ID); err != nil {
				return memory.ReviewItem{}, nil, err
			}
		}
		return it, rows, nil
	}
	return memory.ReviewItem{}, nil, gone
}

// pairRowsTx are the open review rows on a and b: the pair is settled once for both.
func pairRowsTx(ctx context.Context, tx *txn, owner memory.Owner, a, b int64) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM memory_history WHERE scope_key = ? AND action = ? AND reviewed_at IS NULL
		AND memory_id IN (?, ?)`, owner.Key(), memory.ActionReview, a, b)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the pair's review rows: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func markReviewedTx(ctx context.Context, tx *txn, ids []int64, now int64) error {
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE memory_history SET reviewed_at = ? WHERE id = ?`, now, id); err != nil {
			return fmt.Errorf("couldn't settle review row %d: %w", id, err)
		}
	}
	return nil
}

// resolution is one Resolve inside its transaction, with what it changed.
type resolution struct {
	s                *Review
	tx               *txn
	owner            memory.Owner
	actor            memory.Actor
	reason           string
	changed, removed []*memory.Memory
}

func (r *resolution) modify(ctx context.Context, id int64, ch memory.Change) error {
	ch.Reason = r.reason
	m, err := r.s.db.writes.modifyTx(ctx, r.tx, nil, r.owner, id, ch, r.actor)
	if err == nil {
		r.changed = append(r.changed, m)
	}
	return err
}

func (r *resolution) forget(ctx context.Context, id int64) error {
	gone, err := r.s.db.writes.forgetTx(ctx, r.tx, r.owner, []int64{id}, r.actor, r.reason)
	r.removed = append(r.removed, gone...)
	return err
}

// activate makes m active again when it is disputed (the dispute is settled).
func (r *resolution) activate(ctx context.Context, m *memory.Memory) error {
	if m == nil || m.State != memory.StateDisputed {
		return nil
	}
	active := memory.StateActive
	return r.modify(ctx, m.ID, memory.Change{State: &active})
}

// pair settles a pair: item.Memory the older, item.Other the newer (nil when a disputed
// memory's partner is gone, which leaves keep and forget to decide).
func (r *resolution) pair(ctx context.Context, item memory.ReviewItem, choice memory.ReviewChoice, text string) error {
	older, newer := item.Memory, item.Other
	if newer == nil && (choice == memory.ReviewReplace || choice == memory.ReviewMerge) {
		return memory.Errorf(memory.EINVALID, "Memory #%d's other memory is gone: keep it or forget it.", older.ID)
	}
	switch choice {
	case memory.ReviewKeep:
		if err := r.activate(ctx, older); err != nil {
			return err
		}
		return r.activate(ctx, newer)
	case memory.ReviewReplace:
		if err := r.activate(ctx, newer); err != nil {
			return err
		}
		superseded := memory.StateSuperseded
		return r.modify(ctx, older.ID, memory.Change{State: &superseded, StateRef: newer.ID})
	case memory.ReviewMerge:
		active := memory.StateActive
		if err := r.modify(ctx, older.ID, memory.Change{Content: &text, State: &active}); err != nil {
			return err
		}
		return r.forget(ctx, newer.ID)
	default: // forget the newer, or the disputed memory left alone
		if newer == nil {
			return r.forget(ctx, older.ID)
		}
		if err := r.forget(ctx, newer.ID); err != nil {
			return err
		}
		return r.activate(ctx, older)
	}
}

// proposal settles a change the pipeline could not make: item.Proposed is its new content,
// "" for a proposed deletion.
func (r *resolution) proposal(ctx context.Context, item memory.ReviewItem, choice memory.ReviewChoice, text string) error {
	target := item.Memory
	switch {
	case choice == memory.ReviewKeep:
		return nil
	case choice == memory.ReviewForget, choice == memory.ReviewReplace && item.Proposed == "":
		return r.forget(ctx, target.ID)
	case choice == memory.ReviewReplace:
		text = item.Proposed
	}
	if text == target.Content {
		return nil
	}
	return r.modify(ctx, target.ID, memory.Change{Content: &text})
}
