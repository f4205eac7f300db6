package ltm

import (
	"fmt"
	"io"

	"github.com/kioku-bot/kioku/memory"
)

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

var errImportTooLarge = memory.Errorf(memory.EINVALID, "That file is larger than %s, the most an import file can be; split it or export less. Nothing was imported.",
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
