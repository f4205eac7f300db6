package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// The redaction repair on PostgreSQL, as ltm's (ltm/repairs.go): when the credential rules
// of this binary (memory.SecretRulesVersion) are newer than those the store's data was
// scanned with, memories (content and tags), history, transcripts and job payloads are
// re-scanned in short batches, each saving a cursor in store_repairs (migration 0009), so a
// re-scan interrupted by a crash or a shutdown resumes where it stopped. PostgreSQL has no
// freed pages to vacuum nor columns older versions left empty: this is its only repair.

// repairPhaseSpan splits the repair's cursor into a phase (which table) and the last row id
// done in it, as in ltm.
const repairPhaseSpan = int64(1) << 40

// redactBatch is the most rows one repair transaction touches.
const redactBatch = 500

// actorRepair is the history actor of changes the upgrade repair makes.
const actorRepair = "upgrade"

// RunRepairs re-scans stored data with the current credential rules when they are newer
// than those it was scanned with (see the top of the file). It is safe to run while the
// bot serves, and cheap once done. On error (a cancelled ctx included) it returns what was
// done so far; the next run resumes.
func (s *Maintenance) RunRepairs(ctx context.Context) (ltm.RepairReport, error) {
	return s.RunRepairsWith(ctx, ltm.RepairOptions{})
}

// RunRepairsWith is RunRepairs with smaller batches or a hook after each one.
func (s *Maintenance) RunRepairsWith(ctx context.Context, opt ltm.RepairOptions) (ltm.RepairReport, error) {
	var rep ltm.RepairReport
	if opt.Batch <= 0 {
		opt.Batch = redactBatch
	}
	if err := s.db.withWriteTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, ltm.RestartRedactionSQL, memory.SecretRulesVersion, ltm.RepairRedactSecrets, memory.SecretRulesVersion)
		return err
	}); err != nil {
		return rep, fmt.Errorf("couldn't compare the credential rules: %w", err)
	}
	var cursor int64
	err := s.db.read.QueryRowContext(ctx, `SELECT cursor FROM store_repairs WHERE name = ? AND done_at IS NULL`,
		ltm.RepairRedactSecrets).Scan(&cursor)
	if errNoRows(err) {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("couldn't read pending repairs: %w", err)
	}
	var changed []int64
	err = s.runPhases(ctx, opt, cursor, []redactPhase{
		s.redactMemories(&rep, &changed),
		redactColumns("memory_history", []string{"old_content", "new_content", "reason", "metadata"}, &rep.History),
		redactColumns("transcripts", []string{"content"}, &rep.Transcripts),
		redactColumns("memory_jobs", []string{"payload", "last_error"}, &rep.Jobs),
	})
	s.reindex(ctx, changed)
	if err != nil {
		return rep, fmt.Errorf("couldn't run repair %s: %w", ltm.RepairRedactSecrets, err)
	}
	rep.Finished = append(rep.Finished, ltm.RepairRedactSecrets)
	return rep, nil
}

// redactPhase repairs up to limit rows with id > after in tx and returns the last id it
// looked at and whether rows may remain.
type redactPhase func(ctx context.Context, tx *txn, after int64, limit int) (last int64, more bool, err error)

// runPhases runs the phases from cursor, one batch per transaction, saving the cursor with
// each batch and the completion with the last.
func (s *Maintenance) runPhases(ctx context.Context, opt ltm.RepairOptions, cursor int64, phases []redactPhase) error {
	for {
		phase := int(cursor / repairPhaseSpan)
		finished := phase >= len(phases)
		err := s.db.withWriteTx(ctx, func(tx *txn) error {
			next := cursor
			if !finished {
				last, more, err := phases[phase](ctx, tx, cursor%repairPhaseSpan, opt.Batch)
				if err != nil {
					return err
				}
				next = int64(phase+1) * repairPhaseSpan
				if more {
					next = int64(phase)*repairPhaseSpan + last
				}
			}
			var done any
			if finished {
				done = s.db.nowMillis()
			}
			if _, err := tx.ExecContext(ctx, `UPDATE store_repairs SET cursor = ?, done_at = ? WHERE name = ?`,
				next, done, ltm.RepairRedactSecrets); err != nil {
				return fmt.Errorf("couldn't save repair cursor: %w", err)
			}
			cursor = next
			return nil
		})
		if err != nil || finished {
			return err
		}
		if opt.AfterBatch != nil {
			opt.AfterBatch(ltm.RepairRedactSecrets, cursor)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// redactMemories redacts credentials in memory content and drops tags that hold one. The
// row is updated in place with a new version and a history row that says what happened
// without quoting the credential; a live memory whose redacted text is already remembered
// in its scope is forgotten instead of duplicated, and the old text's vector goes.
func (s *Maintenance) redactMemories(rep *ltm.RepairReport, changed *[]int64) redactPhase {
	return func(ctx context.Context, tx *txn, after int64, limit int) (int64, bool, error) {
		type row struct {
			id                         int64
			scopeKey, text, hash, tags string
			live                       bool
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, scope_key, content, content_hash, tags, deleted_at IS NULL FROM memories
			WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
		if err != nil {
			return 0, false, fmt.Errorf("couldn't read memories: %w", err)
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.scopeKey, &r.text, &r.hash, &r.tags, &r.live); err != nil {
				rows.Close()
				return 0, false, fmt.Errorf("couldn't read memories: %w", err)
			}
			batch = append(batch, r)
		}
		if err := rows.Close(); err != nil {
			return 0, false, fmt.Errorf("couldn't read memories: %w", err)
		}
		now := s.db.nowMillis()
		for _, r := range batch {
			content := memory.RedactSecrets(r.text)
			tags, tagsChanged := memory.RedactTagsJSON(r.tags)
			if content == r.text && !tagsChanged {
				continue
			}
			content = memory.CollapseSpace(content)
			hash := memory.Hash(content)
			dupe, action, reason := false, memory.ActionUpdate, "credential redacted on upgrade"
			if r.live && hash != r.hash {
				if err := lockKey(ctx, tx, r.scopeKey); err != nil {
					return 0, false, err
				}
				dup, err := findLiveByHash(ctx, tx, r.scopeKey, hash)
				if err != nil {
					return 0, false, err
				}
				if dup != nil && dup.ID != r.id {
					dupe, action = true, memory.ActionDelete
					reason = fmt.Sprintf("credential redacted on upgrade; the rest is remembered as #%d", dup.ID)
					rep.Duplicates++
				}
			}
			var version int
			if err := tx.QueryRowContext(ctx, `UPDATE memories SET content = ?, normalized = ?, content_hash = ?, search_text = ?,
				tags = ?, deleted_at = CASE WHEN ? THEN ?::bigint ELSE deleted_at END, updated_at = ?, version = version + 1
				WHERE id = ? RETURNING version`,
				content, memory.Normalize(content), hash, storedSearchText(content), tags, dupe, now, now, r.id).Scan(&version); err != nil {
				return 0, false, fmt.Errorf("couldn't redact memory %d: %w", r.id, err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM embeddings WHERE content_hash = ?1
				AND NOT EXISTS (SELECT 1 FROM memories WHERE content_hash = ?1)`, r.hash); err != nil {
				return 0, false, fmt.Errorf("couldn't drop the vector of memory %d: %w", r.id, err)
			}
			if err := s.db.addHistory(ctx, tx, memory.HistoryEvent{MemoryID: r.id, ScopeKey: r.scopeKey, Action: action,
				Version: version, Actor: actorRepair, Reason: reason}); err != nil {
				return 0, false, err
			}
			rep.Memories++
			*changed = append(*changed, r.id)
		}
		return lastRowID(batch, func(r row) int64 { return r.id }), len(batch) == limit, nil
	}
}

// reindex puts redacted memories back in this process's vector index with their new
// text's vector (best effort, like every write path's indexing).
func (s *Maintenance) reindex(ctx context.Context, ids []int64) {
	for _, id := range ids {
		m, err := scanMemory(s.db.read.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id = ?`, id))
		if err != nil {
			continue
		}
		s.db.recall.indexMemories(ctx, m)
	}
}

// redactColumns returns a phase that redacts credentials in the text columns of table.
func redactColumns(table string, columns []string, count *int) redactPhase {
	return func(ctx context.Context, tx *txn, after int64, limit int) (int64, bool, error) {
		rows, err := tx.QueryContext(ctx, `SELECT id, `+strings.Join(columns, ", ")+` FROM `+table+
			` WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
		if err != nil {
			return 0, false, fmt.Errorf("couldn't read %s: %w", table, err)
		}
		type row struct {
			id   int64
			vals []string
		}
		var batch []row
		for rows.Next() {
			r := row{vals: make([]string, len(columns))}
			dest := []any{&r.id}
			for i := range r.vals {
				dest = append(dest, &r.vals[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return 0, false, fmt.Errorf("couldn't read %s: %w", table, err)
			}
			batch = append(batch, r)
		}
		if err := rows.Close(); err != nil {
			return 0, false, fmt.Errorf("couldn't read %s: %w", table, err)
		}
		set := strings.Join(columns, " = ?, ") + " = ?"
		for _, r := range batch {
			changed := false
			args := make([]any, 0, len(columns)+1)
			for i, v := range r.vals {
				red := ltm.RedactStoredValue(columns[i], v)
				changed = changed || red != v
				args = append(args, red)
			}
			if !changed {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+set+` WHERE id = ?`, append(args, r.id)...); err != nil {
				return 0, false, fmt.Errorf("couldn't redact %s row %d: %w", table, r.id, err)
			}
			*count++
		}
		return lastRowID(batch, func(r row) int64 { return r.id }), len(batch) == limit, nil
	}
}

func lastRowID[T any](batch []T, id func(T) int64) int64 {
	if len(batch) == 0 {
		return 0
	}
	return id(batch[len(batch)-1])
}
