package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/kioku-bot/kioku/memory"
)

// Deleted and edited Discord messages (SPEC §2 "Deleted messages"): the message leaves, or
// is replaced in, the transcript and pending extraction; a pipeline memory learned only
// from deleted messages is soft-deleted, and a pipeline update written only from deleted
// messages is undone. Deliberate saves (tool, command, Remember this)
// stay even when their message goes.

// ReasonSourceDeleted is the history reason of a pipeline memory soft-deleted because every
// message it was learned from was deleted.
const ReasonSourceDeleted = "source message deleted"

// DeleteMessages handles the deletion of Discord messages of one channel (guildID "" in a
// DM), in one short write transaction: their transcript rows go, the channel's pending
// extraction forgets what it read of them, and each pipeline memory whose every evidence
// row points at a deleted message is soft-deleted with history reason ReasonSourceDeleted.
// Memories of other sources keep their evidence and stay; memories without evidence rows
// (learned before evidence was recorded) are left alone. Messages kioku never stored cost
// one read and no write.
func (s *Transcripts) DeleteMessages(ctx context.Context, guildID, channelID string, messageIDs []string) (memory.MessageChange, error) {
	var res memory.MessageChange
	ids := distinctIDs(messageIDs)
	if channelID == "" || len(ids) == 0 {
		return res, nil
	}
	// A channel's deleted messages come at most a bulk delete (100) at a time: well within
	// the placeholders a statement may have.
	list, in := anySlice(ids), `(`+placeholders(len(ids))+`)`
	// Most deleted messages were never addressed to the bot; a read on the pool spares
	// them the write lock that chat turns wait for.
	var referenced bool
	err := s.db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM transcripts
			WHERE message_id IN `+in+` AND guild_id = ? AND channel_id = ?)
		OR EXISTS (SELECT 1 FROM memory_evidence WHERE message_id IN `+in+`)`,
		append(append(list, guildID, channelID), list...)...).Scan(&referenced)
	if err != nil {
		// Classified as the writes are: a database that can't be reached is worth a retry.
		return res, s.db.eng.StorageError(fmt.Errorf("couldn't look up deleted messages: %w", err))
	}
	if !referenced {
		return res, nil
	}
	err = s.db.withWriteTx(ctx, func(tx *txn) error {
		res = memory.MessageChange{}
		rows, err := tx.QueryContext(ctx, `DELETE FROM transcripts
			WHERE message_id IN `+in+` AND guild_id = ? AND channel_id = ? RETURNING id`,
			append(list, guildID, channelID)...)
		if err != nil {
			return fmt.Errorf("couldn't delete transcript rows: %w", err)
		}
		last, err := countMaxID(rows, &res.Turns)
		if err != nil {
			return fmt.Errorf("couldn't delete transcript rows: %w", err)
		}
		if res.Turns > 0 {
			if res.Jobs, err = s.db.rewindExtractionTx(ctx, tx, guildID, channelID, last); err != nil {
				return err
			}
		}
		applied, err := s.forgetUnsourcedTx(ctx, tx, ids)
		res.Forgotten, res.Reverted = applied.Forgotten, applied.Reverted
		return err
	})
	if err != nil {
		return memory.MessageChange{}, fmt.Errorf("couldn't delete messages of channel %s: %w", channelID, err)
	}
	for _, m := range res.Forgotten {
		s.db.vectors.unindexMemory(m)
	}
	s.db.vectors.indexMemories(ctx, res.Reverted...)
	return res, nil
}

// EditMessage replaces the transcript text of an edited Discord message of one channel
// (credentials redacted, as when it was first stored) and sends the channel's pending
// extraction back to read it afresh, in one short write transaction. Memories are not
// changed: what was learned from the old words stays until someone forgets it. Messages
// kioku never stored cost one read and no write.
func (s *Transcripts) EditMessage(ctx context.Context, guildID, channelID, messageID, content string) (memory.MessageChange, error) {
	var res memory.MessageChange
	if channelID == "" || messageID == "" {
		return res, nil
	}
	var stored bool
	err := s.db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM transcripts
		WHERE message_id = ? AND guild_id = ? AND channel_id = ? AND role = ?)`,
		messageID, guildID, channelID, memory.RoleUser).Scan(&stored)
	if err != nil {
		return res, s.db.eng.StorageError(fmt.Errorf("couldn't look up edited message: %w", err))
	}
	if !stored {
		return res, nil
	}
	content = memory.RedactSecrets(content)
	err = s.db.withWriteTx(ctx, func(tx *txn) error {
		res = memory.MessageChange{}
		// Only a person's own turn carries a message id; the bot's replies are not
		// edited by people.
		rows, err := tx.QueryContext(ctx, `UPDATE transcripts SET content = ?
			WHERE message_id = ? AND guild_id = ? AND channel_id = ? AND role = ? RETURNING id`,
			content, messageID, guildID, channelID, memory.RoleUser)
		if err != nil {
			return fmt.Errorf("couldn't rewrite transcript row: %w", err)
		}
		last, err := countMaxID(rows, &res.Turns)
		if err != nil {
			return fmt.Errorf("couldn't rewrite transcript row: %w", err)
		}
		if res.Turns > 0 {
			res.Jobs, err = s.db.rewindExtractionTx(ctx, tx, guildID, channelID, last)
		}
		return err
	})
	if err != nil {
		return memory.MessageChange{}, fmt.Errorf("couldn't edit message %s: %w", messageID, err)
	}
	return res, nil
}

// rewindExtractionTx makes the channel's pending extraction forget what it read before a
// turn up to lastTurn was deleted or edited. The transcript is the extraction buffer, so
// only work already done on it can hold the old words: a queued job's checkpoint (model
// results kept across a postponement) is cleared, and a running job is sent back to the
// queue, which makes its commit fail on the lost lease instead of storing facts from the
// old words; its next run reads the transcript as it is now. Turns the cursor has passed
// were extracted already and concern no pending job.
func (s *db) rewindExtractionTx(ctx context.Context, tx *txn, guildID, channelID string, lastTurn int64) (int, error) {
	cursor, err := extractionCursor(ctx, tx, guildID, channelID)
	if err != nil {
		return 0, err
	}
	if lastTurn <= cursor {
		return 0, nil
	}
	now := s.nowMillis()
	d := s.dialect
	n, err := execCount(ctx, tx, `UPDATE memory_jobs SET payload = `+d.JobWithoutCheckpoint+`,
		run_after = CASE WHEN state = 'leased' THEN ? ELSE run_after END,
		state = 'queued', lease_owner = '', leased_until = 0, updated_at = ?
		WHERE state IN ('queued', 'leased')
			AND `+d.JSONText("payload", "guild_id")+` = ? AND `+d.JSONText("payload", "channel_id")+` = ?
			AND (state = 'leased' OR `+d.JobHasCheckpoint+`)`,
		now, now, guildID, channelID)
	if err != nil {
		return 0, fmt.Errorf("couldn't rewind extraction of channel %s: %w", channelID, err)
	}
	return n, nil
}

// forgetUnsourcedTx applies deleted messages (their distinct ids) to the memories they are
// evidence of. A pipeline memory whose every evidence row is among them is soft-deleted;
// a pipeline memory with evidence left loses the rows of the deleted messages, so that the
// deletion of its last message later finds it. A memory whose current content a pipeline
// update wrote from messages that are now all deleted gets back the content it had before
// (revertUnsourcedUpdateTx). Deliberate saves keep their rows: forget-me still needs to
// know whose words they were.
func (s *Transcripts) forgetUnsourcedTx(ctx context.Context, tx *txn, deleted []string) (memory.MessageChange, error) {
	var res memory.MessageChange
	list, in := anySlice(deleted), `(`+placeholders(len(deleted))+`)`
	rows, err := tx.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id IN (
		SELECT memory_id FROM memory_evidence WHERE message_id IN `+in+`) ORDER BY id`, list...)
	if err != nil {
		return res, fmt.Errorf("couldn't read memories of deleted messages: %w", err)
	}
	mems, err := collectMemories(rows)
	if err != nil {
		return res, err
	}
	for _, m := range mems {
		remaining, err := evidenceMessagesTx(ctx, tx, m.ID)
		if err != nil {
			return res, err
		}
		pipeline := m.Source == memory.SourcePipeline
		left := slices.DeleteFunc(slices.Clone(remaining), func(id string) bool { return slices.Contains(deleted, id) })
		reverted := false
		switch {
		case m.Deleted():
		case pipeline && len(left) == 0:
			done, err := s.db.writes.forgetTx(ctx, tx, m.Owner(), []int64{m.ID}, memory.ActorDiscord, ReasonSourceDeleted)
			if err != nil {
				return res, err
			}
			res.Forgotten = append(res.Forgotten, done...)
		default:
			if reverted, err = s.revertUnsourcedUpdateTx(ctx, tx, m, deleted, remaining, &res); err != nil {
				return res, err
			}
		}
		if !pipeline && !reverted {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM memory_evidence WHERE memory_id = ?
			AND message_id IN `+in, append([]any{m.ID}, list...)...); err != nil {
			return res, fmt.Errorf("couldn't remove evidence of memory %d: %w", m.ID, err)
		}
	}
	return res, nil
}

// revertUnsourcedUpdateTx undoes the pipeline update that wrote m's current content when
// every message it was written from is deleted (ltm.UpdateSourcesGone): the words it took
// from them go, as a memory created from them goes. m gets back the content (and channel)
// the update replaced, as a new version; when another live memory holds that content now,
// m is soft-deleted instead. It reports whether it changed m.
func (s *Transcripts) revertUnsourcedUpdateTx(ctx context.Context, tx *txn, m *memory.Memory, deleted, remaining []string, res *memory.MessageChange) (bool, error) {
	var (
		before     string
		meta       []byte
		oldChannel sql.NullString
	)
	err := tx.QueryRowContext(ctx, `SELECT old_content, metadata, old_origin_channel FROM memory_history
		WHERE memory_id = ? AND action = ? AND actor = ? AND new_content = ? AND old_content <> new_content
		ORDER BY id DESC LIMIT 1`,
		m.ID, memory.ActionUpdate, memory.ActorPipeline, m.Content).Scan(&before, &meta, &oldChannel)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("couldn't read the last update of memory %d: %w", m.ID, err)
	}
	if !UpdateSourcesGone(meta, deleted, remaining) {
		return false, nil
	}
	back, err := s.db.writes.modifyTx(ctx, tx, nil, m.Owner(), m.ID, UndoUpdateChange(m, before, oldChannel), memory.ActorDiscord)
	if memory.ErrorCode(err) == memory.ECONFLICT {
		done, err := s.db.writes.forgetTx(ctx, tx, m.Owner(), []int64{m.ID}, memory.ActorDiscord, ReasonSourceDeleted)
		res.Forgotten = append(res.Forgotten, done...)
		return true, err
	}
	if err != nil {
		return false, err
	}
	res.Reverted = append(res.Reverted, back)
	return true, nil
}

// evidenceMessagesTx returns the ids of the messages memory id rests on.
func evidenceMessagesTx(ctx context.Context, tx *txn, id int64) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT message_id FROM memory_evidence WHERE memory_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("couldn't read evidence of memory %d: %w", id, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return nil, fmt.Errorf("couldn't read evidence of memory %d: %w", id, err)
		}
		out = append(out, msg)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read evidence of memory %d: %w", id, err)
	}
	return out, nil
}

// countMaxID drains rows of ids, counting them into n and returning the largest.
func countMaxID(rows *sql.Rows, n *int) (int64, error) {
	defer rows.Close()
	var last int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		*n++
		last = max(last, id)
	}
	return last, rows.Err()
}

// distinctIDs returns the non-empty ids, each once.
func distinctIDs(ids []string) []string {
	out := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == "" })
	slices.Sort(out)
	return slices.Compact(out)
}
