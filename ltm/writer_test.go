package ltm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// The one rule of what a writer may see, as a table.
func TestWriteContextCanSee(t *testing.T) {
	const (
		w     = "100" // the writer
		other = "200"
	)
	public := &memory.Audience{Channels: map[string]bool{"general": true}}
	server := func(guild, channel string) *memory.Memory {
		return &memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Provenance: memory.Provenance{ChannelID: channel}}
	}
	personal := func(user, origin, channel, author string) *memory.Memory {
		return &memory.Memory{Scope: memory.ScopePersonal, UserID: user, GuildID: origin,
			Provenance: memory.Provenance{ChannelID: channel, AuthorID: author}}
	}
	inGuild := memory.WriteContext{WriterID: w, GuildID: "g1", ChannelID: "general"}
	inGuildAud := memory.WriteContext{WriterID: w, GuildID: "g1", ChannelID: "general", Audience: public}
	inDM := memory.WriteContext{WriterID: w, ChannelID: "dm"}
	deleted := server("g1", "general")
	deleted.DeletedAt = deleted.CreatedAt.AddDate(2000, 0, 0)

	tests := []struct {
		name  string
		w     memory.WriteContext
		m     *memory.Memory
		cross bool
		want  bool
	}{
		{"ServerOfThisGuild", inGuild, server("g1", "general"), false, true},
		{"ServerOfAnotherGuild", inGuild, server("g2", "general"), false, false},
		{"ServerInDM", inDM, server("g1", "general"), false, false},
		{"ServerAllowedByAudience", inGuildAud, server("g1", "general"), false, true},
		{"ServerFromChannelAudienceExcludes", inGuildAud, server("g1", "mods"), false, false},
		{"ServerWithoutOriginChannel", inGuildAud, server("g1", ""), false, true},
		{"OwnFromThisGuild", inGuild, personal(w, "g1", "general", w), false, true},
		{"OwnFromDMInGuild", inGuild, personal(w, "", "", w), false, false},
		{"OwnFromOtherGuildInGuild", inGuild, personal(w, "g2", "x", w), false, false},
		{"OwnFromDMInGuildCrossServer", inGuild, personal(w, "", "", w), true, true},
		{"OwnFromOtherGuildCrossServer", inGuild, personal(w, "g2", "x", w), true, true},
		{"OwnFromDMInDM", inDM, personal(w, "", "", w), false, true},
		{"OwnFromGuildInDM", inDM, personal(w, "g1", "mods", w), false, true},
		{"OwnFromChannelAudienceExcludes", inGuildAud, personal(w, "g1", "mods", w), false, false},
		{"OthersNotAuthored", inGuild, personal(other, "g1", "general", other), false, false},
		{"OthersFromDMNotAuthored", inGuild, personal(other, "", "", other), true, false},
		{"OthersAuthoredByWriter", inGuild, personal(other, "g1", "general", w), false, true},
		{"OthersAuthoredByWriterAudienceExcludes", inGuildAud, personal(other, "g1", "mods", w), false, false},
		{"OthersInDMNotAuthored", inDM, personal(other, "", "", other), false, false},
		{"Deleted", inGuild, deleted, false, false},
		{"NoWriter", memory.WriteContext{GuildID: "g1"}, server("g1", "general"), false, false},
		{"Nil", inGuild, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.w.CanSee(tt.m, tt.cross); got != tt.want {
				t.Fatalf("CanSee = %v, want %v", got, tt.want)
			}
		})
	}
}

// A write that matches only a memory its writer cannot see inserts a fresh row, exactly as
// if nothing matched; one that matches a visible memory is deduplicated.
func TestRememberAsDedupsOnlyVisible(t *testing.T) {
	ctx := context.Background()
	s := testkit.MustOpenStore(t)
	const alice, bob = "100", "200"
	hidden := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: alice,
		Content: "Alice is allergic to peanuts", Provenance: memory.Provenance{AuthorID: alice}})
	bobInGuild := memory.WriteContext{WriterID: bob, GuildID: "g1", ChannelID: "c1"}
	about := memory.Memory{Scope: memory.ScopePersonal, UserID: alice, GuildID: "g1", Content: "alice is allergic to peanuts.",
		Source: memory.SourceTool, Provenance: memory.Provenance{AuthorID: bob, ChannelID: "c1"}}

	fresh, err := s.Memories.RememberAs(ctx, bobInGuild, about, "model:"+bob)
	if err != nil {
		t.Fatal(err)
	}
	if !fresh.Created || fresh.Memory.ID == hidden.ID {
		t.Fatalf("Bob's save = %+v, want a new memory (not #%d, which Bob cannot see)", fresh, hidden.ID)
	}
	// Bob authored the new one, so saving it again is deduplicated against it, not the hidden one.
	again, err := s.Memories.RememberAs(ctx, bobInGuild, about, "model:"+bob)
	if err != nil {
		t.Fatal(err)
	}
	if again.Created || again.Memory.ID != fresh.Memory.ID {
		t.Fatalf("Bob's second save = %+v, want #%d again", again, fresh.Memory.ID)
	}
	// Alice in a DM sees both and gets the oldest.
	own, err := s.Memories.RememberAs(ctx, memory.WriteContext{WriterID: alice, ChannelID: "dm"}, memory.Memory{Scope: memory.ScopePersonal,
		UserID: alice, Content: "Alice is allergic to peanuts"}, "user:"+alice)
	if err != nil {
		t.Fatal(err)
	}
	if own.Created || own.Memory.ID != hidden.ID {
		t.Fatalf("Alice's save = %+v, want #%d", own, hidden.ID)
	}
	// Writers without a place keep today's rule: the whole scope.
	plain, err := s.Memories.Remember(ctx, about, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if plain.Created || plain.Memory.ID != hidden.ID {
		t.Fatalf("Remember = %+v, want #%d", plain, hidden.ID)
	}

	t.Run("ModifyAsIgnoresHiddenDuplicate", func(t *testing.T) {
		draft := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: alice, GuildID: "g1",
			Content: "Alice likes hiking", Provenance: memory.Provenance{AuthorID: bob}})
		content := "Alice is allergic to peanuts"
		if _, err := s.Memories.Modify(ctx, memory.PersonalOwner(alice), draft.ID, memory.Change{Content: &content}, "cli"); memory.ErrorCode(err) != memory.ECONFLICT {
			t.Fatalf("Modify = %v, want ECONFLICT against the whole scope", err)
		}
		// A third member's write context sees none of them.
		carol := memory.WriteContext{WriterID: "300", GuildID: "g1"}
		if _, err := s.Memories.ModifyAs(ctx, carol, memory.PersonalOwner(alice), draft.ID, memory.Change{Content: &content}, "model:300"); err != nil {
			t.Fatalf("ModifyAs = %v, want the change (the duplicates are not Carol's to see)", err)
		}
	})

	t.Run("RecoverAsIgnoresHiddenDuplicate", func(t *testing.T) {
		m := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raid at nine",
			Provenance: memory.Provenance{ChannelID: "general"}})
		if _, err := s.Memories.Forget(ctx, memory.ServerOwner("g1"), []int64{m.ID}, "test", ""); err != nil {
			t.Fatal(err)
		}
		testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raid at nine",
			Provenance: memory.Provenance{ChannelID: "mods"}})
		w := memory.WriteContext{WriterID: bob, GuildID: "g1", ChannelID: "general",
			Audience: &memory.Audience{Channels: map[string]bool{"general": true}}}
		if _, err := s.Memories.RecoverAs(ctx, w, memory.ServerOwner("g1"), m.ID, 0, "user:"+bob); err != nil {
			t.Fatalf("RecoverAs = %v, want the recovery (the #mods copy is hidden from #general)", err)
		}
	})
}

// A file's author ids, names, channels and messages are never provenance: the importer is
// the author, and another member named in the file becomes neither author nor subject.
func TestImportIgnoresForgedProvenance(t *testing.T) {
	ctx := context.Background()
	s := testkit.MustOpenStore(t)
	const victim, importer = "555", "777"
	f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, Memories: []memory.ExportMemory{{
		Type: memory.TypeFact, Content: "The victim agreed to pay for everything",
		Source:     memory.SourcePipeline,
		Provenance: memory.Provenance{AuthorID: victim, Author: "Victim", ChannelID: "secret-channel", MessageID: "999"},
	}}}
	for _, tc := range []struct {
		name   string
		run    func() (memory.ImportResult, error)
		owner  memory.Owner
		author string
		actor  memory.Actor
	}{
		{"Command", func() (memory.ImportResult, error) {
			return s.Transfer.ImportAs(ctx, memory.ServerOwner("g1"), f, memory.Importer{Actor: memory.UserActor(importer), AuthorID: importer,
				AuthorName: "Importer", GuildID: "g1", ChannelID: "general", MessageID: "interaction-1"})
		}, memory.ServerOwner("g1"), importer, memory.UserActor(importer)},
		{"CLI", func() (memory.ImportResult, error) {
			return s.Transfer.Import(ctx, memory.ServerOwner("g2"), f, memory.ActorCLI)
		}, memory.ServerOwner("g2"), "", memory.ActorCLI},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.run()
			if err != nil || res.Created != 1 {
				t.Fatalf("import = %+v, %v", res, err)
			}
			m, err := s.Memories.Get(ctx, tc.owner, res.IDs[0])
			if err != nil {
				t.Fatal(err)
			}
			if m.Provenance.AuthorID != tc.author || m.Provenance.Author == "Victim" || m.SubjectID != "" {
				t.Fatalf("imported provenance = %+v, subject %q; want author %q and no trace of %s", m.Provenance, m.SubjectID, tc.author, victim)
			}
			if m.Provenance.ChannelID == "secret-channel" || m.Provenance.MessageID == "999" {
				t.Fatalf("imported memory kept the file's channel or message: %+v", m.Provenance)
			}
			if m.Source != memory.SourceImport {
				t.Fatalf("source = %q, want import", m.Source)
			}
			if ev, err := s.Memories.Evidence(ctx, m.ID); err != nil || len(ev) != 0 {
				t.Fatalf("evidence = %+v, %v; want none", ev, err)
			}
			hist, err := s.Memories.History(ctx, tc.owner, m.ID)
			if err != nil || len(hist) != 1 || hist[0].Actor != tc.actor || hist[0].Action != memory.ActionImport {
				t.Fatalf("history = %+v, %v; want one import by %s", hist, err, tc.actor)
			}
		})
	}
}

// Settings are read for any number of users, so no one is left out by a cap.
func TestUsersSettingsHasNoCap(t *testing.T) {
	ctx := context.Background()
	s := testkit.MustOpenStore(t)
	var ids []string
	for i := range 1200 {
		ids = append(ids, fmt.Sprintf("u%04d", i))
	}
	for _, id := range []string{"u0000", "u0600", "u1199"} {
		if err := s.Settings.SetPrivacy(ctx, id, memory.PrivacyFull); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Settings.UsersSettings(ctx, append(ids, "u0000"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) {
		t.Fatalf("%d settings, want %d", len(got), len(ids))
	}
	full := 0
	for _, us := range got {
		if us.Privacy == memory.PrivacyFull {
			full++
		}
	}
	if full != 3 || got["u1199"].Privacy != memory.PrivacyFull || got["u0001"].Privacy != memory.PrivacyNormal {
		t.Fatalf("%d users at full (want 3); u1199 %+v, u0001 %+v", full, got["u1199"], got["u0001"])
	}
}

// The pinned change counter moves with every change to a pinned memory, by any path, and
// not with writes that leave pinned memories alone.
func TestPinnedVersion(t *testing.T) {
	ctx := context.Background()
	s := testkit.MustOpenStore(t)
	owner := memory.ServerOwner("g1")
	version := func() int64 {
		t.Helper()
		v, err := s.Memories.PinnedVersion(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	step := func(name string, moves bool, do func()) {
		t.Helper()
		before := version()
		do()
		if after := version(); (after != before) != moves {
			t.Fatalf("%s: version %d → %d, want moved=%v", name, before, after, moves)
		}
	}
	var pinned, plain *memory.Memory
	step("unpinned insert", false, func() {
		plain = testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Ordinary fact"})
	})
	step("pinned insert", true, func() {
		pinned = testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Rule one", Pinned: true})
	})
	step("other guild's pin", false, func() {
		testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Rule one", Pinned: true})
	})
	step("access tracking", false, func() {
		if _, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "rule", Owners: []memory.Owner{owner}, CountAccess: true}); err != nil {
			t.Fatal(err)
		}
		if err := s.Recall.FlushAccess(ctx); err != nil {
			t.Fatal(err)
		}
	})
	step("edit of a pinned memory", true, func() {
		c := "Rule one, revised"
		if _, err := s.Memories.Modify(ctx, owner, pinned.ID, memory.Change{Content: &c}, "test"); err != nil {
			t.Fatal(err)
		}
	})
	step("pinning", true, func() {
		yes := true
		if _, err := s.Memories.Modify(ctx, owner, plain.ID, memory.Change{Pinned: &yes}, "test"); err != nil {
			t.Fatal(err)
		}
	})
	step("forget", true, func() {
		if _, err := s.Memories.Forget(ctx, owner, []int64{pinned.ID}, "test", ""); err != nil {
			t.Fatal(err)
		}
	})
	step("recover", true, func() {
		if _, err := s.Memories.Recover(ctx, owner, pinned.ID, 0, "test"); err != nil {
			t.Fatal(err)
		}
	})
}

// An import by a member counts as "already there" only what that member can see where
// they import; the CLI counts the whole scope.
func TestImportAsDedupsOnlyVisible(t *testing.T) {
	ctx := context.Background()
	s := testkit.MustOpenStore(t)
	testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Ban review on Monday",
		Provenance: memory.Provenance{ChannelID: "mods"}})
	f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, Memories: []memory.ExportMemory{
		{Type: memory.TypeFact, Content: "Ban review on Monday"}, {Type: memory.TypeFact, Content: "Movie night on Sunday"}}}
	by := memory.Importer{Actor: "user:100", AuthorID: "100", GuildID: "g1", ChannelID: "general",
		Audience: &memory.Audience{Channels: map[string]bool{"general": true}}}
	res, err := s.Transfer.ImportAs(ctx, memory.ServerOwner("g1"), f, by)
	if err != nil || res.Created != 2 || res.Duplicates != 0 {
		t.Fatalf("import from #general = %+v, %v; want 2 created, 0 already there (the #mods copy is hidden)", res, err)
	}
	res, err = s.Transfer.Import(ctx, memory.ServerOwner("g1"), f, memory.ActorCLI)
	if err != nil || res.Created != 0 || res.Duplicates != 2 {
		t.Fatalf("CLI import = %+v, %v; want everything already there", res, err)
	}
}
