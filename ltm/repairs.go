package ltm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// One-time repairs of data written by older versions (SPEC §2: existing databases are
// repaired on upgrade). Migration 0005 seeds them in store_repairs; RunRepairs runs the
// ones not done yet, in short batches that each save a cursor, so a repair interrupted by a
// crash or a shutdown resumes where it stopped and a finished one never runs again.
// RepairRedactSecrets names the redaction repair in store_repairs, on both engines.
const RepairRedactSecrets = repairRedact

const (
	repairRedact = "redact-secrets"
	repairStrip  = "strip-job-content"
	repairVacuum = "vacuum-freed-pages"
)

// repairOrder runs the redaction and the stripping before the vacuum, so the pages they
// free are cleared too. Filling the search text (migration 0007) and linking the graph
// (migration 0010) free nothing secret, so they come last, with storing the dates memories
// name (refersto.go), after the redaction that may change their words.
var repairOrder = []string{repairRedact, repairStrip, repairVacuum, repairSearchText, repairLinkGraph, repairRefersTo, repairComentions}

// repairBatch is the most rows one repair transaction touches, so the write lock is never
// held long enough for a chat turn to notice.
const repairBatch = 500

// repairPhaseSpan splits a repair's cursor into a phase (which table) and the last row id
// done in it: cursor = phase*repairPhaseSpan + id. Row ids stay far below 2^40.
const repairPhaseSpan = int64(1) << 40

// actorRepair is the history actor of changes the upgrade repairs make.
const actorRepair = "upgrade"

// RepairOptions tunes RunRepairsWith; tests use small batches and stop after one.
type RepairOptions struct {
	// Batch is the most rows one transaction touches; 0 means the default.
	Batch int
	// AfterBatch, when set, is called after each committed batch with the repair's name
	// and its saved cursor.
	AfterBatch func(name string, cursor int64)
}

// repairConfig tunes runRepairs; tests use small batches and stop after one.
type repairConfig struct {
	batch      int
	afterBatch func(name string, cursor int64) // called after each committed batch
}

// RunRepairs runs the pending one-time repairs: credentials in stored memories, history,
// transcripts and job payloads are redacted with the current detector; finished jobs lose
// their content; then the full-text indexes are merged and the file is vacuumed, so what
// was deleted before secure_delete was on leaves the file; memories written before
// search text was stored get theirs, and those written before the dates they name were
// stored get those (refers_to). It is safe to run while the bot
// serves, and cheap once everything is done. On error (a cancelled ctx included) it
// returns what was done so far; the next run resumes.
func (s *Maintenance) RunRepairs(ctx context.Context) (maintenance.RepairReport, error) {
	return s.runRepairs(ctx, repairConfig{batch: repairBatch})
}

// RunRepairsWith is RunRepairs with smaller batches or a hook after each one.
func (s *Maintenance) RunRepairsWith(ctx context.Context, opt RepairOptions) (maintenance.RepairReport, error) {
	cfg := repairConfig{batch: opt.Batch, afterBatch: opt.AfterBatch}
	if cfg.batch <= 0 {
		cfg.batch = repairBatch
	}
	return s.runRepairs(ctx, cfg)
}

// RestartRedactionSQL starts the redaction repair again from the first row when the
// detector it ran with is older than this binary's (memory.SecretRulesVersion), and
// records the new version at once: from then on the cursor it saves makes an interrupted
// re-scan resume, not restart. Arguments: the repair's name, the version, the version.
const RestartRedactionSQL = `UPDATE store_repairs SET cursor = 0, done_at = NULL, rules = ? WHERE name = ? AND rules < ?`

func (s *Maintenance) runRepairs(ctx context.Context, cfg repairConfig) (maintenance.RepairReport, error) {
	var rep maintenance.RepairReport
	if err := s.db.withWriteTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, RestartRedactionSQL, memory.SecretRulesVersion, repairRedact, memory.SecretRulesVersion)
		return err
	}); err != nil {
		return rep, fmt.Errorf("couldn't compare the credential rules: %w", err)
	}
	// Memories a process marked and did not count before it stopped are counted now: a
	// process counts what it marks, and any write's counting takes the others' too, but a
	// crash can leave some waiting with no write to come.
	if err := s.db.flushWordCompany(ctx); err != nil {
		return rep, err
	}
	pending := map[string]int64{}
	rows, err := s.db.read.QueryContext(ctx, `SELECT name, cursor FROM store_repairs WHERE done_at IS NULL`)
	if err != nil {
		return rep, fmt.Errorf("couldn't read pending repairs: %w", err)
	}
	for rows.Next() {
		var (
			name   string
			cursor int64
		)
		if err := rows.Scan(&name, &cursor); err != nil {
			rows.Close()
			return rep, fmt.Errorf("couldn't read pending repairs: %w", err)
		}
		pending[name] = cursor
	}
	if err := rows.Close(); err != nil {
		return rep, fmt.Errorf("couldn't read pending repairs: %w", err)
	}
	for _, name := range repairOrder {
		cursor, ok := pending[name]
		if !ok {
			continue
		}
		switch name {
		case repairRedact:
			var changed []int64
			err = s.runPhases(ctx, cfg, name, cursor, []repairPhase{
				s.redactMemories(&rep, &changed), redactHistory(&rep), redactTranscripts(&rep), redactJobs(&rep)})
			reindexed(ctx, s.db, changed)
		case repairStrip:
			err = s.runPhases(ctx, cfg, name, cursor, []repairPhase{stripJobs(s.db.dialect, &rep)})
		case repairSearchText:
			err = s.runPhases(ctx, cfg, name, cursor, []repairPhase{fillSearchText(&rep.SearchText)})
		case repairLinkGraph:
			err = s.runPhases(ctx, cfg, name, cursor, []repairPhase{s.linkGraph(&rep.Linked)})
		case repairRefersTo:
			err = s.runPhases(ctx, cfg, name, cursor, []repairPhase{fillRefersTo(&rep.RefersTo)})
		case repairComentions:
			err = s.runPhases(ctx, cfg, name, cursor, []repairPhase{s.db.fillComentions(&rep.Comentions)})
		case repairVacuum:
			err = s.vacuum(ctx, &rep)
		}
		if err != nil {
			return rep, fmt.Errorf("couldn't run repair %s: %w", name, err)
		}
		rep.Finished = append(rep.Finished, name)
	}
	return rep, nil
}

// repairPhase repairs up to limit rows with id > after in tx and returns the last id it
// looked at and whether rows may remain.
type repairPhase func(ctx context.Context, tx *txn, after int64, limit int) (last int64, more bool, err error)

// runPhases runs a repair's phases from cursor, one batch per transaction, saving the
// cursor with each batch and the completion with the last.
func (s *Maintenance) runPhases(ctx context.Context, cfg repairConfig, name string, cursor int64, phases []repairPhase) error {
	for {
		phase := int(cursor / repairPhaseSpan)
		finished := phase >= len(phases)
		err := s.db.withWriteTx(ctx, func(tx *txn) error {
			next := cursor
			if !finished {
				last, more, err := phases[phase](ctx, tx, cursor%repairPhaseSpan, cfg.batch)
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
				next, done, name); err != nil {
				return fmt.Errorf("couldn't save repair cursor: %w", err)
			}
			cursor = next
			return nil
		})
		if err != nil {
			return err
		}
		if finished {
			return nil
		}
		if cfg.afterBatch != nil {
			cfg.afterBatch(name, cursor)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// redactMemories redacts credentials in memory content. The row is updated in place, so the
// full-text triggers replace its index entries; a live memory whose redacted text is
// already remembered in its scope is forgotten instead of duplicated. The history row says
// what happened without quoting the credential, and the old text's vector goes.
func (s *Maintenance) redactMemories(rep *maintenance.RepairReport, changed *[]int64) repairPhase {
	return func(ctx context.Context, tx *txn, after int64, limit int) (int64, bool, error) {
		type row struct {
			id, created                int64
			scopeKey, text, hash, tags string
			live                       bool
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, scope_key, content, content_hash, tags, deleted_at IS NULL, created_at
			FROM memories WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
		if err != nil {
			return 0, false, fmt.Errorf("couldn't read memories: %w", err)
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.scopeKey, &r.text, &r.hash, &r.tags, &r.live, &r.created); err != nil {
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
				// The scope's dedup lock, as a write's: a memory of the same text written
				// meanwhile by another writer is seen.
				if err := s.db.eng.LockKey(ctx, tx, r.scopeKey); err != nil {
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
			refersTo, refersToEnd := spanColumns(referredSpan(content, r.created))
			if err := tx.QueryRowContext(ctx, `UPDATE memories SET content = ?, normalized = ?, content_hash = ?, search_text = ?,
				tags = ?, refers_to = ?, refers_to_end = ?, deleted_at = CASE WHEN ? THEN CAST(? AS BIGINT) ELSE deleted_at END,
				updated_at = ?, version = version + 1 WHERE id = ? RETURNING version`,
				content, memory.Normalize(content), hash, s.db.dialect.searchTextColumn(content), tags, refersTo, refersToEnd,
				dupe, now, now, r.id).Scan(&version); err != nil {
				return 0, false, fmt.Errorf("couldn't redact memory %d: %w", r.id, err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM embeddings WHERE content_hash = ?1
				AND NOT `+memoryHoldsHash("?1"), r.hash); err != nil {
				return 0, false, fmt.Errorf("couldn't drop the vector of memory %d: %w", r.id, err)
			}
			if err := s.db.markWordsTx(ctx, tx, r.id); err != nil {
				return 0, false, err
			}
			if err := s.db.writes.addHistory(ctx, tx, memory.HistoryEvent{MemoryID: r.id, ScopeKey: r.scopeKey, Action: action,
				Version: version, Actor: actorRepair, Reason: reason}); err != nil {
				return 0, false, err
			}
			rep.Memories++
			*changed = append(*changed, r.id)
		}
		return lastID(batch, func(r row) int64 { return r.id }), len(batch) == limit, nil
	}
}

// redactColumns returns a phase that redacts credentials in the text columns of table.
func redactColumns(table string, columns []string, count *int) repairPhase {
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
				red := redactValue(columns[i], v)
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
		return lastID(batch, func(r row) int64 { return r.id }), len(batch) == limit, nil
	}
}

func redactHistory(rep *maintenance.RepairReport) repairPhase {
	return redactColumns("memory_history", []string{"old_content", "new_content", "reason", "metadata"}, &rep.History)
}

func redactTranscripts(rep *maintenance.RepairReport) repairPhase {
	return redactColumns("transcripts", []string{"content"}, &rep.Transcripts)
}

func redactJobs(rep *maintenance.RepairReport) repairPhase {
	return redactColumns("memory_jobs", []string{"payload", "last_error"}, &rep.Jobs)
}

// RedactStoredValue redacts one stored value of a column the redaction repair scans. A
// JSON payload or history metadata is redacted string by string, so the result is still
// the same JSON with only the credentials replaced.
func RedactStoredValue(column, v string) string { return redactValue(column, v) }

func redactValue(column, v string) string {
	if column != "payload" && column != "metadata" {
		return memory.RedactSecrets(v)
	}
	var doc any
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return memory.RedactSecrets(v)
	}
	changed := false
	doc = redactJSON(doc, &changed)
	if !changed {
		return v
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return memory.RedactSecrets(v)
	}
	return string(b)
}

func redactJSON(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		red := memory.RedactSecrets(x)
		*changed = *changed || red != x
		return red
	case []any:
		for i := range x {
			x[i] = redactJSON(x[i], changed)
		}
	case map[string]any:
		for k := range x {
			x[k] = redactJSON(x[k], changed)
		}
	}
	return v
}

// stripJobs reduces finished jobs written by older versions to their ids, and their error
// text to the kind of problem.
func stripJobs(d *Dialect, rep *maintenance.RepairReport) repairPhase {
	return func(ctx context.Context, tx *txn, after int64, limit int) (int64, bool, error) {
		type row struct {
			id               int64
			payload, lastErr string
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, payload, last_error FROM memory_jobs
			WHERE id > ? AND state IN ('done', 'dead') ORDER BY id LIMIT ?`, after, limit)
		if err != nil {
			return 0, false, fmt.Errorf("couldn't read finished jobs: %w", err)
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.payload, &r.lastErr); err != nil {
				rows.Close()
				return 0, false, fmt.Errorf("couldn't read finished jobs: %w", err)
			}
			batch = append(batch, r)
		}
		if err := rows.Close(); err != nil {
			return 0, false, fmt.Errorf("couldn't read finished jobs: %w", err)
		}
		for _, r := range batch {
			lastErr := r.lastErr
			if lastErr != "" {
				lastErr = cleanJobError(lastErr, r.payload)
			}
			n, err := execCount(ctx, tx, `UPDATE memory_jobs SET payload = `+d.JobIDsPayload+`, last_error = ?
				WHERE id = ? AND (payload <> `+d.JobIDsPayload+` OR last_error <> ?)`, lastErr, r.id, lastErr)
			if err != nil {
				return 0, false, fmt.Errorf("couldn't strip job %d: %w", r.id, err)
			}
			rep.Stripped += n
		}
		return lastID(batch, func(r row) int64 { return r.id }), len(batch) == limit, nil
	}
}

// vacuum has the engine erase what deletes of older versions left readable (on SQLite it
// merges the full-text indexes, dropping the entries of deleted rows, and rebuilds the file
// without its freed pages; Upkeep.EraseDeleted), then records the repair done.
func (s *Maintenance) vacuum(ctx context.Context, rep *maintenance.RepairReport) error {
	if err := s.db.upkeep.EraseDeleted(ctx); err != nil {
		return err
	}
	rep.Vacuumed = true
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE store_repairs SET done_at = ? WHERE name = ?`, s.db.nowMillis(), repairVacuum); err != nil {
			return fmt.Errorf("couldn't record the vacuum: %w", err)
		}
		return nil
	})
}

func lastID[T any](batch []T, id func(T) int64) int64 {
	if len(batch) == 0 {
		return 0
	}
	return id(batch[len(batch)-1])
}
