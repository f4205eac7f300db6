package ltm

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// forgetMeMemories selects every memory forget-me removes, with its category (0 personal,
// 1 about the member, 2 learned only from the member's messages: created from them, or
// rewritten from them by a pipeline update, whose history row names its messages) and its
// content hash (for the vectors waiting to be stored). Arguments: the member's personal
// scope key and user id.
func forgetMeMemories(d *Dialect) string {
	return `SELECT id, scope, guild_id, user_id, content_hash,
	CASE WHEN scope_key = ?1 THEN 0 WHEN subject_id = ?2 THEN 1 ELSE 2 END
	FROM memories WHERE scope_key = ?1 OR subject_id = ?2 OR id IN (
		SELECT e.memory_id FROM memory_evidence e WHERE e.user_id = ?2 AND NOT EXISTS (
			SELECT 1 FROM memory_evidence o WHERE o.memory_id = e.memory_id AND o.user_id <> ?2))
	OR id IN (SELECT h.memory_id FROM memory_history h
		WHERE h.memory_id IN (SELECT memory_id FROM memory_evidence WHERE user_id = ?2)
			AND h.action = 'update' AND h.actor = 'pipeline' AND ` + d.JSONMayHold("h.metadata", "evidence") + `
			AND EXISTS (` + sourcesWhere(d, "h.metadata", "= ?2") + `)
			AND NOT EXISTS (` + sourcesWhere(d, "h.metadata", "<> ?2") + `))`
}

// sourcesWhere selects the sources named in the evidence of the history metadata in column
// (ltm.ChangeMetadata) whose user id meets cond, as j.
func sourcesWhere(d *Dialect, column, cond string) string {
	return `SELECT 1 FROM ` + d.JSONArrayAt(column, "evidence") + ` j WHERE ` + d.JSONValueText("j.value", "user_id") + ` ` + cond
}

// forgetMeUpdateSources takes the member out of the sources that the history rows of
// pipeline updates written from several members' messages name (ltm.ChangeMetadata).
func forgetMeUpdateSources(d *Dialect) string {
	kept := `(SELECT ` + d.JSONAgg("j.value") + ` FROM ` + d.JSONArrayAt("metadata", "evidence") + ` j
			WHERE ` + d.JSONValueText("j.value", "user_id") + ` <> ?1)`
	return `UPDATE memory_history SET metadata = ` + d.JSONSet("metadata", "evidence", kept) + `
	WHERE action = 'update' AND actor = 'pipeline' AND ` + d.JSONMayHold("metadata", "evidence") + `
		AND EXISTS (` + sourcesWhere(d, "metadata", "= ?1") + `)`
}

// forgetMeJobs is the condition of the jobs whose content forget-me clears: unfinished
// jobs with a checkpoint or a lease, finished jobs holding more than their ids.
func forgetMeJobs(d *Dialect) string {
	return `state = 'leased' OR (state = 'queued' AND ` + d.JobHasCheckpoint + `)
	OR (state IN ('done', 'dead') AND ` + d.JobBeyondIDs + `)`
}

// PreviewForgetMe counts everything forget-me would erase for userID and returns a
// single-use token.
func (s *Confirmations) PreviewForgetMe(ctx context.Context, userID string) (memory.ForgetMeSummary, error) {
	owner := memory.PersonalOwner(userID)
	if err := owner.Validate(); err != nil {
		return memory.ForgetMeSummary{}, err
	}
	var sum memory.ForgetMeSummary
	if err := s.countForgetMe(ctx, s.db.read, owner, userID, &sum); err != nil {
		return sum, err
	}
	var err error
	sum.Token, sum.ExpiresAt, err = s.db.createConfirmation(ctx, owner, confirmForgetMe, userID, memory.UserActor(userID))
	return sum, err
}

func (s *Confirmations) countForgetMe(ctx context.Context, q querier, owner memory.Owner, userID string, sum *memory.ForgetMeSummary) error {
	removed, err := forgetMeList(ctx, q, s.db.dialect, owner, userID, sum)
	if err != nil {
		return err
	}
	gone := make(map[int64]bool, len(removed))
	for _, m := range removed {
		gone[m.ID] = true
	}
	rows, err := q.QueryContext(ctx, `SELECT id FROM memories WHERE author_id = ?`, userID)
	if err != nil {
		return fmt.Errorf("couldn't count memories by user %s: %w", userID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("couldn't count memories by user %s: %w", userID, err)
		}
		if !gone[id] {
			sum.Anonymised++
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("couldn't count memories by user %s: %w", userID, err)
	}
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM transcripts WHERE user_id = ?`, userID).Scan(&sum.Turns); err != nil {
		return fmt.Errorf("couldn't count turns of user %s: %w", userID, err)
	}
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM memory_jobs WHERE `+forgetMeJobs(s.db.dialect)).Scan(&sum.Jobs); err != nil {
		return fmt.Errorf("couldn't count jobs: %w", err)
	}
	return nil
}

// forgetMeList returns the memories forget-me removes (only the fields the vector index
// and the waiting vectors need) and counts them by category into sum.
func forgetMeList(ctx context.Context, q querier, d *Dialect, owner memory.Owner, userID string, sum *memory.ForgetMeSummary) ([]*memory.Memory, error) {
	rows, err := q.QueryContext(ctx, forgetMeMemories(d), owner.Key(), userID)
	if err != nil {
		return nil, fmt.Errorf("couldn't list memories of user %s: %w", userID, err)
	}
	defer rows.Close()
	var removed []*memory.Memory
	for rows.Next() {
		m := &memory.Memory{}
		var category int
		if err := rows.Scan(&m.ID, &m.Scope, &m.GuildID, &m.UserID, &m.Hash, &category); err != nil {
			return nil, fmt.Errorf("couldn't list memories of user %s: %w", userID, err)
		}
		removed = append(removed, m)
		switch category {
		case 0:
			sum.Memories++
		case 1:
			sum.About++
		default:
			sum.FromMessages++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't list memories of user %s: %w", userID, err)
	}
	return removed, nil
}

// ConfirmForgetMe erases, in one transaction, everything the store holds about userID:
// their personal memories (live and forgotten), every memory whose subject they are, every
// memory learned only from their messages (other members' Remember-this copies included),
// the history of all those memories and of their scope, their transcript turns, their
// evidence rows, embeddings no memory uses any more, their web dashboard sessions (signing
// out every browser of theirs), and the checkpoints of pipeline jobs (which take back
// running jobs' leases, so nothing in flight writes their words back).
// Memories they authored that stay (server knowledge) lose their id and name, and history
// rows of their edits name ActorForgotten instead. A forget fence stops pipeline work that
// started earlier from writing about them afterwards, and the full-text search drops their
// words at once (Dialect.PurgeSearch: SQLite merges its word index so deleted words leave
// the file; PostgreSQL's word vectors are columns of the deleted rows, though its files keep
// dead row versions until VACUUM, docs/postgres.md). Unlike forget, this is immediate and
// not recoverable: the preview and confirmation are the safety net. One history row without
// content records that it happened.
func (s *Confirmations) ConfirmForgetMe(ctx context.Context, userID, token string) (memory.ForgetMeSummary, error) {
	owner := memory.PersonalOwner(userID)
	if err := owner.Validate(); err != nil {
		return memory.ForgetMeSummary{}, err
	}
	var (
		sum     memory.ForgetMeSummary
		removed []*memory.Memory
	)
	// Words edited out of memories that stay wait to leave the word company; they leave
	// before the erasure, which takes out what her memories added.
	if err := s.db.flushWordCompany(ctx); err != nil {
		return sum, err
	}
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		sum, removed = memory.ForgetMeSummary{}, nil
		var who string
		if err := s.db.useConfirmation(ctx, tx, owner, confirmForgetMe, token, &who); err != nil {
			return err
		}
		// One forget-me of a member at a time, across processes: the lists below must not
		// race a write to their personal scope.
		if err := s.db.eng.LockKey(ctx, tx, owner.Key()); err != nil {
			return err
		}
		var err error
		if removed, err = s.forgetMeTx(ctx, tx, owner, userID, &sum); err != nil {
			return fmt.Errorf("couldn't erase data of user %s: %w", userID, err)
		}
		return nil
	})
	if err != nil {
		return memory.ForgetMeSummary{}, err
	}
	hashes := make([]string, 0, len(removed))
	for _, m := range removed {
		s.db.vectors.unindexMemory(m)
		hashes = append(hashes, m.Hash)
	}
	// Vectors of their words waiting to be stored leave memory now (the store would skip
	// them anyway, with no live memory holding the words; one a remaining memory shares
	// is fetched again by the embedding tracker).
	s.db.recall.vectorWrites.drop(hashes)
	// Recent queries (theirs included) are cached as text; the cache refills itself.
	s.recaller.ForgetCachedQueries()
	return sum, nil
}

func (s *Confirmations) forgetMeTx(ctx context.Context, tx *txn, owner memory.Owner, userID string, sum *memory.ForgetMeSummary) ([]*memory.Memory, error) {
	d := s.db.dialect
	removed, err := forgetMeList(ctx, tx, d, owner, userID, sum)
	if err != nil {
		return nil, err
	}
	defer tx.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS forget_me_ids`) //nolint:errcheck // the rollback or commit ends it anyway
	if err := collectForgetMeIDs(ctx, tx, d, removed); err != nil {
		return nil, err
	}
	actors := []any{memory.UserActor(userID), memory.ModelActor(userID)}
	steps := []struct {
		what  string
		query string
		args  []any
		count *int
	}{
		{"history", `DELETE FROM memory_history WHERE memory_id IN (SELECT id FROM forget_me_ids) OR scope_key = ?
			OR (` + d.JSONMayHold("metadata", "subject_id") + ` AND ` + d.JSONText("metadata", "subject_id") + ` = ?)
			OR (action IN (` + ForgetMeProposalActions + `) AND ` + d.JSONMayHold("metadata", "evidence") + `
				AND EXISTS (` + sourcesWhere(d, "metadata", "= ?") + `))
			OR (action IN (` + ForgetMeProposalActions + `) AND ` + d.JSONMayHold("metadata", "conflicts_with") + `
				AND CAST(` + d.JSONText("metadata", "conflicts_with") + ` AS BIGINT) IN (SELECT id FROM forget_me_ids))`,
			[]any{owner.Key(), userID, userID}, nil},
		{"memories", `DELETE FROM memories WHERE id IN (SELECT id FROM forget_me_ids)`, nil, nil},
		{"word company", `DELETE FROM comentions WHERE scope_key = ?`, []any{owner.Key()}, nil},
		{"evidence", `DELETE FROM memory_evidence WHERE memory_id IN (SELECT id FROM forget_me_ids) OR user_id = ?`,
			[]any{userID}, nil},
		{"authorship", `UPDATE memories SET author_id = '', author_name = '', search_author = '', message_id = '' WHERE author_id = ?`,
			[]any{userID}, &sum.Anonymised},
		{"actors", `UPDATE memory_history SET actor = ? WHERE actor IN (?, ?)`, append([]any{memory.ActorForgotten}, actors...), nil},
		{"update sources", forgetMeUpdateSources(d), []any{userID}, nil},
		{"transcripts", `DELETE FROM transcripts WHERE user_id = ?`, []any{userID}, &sum.Turns},
		// Held writes keep the words they would save: those of a message of hers that
		// someone's Remember-this holds go too.
		{"confirmations", `DELETE FROM confirmations WHERE scope_key = ? OR actor = ? OR (kind = '` + confirmWrite + `' AND ` +
			d.JSONMayHold("payload", "subject_id") + ` AND ` + d.JSONText("payload", "subject_id") + ` = ?)`,
			[]any{owner.Key(), actors[0], userID}, nil},
		// Signed in to the web dashboard nowhere any more: every browser of theirs is out.
		{"web sessions", `DELETE FROM web_sessions WHERE user_id = ?`, []any{userID}, nil},
		{"embeddings", `DELETE FROM embeddings WHERE content_hash NOT IN (` + anyMemoryHashes + `)`, nil, nil},
		{"finished jobs", `UPDATE memory_jobs SET payload = ` + d.JobIDsPayload + `, last_error = CASE WHEN ` + d.Instr + `(last_error, '{') > 0
			THEN 'job failed' ELSE last_error END WHERE state IN ('done', 'dead') AND ` + d.JobBeyondIDs, nil, &sum.Jobs},
	}
	// What the erased memories added to their words' company goes with them; the last step
	// on the member's own scope drops anything left of it.
	if err := s.db.uncountTx(ctx, tx, `memory_id IN (SELECT id FROM forget_me_ids)`); err != nil {
		return nil, err
	}
	for _, st := range steps {
		n, err := execCount(ctx, tx, st.query, st.args...)
		if err != nil {
			return nil, fmt.Errorf("couldn't erase %s: %w", st.what, err)
		}
		if st.count != nil {
			*st.count = n
		}
	}
	if err := forgetMeGraphTx(ctx, tx, userID); err != nil {
		return nil, err
	}
	n, err := s.db.clearCheckpointsTx(ctx, tx)
	if err != nil {
		return nil, err
	}
	sum.Jobs += n
	if err := s.db.fenceForgottenTx(ctx, tx, userID); err != nil {
		return nil, err
	}
	if d.PurgeSearch != "" {
		if _, err := tx.ExecContext(ctx, d.PurgeSearch); err != nil {
			return nil, fmt.Errorf("couldn't purge the search of erased memories: %w", err)
		}
	}
	err = s.db.writes.addHistory(ctx, tx, memory.HistoryEvent{ScopeKey: owner.Key(), Action: memory.ActionPurge,
		Actor: memory.UserActor(userID), Reason: "forget me",
		Metadata: mustJSON(map[string]int{"memories": sum.Memories, "about": sum.About, "from_messages": sum.FromMessages,
			"anonymised": sum.Anonymised, "turns": sum.Turns, "jobs": sum.Jobs})})
	return removed, err
}

// collectForgetMeIDs puts the ids of removed in the temporary table forget_me_ids, which
// every erasing statement reads: there may be more than a statement's bound parameters can
// hold, and the list is given once, as one JSON array. Both engines keep a temporary table
// to the connection; the caller drops it before the transaction ends.
func collectForgetMeIDs(ctx context.Context, tx *txn, d *Dialect, removed []*memory.Memory) error {
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS forget_me_ids (id BIGINT PRIMARY KEY)`); err != nil {
		return fmt.Errorf("couldn't collect memories: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM forget_me_ids`); err != nil {
		return fmt.Errorf("couldn't collect memories: %w", err)
	}
	ids := make([]int64, len(removed))
	for i, m := range removed {
		ids[i] = m.ID
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO forget_me_ids (id) SELECT CAST(value AS BIGINT) FROM `+d.JSONArrayTexts, idArray(ids)); err != nil {
		return fmt.Errorf("couldn't collect memories: %w", err)
	}
	return nil
}
