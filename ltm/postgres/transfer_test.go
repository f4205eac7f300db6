package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
)

// transfer is what the round trip needs of either store's Transfer.
type transfer interface {
	Export(ctx context.Context, owner memory.Owner) (memory.ExportFile, error)
	Import(ctx context.Context, owner memory.Owner, f memory.ExportFile, actor memory.Actor) (memory.ImportResult, error)
}

// roundTripMemories are memories of every kind of content an export carries: a pinned,
// tagged decision with its own time, Japanese text, a procedure.
func roundTripMemories() []memory.Memory {
	when := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	return []memory.Memory{
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "We ship the demo on the 14th", Type: memory.TypeDecision,
			Importance: 0.9, Pinned: true, Tags: []string{"release"}, CreatedAt: when,
			Provenance: memory.Provenance{AuthorID: "42", Author: "Alice", ChannelID: "c1", MessageID: "m1"}},
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "猫の名前はミソ", Type: memory.TypeFact},
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "To deploy run make release", Type: memory.TypeProcedural},
	}
}

// exportedContent is an export's memories without what an import rightly replaces: ids,
// source and provenance become the importer's (TestPostgresImportIgnoresForgedProvenance).
func exportedContent(f memory.ExportFile) []memory.ExportMemory {
	out := append([]memory.ExportMemory(nil), f.Memories...)
	for i := range out {
		out[i].ID, out[i].Source, out[i].Provenance = 0, "", memory.Provenance{}
	}
	return out
}

// TestPostgresTransferBetweenStores: a file exported from SQLite imports into PostgreSQL
// with the same content, and a file exported from PostgreSQL into SQLite; each store's
// export of what it imported equals the file it was given, byte for byte through JSON.
func TestPostgresTransferBetweenStores(t *testing.T) {
	pgtest.URL(t) // one skip line without a database, before SQLite is opened
	ctx := context.Background()
	owner := memory.ServerOwner("g1")
	for _, tc := range []struct {
		name     string
		src, dst func(t *testing.T) transfer
	}{
		{"SQLiteToPostgres",
			func(t *testing.T) transfer { return sqliteWithMemories(t) },
			func(t *testing.T) transfer { return pgtest.Open(t).Transfer }},
		{"PostgresToSQLite",
			func(t *testing.T) transfer { return postgresWithMemories(t) },
			func(t *testing.T) transfer { return testkit.MustOpenStore(t).Transfer }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := tc.src(t), tc.dst(t)
			exported, err := src.Export(ctx, owner)
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(exported)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := memory.ParseExport(data)
			if err != nil {
				t.Fatal(err)
			}
			res, err := dst.Import(ctx, owner, parsed, memory.ActorCLI)
			if err != nil || res.Created != 3 || res.Duplicates != 0 || len(res.IDs) != 3 {
				t.Fatalf("import = %+v, %v; want 3 created", res, err)
			}
			again, err := dst.Export(ctx, owner)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(exportedContent(exported), exportedContent(again)); diff != "" {
				t.Errorf("the memories changed between the stores (-exported +re-exported):\n%s", diff)
			}
			res, err = dst.Import(ctx, owner, parsed, memory.ActorCLI)
			if err != nil || res.Created != 0 || res.Duplicates != 3 {
				t.Fatalf("re-import = %+v, %v; want every memory already there", res, err)
			}
		})
	}
}

func sqliteWithMemories(t *testing.T) transfer {
	s := testkit.MustOpenStore(t)
	for _, m := range roundTripMemories() {
		testkit.MustRemember(t, s, m)
	}
	return s.Transfer
}

func postgresWithMemories(t *testing.T) transfer {
	s := pgtest.Open(t)
	for _, m := range roundTripMemories() {
		if _, err := s.Memories.Remember(context.Background(), m, "test"); err != nil {
			t.Fatal(err)
		}
	}
	return s.Transfer
}

// TestPostgresImportRefusals: an invalid memory, a file over the scope's cap and a file of
// duplicates behave as on SQLite: the refusal names the problem and nothing is written.
func TestPostgresImportRefusals(t *testing.T) {
	ctx := context.Background()
	s := pgtest.Open(t)
	owner := memory.ServerOwner("g1")
	file := func(contents ...string) memory.ExportFile {
		f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, GuildID: "g1"}
		for _, c := range contents {
			f.Memories = append(f.Memories, memory.ExportMemory{Type: memory.TypeFact, Content: c})
		}
		return f
	}
	live := func() int {
		t.Helper()
		_, n, err := s.Memories.List(ctx, owner, memory.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Run("ErrInvalidWritesNothing", func(t *testing.T) {
		_, err := s.Transfer.Import(ctx, owner, file("a brand new memory that must not land", ""), memory.ActorCLI)
		if memory.ErrorCode(err) != memory.EINVALID || !strings.Contains(memory.ErrorMessage(err), "Memory 2 of the file") {
			t.Fatalf("import with an empty memory = %v; want EINVALID naming memory 2", err)
		}
		if n := live(); n != 0 {
			t.Fatalf("a refused import wrote %d memories", n)
		}
	})
	t.Run("ErrOverCapWritesNothing", func(t *testing.T) {
		s.MaxServerMemories = 2
		defer func() { s.MaxServerMemories = 0 }()
		_, err := s.Transfer.Import(ctx, owner, file("one", "two", "three"), memory.ActorCLI)
		if memory.ErrorCode(err) != memory.ELIMIT || !strings.HasSuffix(memory.ErrorMessage(err), "Nothing was imported.") {
			t.Fatalf("import over the cap = %v; want ELIMIT ending in \"Nothing was imported.\"", err)
		}
		if n := live(); n != 0 {
			t.Fatalf("a refused import wrote %d memories", n)
		}
	})
	t.Run("DuplicatesInTheFile", func(t *testing.T) {
		res, err := s.Transfer.Import(ctx, owner, file("Movie night on Sunday", "movie night on sunday", "Raid on Friday"), memory.ActorCLI)
		if err != nil || res.Created != 2 || res.Duplicates != 1 || res.IDs[0] != res.IDs[1] {
			t.Fatalf("import = %+v, %v; want 2 created, the repeat pointing at the first", res, err)
		}
	})
}

// TestPostgresExportWithinAudience: an export is a view like any other; memories from
// channels the caller cannot read are left out, and the whole scope is exported without an
// audience.
func TestPostgresExportWithinAudience(t *testing.T) {
	ctx := context.Background()
	s := pgtest.Open(t)
	remember := func(content, channel string) int64 {
		t.Helper()
		res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content,
			Provenance: memory.Provenance{ChannelID: channel}}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory.ID
	}
	public := remember("Raid night is Thursday", "general")
	remember("The vendor is banned for fraud", "mods")
	aud := &memory.Audience{Channels: map[string]bool{"general": true}}
	f, err := s.Transfer.ExportWithin(ctx, memory.ServerOwner("g1"), aud)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Memories) != 1 || f.Memories[0].ID != public {
		t.Fatalf("export for #general readers = %+v, want only #%d", f.Memories, public)
	}
	all, err := s.Transfer.Export(ctx, memory.ServerOwner("g1"))
	if err != nil || len(all.Memories) != 2 {
		t.Fatalf("whole export = %d memories, %v; want 2", len(all.Memories), err)
	}
	t.Run("PersonalKeepsOrigins", func(t *testing.T) {
		if _, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", GuildID: "g1",
			Content: "I work nights"}, "test"); err != nil {
			t.Fatal(err)
		}
		f, err := s.Transfer.Export(ctx, memory.PersonalOwner("u1"))
		if err != nil || len(f.Memories) != 1 || f.GuildID != "" || f.Memories[0].GuildID != "g1" {
			t.Fatalf("personal export = %+v, %v; want one memory with its origin g1 and no file guild", f, err)
		}
	})
}

// TestPostgresImportIgnoresForgedProvenance: a file's author ids, names, channels and
// messages are never provenance: the importer is the author; and a member's import counts as
// already there only what that member can see where they import, the CLI the whole scope.
func TestPostgresImportIgnoresForgedProvenance(t *testing.T) {
	ctx := context.Background()
	s := pgtest.Open(t)
	const victim, importer = "555", "777"
	f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, Memories: []memory.ExportMemory{{
		Type: memory.TypeFact, Content: "The victim agreed to pay for everything", Source: memory.SourcePipeline,
		Provenance: memory.Provenance{AuthorID: victim, Author: "Victim", ChannelID: "secret-channel", MessageID: "999"},
	}}}
	res, err := s.Transfer.ImportAs(ctx, memory.ServerOwner("g1"), f, memory.Importer{Actor: memory.UserActor(importer),
		AuthorID: importer, AuthorName: "Importer", GuildID: "g1", ChannelID: "general", MessageID: "interaction-1"})
	if err != nil || res.Created != 1 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	m, err := s.Memories.Get(ctx, memory.ServerOwner("g1"), res.IDs[0])
	if err != nil {
		t.Fatal(err)
	}
	want := memory.Provenance{AuthorID: importer, Author: "Importer", ChannelID: "general", MessageID: "interaction-1"}
	if m.Provenance != want || m.SubjectID != "" || m.Source != memory.SourceImport {
		t.Fatalf("imported memory = provenance %+v, subject %q, source %q; want %+v, no subject, import", m.Provenance, m.SubjectID, m.Source, want)
	}
	hist, err := s.Memories.History(ctx, memory.ServerOwner("g1"), m.ID)
	if err != nil || len(hist) != 1 || hist[0].Actor != memory.UserActor(importer) || hist[0].Action != memory.ActionImport {
		t.Fatalf("history = %+v, %v; want one import by the importer", hist, err)
	}

	t.Run("DedupsOnlyVisible", func(t *testing.T) {
		if _, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Ban review on Monday",
			Provenance: memory.Provenance{ChannelID: "mods"}}, "test"); err != nil {
			t.Fatal(err)
		}
		f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, Memories: []memory.ExportMemory{
			{Type: memory.TypeFact, Content: "Ban review on Monday"}, {Type: memory.TypeFact, Content: "Movie night on Sunday"}}}
		by := memory.Importer{Actor: "user:100", AuthorID: "100", GuildID: "g2", ChannelID: "general",
			Audience: &memory.Audience{Channels: map[string]bool{"general": true}}}
		res, err := s.Transfer.ImportAs(ctx, memory.ServerOwner("g2"), f, by)
		if err != nil || res.Created != 2 || res.Duplicates != 0 {
			t.Fatalf("import from #general = %+v, %v; want 2 created (the #mods copy is hidden)", res, err)
		}
		res, err = s.Transfer.Import(ctx, memory.ServerOwner("g2"), f, memory.ActorCLI)
		if err != nil || res.Created != 0 || res.Duplicates != 2 {
			t.Fatalf("CLI import = %+v, %v; want everything already there", res, err)
		}
	})
}

// TestPostgresImportAcrossProcesses: the same file imported at once through two stores (two
// processes' pools) lands once: every memory is created by one import and found already
// there by the other.
func TestPostgresImportAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	owner := memory.ServerOwner("g1")
	f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, GuildID: "g1"}
	for i := range 60 {
		f.Memories = append(f.Memories, memory.ExportMemory{Type: memory.TypeFact, Content: fmt.Sprintf("Shared fact number %d", i)})
	}
	results := make([]memory.ImportResult, len(stores))
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() { results[i], errs[i] = s.Transfer.Import(context.Background(), owner, f, memory.ActorCLI) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("import through store %d: %v", i, err)
		}
	}
	created := results[0].Created + results[1].Created
	dups := results[0].Duplicates + results[1].Duplicates
	if created != 60 || dups != 60 || !slices.Equal(results[0].IDs, results[1].IDs) {
		t.Fatalf("imports = %+v and %+v; want 60 created in all, 60 already there, the same ids", results[0], results[1])
	}
	if _, n, err := stores[0].Memories.List(context.Background(), owner, memory.ListOptions{}); err != nil || n != 60 {
		t.Fatalf("the scope holds %d memories, %v; want 60", n, err)
	}
}

// TestPostgresImportLinksAndIndexes: an import on PostgreSQL goes through the service's bulk
// writer and leaves what a single write leaves: each memory linked to the entities it names
// (twice in one batch, for the second memory finds the entities the first created), and its
// search text stored for the word index, even where it is the content itself.
func TestPostgresImportLinksAndIndexes(t *testing.T) {
	ctx := context.Background()
	s := pgtest.Open(t)
	owner := memory.ServerOwner("g1")
	f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, GuildID: "g1", Memories: []memory.ExportMemory{
		{Type: memory.TypeFact, Content: "Kate said Bill is hosting the Minecraft server"},
		{Type: memory.TypeFact, Content: "Kate loves Valheim"},
		{Type: memory.TypeFact, Content: "raid on friday"},
	}}
	res, err := s.Transfer.Import(ctx, owner, f, memory.ActorCLI)
	if err != nil || res.Created != 3 {
		t.Fatalf("import = %+v, %v; want 3 created", res, err)
	}
	names := func(id int64) []string {
		t.Helper()
		nodes, err := s.Graph.MemoryEntities(ctx, owner, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range nodes {
			out = append(out, n.Name)
		}
		return out
	}
	if got := names(res.IDs[0]); !slices.Contains(got, "Minecraft") || len(got) != 3 {
		t.Fatalf("entities of the first memory = %v; want Kate, Bill and Minecraft", got)
	}
	nb, err := s.Graph.Neighbourhood(ctx, owner, "kate")
	if err != nil || len(nb.Memories) != 2 {
		t.Fatalf("Kate's neighbourhood = %+v, %v; want both memories naming her", nb, err)
	}
	var text string
	if err := s.Pool().QueryRow(ctx, `SELECT search_text FROM memories WHERE id = $1`, res.IDs[2]).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != "raid on friday" {
		t.Fatalf("search text of an imported memory = %q; want its content", text)
	}
}
