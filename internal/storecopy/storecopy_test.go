package storecopy_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/storecopy"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// seeded is what seed wrote, to look for after the copy.
type seeded struct {
	ids       map[string]int64 // content → memory id
	forgotten int64
	maxID     int64
}

// seed fills a SQLite database through the store, as a bot would: memories in both scopes
// with history (a change, a forget) and evidence, vectors, jobs, transcripts, settings,
// channels, a departure, a model budget and the knowledge graph.
func seed(t *testing.T, ctx context.Context, s *ltm.Store) seeded {
	t.Helper()
	s.Recall.SetEmbedder(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, text := range texts {
			out[i] = fakeopenai.EmbedText(text, 16)
		}
		return out, nil
	}, "fake-embed")
	out := seeded{ids: map[string]int64{}}
	server := memory.ServerOwner("g1")
	for i, m := range []memory.Memory{
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "The raid starts on Friday at 21:00", Provenance: memory.Provenance{AuthorID: "u1", Author: "Alice", ChannelID: "c1"}},
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "東京タワーで集合する", Provenance: memory.Provenance{AuthorID: "u2", Author: "Bob", ChannelID: "c1"}, Pinned: true},
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "Carol keeps the guild bank", Provenance: memory.Provenance{AuthorID: "u1", Author: "Alice", ChannelID: "c2"}},
		{Scope: memory.ScopePersonal, UserID: "u1", Content: "Alice prefers tea over coffee", Provenance: memory.Provenance{AuthorID: "u1", Author: "Alice"}},
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "An old rule nobody follows", Provenance: memory.Provenance{AuthorID: "u2", Author: "Bob", ChannelID: "c1"}},
	} {
		m.Type = memory.TypeFact
		w := memory.WriteContext{WriterID: m.Provenance.AuthorID, GuildID: m.GuildID, ChannelID: m.Provenance.ChannelID}
		res, err := s.Memories.RememberAs(ctx, w, m, memory.ActorCLI, memory.MessageRef{MessageID: "m" + string(rune('0'+i)), AuthorID: m.Provenance.AuthorID})
		if err != nil {
			t.Fatalf("remember %q: %v", m.Content, err)
		}
		out.ids[m.Content] = res.Memory.ID
		out.maxID = max(out.maxID, res.Memory.ID)
	}
	changed := "Carol and Dave keep the guild bank"
	if _, err := s.Memories.Modify(ctx, server, out.ids["Carol keeps the guild bank"], memory.Change{Content: &changed}, memory.ActorCLI); err != nil {
		t.Fatal(err)
	}
	out.ids[changed] = out.ids["Carol keeps the guild bank"]
	delete(out.ids, "Carol keeps the guild bank")
	out.forgotten = out.ids["An old rule nobody follows"]
	if _, err := s.Memories.Forget(ctx, server, []int64{out.forgotten}, memory.ActorCLI, "outdated"); err != nil {
		t.Fatal(err)
	}
	delete(out.ids, "An old rule nobody follows")
	if _, err := s.Recall.TrackEmbeddings(ctx, memory.EmbedTrackOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Jobs.Enqueue(ctx, "extract", "g1/c1", map[string]string{"channel": "c1"}, memory.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, turn := range []memory.Turn{
		{GuildID: "g1", ChannelID: "c1", UserID: "u1", AuthorName: "Alice", Role: "user", Content: "raid on friday?", MessageID: "m10"},
		{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: "assistant", Content: "Yes, 21:00."},
	} {
		if _, err := s.Transcripts.AppendTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Settings.SetPrivacy(ctx, "u2", memory.PrivacyPartial); err != nil {
		t.Fatal(err)
	}
	if err := s.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: "g1", Persona: "cheerful"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Channels.SaveGuildChannels(ctx, []memory.GuildChannel{{GuildID: "g1", ChannelID: "c1", Kind: 0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Guilds.RecordDeparture(ctx, "g9", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Budgets.AddModelCalls(ctx, "guild:g1", "2026-01-01", 3, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Graph.AddTriples(ctx, graph.Batch{Owner: server, Sources: []string{"u1"},
		Triples: []graph.Triple{{Source: "Carol", Relationship: "keeps", Target: "guild bank", Confidence: 0.9}}}); err != nil {
		t.Fatal(err)
	}
	// The newest memory is erased with its member by forget-me, history and all: only
	// SQLite's id sequence still knows its number, and PostgreSQL must not hand it out again.
	gone, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopePersonal, UserID: "u9", Type: memory.TypeFact,
		Content: "Dave leaves for good"}, memory.ActorCLI)
	if err != nil {
		t.Fatal(err)
	}
	out.maxID = max(out.maxID, gone.Memory.ID)
	preview, err := s.Confirmations.PreviewForgetMe(ctx, "u9")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Confirmations.ConfirmForgetMe(ctx, "u9", preview.Token); err != nil {
		t.Fatal(err)
	}
	return out
}

func openSource(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCopyToPostgres copies a seeded SQLite database into a fresh PostgreSQL schema and
// reads it back through the PostgreSQL store: the same memories under the same ids, found
// by search (English and Japanese), their history and evidence, and new ids past the old.
func TestCopyToPostgres(t *testing.T) {
	pg := pgtest.Open(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kioku.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	want := seed(t, ctx, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	rep, err := storecopy.Copy(ctx, openSource(t, path), pg.Pool())
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	t.Logf("copied %+v\nskipped %+v\nsequences %+v", rep.Tables, rep.Skipped, rep.Sequences)
	copied := map[string]int64{}
	for _, tb := range rep.Tables {
		copied[tb.Name] = tb.Rows
		if len(tb.Hash) != 64 {
			t.Errorf("%s: hash %q", tb.Name, tb.Hash)
		}
	}
	for table, atLeast := range map[string]int64{"memories": 5, "memory_history": 7, "memory_evidence": 5, "embeddings": 4,
		"memory_jobs": 1, "transcripts": 2, "user_settings": 1, "guild_settings": 1, "entities": 2, "relations": 1} {
		if copied[table] < atLeast {
			t.Errorf("%s: copied %d rows, want at least %d (report %+v)", table, copied[table], atLeast, rep)
		}
	}
	skipped := map[string]bool{}
	for _, sk := range rep.Skipped {
		skipped[sk.Name] = true
		if _, alsoCopied := copied[sk.Name]; alsoCopied {
			t.Errorf("%s both copied and skipped", sk.Name)
		}
	}
	// Every table the seed wrote is either copied or named as skipped: nothing goes quietly.
	for _, table := range []string{"guild_channels", "guild_departures", "model_calls"} {
		if _, ok := copied[table]; !ok && !skipped[table] {
			t.Errorf("%s neither copied nor reported skipped: %+v", table, rep.Skipped)
		}
	}
	for _, tb := range []string{"memories_fts", "memories_fts_data", "memories_tri"} {
		if skipped[tb] {
			t.Errorf("full-text table %s reported as skipped data", tb)
		}
	}

	server, personal := memory.ServerOwner("g1"), memory.PersonalOwner("u1")
	for content, id := range want.ids {
		owner := server
		if strings.Contains(content, "tea") {
			owner = personal
		}
		m, err := pg.Memories.Get(ctx, owner, id)
		if err != nil {
			t.Fatalf("memory #%d (%q) on PostgreSQL: %v", id, content, err)
		}
		if m.Content != content {
			t.Errorf("memory #%d: content %q, want %q", id, m.Content, content)
		}
	}
	if _, err := pg.Memories.Get(ctx, server, want.forgotten); err == nil {
		t.Errorf("forgotten memory #%d is live on PostgreSQL", want.forgotten)
	}
	bank := want.ids["Carol and Dave keep the guild bank"]
	events, err := pg.Memories.History(ctx, server, bank)
	if err != nil || len(events) < 2 {
		t.Errorf("history of #%d on PostgreSQL: %d events, %v; want its creation and change", bank, len(events), err)
	}
	ev, err := pg.Memories.Evidence(ctx, bank)
	if err != nil || len(ev) != 1 || ev[0].AuthorID != "u1" {
		t.Errorf("evidence of #%d on PostgreSQL: %+v, %v", bank, ev, err)
	}
	for query, wantID := range map[string]int64{
		"guild bank":  bank,
		"raid friday": want.ids["The raid starts on Friday at 21:00"],
		"東京タワー":       want.ids["東京タワーで集合する"],
	} {
		res, err := pg.Recall.Search(ctx, memory.SearchQuery{Text: query, Owners: []memory.Owner{server}})
		if err != nil {
			t.Fatalf("search %q: %v", query, err)
		}
		if len(res) == 0 || res[0].Memory.ID != wantID {
			t.Errorf("search %q on PostgreSQL: %d results, want #%d first", query, len(res), wantID)
		}
	}

	// New memories are numbered past every copied id, never reusing one.
	res, err := pg.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Type: memory.TypeFact,
		Content: "A memory written after the move"}, memory.ActorCLI)
	if err != nil {
		t.Fatal(err)
	}
	if res.Memory.ID <= want.maxID {
		t.Errorf("new memory got id %d, want past %d", res.Memory.ID, want.maxID)
	}
	seq := map[string]int64{}
	for _, sq := range rep.Sequences {
		seq[sq.Table] = sq.Value
	}
	if seq["memories"] < want.maxID {
		t.Errorf("memories sequence moved to %d, want at least %d", seq["memories"], want.maxID)
	}

	// A second copy into the now used database is refused, and changes nothing.
	if _, err := storecopy.Copy(ctx, openSource(t, path), pg.Pool()); err == nil || !strings.Contains(err.Error(), "already holds data") {
		t.Fatalf("copy into a used database: %v, want a refusal", err)
	}
	if _, err := pg.Memories.Get(ctx, server, res.Memory.ID); err != nil {
		t.Errorf("memory written after the move lost after a refused copy: %v", err)
	}
}

// TestCopyThenFillRefersTo: rows that reach PostgreSQL without the span of time their words
// name (a SQLite backfill not finished before the copy) get it from the target's own
// backfill, which the copy leaves pending since store_repairs stays behind.
func TestCopyThenFillRefersTo(t *testing.T) {
	pg := pgtest.Open(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kioku.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	said := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "We played Catan yesterday",
		CreatedAt: said}, memory.ActorCLI)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE memories SET refers_to = NULL, refers_to_end = NULL`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	if _, err := storecopy.Copy(ctx, openSource(t, path), pg.Pool()); err != nil {
		t.Fatalf("copy: %v", err)
	}
	rep, err := pg.Maintenance.RunRepairs(ctx)
	if err != nil || rep.RefersTo != 1 {
		t.Fatalf("repairs on the target: %+v, %v; want one memory given its span", rep, err)
	}
	m, err := pg.Memories.Get(ctx, memory.ServerOwner("g1"), res.Memory.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := said.AddDate(0, 0, -1).Truncate(24 * time.Hour); !m.RefersTo.Equal(want) || !m.RefersToEnd.Equal(want.AddDate(0, 0, 1)) {
		t.Errorf("copied memory refers to %v–%v, want %v and the day after", m.RefersTo, m.RefersToEnd, want)
	}
}
