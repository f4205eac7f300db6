package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// ExportFormat names the export file format; Import refuses anything else.
const ExportFormat = "kioku.memories.v1"

// MaxImportMemories bounds one import so a hostile or accidental file can't flood a scope.
const MaxImportMemories = 10000

// ExportFile is the JSON document of /memory export and `kioku memories export`.
type ExportFile struct {
	Format     string         `json:"format"`
	Scope      memory.Scope   `json:"scope"`
	GuildID    string         `json:"guild_id,omitempty"`
	UserID     string         `json:"user_id,omitempty"`
	ExportedAt time.Time      `json:"exported_at"`
	Memories   []ExportMemory `json:"memories"`
}

// ExportMemory is one memory in an export: everything needed to restore it, nothing that
// is derived (hash, normalized form) or local to this database (access counters).
type ExportMemory struct {
	ID         int64             `json:"id,omitempty"`
	Type       memory.Type       `json:"type"`
	Content    string            `json:"content"`
	Confidence float64           `json:"confidence,omitempty"`
	Importance float64           `json:"importance,omitempty"`
	Pinned     bool              `json:"pinned,omitempty"`
	Tags       []string          `json:"tags,omitempty"`
	Source     memory.Source     `json:"source,omitempty"`
	Provenance memory.Provenance `json:"provenance,omitzero"`
	GuildID    string            `json:"origin_guild_id,omitempty"`
	CreatedAt  time.Time         `json:"created_at,omitzero"`
	UpdatedAt  time.Time         `json:"updated_at,omitzero"`
}

// Export returns every live memory of owner's scope, oldest first.
func (s *Store) Export(ctx context.Context, owner memory.Owner) (ExportFile, error) {
	if err := owner.Validate(); err != nil {
		return ExportFile{}, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE scope_key = ? AND deleted_at IS NULL ORDER BY id`, owner.Key())
	if err != nil {
		return ExportFile{}, fmt.Errorf("couldn't export memories: %w", err)
	}
	mems, err := collectMemories(rows)
	if err != nil {
		return ExportFile{}, err
	}
	f := ExportFile{Format: ExportFormat, Scope: owner.Scope, GuildID: owner.GuildID, UserID: owner.UserID,
		ExportedAt: s.Now().UTC(), Memories: make([]ExportMemory, 0, len(mems))}
	if owner.Scope == memory.ScopePersonal {
		f.GuildID = ""
	}
	for _, m := range mems {
		em := ExportMemory{ID: m.ID, Type: m.Type, Content: m.Content, Confidence: m.Confidence,
			Importance: m.Importance, Pinned: m.Pinned, Tags: m.Tags, Source: m.Source, Provenance: m.Provenance,
			CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
		if owner.Scope == memory.ScopePersonal {
			em.GuildID = m.GuildID
		}
		f.Memories = append(f.Memories, em)
	}
	return f, nil
}

// ImportResult counts what Import did.
type ImportResult struct {
	Created    int
	Duplicates int // already present in the scope (or twice in the file)
	IDs        []int64
}

// ParseExport decodes and checks an export document without touching the database.
func ParseExport(data []byte) (ExportFile, error) {
	var f ExportFile
	if err := json.Unmarshal(data, &f); err != nil {
		return f, memory.Errorf(memory.EINVALID, "That file is not a kioku export (invalid JSON: %v).", err)
	}
	if f.Format != ExportFormat {
		return f, memory.Errorf(memory.EINVALID, "That file is not a kioku export (format %q, want %q).", f.Format, ExportFormat)
	}
	if len(f.Memories) > MaxImportMemories {
		return f, memory.Errorf(memory.EINVALID, "That file has %d memories; one import takes at most %d.", len(f.Memories), MaxImportMemories)
	}
	return f, nil
}

// Import writes the memories of f into owner's scope, whatever scope they were exported
// from (so a server's memory can move to another server). Every memory is validated first;
// if any is invalid nothing is written and the error names it. Provenance and timestamps
// are kept; identical memories are not duplicated.
func (s *Store) Import(ctx context.Context, owner memory.Owner, f ExportFile, actor string) (ImportResult, error) {
	if err := owner.Validate(); err != nil {
		return ImportResult{}, err
	}
	prepared := make([]memory.Memory, len(f.Memories))
	for i, em := range f.Memories {
		m := memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID, UserID: owner.UserID, Type: em.Type,
			Content: em.Content, Confidence: em.Confidence, Importance: em.Importance, Pinned: em.Pinned,
			Tags: em.Tags, Source: memory.SourceImport, Provenance: em.Provenance, CreatedAt: em.CreatedAt,
			UpdatedAt: em.UpdatedAt}
		if owner.Scope == memory.ScopePersonal {
			m.GuildID = em.GuildID
		}
		if err := m.Prepare(); err != nil {
			return ImportResult{}, memory.Errorf(memory.EINVALID, "Memory %d of the file: %s Nothing was imported.", i+1, memory.ErrorMessage(err))
		}
		prepared[i] = m
	}
	// One transaction for the whole file (at most MaxImportMemories rows): an import either
	// lands completely or not at all.
	return s.importPrepared(ctx, prepared, actor, len(prepared))
}

// rememberManyBatch bounds each write transaction of RememberMany so a bulk load never holds
// the write lock long enough to stall chat turns.
const rememberManyBatch = 500

func (s *Store) importPrepared(ctx context.Context, prepared []memory.Memory, actor string, batchSize int) (ImportResult, error) {
	var res ImportResult
	batchSize = max(batchSize, 1)
	for start := 0; start < len(prepared); start += batchSize {
		batch := prepared[start:min(start+batchSize, len(prepared))]
		var created []*memory.Memory
		err := s.withWriteTx(ctx, func(tx *sql.Tx) error {
			for i := range batch {
				r, err := s.rememberTx(ctx, tx, &batch[i], actor, "import")
				if err != nil {
					return err
				}
				if r.Created {
					res.Created++
					created = append(created, r.Memory)
				} else {
					res.Duplicates++
				}
				res.IDs = append(res.IDs, r.Memory.ID)
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("couldn't import memories: %w", err)
		}
		// Each committed batch is embedded before the next is written, so a bulk load
		// keeps its vectors current without holding the write lock during the calls.
		s.indexMemories(ctx, created...)
	}
	return res, nil
}

// RememberMany stores already-built memories in batched transactions for callers that have
// memories rather than an export file (evaluation, benchmarks, bulk tools). Each memory is
// validated first; nothing is written if any is invalid.
func (s *Store) RememberMany(ctx context.Context, mems []memory.Memory, actor string) (ImportResult, error) {
	for i := range mems {
		if err := mems[i].Prepare(); err != nil {
			return ImportResult{}, fmt.Errorf("memory %d: %w", i+1, err)
		}
	}
	return s.importPrepared(ctx, mems, actor, rememberManyBatch)
}
