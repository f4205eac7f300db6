package memory_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// TestReadExportLimits: a file over MaxImportBytes is refused by its declared size before
// it is read, and by what it holds when its size is unknown; a file of more than
// MaxImportMemories memories is refused with the count. Each refusal says nothing was
// imported; a file within both limits is read.
func TestReadExportLimits(t *testing.T) {
	big := bytes.Repeat([]byte(" "), memory.MaxImportBytes+1)
	for name, size := range map[string]int64{"DeclaredSize": int64(len(big)), "UnknownSize": -1} {
		t.Run("TooLarge"+name, func(t *testing.T) {
			_, err := memory.ReadExport(bytes.NewReader(big), size)
			if memory.ErrorCode(err) != memory.EINVALID || !strings.Contains(memory.ErrorMessage(err), "That file is larger than 5.0 MiB, the most an import file can be") ||
				!strings.Contains(memory.ErrorMessage(err), "Nothing was imported") {
				t.Fatalf("error %v", err)
			}
		})
	}
	file := func(n int) []byte {
		f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, GuildID: "g1"}
		for i := range n {
			f.Memories = append(f.Memories, memory.ExportMemory{Content: fmt.Sprint("m", i)})
		}
		data, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	t.Run("TooManyMemories", func(t *testing.T) {
		data := file(memory.MaxImportMemories + 1)
		_, err := memory.ReadExport(bytes.NewReader(data), int64(len(data)))
		if memory.ErrorCode(err) != memory.EINVALID || !strings.Contains(memory.ErrorMessage(err), "That file has 10,001 memories; one import takes at most 10,000.") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("WithinTheLimits", func(t *testing.T) {
		data := file(memory.MaxImportMemories)
		f, err := memory.ReadExport(bytes.NewReader(data), -1)
		if err != nil || len(f.Memories) != memory.MaxImportMemories {
			t.Fatalf("%d memories, %v", len(f.Memories), err)
		}
	})
}
