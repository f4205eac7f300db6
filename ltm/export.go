package ltm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// Export returns every live memory of owner's scope, oldest first.
func (s *Transfer) Export(ctx context.Context, owner memory.Owner) (memory.ExportFile, error) {
	return s.ExportWithin(ctx, owner, nil)
}

// ExportWithin is Export of only the memories aud allows: what a member may read where the
// export is delivered (SPEC §2 "Channel-aware memory"); a nil aud exports the whole scope.
func (s *Transfer) ExportWithin(ctx context.Context, owner memory.Owner, aud *memory.Audience) (memory.ExportFile, error) {
	if err := owner.Validate(); err != nil {
		return memory.ExportFile{}, err
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE scope_key = ? AND deleted_at IS NULL ORDER BY id`, owner.Key())
	if err != nil {
		return memory.ExportFile{}, fmt.Errorf("couldn't export memories: %w", err)
	}
	mems, err := collectMemories(rows)
	if err != nil {
		return memory.ExportFile{}, err
	}
	return ExportOf(owner, mems, aud, s.db.Now()), nil
}

// ExportOf builds the export document of owner's scope from its live memories (in the order
// given, oldest first), keeping only those aud allows (nil allows all), exported at now. It
// is the part of ExportWithin every store shares: each reads the rows its own way.
func ExportOf(owner memory.Owner, mems []*memory.Memory, aud *memory.Audience, now time.Time) memory.ExportFile {
	f := memory.ExportFile{Format: memory.ExportFormat, Scope: owner.Scope, GuildID: owner.GuildID, UserID: owner.UserID,
		ExportedAt: now.UTC(), Memories: make([]memory.ExportMemory, 0, len(mems))}
	if owner.Scope == memory.ScopePersonal {
		f.GuildID = ""
	}
	for _, m := range mems {
		if !aud.Allows(m) {
			continue
		}
		em := memory.ExportMemory{ID: m.ID, Type: m.Type, Content: m.Content, Confidence: m.Confidence,
			Importance: m.Importance, Pinned: m.Pinned, Tags: m.Tags, Source: m.Source, Provenance: m.Provenance,
			CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
		if owner.Scope == memory.ScopePersonal {
			em.GuildID = m.GuildID
		}
		f.Memories = append(f.Memories, em)
	}
	return f
}

// Import writes the memories of f into owner's scope for an importer without a Discord
// identity (the operator CLI): ImportAs with only the actor.
func (s *Transfer) Import(ctx context.Context, owner memory.Owner, f memory.ExportFile, actor memory.Actor) (memory.ImportResult, error) {
	return s.ImportAs(ctx, owner, f, memory.Importer{Actor: actor})
}

// ImportAs writes the memories of f into owner's scope, whatever scope they were exported
// from (so a server's memory can move to another server). Every memory is validated first;
// if any is invalid nothing is written and the error names it. Content, type, confidence,
// importance, pinning, tags and timestamps are kept; identical memories are not duplicated.
//
// A file is the importer's word, not evidence of who said what: the author ids, names,
// channels and messages it claims are dropped, never kept as provenance, subject or
// evidence, so a forged file cannot make another member the author or subject of a memory
// or place a memory in a channel it was never learned in. Each memory records the importer
// as its author and the place of the import as its origin.
func (s *Transfer) ImportAs(ctx context.Context, owner memory.Owner, f memory.ExportFile, by memory.Importer) (memory.ImportResult, error) {
	prepared, err := PrepareImport(owner, f, by)
	if err != nil {
		return memory.ImportResult{}, err
	}
	var before int
	if err := s.db.read.QueryRowContext(ctx, `SELECT coalesce((SELECT live FROM memory_counts WHERE scope_key = ?), 0)`,
		owner.Key()).Scan(&before); err != nil {
		return memory.ImportResult{}, fmt.Errorf("couldn't count the scope's memories: %w", err)
	}
	// One transaction for the whole file (at most MaxImportMemories rows): an import either
	// lands completely or not at all.
	res, err := s.importPrepared(ctx, by.WriteContext(), prepared, by.Actor, len(prepared))
	if err != nil {
		return res, ImportLimitError(err)
	}
	if before == 0 {
		return res, nil // nothing was there to say again
	}
	if res.Similar, err = s.flagSimilar(ctx, by.WriteContext(), owner, res.IDs, by.Actor); err != nil {
		return res, fmt.Errorf("imported %d memories, but couldn't look for near-duplicates: %w", res.Created, err)
	}
	return res, nil
}

// PrepareImport turns the memories of f into validated memories of owner's scope as by
// imports them (see ImportAs): the part of an import every store shares, before anything is
// written. If any memory is invalid it returns an error naming it and nothing else.
func PrepareImport(owner memory.Owner, f memory.ExportFile, by memory.Importer) ([]memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	prepared := make([]memory.Memory, len(f.Memories))
	for i, em := range f.Memories {
		m := memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID, UserID: owner.UserID, Type: em.Type,
			Content: em.Content, Confidence: em.Confidence, Importance: em.Importance, Pinned: em.Pinned,
			Tags: em.Tags, Source: memory.SourceImport, CreatedAt: em.CreatedAt, UpdatedAt: em.UpdatedAt,
			Provenance: memory.Provenance{AuthorID: by.AuthorID, Author: by.AuthorName}}
		if owner.Scope == memory.ScopePersonal {
			// The origin of one's own personal memory only decides where the owner's
			// memories are used, which the owner may choose anyway (cross-server use).
			m.GuildID = em.GuildID
		}
		if m.GuildID != "" && m.GuildID == by.GuildID {
			// Learned where the import ran: the channel rule of that place applies.
			m.Provenance.ChannelID, m.Provenance.MessageID = by.ChannelID, by.MessageID
		}
		if err := m.Prepare(); err != nil {
			return nil, memory.Errorf(memory.EINVALID, "Memory %d of the file: %s Nothing was imported.", i+1, memory.ErrorMessage(err))
		}
		prepared[i] = m
	}
	return prepared, nil
}

// ImportLimitError says of a cap refusal that it refused the whole file; other errors (and
// nil) are returned as they are.
func ImportLimitError(err error) error {
	if memory.ErrorCode(err) == memory.ELIMIT {
		return memory.Errorf(memory.ELIMIT, "%s Nothing was imported.", memory.ErrorMessage(err))
	}
	return err
}

// rememberManyBatch bounds each write transaction of RememberMany so a bulk load never holds
// the write lock long enough to stall chat turns: about 0.1 s at 10,000 memories a second.
// Each transaction writes most leaves of the indexes keyed by content hash (random places),
// so fewer, larger ones write less: 500 a transaction loaded 100k memories about 13% slower.
const rememberManyBatch = 1000

func (s *Transfer) importPrepared(ctx context.Context, w *memory.WriteContext, prepared []memory.Memory, actor memory.Actor, batchSize int) (memory.ImportResult, error) {
	var res memory.ImportResult
	embeds := bulkEmbed{db: s.db}
	defer embeds.finish(ctx)
	analysed := analyseBulk(prepared)
	defer analysed.close()
	if len(prepared) >= insertRowsPerStatement {
		s.db.prepareBulk(ctx)
	}
	batchSize = max(batchSize, 1)
	for start := 0; start < len(prepared); start += batchSize {
		end := min(start+batchSize, len(prepared))
		batch := prepared[start:end]
		var (
			created []*memory.Memory
			ids     []int64
		)
		// The previous batch's vectors go in with this batch (see bulkEmbed).
		prev := embeds.wait()
		analysed.wait(start, end)
		err := s.db.withWriteTx(ctx, func(tx *txn) error {
			var err error
			if created, ids, err = s.insertBatchTx(ctx, tx, w, batch, analysed.ents[start:end], actor); err != nil {
				return err
			}
			return embeds.storeTx(ctx, tx, prev)
		})
		if err != nil {
			embeds.unstored = prev // stored by finish: its memories are committed
			return res, fmt.Errorf("couldn't import memories: %w", err)
		}
		if b, ok := s.db.eng.(BulkBatches); ok {
			b.BatchCommitted(ctx)
		}
		s.db.eng.Written(ctx, created, nil)
		embeds.index(prev)
		res.Created += len(created)
		res.Duplicates += len(batch) - len(created)
		res.IDs = append(res.IDs, ids...)
		embeds.start(ctx, created)
	}
	return res, nil
}

// RememberMany stores already-built memories in batched transactions for callers that have
// memories rather than an export file (evaluation, benchmarks, bulk tools). Each memory is
// validated first; nothing is written if any is invalid.
func (s *Transfer) RememberMany(ctx context.Context, mems []memory.Memory, actor memory.Actor) (memory.ImportResult, error) {
	for i := range mems {
		if err := mems[i].Prepare(); err != nil {
			return memory.ImportResult{}, fmt.Errorf("memory %d: %w", i+1, err)
		}
	}
	return s.importPrepared(ctx, nil, mems, actor, rememberManyBatch)
}

// insertRowsPerStatement is how many memories one INSERT statement of a bulk write carries.
// Each statement that writes the full-text indexes makes FTS5 flush its pending terms to
// disk (it does so at every statement savepoint) and compiles the memories table's triggers
// anew, so a batch of RememberMany (rememberManyBatch) goes in one statement; 1,000 rows × 24
// values (insertArgsPerRow) stays below SQLite's limit of 32,766 variables.
const insertRowsPerStatement = 1000

// hashSlot is where a content can live only once: its scope and its content hash.
type hashSlot struct{ scopeKey, hash string }

// insertBatchTx writes the memories of batch that are not already live in their scope
// (or earlier in batch), with their history rows and their links to ents (the entities
// each names, by index in batch), in multi-row statements. It returns the created
// memories and, in batch order, the id each memory of batch now has: its new id, or the id
// of the live memory that already held its content. With a writer, only memories the
// writer can see count as already there (WriteContext). The batch has been through
// bulkAnalysis: decisions are marked.
func (s *Transfer) insertBatchTx(ctx context.Context, tx *txn, w *memory.WriteContext, batch []memory.Memory, ents [][]graph.Entity, actor memory.Actor) ([]*memory.Memory, []int64, error) {
	// Lock every scope the batch writes, in one order, so that where writers run at once
	// two bulk writes sharing scopes cannot deadlock, and no other writer adds the same
	// content meanwhile.
	scopes := make([]string, 0, 1)
	for i := range batch {
		if k := batch[i].Owner().Key(); !slices.Contains(scopes, k) {
			scopes = append(scopes, k)
		}
	}
	slices.Sort(scopes)
	for _, k := range scopes {
		if err := s.db.eng.LockKey(ctx, tx, k); err != nil {
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
	if err := s.db.writes.checkBatchCapsTx(ctx, tx, batch, fresh); err != nil {
		return nil, nil, err
	}

	now := s.db.nowMillis()
	created := make([]*memory.Memory, 0, len(fresh))
	for lo := 0; lo < len(fresh); lo += insertRowsPerStatement {
		chunk := fresh[lo:min(lo+insertRowsPerStatement, len(fresh))]
		args := make([]any, 0, insertArgsPerRow*len(chunk))
		for _, i := range chunk {
			args = s.db.writes.appendInsertArgs(args, &batch[i], now)
		}
		rows, err := s.db.stmts.on(tx).QueryContext(ctx, insertMemorySQL(len(chunk)), args...)
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
	}
	for i := range batch {
		if ids[i] == 0 {
			ids[i] = ids[firstAt[hashSlot{batch[i].Owner().Key(), batch[i].Hash}]]
		}
	}
	if err := s.addImportHistory(ctx, tx, created, actor); err != nil {
		return nil, nil, err
	}
	members := memberEntities{}
	for _, m := range created {
		if err := s.db.writes.linkEntitiesTx(ctx, tx, m, ents[firstAt[hashSlot{m.Owner().Key(), m.Hash}]], members); err != nil {
			return nil, nil, err
		}
	}
	if err := countNewTx(ctx, tx, created); err != nil {
		return nil, nil, err
	}
	return created, ids, nil
}

// importHistorySQL inserts the creation history rows of rows memories (addImportHistory).
func importHistorySQL(rows int) string {
	return `INSERT INTO memory_history (memory_id, scope_key, action, old_content,
		new_content, version, actor, reason, metadata, created_at, new_origin_guild, new_origin_channel) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, '', ?, 1, ?, ?, '{}', ?, ?, ?),", rows), ",")
}

// addImportHistory records the creation of each memory of created, in multi-row
// statements: the same rows rememberTx writes one at a time.
func (s *Transfer) addImportHistory(ctx context.Context, tx *txn, created []*memory.Memory, actor memory.Actor) error {
	now := s.db.nowMillis()
	for lo := 0; lo < len(created); lo += insertRowsPerStatement {
		chunk := created[lo:min(lo+insertRowsPerStatement, len(created))]
		args := make([]any, 0, 9*len(chunk))
		for _, m := range chunk {
			args = append(args, m.ID, m.Owner().Key(), createAction(m), m.Content, actor, "import", now,
				m.GuildID, m.Provenance.ChannelID) // the memory's origin, as rememberTx records it
		}
		if _, err := s.db.stmts.on(tx).ExecContext(ctx, importHistorySQL(len(chunk)), args...); err != nil {
			return fmt.Errorf("couldn't record history: %w", err)
		}
	}
	return nil
}
