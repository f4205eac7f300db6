package ltm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

var ctx = context.Background()

func server(guild, content string) memory.Memory {
	return memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content}
}

func personal(user, guild, content string) memory.Memory {
	return memory.Memory{Scope: memory.ScopePersonal, UserID: user, GuildID: guild, Content: content}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := memory.ErrorCode(err); got != code {
		t.Fatalf("error = %v (code %q), want code %q", err, got, code)
	}
}

func TestOpenTwiceIsANoOp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	for i := 0; i < 2; i++ {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if i == 0 {
			testkit.MustRemember(t, s, server("g1", "kept across reopen"))
		} else if _, n, _ := s.Memories.List(ctx, memory.ServerOwner("g1"), memory.ListOptions{}); n != 1 {
			t.Errorf("after reopen: %d memories, want 1", n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRememberDedup(t *testing.T) {
	s := testkit.MustOpenStore(t)
	t.Run("SameScopeReturnsExistingID", func(t *testing.T) {
		a, err := s.Memories.Remember(ctx, server("g1", "The raid is on Friday."), "test")
		if err != nil || !a.Created {
			t.Fatalf("first remember: %+v %v", a, err)
		}
		b, err := s.Memories.Remember(ctx, server("g1", "  the RAID is on friday "), "test")
		if err != nil {
			t.Fatal(err)
		}
		if b.Created || b.Memory.ID != a.Memory.ID {
			t.Fatalf("duplicate created a new row: first #%d, second #%d created=%v", a.Memory.ID, b.Memory.ID, b.Created)
		}
	})
	t.Run("TwoGuildsTwoRows", func(t *testing.T) {
		a := testkit.MustRemember(t, s, server("g1", "Pizza night is Tuesday"))
		b := testkit.MustRemember(t, s, server("g2", "Pizza night is Tuesday"))
		if a.ID == b.ID {
			t.Fatal("the same fact in two guilds shared one row")
		}
	})
	t.Run("PersonalAndServerAreDistinctScopes", func(t *testing.T) {
		a := testkit.MustRemember(t, s, server("g1", "likes green tea"))
		b := testkit.MustRemember(t, s, personal("u1", "g1", "likes green tea"))
		if a.ID == b.ID {
			t.Fatal("personal memory deduplicated into server memory")
		}
	})
	t.Run("ForgottenDoesNotBlockRememberingAgain", func(t *testing.T) {
		a := testkit.MustRemember(t, s, server("g1", "temporary fact"))
		if _, err := s.Memories.Forget(ctx, memory.ServerOwner("g1"), []int64{a.ID}, "test", ""); err != nil {
			t.Fatal(err)
		}
		b := testkit.MustRemember(t, s, server("g1", "temporary fact"))
		if b.ID == a.ID {
			t.Fatal("remembering a forgotten fact revived the tombstone instead of a new row")
		}
	})
}

func TestScopeIsolation(t *testing.T) {
	s := testkit.MustOpenStore(t)
	gA, gB := memory.ServerOwner("gA"), memory.ServerOwner("gB")
	uX, uY := memory.PersonalOwner("uX"), memory.PersonalOwner("uY")
	bMem := testkit.MustRemember(t, s, server("gB", "guild B secret plan"))
	yMem := testkit.MustRemember(t, s, personal("uY", "gA", "Y's cat is called Miso"))
	content := "hijacked"

	cases := []struct {
		name  string
		owner memory.Owner
		id    int64
	}{
		{"GuildACannotTouchGuildB", gA, bMem.ID},
		{"UserXCannotTouchUserY", uX, yMem.ID},
		{"GuildCannotTouchPersonal", gA, yMem.ID},
		{"UserCannotTouchServer", uX, bMem.ID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Memories.Get(ctx, c.owner, c.id)
			wantCode(t, err, memory.ENOTFOUND)
			_, err = s.Memories.Modify(ctx, c.owner, c.id, memory.Change{Content: &content}, "attacker")
			wantCode(t, err, memory.ENOTFOUND)
			_, err = s.Memories.Forget(ctx, c.owner, []int64{c.id}, "attacker", "")
			wantCode(t, err, memory.ENOTFOUND)
			_, err = s.Memories.Recover(ctx, c.owner, c.id, 0, "attacker")
			wantCode(t, err, memory.ENOTFOUND)
			_, err = s.Memories.History(ctx, c.owner, c.id)
			wantCode(t, err, memory.ENOTFOUND)
			list, _, err := s.Memories.List(ctx, c.owner, memory.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range list {
				if m.ID == c.id {
					t.Fatalf("List of %v shows #%d", c.owner, c.id)
				}
			}
			res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "secret plan cat Miso", Owners: []memory.Owner{c.owner}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 0 {
				t.Fatalf("Search of %v found %v", c.owner, res[0].Memory)
			}
		})
	}
	t.Run("OwnersStillSeeTheirs", func(t *testing.T) {
		if _, err := s.Memories.Get(ctx, gB, bMem.ID); err != nil {
			t.Error(err)
		}
		if _, err := s.Memories.Get(ctx, uY, yMem.ID); err != nil {
			t.Error(err)
		}
		got, _ := s.Memories.Get(ctx, uY, yMem.ID)
		if got.Content != "Y's cat is called Miso" {
			t.Errorf("content changed by another scope: %q", got.Content)
		}
	})
	t.Run("MixedForgetChangesNothing", func(t *testing.T) {
		own := testkit.MustRemember(t, s, server("gA", "guild A fact"))
		_, err := s.Memories.Forget(ctx, gA, []int64{own.ID, bMem.ID}, "attacker", "")
		wantCode(t, err, memory.ENOTFOUND)
		if _, err := s.Memories.Get(ctx, gA, own.ID); err != nil {
			t.Fatalf("all-or-nothing forget deleted the caller's own memory: %v", err)
		}
	})
	t.Run("PersonalOriginRestrictsVisibility", func(t *testing.T) {
		testkit.MustRemember(t, s, personal("uZ", "gB", "Z plays the oboe"))
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "oboe", Visible: []memory.Visible{{Owner: memory.PersonalOwner("uZ"), OriginGuildID: "gA"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 0 {
			t.Fatal("a personal memory from guild B was recalled in guild A without opt-in")
		}
		res, _ = s.Recall.Search(ctx, memory.SearchQuery{Text: "oboe", Visible: []memory.Visible{{Owner: memory.PersonalOwner("uZ"), OriginGuildID: "gB"}}})
		if len(res) != 1 {
			t.Fatalf("origin guild search found %d, want 1", len(res))
		}
	})
}

func TestForgetRecover(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	s := testkit.MustOpenStore(t)
	s.Now = clock.Now
	owner := memory.ServerOwner("g1")
	m := testkit.MustRemember(t, s, server("g1", "The wiki lives at wiki.example.org"))

	if _, err := s.Memories.Forget(ctx, owner, []int64{m.ID}, "user:1", "outdated"); err != nil {
		t.Fatal(err)
	}
	t.Run("HiddenFromGetListSearch", func(t *testing.T) {
		_, err := s.Memories.Get(ctx, owner, m.ID)
		wantCode(t, err, memory.ENOTFOUND)
		if list, n, _ := s.Memories.List(ctx, owner, memory.ListOptions{}); n != 0 || len(list) != 0 {
			t.Errorf("List shows %d forgotten memories", n)
		}
		if res, _ := s.Recall.Search(ctx, memory.SearchQuery{Text: "wiki", Owners: []memory.Owner{owner}}); len(res) != 0 {
			t.Errorf("Search returned a forgotten memory")
		}
		if list, n, _ := s.Memories.List(ctx, owner, memory.ListOptions{Deleted: true}); n != 1 || list[0].ID != m.ID {
			t.Errorf("List(Deleted) = %d", n)
		}
	})
	t.Run("ErrVersionConflict", func(t *testing.T) {
		_, err := s.Memories.Recover(ctx, owner, m.ID, 1, "user:1")
		wantCode(t, err, memory.ECONFLICT)
	})
	t.Run("RecoverRestores", func(t *testing.T) {
		clock.Advance(29 * 24 * time.Hour)
		got, err := s.Memories.Recover(ctx, owner, m.ID, 2, "user:1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != m.Content || got.Deleted() || got.Version != 3 {
			t.Fatalf("recovered %+v", got)
		}
		if res, _ := s.Recall.Search(ctx, memory.SearchQuery{Text: "wiki", Owners: []memory.Owner{owner}}); len(res) != 1 {
			t.Errorf("recovered memory not searchable")
		}
	})
	t.Run("ErrNotDeleted", func(t *testing.T) {
		_, err := s.Memories.Recover(ctx, owner, m.ID, 0, "user:1")
		wantCode(t, err, memory.ENOTDELETED)
	})
	t.Run("ErrExpired", func(t *testing.T) {
		if _, err := s.Memories.Forget(ctx, owner, []int64{m.ID}, "user:1", ""); err != nil {
			t.Fatal(err)
		}
		clock.Advance(31 * 24 * time.Hour)
		_, err := s.Memories.Recover(ctx, owner, m.ID, 0, "user:1")
		wantCode(t, err, memory.EEXPIRED)
	})
	t.Run("ErrRememberedAgain", func(t *testing.T) {
		x := testkit.MustRemember(t, s, server("g1", "the gate code changes monthly"))
		s.Memories.Forget(ctx, owner, []int64{x.ID}, "user:1", "")
		testkit.MustRemember(t, s, server("g1", "The gate code changes monthly!"))
		_, err := s.Memories.Recover(ctx, owner, x.ID, 0, "user:1")
		wantCode(t, err, memory.ECONFLICT)
	})
}

func TestModify(t *testing.T) {
	s := testkit.MustOpenStore(t)
	owner := memory.ServerOwner("g1")
	m := testkit.MustRemember(t, s, server("g1", "Meetings are on Monday"))
	other := testkit.MustRemember(t, s, server("g1", "Meetings are on Tuesday"))
	newContent := "Meetings are on Wednesday"
	t.Run("Versioned", func(t *testing.T) {
		got, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &newContent, IfVersion: 1}, "user:1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 2 || got.Content != newContent || got.Hash != memory.Hash(newContent) {
			t.Fatalf("modified %+v", got)
		}
		if res, _ := s.Recall.Search(ctx, memory.SearchQuery{Text: "wednesday", Owners: []memory.Owner{owner}}); len(res) != 1 {
			t.Error("FTS index not updated on modify")
		}
		if res, _ := s.Recall.Search(ctx, memory.SearchQuery{Text: "monday", Owners: []memory.Owner{owner}}); len(res) != 0 {
			t.Error("FTS index still has the old content")
		}
	})
	t.Run("ErrStaleVersion", func(t *testing.T) {
		c := "Meetings are on Thursday"
		_, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &c, IfVersion: 1}, "user:1")
		wantCode(t, err, memory.ECONFLICT)
	})
	t.Run("ErrDuplicateOfAnother", func(t *testing.T) {
		_, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &other.Content}, "user:1")
		wantCode(t, err, memory.ECONFLICT)
	})
	t.Run("ErrEmpty", func(t *testing.T) {
		empty := "  "
		_, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &empty}, "user:1")
		wantCode(t, err, memory.EINVALID)
	})
}

func TestHistoryForEveryMutation(t *testing.T) {
	s := testkit.MustOpenStore(t)
	owner := memory.PersonalOwner("u1")
	m := testkit.MustRemember(t, s, personal("u1", "", "I live in Osaka"))
	c := "I live in Kyoto"
	if _, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &c, Reason: "moved"}, "user:u1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memories.Forget(ctx, owner, []int64{m.ID}, "user:u1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memories.Recover(ctx, owner, m.ID, 0, "user:u1"); err != nil {
		t.Fatal(err)
	}
	events, err := s.Memories.History(ctx, owner, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Action   memory.Action
		Old, New string
		Version  int
	}
	var got []row
	for _, e := range events {
		got = append(got, row{e.Action, e.OldContent, e.NewContent, e.Version})
	}
	want := []row{
		{memory.ActionCreate, "", "I live in Osaka", 1},
		{memory.ActionUpdate, "I live in Osaka", "I live in Kyoto", 2},
		{memory.ActionDelete, "I live in Kyoto", "", 3},
		{memory.ActionRecover, "", "I live in Kyoto", 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}

func TestForgetByQuery(t *testing.T) {
	s := testkit.MustOpenStore(t)
	owner := memory.ServerOwner("g1")
	a := testkit.MustRemember(t, s, server("g1", "The old minecraft server address is mc.example.net"))
	b := testkit.MustRemember(t, s, server("g1", "Minecraft night is on Saturdays"))
	keep := testkit.MustRemember(t, s, server("g1", "Board game night is on Fridays"))
	other := testkit.MustRemember(t, s, server("g2", "Minecraft in guild two"))

	preview, err := s.Confirmations.PreviewForget(ctx, owner, "minecraft", "user:1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(preview.Matches) != 2 {
		t.Fatalf("preview matched %d, want 2", len(preview.Matches))
	}
	for _, id := range []int64{a.ID, b.ID, keep.ID} {
		if _, err := s.Memories.Get(ctx, owner, id); err != nil {
			t.Fatalf("preview deleted #%d", id)
		}
	}
	t.Run("ErrWrongToken", func(t *testing.T) {
		_, err := s.Confirmations.ConfirmForget(ctx, owner, "not-a-token", "user:1")
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("ErrTokenFromAnotherScope", func(t *testing.T) {
		_, err := s.Confirmations.ConfirmForget(ctx, memory.ServerOwner("g2"), preview.Token, "user:1")
		wantCode(t, err, memory.ENOTFOUND)
		if _, err := s.Memories.Get(ctx, memory.ServerOwner("g2"), other.ID); err != nil {
			t.Fatal("another guild's memory was deleted")
		}
	})
	t.Run("TokenExecutesExactlyThePreview", func(t *testing.T) {
		later := testkit.MustRemember(t, s, server("g1", "Minecraft mods list is pinned"))
		got, err := s.Confirmations.ConfirmForget(ctx, owner, preview.Token, "user:1")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("forgot %d, want 2", len(got))
		}
		for _, id := range []int64{keep.ID, later.ID} {
			if _, err := s.Memories.Get(ctx, owner, id); err != nil {
				t.Errorf("#%d should have survived: %v", id, err)
			}
		}
	})
	t.Run("ErrTokenReused", func(t *testing.T) {
		_, err := s.Confirmations.ConfirmForget(ctx, owner, preview.Token, "user:1")
		wantCode(t, err, memory.ECONFLICT)
	})
	t.Run("ErrTokenExpired", func(t *testing.T) {
		clock := testkit.NewClock(time.Now())
		s.Now = clock.Now
		defer func() { s.Now = time.Now }()
		p, err := s.Confirmations.PreviewForget(ctx, owner, "board game", "user:1", 0)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(s.ConfirmTTL + time.Second)
		_, err = s.Confirmations.ConfirmForget(ctx, owner, p.Token, "user:1")
		wantCode(t, err, memory.EEXPIRED)
		if _, err := s.Memories.Get(ctx, owner, keep.ID); err != nil {
			t.Error("expired token deleted a memory")
		}
	})
	t.Run("ErrNoMatch", func(t *testing.T) {
		_, err := s.Confirmations.PreviewForget(ctx, owner, "zeppelin", "user:1", 0)
		wantCode(t, err, memory.ENOTFOUND)
	})
}

func TestExportImportRoundTrip(t *testing.T) {
	src := testkit.MustOpenStore(t)
	owner := memory.ServerOwner("g1")
	when := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	inputs := []memory.Memory{
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "We ship the demo on the 14th", Type: memory.TypeDecision,
			Importance: 0.9, Pinned: true, Tags: []string{"release"}, Provenance: memory.Provenance{AuthorID: "42", Author: "Alice", ChannelID: "c1", MessageID: "m1"},
			CreatedAt: when},
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "猫の名前はミソ", Type: memory.TypeFact},
		{Scope: memory.ScopeServer, GuildID: "g1", Content: "To deploy run make release", Type: memory.TypeProcedural},
	}
	for _, m := range inputs {
		testkit.MustRemember(t, src, m)
	}
	exported, err := src.Transfer.Export(ctx, owner)
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
	dst := testkit.MustOpenStore(t)
	res, err := dst.Transfer.Import(ctx, owner, parsed, "test")
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 3 || res.Duplicates != 0 {
		t.Fatalf("import %+v", res)
	}
	again, err := dst.Transfer.Export(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	strip := func(f memory.ExportFile) []memory.ExportMemory {
		out := append([]memory.ExportMemory(nil), f.Memories...)
		for i := range out {
			// Provenance becomes the importer's (TestImportIgnoresForgedProvenance).
			out[i].ID, out[i].Source, out[i].Provenance = 0, "", memory.Provenance{}
		}
		return out
	}
	if diff := cmp.Diff(strip(exported), strip(again)); diff != "" {
		t.Errorf("round trip changed memories (-want +got):\n%s", diff)
	}
	t.Run("ReimportDeduplicates", func(t *testing.T) {
		res, err := dst.Transfer.Import(ctx, owner, parsed, "test")
		if err != nil || res.Created != 0 || res.Duplicates != 3 {
			t.Fatalf("re-import %+v %v", res, err)
		}
	})
	t.Run("ErrInvalidWritesNothing", func(t *testing.T) {
		bad := parsed
		bad.Memories = append(append([]memory.ExportMemory{}, parsed.Memories...), memory.ExportMemory{Content: ""})
		bad.Memories[0].Content = "a brand new memory that must not land"
		empty := testkit.MustOpenStore(t)
		_, err := empty.Transfer.Import(ctx, owner, bad, "test")
		wantCode(t, err, memory.EINVALID)
		if _, n, _ := empty.Memories.List(ctx, owner, memory.ListOptions{}); n != 0 {
			t.Errorf("a failed import wrote %d memories", n)
		}
	})
	t.Run("ErrNotAnExport", func(t *testing.T) {
		for _, in := range []string{"{", `{"format":"other"}`, `[]`} {
			_, err := memory.ParseExport([]byte(in))
			wantCode(t, err, memory.EINVALID)
		}
	})
}

func TestForgetMe(t *testing.T) {
	s := testkit.MustOpenStore(t)
	testkit.MustRemember(t, s, personal("u1", "", "my cat is Miso"))
	gone := testkit.MustRemember(t, s, personal("u1", "g1", "I work nights"))
	s.Memories.Forget(ctx, memory.PersonalOwner("u1"), []int64{gone.ID}, "user:u1", "")
	keepOther := testkit.MustRemember(t, s, personal("u2", "", "my cat is Miso"))
	keepServer := testkit.MustRemember(t, s, server("g1", "u1 likes trains"))
	for _, tr := range []memory.Turn{
		{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: memory.RoleUser, Content: "hi"},
		{GuildID: "g1", ChannelID: "c1", UserID: "u1", Role: memory.RoleAssistant, Content: "hello"},
		{GuildID: "g1", ChannelID: "c1", UserID: "u2", Role: memory.RoleUser, Content: "hey"},
	} {
		if _, err := s.Transcripts.AppendTurn(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	preview, err := s.Confirmations.PreviewForgetMe(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if preview.Memories != 2 || preview.Turns != 2 {
		t.Fatalf("preview %+v", preview)
	}
	_, err = s.Confirmations.ConfirmForgetMe(ctx, "u2", preview.Token)
	wantCode(t, err, memory.ENOTFOUND)
	done, err := s.Confirmations.ConfirmForgetMe(ctx, "u1", preview.Token)
	if err != nil {
		t.Fatal(err)
	}
	if done.Memories != 2 || done.Turns != 2 {
		t.Fatalf("erased %+v", done)
	}
	if _, n, _ := s.Memories.List(ctx, memory.PersonalOwner("u1"), memory.ListOptions{Deleted: true}); n != 0 {
		t.Error("forgotten personal memories survived forget-me")
	}
	if n, _ := s.Transcripts.CountTurns(ctx, "u1"); n != 0 {
		t.Errorf("%d transcript turns survived", n)
	}
	if n, _ := s.Transcripts.CountTurns(ctx, "u2"); n != 1 {
		t.Errorf("another user's turns changed: %d", n)
	}
	if _, err := s.Memories.Get(ctx, memory.PersonalOwner("u2"), keepOther.ID); err != nil {
		t.Error("another user's identical memory was erased")
	}
	if _, err := s.Memories.Get(ctx, memory.ServerOwner("g1"), keepServer.ID); err != nil {
		t.Error("server memory was erased")
	}
	hist, _ := s.Memories.ScopeHistory(ctx, memory.PersonalOwner("u1"), 0)
	if len(hist) != 1 || hist[0].Action != memory.ActionPurge || hist[0].OldContent != "" {
		t.Errorf("history after forget-me = %+v, want one purge row without content", hist)
	}
}

func TestSettings(t *testing.T) {
	s := testkit.MustOpenStore(t)
	us, err := s.Settings.UserSettings(ctx, "u1")
	if err != nil || us.Privacy != memory.PrivacyNormal || us.CrossServer {
		t.Fatalf("defaults %+v %v", us, err)
	}
	if err := s.Settings.SetPrivacy(ctx, "u1", memory.PrivacyPartial); err != nil {
		t.Fatal(err)
	}
	if err := s.Settings.SetCrossServer(ctx, "u1", true); err != nil {
		t.Fatal(err)
	}
	us, _ = s.Settings.UserSettings(ctx, "u1")
	if us.Privacy != memory.PrivacyPartial || !us.CrossServer {
		t.Errorf("settings %+v", us)
	}
	wantCode(t, s.Settings.SetPrivacy(ctx, "u1", "secret"), memory.EINVALID)

	gs, _ := s.Settings.GuildSettings(ctx, "g1")
	if gs.SelfTeaching || gs.PipelineMode != memory.PipelineFull {
		t.Errorf("guild defaults %+v", gs)
	}
	gs.SelfTeaching, gs.AutoReplyChannels, gs.Persona = true, []string{"c1", "c2"}, "You are a cheerful librarian."
	if err := s.Settings.SaveGuildSettings(ctx, gs); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Settings.GuildSettings(ctx, "g1")
	if !got.SelfTeaching || len(got.AutoReplyChannels) != 2 || got.Persona != gs.Persona {
		t.Errorf("guild settings %+v", got)
	}
	gs.PipelineMode = "yolo"
	wantCode(t, s.Settings.SaveGuildSettings(ctx, gs), memory.EINVALID)
}

func TestTranscriptRedactsSecrets(t *testing.T) {
	s := testkit.MustOpenStore(t)
	_, err := s.Transcripts.AppendTurn(ctx, memory.Turn{ChannelID: "dm1", UserID: "u1", Role: memory.RoleUser,
		Content: "my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123 keep it"})
	if err != nil {
		t.Fatal(err)
	}
	turns, _ := s.Transcripts.RecentTurns(ctx, "", "dm1", "u1", 10)
	if len(turns) != 1 || strings.Contains(turns[0].Content, "sk-proj") || !strings.Contains(turns[0].Content, "keep it") {
		t.Fatalf("turns = %+v", turns)
	}
	if other, _ := s.Transcripts.RecentTurns(ctx, "", "dm1", "u2", 10); len(other) != 0 {
		t.Error("another user read a DM transcript")
	}
}

// TestConcurrentWriters runs 8 goroutines that write and read at once and checks that no
// write failed with busy/locked and none was lost.
func TestConcurrentWriters(t *testing.T) {
	s := testkit.MustOpenStore(t)
	const workers, perWorker = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			owner := memory.ServerOwner(fmt.Sprintf("g%d", w%3))
			for i := 0; i < perWorker; i++ {
				res, err := s.Memories.Remember(ctx, memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID,
					Content: fmt.Sprintf("worker %d fact %d about trains", w, i)}, "test")
				if err != nil {
					errs <- err
					return
				}
				if i%3 == 0 {
					c := fmt.Sprintf("worker %d fact %d about planes", w, i)
					if _, err := s.Memories.Modify(ctx, owner, res.Memory.ID, memory.Change{Content: &c}, "test"); err != nil {
						errs <- err
						return
					}
				}
				if _, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "trains", Owners: []memory.Owner{owner}, Limit: 5}); err != nil {
					errs <- err
					return
				}
				if _, _, err := s.Memories.List(ctx, owner, memory.ListOptions{Limit: 5}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if strings.Contains(err.Error(), "busy") || strings.Contains(err.Error(), "locked") {
			t.Fatalf("busy/locked under concurrency: %v", err)
		}
		t.Fatal(err)
	}
	total := 0
	for g := 0; g < 3; g++ {
		_, n, err := s.Memories.List(ctx, memory.ServerOwner(fmt.Sprintf("g%d", g)), memory.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != workers*perWorker {
		t.Fatalf("stored %d memories, want %d (lost writes)", total, workers*perWorker)
	}
	if s.InWriteTx() {
		t.Error("write transaction left open")
	}
}

// TestRememberManyDeduplicatesAcrossStatementsAndBatches: the bulk path writes many rows per
// statement and many statements per transaction, yet gives each input the id of the memory
// now holding its content, in input order: new, already live, or repeated earlier in the
// same call (in another case). Scopes stay apart, a forgotten memory's content is stored
// again, and each created memory has its history row and is searchable.
func TestRememberManyDeduplicatesAcrossStatementsAndBatches(t *testing.T) {
	s := testkit.MustOpenStore(t)
	live := testkit.MustRemember(t, s, server("g1", "The raid is on Friday"))
	gone := testkit.MustRemember(t, s, server("g1", "The guild bank is closed"))
	if _, err := s.Memories.Forget(ctx, memory.ServerOwner("g1"), []int64{gone.ID}, "test", ""); err != nil {
		t.Fatal(err)
	}
	var in []memory.Memory
	for i := range 1200 { // three transactions of RememberMany, many statements each
		in = append(in, server("g1", fmt.Sprintf("Bulk fact number %d about zeppelins", i)))
	}
	in = append(in,
		server("g1", "the raid is on friday."),                     // already live
		server("g1", "BULK FACT NUMBER 7 about zeppelins"),         // repeats input 7
		server("g1", "The guild bank is closed"),                   // forgotten before: stored again
		personal("u1", "g1", "Bulk fact number 7 about zeppelins"), // another scope
	)
	res, err := s.Transfer.RememberMany(ctx, in, "test")
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 1202 || res.Duplicates != 2 || len(res.IDs) != len(in) {
		t.Fatalf("created %d, duplicates %d, %d ids; want 1202, 2, %d", res.Created, res.Duplicates, len(res.IDs), len(in))
	}
	if res.IDs[1200] != live.ID || res.IDs[1201] != res.IDs[7] {
		t.Errorf("duplicate ids %d, %d; want %d (live) and %d (input 7)", res.IDs[1200], res.IDs[1201], live.ID, res.IDs[7])
	}
	if res.IDs[1202] == gone.ID || res.IDs[1203] == res.IDs[7] {
		t.Errorf("forgotten content or another scope's copy reused an id: %v", res.IDs[1202:])
	}
	seen := map[int64]bool{}
	for i, id := range res.IDs {
		m, err := s.Memories.Get(ctx, in[i].Owner(), id)
		if err != nil {
			t.Fatalf("input %d: id %d: %v", i, id, err)
		}
		if m.Normalized != in[i].Normalized {
			t.Fatalf("input %d (%q) got id %d holding %q", i, in[i].Content, id, m.Content)
		}
		if i < 1200 && seen[id] {
			t.Fatalf("input %d shares id %d with another new memory", i, id)
		}
		seen[id] = true
	}
	ev, err := s.Memories.History(ctx, memory.ServerOwner("g1"), res.IDs[999])
	if err != nil || len(ev) != 1 || ev[0].Action != memory.ActionCreate || ev[0].NewContent != in[999].Content || ev[0].Version != 1 {
		t.Fatalf("history of a bulk memory: %+v %v", ev, err)
	}
	hits, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "zeppelins number 1117", Owners: []memory.Owner{memory.ServerOwner("g1")}, Limit: 3, KeywordOnly: true})
	if err != nil || len(hits) == 0 || hits[0].Memory.ID != res.IDs[1117] {
		t.Fatalf("search for a bulk memory: %+v %v", hits, err)
	}
}

// Closing a store twice is harmless: the second Close returns the first one's result.
func TestCloseTwice(t *testing.T) {
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
