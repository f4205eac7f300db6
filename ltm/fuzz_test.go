package ltm_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// FuzzImport feeds arbitrary bytes to the import path of /memory import and `kioku
// memories import`: ParseExport, then ImportAs into an empty scope of a real store. A
// file is refused with a domain error naming what is wrong (invalid input, never an
// internal failure) and writes nothing, or it is a kioku export of at most
// MaxImportMemories memories that lands whole: every memory of the file is created or
// counted as a duplicate, and each stored memory is valid content the file held, learned
// from the importer.
func FuzzImport(f *testing.F) {
	const valid = `{"format":"kioku.memories.v1","scope":"server","guild_id":"g1","exported_at":"2024-03-01T12:00:00Z","memories":[` +
		`{"id":1,"type":"decision","content":"We ship the demo on the 14th","importance":0.9,"pinned":true,"tags":["release"],` +
		`"provenance":{"author_id":"42","author":"Alice","channel_id":"c1","message_id":"m1"},"created_at":"2023-05-08T13:56:00Z"},` +
		`{"type":"fact","content":"猫の名前はミソ"},{"content":"  we ship the demo   on the 14th. "}]}`
	for _, s := range []string{
		valid,
		strings.Replace(valid, `"猫の名前はミソ"`, `""`, 1),
		strings.Replace(valid, `"type":"fact"`, `"type":"rumour"`, 1),
		strings.Replace(valid, `"importance":0.9`, `"importance":7`, 1),
		strings.Replace(valid, `"tags":["release"]`, `"tags":["", "`+strings.Repeat("t", 100)+`"]`, 1),
		strings.Replace(valid, `"猫の名前はミソ"`, `"password=hunter2hunter2"`, 1),
		strings.Replace(valid, `"2023-05-08T13:56:00Z"`, `"0000-01-01T00:00:00Z"`, 1),
		strings.Replace(valid, `"2023-05-08T13:56:00Z"`, `"9999-12-31T23:59:59.999999999+14:00"`, 1),
		strings.Replace(valid, `kioku.memories.v1`, `kioku.memories.v2`, 1),
		`{"format":"kioku.memories.v1","memories":[]}`,
		`{"format":"kioku.memories.v1","memories":null}`,
		`{"format":"kioku.memories.v1","memories":[null,{}]}`,
		`{"format":"kioku.memories.v1","memories":[{"content":"a\ud800b","confidence":-1}]}`,
		"", "{", "[]", "null", `"kioku.memories.v1"`, "\xff\xfe{}",
	} {
		f.Add([]byte(s))
	}
	store := testkit.MustOpenStore(f)
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := memory.ParseExport(data)
		if err != nil {
			wantRefusal(t, "ParseExport", err)
			return
		}
		if file.Format != memory.ExportFormat || len(file.Memories) > memory.MaxImportMemories {
			t.Fatalf("ParseExport accepted format %q with %d memories", file.Format, len(file.Memories))
		}
		n++
		owner := memory.ServerOwner(fmt.Sprintf("fuzz%d", n)) // an empty scope for each file
		by := memory.Importer{Actor: memory.UserActor("7"), AuthorID: "7", AuthorName: "Importer", GuildID: owner.GuildID, ChannelID: "c9"}
		res, err := store.Transfer.ImportAs(ctx, owner, file, by)
		mems, total, lerr := store.Memories.List(ctx, owner, memory.ListOptions{Limit: 500})
		if lerr != nil {
			t.Fatal(lerr)
		}
		if err != nil {
			wantRefusal(t, "ImportAs", err)
			if total != 0 {
				t.Fatalf("a refused import wrote %d memories", total)
			}
			return
		}
		if res.Created+res.Duplicates != len(file.Memories) || len(res.IDs) != len(file.Memories) {
			t.Fatalf("imported %d memories as %+v", len(file.Memories), res)
		}
		if total != res.Created {
			t.Fatalf("import created %d memories but the scope holds %d", res.Created, total)
		}
		sent := map[string]bool{}
		for _, em := range file.Memories {
			if c, err := memory.CleanContent(em.Content); err == nil {
				sent[c] = true
			}
		}
		for _, m := range mems {
			if !sent[m.Content] {
				t.Errorf("memory #%d holds %q, which is not valid content of the file", m.ID, m.Content)
			}
			if m.Provenance.AuthorID != by.AuthorID || m.Source != memory.SourceImport {
				t.Errorf("memory #%d has author %q and source %q, want the importer and import", m.ID, m.Provenance.AuthorID, m.Source)
			}
		}
	})
}

// wantRefusal fails unless err is an invalid-input error with a message for people.
func wantRefusal(t *testing.T, fn string, err error) {
	t.Helper()
	if code := memory.ErrorCode(err); code != memory.EINVALID {
		t.Fatalf("%s failed with %s, want %s: %v", fn, code, memory.EINVALID, err)
	}
	if msg := memory.ErrorMessage(err); strings.TrimSpace(msg) == "" {
		t.Fatalf("%s refused the file without saying why", fn)
	}
}
