package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// Words that travel together (SPEC §5). Within a scope, the words of one memory
// (recall.AssocTerms) are counted in pairs in the comentions table, and a question's words
// expand, at the low weight Stages.CoMention, to the words its scope most often keeps beside
// them. Counts are kept apart for every origin guild and channel of a scope (a bucket), so a
// question adds up exactly the buckets its asker may see: a word said only in a channel the
// asker cannot read never reaches their question, nor moves a count they read.
//
// comention_memories records what each memory added (its bucket and words). A write that
// changes a memory's words, its liveness or its origin only marks the memory's record
// pending, one row in the write's transaction; the store counts pending memories a moment
// later, many per transaction (flushWordCompany), where the pairs that several memories
// share are written once: counting in the write itself tripled the time of a remember.
// Counting takes back what the record says the memory added and adds what it holds now.
// Erasures (forget-me, guild purge) take back what the erased memories added inside their
// own transaction (uncountTx), so an erased word never waits in the counts. A pair no memory
// holds any more is deleted, not left at zero, so its words go with the last memory that
// held them. Memories written before the table existed are counted by the resumable repair
// fill-comentions.

// RepairComentions names, in store_repairs on both engines, the backfill of comentions for
// the memories written before SQLite's migration 0025 and PostgreSQL's 0013.
const RepairComentions = repairComentions

const repairComentions = "fill-comentions"

// Association settings: how strongly two words must travel together before a question's
// word expands to the other, and how many expansions a question gets.
const (
	// assocMinTogether is how many visible memories must hold both words.
	assocMinTogether = 2
	// assocMinStrength is the least Ochiai coefficient, together / √(held(a) × held(b)):
	// 1 when the two words always come together, near 0 when one is everywhere.
	assocMinStrength = 0.3
	// assocMaxExpansions bounds the words one question expands to.
	assocMaxExpansions = 6
	// assocMaxHeld skips question words the asker's scopes hold in more than this many
	// memories: a common word's company is much of the scope, and reading it is what costs.
	// The dev sets score the same from 20 to 400.
	assocMaxHeld = 20
	// wordCompanyBatch is how many pending memories one counting transaction takes.
	wordCompanyBatch = 500
)

// wordCompanyDelay is how long the memories a single write marked wait for others to be
// counted with.
const wordCompanyDelay = 50 * time.Millisecond

// comentionBucket is one origin within a scope: the unit of visibility the counts keep.
type comentionBucket struct {
	scopeKey, guildID, channelID string
}

// comentionKey is one counted pair of one bucket; partner "" is the word on its own (how
// many memories hold it).
type comentionKey struct {
	comentionBucket
	term, partner string
}

// comentionDelta collects the changes to comentions of one transaction, so that each pair is
// written once (PostgreSQL refuses a statement that upserts a row twice).
type comentionDelta map[comentionKey]int

// add counts the words of one memory of bucket b, sign times: every ordered pair of
// distinct words, and each word on its own.
func (d comentionDelta) add(b comentionBucket, terms []string, sign int) {
	for _, a := range terms {
		d[comentionKey{b, a, ""}] += sign
		for _, p := range terms {
			if p != a {
				d[comentionKey{b, a, p}] += sign
			}
		}
	}
}

// countedMemory is what comention_memories records of one memory.
type countedMemory struct {
	id     int64
	bucket comentionBucket
	terms  []string
}

func bucketOf(m *memory.Memory) comentionBucket {
	return comentionBucket{m.Owner().Key(), m.GuildID, m.Provenance.ChannelID}
}

// markWordsSQL marks the memories (a JSON array of ids) to be counted again. WHERE is
// required by SQLite's grammar before an upsert's ON CONFLICT.
func markWordsSQL(d *Dialect) string {
	return `INSERT INTO comention_memories (memory_id, scope_key, guild_id, channel_id, terms, pending)
		SELECT CAST(value AS BIGINT), '', '', '', '', 1 FROM ` + d.JSONArrayTexts + ` WHERE true
		ON CONFLICT (memory_id) DO UPDATE SET pending = 1`
}

// markWordsTx marks memories whose words, liveness or origin tx changed to be counted again
// once it commits (writeTx wakes the counting).
func (s *db) markWordsTx(ctx context.Context, tx *txn, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	if _, err := s.stmts.on(tx).ExecContext(ctx, s.markWords, string(list)); err != nil {
		return fmt.Errorf("couldn't mark memories to count their words: %w", err)
	}
	tx.wordsMarked = true
	return nil
}

// countNewTx counts the words of memories tx inserted, in tx: a bulk write's batch, where
// the pairs of a thousand memories are written at once and SQLite's log stays bounded by
// the batches (a counting running beside an import kept it from starting over).
func countNewTx(ctx context.Context, tx *txn, mems []*memory.Memory) error {
	delta := comentionDelta{}
	var now []countedMemory
	for _, m := range mems {
		if c := (countedMemory{id: m.ID, bucket: bucketOf(m), terms: recall.AssocTerms(m.Content)}); len(c.terms) > 0 {
			delta.add(c.bucket, c.terms, 1)
			now = append(now, c)
		}
	}
	if err := delta.apply(ctx, tx); err != nil {
		return err
	}
	return recordCounts(ctx, tx, now)
}

// flushWordCompany counts every pending memory, wordCompanyBatch per transaction. One
// flush runs at a time in a process, so one that returns has seen the end of any other (on
// PostgreSQL a flush skips the memories another is counting).
func (s *db) flushWordCompany(ctx context.Context) error {
	s.wordsMu.Lock()
	defer s.wordsMu.Unlock()
	for {
		n, err := 0, error(nil)
		err = s.withBookkeepingTx(ctx, func(tx *txn) error {
			n, err = s.countPendingTx(ctx, tx, `pending = 1`, nil, wordCompanyBatch)
			return err
		})
		if err != nil || n < wordCompanyBatch {
			return err
		}
		// Counting a large import is a bulk write of its own: SQLite's log is let to
		// start over between its batches, as between an import's.
		if b, ok := s.eng.(BulkBatches); ok {
			b.BatchCommitted(ctx)
		}
	}
}

// FlushWordCompany counts the memories whose words wait to be counted now rather than a
// moment later: tests, and an operator's check, read the counts after it.
func (s *Maintenance) FlushWordCompany(ctx context.Context) error { return s.db.flushWordCompany(ctx) }

// countPendingTx counts up to limit memories whose records where selects (over
// comention_memories), by id: what each record says the memory added is taken back, what the
// memory holds now is added, and the record is brought up to date (deleted when the memory
// is gone, forgotten or holds no words). On PostgreSQL the records are locked, skipping
// those another process is counting. It returns how many records it took.
func (s *db) countPendingTx(ctx context.Context, tx *txn, where string, args []any, limit int) (int, error) {
	recorded, err := readRecorded(ctx, tx, where+` ORDER BY memory_id LIMIT ?`+s.dialect.SkipLocked, append(args, limit)...)
	if err != nil || len(recorded) == 0 {
		return 0, err
	}
	ids := make([]any, len(recorded))
	for i, r := range recorded {
		ids[i] = r.id
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id IN (`+placeholders(len(ids))+`)`, ids...)
	if err != nil {
		return 0, fmt.Errorf("couldn't read memories: %w", err)
	}
	mems, err := collectMemories(rows)
	if err != nil {
		return 0, err
	}
	delta := comentionDelta{}
	for _, r := range recorded {
		delta.add(r.bucket, r.terms, -1)
	}
	var now []countedMemory
	for _, m := range mems {
		if m.Deleted() {
			continue
		}
		if c := (countedMemory{id: m.ID, bucket: bucketOf(m), terms: recall.AssocTerms(m.Content)}); len(c.terms) > 0 {
			delta.add(c.bucket, c.terms, 1)
			now = append(now, c)
		}
	}
	if err := delta.apply(ctx, tx); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM comention_memories WHERE memory_id IN (`+placeholders(len(ids))+`)`,
		ids...); err != nil {
		return 0, fmt.Errorf("couldn't update what memories add to their words' company: %w", err)
	}
	if err := recordCounts(ctx, tx, now); err != nil {
		return 0, err
	}
	return len(recorded), nil
}

// uncountTx takes back, inside an erasure's transaction, what the memories matching where
// (a condition on comention_memories' memory_id) added, and drops their records; the erased
// rows may be deleted before or after. On PostgreSQL the records are locked first, so a
// counting under way in another process finishes before they are read.
func (s *db) uncountTx(ctx context.Context, tx *txn, where string, args ...any) error {
	recorded, err := readRecorded(ctx, tx, where+s.dialect.LockRows, args...)
	if err != nil || len(recorded) == 0 {
		return err
	}
	delta := comentionDelta{}
	ids := make([]any, 0, len(recorded))
	for _, r := range recorded {
		delta.add(r.bucket, r.terms, -1)
		ids = append(ids, r.id)
	}
	if err := delta.apply(ctx, tx); err != nil {
		return err
	}
	for lo := 0; lo < len(ids); lo += 500 {
		chunk := ids[lo:min(lo+500, len(ids))]
		if _, err := tx.ExecContext(ctx, `DELETE FROM comention_memories WHERE memory_id IN (`+placeholders(len(chunk))+`)`,
			chunk...); err != nil {
			return fmt.Errorf("couldn't drop what memories added to their words' company: %w", err)
		}
	}
	return nil
}

// uncountIDsTx is uncountTx for a list of memory ids.
func (s *db) uncountIDsTx(ctx context.Context, tx *txn, ids []int64) error {
	for lo := 0; lo < len(ids); lo += 500 {
		chunk := ids[lo:min(lo+500, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		if err := s.uncountTx(ctx, tx, `memory_id IN (`+placeholders(len(chunk))+`)`, args...); err != nil {
			return err
		}
	}
	return nil
}

// readRecorded reads the records of comention_memories that where (with its ORDER BY,
// LIMIT or lock) selects.
func readRecorded(ctx context.Context, q querier, where string, args ...any) ([]countedMemory, error) {
	rows, err := q.QueryContext(ctx, `SELECT memory_id, scope_key, guild_id, channel_id, terms FROM comention_memories
		WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("couldn't read what memories add to their words' company: %w", err)
	}
	defer rows.Close()
	var out []countedMemory
	for rows.Next() {
		var (
			c     countedMemory
			terms string
		)
		if err := rows.Scan(&c.id, &c.bucket.scopeKey, &c.bucket.guildID, &c.bucket.channelID, &terms); err != nil {
			return nil, fmt.Errorf("couldn't read what memories add to their words' company: %w", err)
		}
		c.terms = strings.Fields(terms)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read what memories add to their words' company: %w", err)
	}
	return out, nil
}

// recordCounts records what each memory now adds.
func recordCounts(ctx context.Context, tx *txn, now []countedMemory) error {
	const perRow = 5
	for lo := 0; lo < len(now); lo += 100 {
		chunk := now[lo:min(lo+100, len(now))]
		args := make([]any, 0, len(chunk)*perRow)
		for _, c := range chunk {
			args = append(args, c.id, c.bucket.scopeKey, c.bucket.guildID, c.bucket.channelID, strings.Join(c.terms, " "))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO comention_memories (memory_id, scope_key, guild_id, channel_id, terms)
			VALUES `+valueRows(len(chunk), perRow), args...); err != nil {
			return fmt.Errorf("couldn't record what memories add to their words' company: %w", err)
		}
	}
	return nil
}

// valueRows is the VALUES list of rows rows of perRow placeholders each.
func valueRows(rows, perRow int) string {
	one := "(" + placeholders(perRow) + ")"
	return strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
}

// addPairsSQL adds to comentions the pairs of a JSON array of [scope key, word, partner,
// guild, channel, n] rows, in one statement whatever their number, so it stays prepared.
// WHERE is required by SQLite's grammar before an upsert's ON CONFLICT.
func addPairsSQL(d *Dialect) string {
	return `INSERT INTO comentions (scope_key, term, partner, guild_id, channel_id, n)
		SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, CAST(value ->> 5 AS BIGINT)
		FROM ` + d.JSONArrayValues + ` WHERE true
		ON CONFLICT (scope_key, term, partner, guild_id, channel_id) DO UPDATE SET n = comentions.n + excluded.n`
}

// dropEmptyPairsSQL deletes the pairs no memory holds any more, through the partial index
// of such rows.
const dropEmptyPairsSQL = `DELETE FROM comentions WHERE n <= 0`

// apply writes the delta, in a fixed order (two writers of the same pairs take
// PostgreSQL's row locks in the same order and never deadlock), then deletes the pairs no
// memory holds any more.
func (d comentionDelta) apply(ctx context.Context, tx *txn) error {
	keys := make([]comentionKey, 0, len(d))
	shrunk := false
	for k, n := range d {
		if n != 0 {
			keys = append(keys, k)
			shrunk = shrunk || n < 0
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.SortFunc(keys, func(a, b comentionKey) int {
		return slices.Compare([]string{a.scopeKey, a.term, a.partner, a.guildID, a.channelID},
			[]string{b.scopeKey, b.term, b.partner, b.guildID, b.channelID})
	})
	q := tx.eng.Dialect()
	for lo := 0; lo < len(keys); lo += 2000 {
		chunk := keys[lo:min(lo+2000, len(keys))]
		rows := make([][6]any, len(chunk))
		for i, k := range chunk {
			rows[i] = [6]any{k.scopeKey, k.term, k.partner, k.guildID, k.channelID, strconv.Itoa(d[k])}
		}
		list, err := json.Marshal(rows)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, addPairsSQL(q), string(list)); err != nil {
			return fmt.Errorf("couldn't count which words travel together: %w", err)
		}
	}
	if !shrunk {
		return nil
	}
	if _, err := tx.ExecContext(ctx, dropEmptyPairsSQL); err != nil {
		return fmt.Errorf("couldn't drop words no memory holds: %w", err)
	}
	return nil
}

// fillComentions returns a phase that counts the live memories not counted yet, by id.
func (s *db) fillComentions(counted *int) repairPhase {
	return func(ctx context.Context, tx *txn, after int64, limit int) (int64, bool, error) {
		var ids []int64
		err := queryEach(ctx, tx, `SELECT m.id FROM memories m WHERE m.id > ? AND m.deleted_at IS NULL
			AND NOT EXISTS (SELECT 1 FROM comention_memories c WHERE c.memory_id = m.id)
			ORDER BY m.id LIMIT ?`, []any{after, limit}, func(rows *sql.Rows) error {
			var id int64
			err := rows.Scan(&id)
			ids = append(ids, id)
			return err
		})
		if err != nil {
			return 0, false, fmt.Errorf("couldn't read memories: %w", err)
		}
		if len(ids) == 0 {
			return after, false, nil
		}
		// A memory a write marked since the repair began is left to the counting that
		// write woke.
		if err := s.markWordsTx(ctx, tx, ids...); err != nil {
			return 0, false, err
		}
		list := make([]any, len(ids))
		for i, id := range ids {
			list[i] = id
		}
		n, err := s.countPendingTx(ctx, tx, `pending = 1 AND memory_id IN (`+placeholders(len(ids))+`)`, list, len(ids))
		if err != nil {
			return 0, false, err
		}
		*counted += n
		return ids[len(ids)-1], len(ids) == limit, nil
	}
}
