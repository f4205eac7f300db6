package memory

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// The export file of /memory export and `kioku memories export`, and what an import of one
// is and did: the file format is checked here, without the database.

// ExportFormat names the export file format; ParseExport refuses anything else.
const ExportFormat = "kioku.memories.v1"

// MaxImportMemories bounds one import so a hostile or accidental file can't flood a scope.
const MaxImportMemories = 10000

// ExportFile is the JSON document of /memory export and `kioku memories export`.
type ExportFile struct {
	Format     string         `json:"format"`
	Scope      Scope          `json:"scope"`
	GuildID    string         `json:"guild_id,omitempty"`
	UserID     string         `json:"user_id,omitempty"`
	ExportedAt time.Time      `json:"exported_at"`
	Memories   []ExportMemory `json:"memories"`
}

// ExportMemory is one memory in an export: everything needed to restore it, nothing that
// is derived (hash, normalized form) or local to this database (access counters).
type ExportMemory struct {
	ID         int64      `json:"id,omitempty"`
	Type       Type       `json:"type"`
	Content    string     `json:"content"`
	Confidence float64    `json:"confidence,omitempty"`
	Importance float64    `json:"importance,omitempty"`
	Pinned     bool       `json:"pinned,omitempty"`
	Tags       []string   `json:"tags,omitempty"`
	Source     Source     `json:"source,omitempty"`
	Provenance Provenance `json:"provenance,omitzero"`
	GuildID    string     `json:"origin_guild_id,omitempty"`
	CreatedAt  time.Time  `json:"created_at,omitzero"`
	UpdatedAt  time.Time  `json:"updated_at,omitzero"`
}

// ImportResult counts what Import did.
type ImportResult struct {
	Created    int
	Duplicates int // already present in the scope (or twice in the file)
	IDs        []int64
	// Similar counts the imported memories that say again in other words what a memory the
	// importer may see already said: saved, and waiting in the review queue beside it.
	Similar int
}

// ParseExport decodes and checks an export document without touching the database.
func ParseExport(data []byte) (ExportFile, error) {
	var f ExportFile
	if err := json.Unmarshal(data, &f); err != nil {
		return f, Errorf(EINVALID, "That file is not a kioku export (invalid JSON: %v).", err)
	}
	if f.Format != ExportFormat {
		return f, Errorf(EINVALID, "That file is not a kioku export (format %q, want %q).", f.Format, ExportFormat)
	}
	if len(f.Memories) > MaxImportMemories {
		return f, Errorf(EINVALID, "That file has %s memories; one import takes at most %s. Split it into smaller files. Nothing was imported.",
			Thousands(len(f.Memories)), Thousands(MaxImportMemories))
	}
	return f, nil
}

// Importer is who runs an import, and where. Imported memories are theirs: source import,
// the importer as the history actor and as the author, learned where the import ran.
type Importer struct {
	// Actor is recorded in history ("user:<id>", "cli").
	Actor Actor
	// AuthorID and AuthorName are the importing member; empty for the CLI.
	AuthorID, AuthorName string
	// GuildID and ChannelID are where the import ran ("" for a DM or the CLI); MessageID
	// is the interaction that ran it.
	GuildID, ChannelID, MessageID string
	// Audience is the channel rule of that place; nil restricts nothing.
	Audience *Audience
}

// WriteContext is the importing member in the place of the import, whose view decides
// which memories count as already present; nil (the CLI) counts every memory of the scope.
func (by Importer) WriteContext() *WriteContext {
	if by.AuthorID == "" {
		return nil
	}
	return &WriteContext{WriterID: by.AuthorID, GuildID: by.GuildID, ChannelID: by.ChannelID, Audience: by.Audience}
}

// MaxImportBytes bounds an export file that /memory import and `kioku memories import`
// read: a full export of MaxImportMemories memories of typical length fits with room to
// spare, a file meant to exhaust memory does not.
const MaxImportBytes = 5 << 20

// ReadExport reads and checks an export document of at most MaxImportBytes from r, without
// touching the database: a larger file is refused before it is decoded (before it is read
// at all when its size is known, size >= 0), and so is one holding more than
// MaxImportMemories memories.
func ReadExport(r io.Reader, size int64) (ExportFile, error) {
	if size > MaxImportBytes {
		return ExportFile{}, errImportTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxImportBytes+1))
	if err != nil {
		return ExportFile{}, fmt.Errorf("couldn't read export file: %w", err)
	}
	if len(data) > MaxImportBytes {
		return ExportFile{}, errImportTooLarge
	}
	return ParseExport(data)
}

var errImportTooLarge = Errorf(EINVALID, "That file is larger than %s, the most an import file can be; split it or export less. Nothing was imported.",
	ByteSize(MaxImportBytes))

// ByteSize writes n bytes as people read file sizes ("5.0 MiB").
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
