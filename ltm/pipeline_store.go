package ltm

import (
	"context"
	"fmt"
	"slices"

	"github.com/kioku-bot/kioku/memory"
)

// Facts is what the background pipeline writes: one short transaction that applies a whole
// job's proposals, moves the channel's extraction cursor and completes the job together.
// Model and embedding calls all happen before it (PrefetchEmbeddings).

// ApplyPipelineBatch applies a job's proposals in one short write transaction: the hash
// dedup, the pinned and liveness checks, ADD/UPDATE/DELETE through the same versioned write
// paths as commands, one history row per proposal, review_needed rows for contradictions,
// the cursor move and the job's completion. It fails with ErrLeaseLost or ErrCursorMoved
// (wrapped) when another run got there first; nothing is written then.
//
// Where several processes apply batches at once (PostgreSQL), the channel's cursor and
// every scope the batch writes are locked first, the scopes in one order, so two batches
// (or a batch and a command) never interleave a check and its write, nor wait on each other
// in a cycle.
func (s *Facts) ApplyPipelineBatch(ctx context.Context, b memory.PipelineBatch) ([]memory.ProposalOutcome, error) {
	for i, p := range b.Proposals {
		if err := p.Owner.Validate(); err != nil {
			return nil, fmt.Errorf("couldn't apply proposal %d: %w", i, err)
		}
	}
	var (
		out     []memory.ProposalOutcome
		changed []*memory.Memory
		removed []*memory.Memory
	)
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		out, changed, removed = nil, nil, nil
		if b.LeaseOwner != "" {
			if err := holdsLease(ctx, tx, b.JobID, b.LeaseOwner); err != nil {
				return err
			}
		}
		if err := s.lockBatch(ctx, tx, b); err != nil {
			return err
		}
		cur, err := extractionCursor(ctx, tx, b.GuildID, b.ChannelID)
		if err != nil {
			return err
		}
		if cur != b.CursorFrom {
			return fmt.Errorf("channel %s at turn %d, batch starts at %d: %w", b.ChannelID, cur, b.CursorFrom, memory.ErrCursorMoved)
		}
		fenced, err := batchFencesTx(ctx, tx, b)
		if err != nil {
			return err
		}
		for _, p := range b.Proposals {
			if involvesAny(p, fenced) {
				// The member asked to be forgotten after this work began: write nothing of
				// it, not even a history row with its content.
				out = append(out, memory.ProposalOutcome{Action: memory.ActionBlock, Note: NoteFenced})
				continue
			}
			o, err := s.applyProposalTx(ctx, tx, memory.Origin{GuildID: b.GuildID, ChannelID: b.ChannelID}, p)
			if err != nil {
				return err
			}
			switch o.Action {
			case memory.ActionCreate, memory.ActionUpdate:
				changed = append(append(changed, o.Memory), o.Others...)
			case memory.ActionDelete:
				removed = append(removed, o.Memory)
			}
			out = append(out, o)
		}
		if b.CursorTo > b.CursorFrom {
			if _, err := tx.ExecContext(ctx, `INSERT INTO pipeline_cursors (guild_id, channel_id, last_turn_id, updated_at)
				VALUES (?, ?, ?, ?) ON CONFLICT (guild_id, channel_id) DO UPDATE SET last_turn_id = excluded.last_turn_id,
				updated_at = excluded.updated_at`, b.GuildID, b.ChannelID, b.CursorTo, s.db.nowMillis()); err != nil {
				return fmt.Errorf("couldn't move extraction cursor of channel %s: %w", b.ChannelID, err)
			}
		}
		if b.LeaseOwner != "" {
			return s.db.completeTx(ctx, tx, b.JobID, b.LeaseOwner)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.db.written(ctx, changed, removed)
	return out, nil
}

// lockBatch takes the locks (Engine.LockKey) of b's channel cursor and of every scope its
// proposals write, the scopes sorted: the write paths take their scope's lock again (the
// locks nest within a transaction), and with one order for all, two batches sharing scopes
// wait for each other instead of deadlocking.
func (s *Facts) lockBatch(ctx context.Context, tx *txn, b memory.PipelineBatch) error {
	if err := s.db.eng.LockKey(ctx, tx, "cursor:"+b.GuildID+"\x1f"+b.ChannelID); err != nil {
		return err
	}
	keys := make([]string, 0, len(b.Proposals))
	for _, p := range b.Proposals {
		keys = append(keys, p.Owner.Key())
	}
	slices.Sort(keys)
	for _, key := range slices.Compact(keys) {
		if err := s.db.eng.LockKey(ctx, tx, key); err != nil {
			return err
		}
	}
	return nil
}

func (s *Facts) applyProposalTx(ctx context.Context, tx *txn, from memory.Origin, p memory.Proposal) (memory.ProposalOutcome, error) {
	if p.Record != "" {
		return s.recordProposalTx(ctx, tx, from, p, p.Record, "")
	}
	switch p.Action {
	case memory.ProposeAdd:
		return s.applyAddTx(ctx, tx, from, p)
	case memory.ProposeUpdate, memory.ProposeDelete:
		return s.applyChangeTx(ctx, tx, from, p)
	case memory.ProposeSupersede, memory.ProposeDispute:
		return s.applyReplaceTx(ctx, tx, from, p)
	case memory.ProposeNone:
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, "")
	}
	return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, "unknown action")
}

func (s *Facts) applyAddTx(ctx context.Context, tx *txn, from memory.Origin, p memory.Proposal) (memory.ProposalOutcome, error) {
	m := p.Memory
	m.Scope, m.GuildID, m.UserID = p.Owner.Scope, pick(m.GuildID, p.Owner.GuildID), p.Owner.UserID
	m.Source = memory.SourcePipeline
	if err := m.Prepare(); err != nil {
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, memory.ErrorMessage(err))
	}
	dup, err := findLiveByHash(ctx, tx, p.Owner.Key(), m.Hash)
	if err != nil {
		return memory.ProposalOutcome{}, err
	}
	if dup != nil {
		p.TargetID = dup.ID
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionDedup, fmt.Sprintf("already remembered as #%d", dup.ID))
	}
	res, err := s.db.writes.rememberTx(ctx, tx, &m, memory.ActorPipeline, p.Reason)
	if memory.ErrorCode(err) == memory.ELIMIT {
		// The scope is full: nothing is dropped to make room, and the proposal stays in
		// history as blocked with the reason, for people to decide what to forget.
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionBlock, memory.ErrorMessage(err))
	}
	if err != nil {
		return memory.ProposalOutcome{}, err
	}
	if err := s.annotateLastHistory(ctx, tx, res.Memory.ID, p.Metadata); err != nil {
		return memory.ProposalOutcome{}, err
	}
	if err := addEvidenceTx(ctx, tx, res.Memory.ID, p.Evidence); err != nil {
		return memory.ProposalOutcome{}, err
	}
	if err := s.recordContradictionsTx(ctx, tx, p, res.Memory); err != nil {
		return memory.ProposalOutcome{}, err
	}
	return memory.ProposalOutcome{Action: memory.ActionCreate, MemoryID: res.Memory.ID, Memory: res.Memory}, nil
}

func (s *Facts) applyChangeTx(ctx context.Context, tx *txn, from memory.Origin, p memory.Proposal) (memory.ProposalOutcome, error) {
	guildID, channelID := from.GuildID, from.ChannelID
	target, err := findMemory(ctx, tx, p.Owner, p.TargetID, false)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, "target is gone")
	}
	if err != nil {
		return memory.ProposalOutcome{}, err
	}
	if target.GuildID != guildID {
		// A memory that originated elsewhere (a DM-origin personal memory, another guild's)
		// is not visible in this conversation, so it cannot change it, whatever id the
		// model named. The row does not point at the target or quote it.
		p.TargetID = 0
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, "target not visible here")
	}
	if target.Pinned {
		// Pinned memories are the people's word; the pipeline never changes them.
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionBlock, "target is pinned")
	}
	if target.Scope == memory.ScopeServer && !p.MayEditServer && !AuthoredByEvidence(target, p.Evidence) {
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionReview, NoteNeedsEditor)
	}
	if p.Action == memory.ProposeDelete {
		gone, err := s.db.writes.forgetTx(ctx, tx, p.Owner, []int64{target.ID}, memory.ActorPipeline, p.Reason)
		if err != nil {
			return memory.ProposalOutcome{}, err
		}
		if err := s.annotateLastHistory(ctx, tx, target.ID, p.Metadata); err != nil {
			return memory.ProposalOutcome{}, err
		}
		if _, err := tx.ExecContext(ctx, DecisionOriginSQL, from.GuildID, from.ChannelID, target.ID); err != nil {
			return memory.ProposalOutcome{}, fmt.Errorf("couldn't record where the deletion of memory %d was decided: %w", target.ID, err)
		}
		return memory.ProposalOutcome{Action: memory.ActionDelete, MemoryID: target.ID, Memory: gone[0]}, nil
	}
	content, err := memory.CleanContent(p.Memory.Content)
	if err != nil {
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, memory.ErrorMessage(err))
	}
	hash := memory.Hash(content)
	if hash == target.Hash {
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionDedup, fmt.Sprintf("#%d already says this", target.ID))
	}
	dup, err := findLiveByHash(ctx, tx, p.Owner.Key(), hash)
	if err != nil {
		return memory.ProposalOutcome{}, err
	}
	if dup != nil {
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionDedup, fmt.Sprintf("already remembered as #%d", dup.ID))
	}
	change := memory.Change{Content: &content, Reason: p.Reason}
	if channelID != "" && channelID != target.Provenance.ChannelID {
		// The new content was said in the batch's channel: from now on the memory goes only
		// where that channel's words may (SPEC §2 channel-aware memory).
		change.ChannelID = &channelID
	}
	updated, err := s.db.writes.modifyTx(ctx, tx, nil, p.Owner, target.ID, change, memory.ActorPipeline)
	if code := memory.ErrorCode(err); code != "" && code != memory.EINTERNAL {
		return s.recordProposalTx(ctx, tx, from, p, memory.ActionSkip, memory.ErrorMessage(err))
	}
	if err != nil {
		return memory.ProposalOutcome{}, err
	}
	if err := s.annotateLastHistory(ctx, tx, target.ID, ChangeMetadata(p)); err != nil {
		return memory.ProposalOutcome{}, err
	}
	// The new content is the speakers' words: deleting their messages or their forget-me
	// finds it as it finds a memory created from them.
	if err := addEvidenceTx(ctx, tx, target.ID, p.Evidence); err != nil {
		return memory.ProposalOutcome{}, err
	}
	if err := s.recordContradictionsTx(ctx, tx, p, updated); err != nil {
		return memory.ProposalOutcome{}, err
	}
	return memory.ProposalOutcome{Action: memory.ActionUpdate, MemoryID: target.ID, Memory: updated}, nil
}

// recordProposalTx writes the history row of a proposal that changed nothing; its words
// were said where the batch came from.
func (s *Facts) recordProposalTx(ctx context.Context, tx *txn, from memory.Origin, p memory.Proposal, action memory.Action, note string) (memory.ProposalOutcome, error) {
	ev := ProposalEvent(p, from, action, note)
	if ev.MemoryID != 0 {
		if t, err := findMemory(ctx, tx, p.Owner, p.TargetID, true); err == nil {
			ev.OldContent, ev.OldOrigin, ev.Version = t.Content, memory.OriginOf(t), t.Version
		} else if memory.ErrorCode(err) != memory.ENOTFOUND {
			return memory.ProposalOutcome{}, err
		} else {
			ev.MemoryID = 0 // never point a row at a memory of another scope
		}
	}
	if err := s.db.writes.addHistory(ctx, tx, ev); err != nil {
		return memory.ProposalOutcome{}, err
	}
	return memory.ProposalOutcome{Action: action, MemoryID: ev.MemoryID, Note: note}, nil
}

// recordContradictionsTx flags each live memory p.Contradicts names, and m itself, for
// review. Nothing is changed: a person decides which statement is right.
func (s *Facts) recordContradictionsTx(ctx context.Context, tx *txn, p memory.Proposal, m *memory.Memory) error {
	for _, id := range p.Contradicts {
		if id == m.ID {
			continue
		}
		other, err := findMemory(ctx, tx, p.Owner, id, false)
		if memory.ErrorCode(err) == memory.ENOTFOUND {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range ContradictionEvents(p, other, m) {
			if err := s.db.writes.addHistory(ctx, tx, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// annotateLastHistory merges meta into the newest history row of memory id, which the
// shared write path (rememberTx, modifyTx, forgetTx) has just written in this transaction,
// so the pipeline's rows carry the job and fact they came from. The merge is of top-level
// keys, which is all pipeline metadata has.
func (s *Facts) annotateLastHistory(ctx context.Context, tx *txn, id int64, meta map[string]any) error {
	if len(meta) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE memory_history SET metadata = `+s.db.dialect.JSONMerge("metadata")+`
		WHERE id = (SELECT max(id) FROM memory_history WHERE memory_id = ?)`, string(mustJSON(meta)), id)
	if err != nil {
		return fmt.Errorf("couldn't annotate history of memory %d: %w", id, err)
	}
	return nil
}

func pick(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// PrefetchEmbeddings computes and caches the vectors of texts (by content hash) before a
// write, so the indexing that follows the write's commit finds them cached and the write
// path makes no provider call. With no embedder it does nothing. Never call it
// inside a write transaction: it may call the provider.
func (s *Facts) PrefetchEmbeddings(ctx context.Context, texts []string) error {
	e := s.db.recall.emb.Load()
	if e == nil || len(texts) == 0 || s.db.recall.down(s.db.Now()) {
		return nil
	}
	items := make([]embedItem, 0, len(texts))
	for _, t := range texts {
		c, err := memory.CleanContent(t)
		if err != nil {
			continue
		}
		items = append(items, embedItem{hash: memory.Hash(c), text: c})
	}
	ctx, cancel := context.WithTimeout(ctx, s.db.EmbedTimeout)
	defer cancel()
	if _, err := s.db.vectors.vectorsFor(ctx, e, items, 0); err != nil {
		s.db.recall.noteEmbedError(s.db.Now(), s.db.EmbedRetryAfter, err)
		return err
	}
	return nil
}
