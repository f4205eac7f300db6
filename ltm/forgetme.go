package ltm

import (
	"context"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// ForgetMeSummary counts what forget-me erases (PreviewForgetMe) or erased
// (ConfirmForgetMe). Each memory is counted once, under the first category it falls in.
type ForgetMeSummary struct {
	Token string // set by PreviewForgetMe; ConfirmForgetMe needs it
	// Memories counts the member's personal memories, live and forgotten.
	Memories int
	// About counts other memories whose subject is the member (a server fact about them,
	// another member's Remember-this copy of their message).
	About int
	// FromMessages counts other memories learned only from the member's messages.
	FromMessages int
	// Anonymised counts memories the member authored that stay (server knowledge) but lose
	// the member's id and name.
	Anonymised int
	// Turns counts transcript turns: the member's messages and the bot's replies to them.
	Turns int
	// Jobs counts pipeline jobs whose checkpoint or finished content was cleared.
	Jobs      int
	ExpiresAt time.Time
}

// forgetMeMemories selects every memory forget-me removes, with its category (0 personal,
// 1 about the member, 2 learned only from the member's messages: created from them, or
// rewritten from them by a pipeline update, whose history row names its messages) and its
// content hash (for the vectors waiting to be stored). Arguments: the member's personal
// scope key and user id.
const forgetMeMemories = `SELECT id, scope, guild_id, user_id, content_hash,
	CASE WHEN scope_key = ?1 THEN 0 WHEN subject_id = ?2 THEN 1 ELSE 2 END
	FROM memories WHERE scope_key = ?1 OR subject_id = ?2 OR id IN (
		SELECT e.memory_id FROM memory_evidence e WHERE e.user_id = ?2 AND NOT EXISTS (
			SELECT 1 FROM memory_evidence o WHERE o.memory_id = e.memory_id AND o.user_id <> ?2))
	OR id IN (SELECT h.memory_id FROM memory_history h
		WHERE h.memory_id IN (SELECT memory_id FROM memory_evidence WHERE user_id = ?2)
			AND h.action = 'update' AND h.actor = 'pipeline' AND json_valid(h.metadata)
			AND EXISTS (SELECT 1 FROM json_each(h.metadata, '$.evidence') j WHERE json_extract(j.value, '$.user_id') = ?2)
			AND NOT EXISTS (SELECT 1 FROM json_each(h.metadata, '$.evidence') j WHERE json_extract(j.value, '$.user_id') <> ?2))`

// forgetMeUpdateSources takes the member out of the sources that the history rows of
// pipeline updates written from several members' messages name (ltm.ChangeMetadata).
const forgetMeUpdateSources = `UPDATE memory_history SET metadata = json_set(metadata, '$.evidence',
		(SELECT json_group_array(json(j.value)) FROM json_each(metadata, '$.evidence') j
			WHERE json_extract(j.value, '$.user_id') <> ?1))
	WHERE action = 'update' AND actor = 'pipeline' AND json_valid(metadata)
		AND EXISTS (SELECT 1 FROM json_each(metadata, '$.evidence') j WHERE json_extract(j.value, '$.user_id') = ?1)`

// forgetMeJobs is the condition of the jobs whose content forget-me clears: unfinished
// jobs with a checkpoint or a lease, finished jobs holding more than their ids.
func forgetMeJobs(d *Dialect) string {
	return `state = 'leased' OR (state = 'queued' AND ` + d.JobHasCheckpoint + `)
	OR (state IN ('done', 'dead') AND payload <> ` + d.JobIDsPayload + `)`
}

// PreviewForgetMe counts everything forget-me would erase for userID and returns a
// single-use token.
func (s *Confirmations) PreviewForgetMe(ctx context.Context, userID string) (ForgetMeSummary, error) {
	owner := memory.PersonalOwner(userID)
	if err := owner.Validate(); err != nil {
		return ForgetMeSummary{}, err
	}
	var sum ForgetMeSummary
	if err := s.countForgetMe(ctx, s.db.read, owner, userID, &sum); err != nil {
		return sum, err
	}
	var err error
	sum.Token, sum.ExpiresAt, err = s.db.createConfirmation(ctx, owner, confirmForgetMe, userID, memory.UserActor(userID))
	return sum, err
}

func (s *Confirmations) countForgetMe(ctx context.Context, q querier, owner memory.Owner, userID string, sum *ForgetMeSummary) error {
	removed, err := forgetMeList(ctx, q, owner, userID, sum)
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
func forgetMeList(ctx context.Context, q querier, owner memory.Owner, userID string, sum *ForgetMeSummary) ([]*memory.Memory, error) {
	rows, err := q.QueryContext(ctx, forgetMeMemories, owner.Key(), userID)
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
// evidence rows, embeddings no memory uses any more, and the checkpoints of pipeline jobs
// (which take back running jobs' leases, so nothing in flight writes their words back).
// Memories they authored that stay (server knowledge) lose their id and name, and history
// rows of their edits name ActorForgotten instead. A forget fence stops pipeline work that
// started earlier from writing about them afterwards, and the word index is merged so
// deleted words leave the file. Unlike forget, this is immediate and not recoverable: the
// preview and confirmation are the safety net. One history row without content records
// that it happened.
func (s *Confirmations) ConfirmForgetMe(ctx context.Context, userID, token string) (ForgetMeSummary, error) {
	owner := memory.PersonalOwner(userID)
	if err := owner.Validate(); err != nil {
		return ForgetMeSummary{}, err
	}
	var (
		sum     ForgetMeSummary
		removed []*memory.Memory
	)
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		sum, removed = ForgetMeSummary{}, nil
		var who string
		if err := s.db.useConfirmation(ctx, tx, owner, confirmForgetMe, token, &who); err != nil {
			return err
		}
		var err error
		if removed, err = s.forgetMeTx(ctx, tx, owner, userID, &sum); err != nil {
			return fmt.Errorf("couldn't erase data of user %s: %w", userID, err)
		}
		return nil
	})
	if err != nil {
		return ForgetMeSummary{}, err
	}
	hashes := make([]string, 0, len(removed))
	for _, m := range removed {
		s.db.unindexMemory(m)
		hashes = append(hashes, m.Hash)
	}
	// Vectors of their words waiting to be stored leave memory now (the store would skip
	// them anyway, with no live memory holding the words; one a remaining memory shares
	// is fetched again by the embedding tracker).
	s.db.recall.vectorWrites.drop(hashes)
	// Recent queries (theirs included) are cached as text; the cache refills itself.
	s.db.recall.clearQueryCache()
	return sum, nil
}

func (s *Confirmations) forgetMeTx(ctx context.Context, tx *txn, owner memory.Owner, userID string, sum *ForgetMeSummary) ([]*memory.Memory, error) {
	removed, err := forgetMeList(ctx, tx, owner, userID, sum)
	if err != nil {
		return nil, err
	}
	// The ids go through a temporary table: there may be more than SQLite's bound
	// parameter limit, and every statement below needs them.
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS forget_me_ids (id INTEGER PRIMARY KEY)`); err != nil {
		return nil, fmt.Errorf("couldn't collect memories: %w", err)
	}
	defer tx.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS temp.forget_me_ids`) //nolint:errcheck // the rollback or commit ends it anyway
	if _, err := tx.ExecContext(ctx, `DELETE FROM temp.forget_me_ids`); err != nil {
		return nil, fmt.Errorf("couldn't collect memories: %w", err)
	}
	for _, m := range removed {
		if _, err := tx.ExecContext(ctx, `INSERT INTO temp.forget_me_ids (id) VALUES (?)`, m.ID); err != nil {
			return nil, fmt.Errorf("couldn't collect memories: %w", err)
		}
	}
	actors := []any{memory.UserActor(userID), memory.ModelActor(userID)}
	steps := []struct {
		what  string
		query string
		args  []any
		count *int
	}{
		{"history", `DELETE FROM memory_history WHERE memory_id IN (SELECT id FROM temp.forget_me_ids) OR scope_key = ?
			OR (json_valid(metadata) AND json_extract(metadata, '$.subject_id') = ?)
			OR (action IN (` + ForgetMeProposalActions + `) AND json_valid(metadata) AND (
				EXISTS (SELECT 1 FROM json_each(metadata, '$.evidence') j WHERE json_extract(j.value, '$.user_id') = ?)
				OR json_extract(metadata, '$.conflicts_with') IN (SELECT id FROM temp.forget_me_ids)))`,
			[]any{owner.Key(), userID, userID}, nil},
		{"memories", `DELETE FROM memories WHERE id IN (SELECT id FROM temp.forget_me_ids)`, nil, nil},
		{"evidence", `DELETE FROM memory_evidence WHERE memory_id IN (SELECT id FROM temp.forget_me_ids) OR user_id = ?`,
			[]any{userID}, nil},
		{"authorship", `UPDATE memories SET author_id = '', author_name = '', search_author = '', message_id = '' WHERE author_id = ?`,
			[]any{userID}, &sum.Anonymised},
		{"actors", `UPDATE memory_history SET actor = ? WHERE actor IN (?, ?)`, append([]any{memory.ActorForgotten}, actors...), nil},
		{"update sources", forgetMeUpdateSources, []any{userID}, nil},
		{"transcripts", `DELETE FROM transcripts WHERE user_id = ?`, []any{userID}, &sum.Turns},
		{"confirmations", `DELETE FROM confirmations WHERE scope_key = ? OR actor = ?`, []any{owner.Key(), actors[0]}, nil},
		{"embeddings", `DELETE FROM embeddings WHERE content_hash NOT IN (` + anyMemoryHashes + `)`, nil, nil},
		{"finished jobs", `UPDATE memory_jobs SET payload = ` + s.db.dialect.JobIDsPayload + `, last_error = CASE WHEN instr(last_error, '{') > 0
			THEN 'job failed' ELSE last_error END WHERE state IN ('done', 'dead') AND payload <> ` + s.db.dialect.JobIDsPayload, nil, &sum.Jobs},
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
	// Deleting from the contentless word index only marks its entries; merging its
	// segments drops them, so the member's words leave the file.
	if err := optimizeFullText(ctx, tx, "memories_fts"); err != nil {
		return nil, err
	}
	err = s.db.addHistory(ctx, tx, memory.HistoryEvent{ScopeKey: owner.Key(), Action: memory.ActionPurge,
		Actor: memory.UserActor(userID), Reason: "forget me",
		Metadata: mustJSON(map[string]int{"memories": sum.Memories, "about": sum.About, "from_messages": sum.FromMessages,
			"anonymised": sum.Anonymised, "turns": sum.Turns, "jobs": sum.Jobs})})
	return removed, err
}

// optimizeFullText merges each named full-text index into one segment, which drops the
// entries of deleted rows for good. The contentless word index (memories_fts) needs it:
// deleting from it only records the row id until its segments merge. The trigram index
// gets the deleted text with each delete, so its secure-delete option removes the entries
// at once and it needs no merge after forget-me.
func optimizeFullText(ctx context.Context, q querier, tables ...string) error {
	for _, table := range tables {
		if _, err := q.ExecContext(ctx, `INSERT INTO `+table+` (`+table+`) VALUES ('optimize')`); err != nil {
			return fmt.Errorf("couldn't merge full-text index %s: %w", table, err)
		}
	}
	return nil
}
