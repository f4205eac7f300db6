package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// Export and import use ltm's file format (ltm.ExportFile, kioku.memories.v1) and ltm's
// rules, shared rather than repeated: ltm.ExportOf builds the document from the rows,
// ltm.ParseExport / ltm.ReadExport check a file before anything is written, and
// ltm.PrepareImport validates it and applies the importer's rules (source import, the
// importer as author, the claimed authors and channels dropped). What is PostgreSQL's own is
// reading and writing the rows: a file moves between the two stores unchanged.

// Export returns every live memory of owner's scope, oldest first.
func (s *Transfer) Export(ctx context.Context, owner memory.Owner) (ltm.ExportFile, error) {
	return s.ExportWithin(ctx, owner, nil)
}

// ExportWithin is Export of only the memories aud allows: what a member may read where the
// export is delivered (SPEC §2 "Channel-aware memory"); a nil aud exports the whole scope.
func (s *Transfer) ExportWithin(ctx context.Context, owner memory.Owner, aud *memory.Audience) (ltm.ExportFile, error) {
	if err := owner.Validate(); err != nil {
		return ltm.ExportFile{}, err
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE scope_key = ? AND deleted_at IS NULL ORDER BY id`, owner.Key())
	if err != nil {
		return ltm.ExportFile{}, fmt.Errorf("couldn't export memories: %w", err)
	}
	mems, err := collectMemories(rows)
	if err != nil {
		return ltm.ExportFile{}, fmt.Errorf("couldn't export memories: %w", err)
	}
	return ltm.ExportOf(owner, mems, aud, s.db.Now()), nil
}

// Import writes the memories of f into owner's scope for an importer without a Discord
// identity (the operator CLI): ImportAs with only the actor.
func (s *Transfer) Import(ctx context.Context, owner memory.Owner, f ltm.ExportFile, actor memory.Actor) (ltm.ImportResult, error) {
	return s.ImportAs(ctx, owner, f, ltm.Importer{Actor: actor})
}

// ImportAs writes the memories of f into owner's scope, as ltm.Transfer.ImportAs does:
// every memory is validated first and an invalid one fails the import with nothing written;
// the file's claimed authors, channels and messages are dropped, the importer is the author;
// a memory already live in the scope (as the importer sees it), or twice in the file, is
// written once. The whole file is one transaction: it lands completely or not at all.
func (s *Transfer) ImportAs(ctx context.Context, owner memory.Owner, f ltm.ExportFile, by ltm.Importer) (ltm.ImportResult, error) {
	prepared, err := ltm.PrepareImport(owner, f, by)
	if err != nil {
		return ltm.ImportResult{}, err
	}
	res, err := s.importPrepared(ctx, by.WriteContext(), prepared, by.Actor, len(prepared))
	if err != nil {
		return res, ltm.ImportLimitError(err)
	}
	return res, nil
}

// rememberManyBatch bounds each transaction of RememberMany so a bulk load never holds one
// open long (ltm's, with SQLite's single writer, is measured there).
const rememberManyBatch = 500

// RememberMany stores already-built memories in batched transactions, for callers that have
// memories rather than an export file (evaluation, benchmarks, bulk tools). Each memory is
// validated first; nothing is written if any is invalid.
func (s *Transfer) RememberMany(ctx context.Context, mems []memory.Memory, actor memory.Actor) (ltm.ImportResult, error) {
	for i := range mems {
		if err := mems[i].Prepare(); err != nil {
			return ltm.ImportResult{}, fmt.Errorf("memory %d: %w", i+1, err)
		}
	}
	return s.importPrepared(ctx, nil, mems, actor, rememberManyBatch)
}

func (s *Transfer) importPrepared(ctx context.Context, w *memory.WriteContext, prepared []memory.Memory, actor memory.Actor, batchSize int) (ltm.ImportResult, error) {
	var res ltm.ImportResult
	batchSize = max(batchSize, 1)
	for start := 0; start < len(prepared); start += batchSize {
		batch := prepared[start:min(start+batchSize, len(prepared))]
		var (
			created []*memory.Memory
			ids     []int64
		)
		err := s.db.withWriteTx(ctx, func(tx *txn) error {
			var err error
			created, ids, err = s.db.insertBatchTx(ctx, tx, w, batch, actor)
			return err
		})
		if err != nil {
			return res, fmt.Errorf("couldn't import memories: %w", err)
		}
		s.db.recall.indexMemories(ctx, created...)
		s.db.keepPlannerStats(ctx, created...)
		res.Created += len(created)
		res.Duplicates += len(batch) - len(created)
		res.IDs = append(res.IDs, ids...)
	}
	return res, nil
}

// insertRowsPerStatement is how many memories one INSERT of a bulk write carries: 50 rows ×
// 22 values stays far below PostgreSQL's 65,535 parameters per statement.
const insertRowsPerStatement = 50

// hashSlot is where a content can live only once: its scope and its content hash.
type hashSlot struct{ scopeKey, hash string }

// insertBatchTx writes the memories of batch that are not already live in their scope (or
// earlier in batch), with their history rows and graph links, in multi-row statements. It
// returns the created memories and, in batch order, the id each memory of batch now has: its
// new id, or the id of the live memory that already held its content. With a writer, only
// memories the writer can see count as already there (WriteContext).
func (s *db) insertBatchTx(ctx context.Context, tx *txn, w *memory.WriteContext, batch []memory.Memory, actor memory.Actor) ([]*memory.Memory, []int64, error) {
	// Lock every scope the batch writes, in one order, so that two bulk writes sharing
	// scopes cannot deadlock, and no other writer adds the same content meanwhile.
	scopes := make([]string, 0, 1)
	for i := range batch {
		if k := batch[i].Owner().Key(); !slices.Contains(scopes, k) {
			scopes = append(scopes, k)
		}
	}
	slices.Sort(scopes)
	for _, k := range scopes {
		if err := lockKey(ctx, tx, k); err != nil {
			return nil, nil, err
		}
	}
	ids := make([]int64, len(batch))
	existing, err := liveIDsByHash(ctx, tx, w, batch)
	if err != nil {
		return nil, nil, err
	}
	firstAt := make(map[hashSlot]int, len(batch)) // the memory of batch that writes each slot
	var fresh []int
	for i := range batch {
		k := hashSlot{batch[i].Owner().Key(), batch[i].Hash}
		if id, ok := existing[k]; ok {
			ids[i] = id
			continue
		}
		if _, dup := firstAt[k]; dup {
			continue // resolved below, once the first one has its id
		}
		firstAt[k] = i
		fresh = append(fresh, i)
	}
	if err := s.checkBatchCapsTx(ctx, tx, batch, fresh); err != nil {
		return nil, nil, err
	}

	now := s.nowMillis()
	created := make([]*memory.Memory, 0, len(fresh))
	for lo := 0; lo < len(fresh); lo += insertRowsPerStatement {
		chunk := fresh[lo:min(lo+insertRowsPerStatement, len(fresh))]
		args := make([]any, 0, insertArgsPerRow*len(chunk))
		for _, i := range chunk {
			graph.ProtectDecision(&batch[i])
			args = appendInsertArgs(args, &batch[i], now)
		}
		rows, err := tx.QueryContext(ctx, insertMemorySQL(len(chunk)), args...)
		if err != nil {
			return nil, nil, fmt.Errorf("couldn't insert memories: %w", err)
		}
		// RETURNING rows come in no promised order; a slot names its memory.
		for rows.Next() {
			m, err := scanMemory(rows)
			if err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("couldn't insert memories: %w", err)
			}
			i, ok := firstAt[hashSlot{m.Owner().Key(), m.Hash}]
			if !ok {
				rows.Close()
				return nil, nil, fmt.Errorf("couldn't insert memories: an inserted row matches no memory of the batch")
			}
			ids[i] = m.ID
			created = append(created, m)
		}
		if err := rows.Close(); err != nil {
			return nil, nil, fmt.Errorf("couldn't insert memories: %w", err)
		}
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("couldn't insert memories: %w", err)
		}
	}
	for i := range batch {
		if ids[i] == 0 {
			ids[i] = ids[firstAt[hashSlot{batch[i].Owner().Key(), batch[i].Hash}]]
		}
	}
	if err := s.addImportHistoryTx(ctx, tx, created, actor); err != nil {
		return nil, nil, err
	}
	for _, m := range created {
		if err := s.linkMemoryTx(ctx, tx, m); err != nil {
			return nil, nil, err
		}
	}
	return created, ids, nil
}

// liveIDsByHash returns, per scope and content hash of batch, the id of the oldest live
// memory holding it (that w can see, when w is given).
func liveIDsByHash(ctx context.Context, tx *txn, w *memory.WriteContext, batch []memory.Memory) (map[hashSlot]int64, error) {
	var cross bool
	if w != nil {
		var err error
		if cross, err = crossServerOf(ctx, tx, w.WriterID); err != nil {
			return nil, err
		}
	}
	byScope := map[string][]any{}
	for i := range batch {
		k := batch[i].Owner().Key()
		byScope[k] = append(byScope[k], batch[i].Hash)
	}
	out := map[hashSlot]int64{}
	for key, hashes := range byScope {
		for lo := 0; lo < len(hashes); lo += 500 {
			part := hashes[lo:min(lo+500, len(hashes))]
			rows, err := tx.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories
				WHERE scope_key = ? AND deleted_at IS NULL AND content_hash IN (`+placeholders(len(part))+`) ORDER BY id`,
				append([]any{planNow, key}, part...)...)
			if err != nil {
				return nil, fmt.Errorf("couldn't look up duplicates: %w", err)
			}
			mems, err := collectMemories(rows)
			if err != nil {
				return nil, err
			}
			for _, m := range mems {
				slot := hashSlot{key, m.Hash}
				if _, found := out[slot]; !found && (w == nil || w.CanSee(m, cross)) {
					out[slot] = m.ID
				}
			}
		}
	}
	return out, nil
}

// addImportHistoryTx records the creation of each memory of created, in multi-row
// statements: the rows insertMemoryTx writes one at a time.
func (s *db) addImportHistoryTx(ctx context.Context, tx *txn, created []*memory.Memory, actor memory.Actor) error {
	now := s.nowMillis()
	for lo := 0; lo < len(created); lo += insertRowsPerStatement {
		chunk := created[lo:min(lo+insertRowsPerStatement, len(created))]
		args := make([]any, 0, 9*len(chunk))
		for _, m := range chunk {
			args = append(args, m.ID, m.Owner().Key(), createAction(m), m.Content, actor, "import", now,
				m.GuildID, m.Provenance.ChannelID) // the memory's origin, as rememberTx records it
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO memory_history (memory_id, scope_key, action, old_content,
			new_content, version, actor, reason, metadata, created_at, new_origin_guild, new_origin_channel) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, '', ?, 1, ?, ?, '{}', ?, ?, ?),", len(chunk)), ","), args...); err != nil {
			return fmt.Errorf("couldn't record history: %w", err)
		}
	}
	return nil
}
