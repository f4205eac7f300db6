package ltm

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// NoteNotSeenByAll is the note of a SUPERSEDE or DISPUTE whose new memory some reader of
// could not see the target: the fact is kept, the target left as it is, and the proposal
// waits for a person.
const NoteNotSeenByAll = "not everyone who may see the new memory may see its target"

// applyReplaceTx applies a SUPERSEDE or DISPUTE: the fact becomes a new memory and the
// target, which the conversation may see and may change (the rules of an UPDATE), is marked
// superseded by it, or both are marked disputed with each other. The target keeps its words
// and history. When some reader of the new memory could not see the target, the state would
// tell them of it: the fact is added and the proposal recorded for review instead.
func (s *Facts) applyReplaceTx(ctx context.Context, tx *txn, from memory.Origin, p memory.Proposal) (memory.ProposalOutcome, error) {
	target, err := findMemory(ctx, tx, p.Owner, p.TargetID, false)
	switch {
	case memory.ErrorCode(err) == memory.ENOTFOUND:
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, "target is gone")
	case err != nil:
		return memory.ProposalOutcome{}, err
	case target.GuildID != from.GuildID:
		p.TargetID = 0 // as for an UPDATE: never point at or quote a memory not visible here
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, "target not visible here")
	case target.Pinned:
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionBlock, "target is pinned")
	case target.Scope == memory.ScopeServer && !p.MayEditServer && !AuthoredByEvidence(target, p.Evidence):
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionReview, NoteNeedsEditor)
	case target.Shelved():
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, fmt.Sprintf("target is already %s", target.State))
	}
	added, err := s.applyAddTx(ctx, tx, from, p)
	if err != nil || added.Action != memory.ActionCreate {
		return added, err
	}
	fresh := added.Memory
	if !fresh.SeenByAllWhoSee(target) {
		if _, err := s.recordProposalTx(ctx, tx, from, p, memory.ActionReview, NoteNotSeenByAll); err != nil {
			return memory.ProposalOutcome{}, err
		}
		return added, nil
	}
	st := memory.StateSuperseded
	if p.Action == memory.ProposeDispute {
		st = memory.StateDisputed
		if fresh, err = s.db.writes.modifyTx(ctx, tx, nil, p.Owner, fresh.ID,
			memory.Change{State: &st, StateRef: target.ID, Reason: p.Reason}, memory.ActorPipeline); err != nil {
			return memory.ProposalOutcome{}, err
		}
	}
	old, err := s.db.writes.modifyTx(ctx, tx, nil, p.Owner, target.ID,
		memory.Change{State: &st, StateRef: fresh.ID, Reason: p.Reason}, memory.ActorPipeline)
	if err != nil {
		return memory.ProposalOutcome{}, err
	}
	if err := s.annotateLastHistory(ctx, tx, target.ID, p.Metadata); err != nil {
		return memory.ProposalOutcome{}, err
	}
	added.Memory, added.Others = fresh, []*memory.Memory{old}
	return added, nil
}
