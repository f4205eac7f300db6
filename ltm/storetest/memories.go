package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kioku-bot/kioku/memory"
)

// testScopeIsolation: a server memory is never visible from another guild, a personal
// memory never from another user, and ids of another scope are simply not found.
func testScopeIsolation(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	gA, gB := memory.ServerOwner("gA"), memory.ServerOwner("gB")
	uX, uY := memory.PersonalOwner("uX"), memory.PersonalOwner("uY")
	bMem := mustRemember(t, s, server("gB", "guild B secret plan"))
	yMem := mustRemember(t, s, personal("uY", "gA", "Y's cat is called Miso"))
	content := "hijacked"

	for _, c := range []struct {
		name  string
		owner memory.Owner
		id    int64
	}{
		{"GuildCannotTouchAnotherGuild", gA, bMem.ID},
		{"UserCannotTouchAnotherUser", uX, yMem.ID},
		{"GuildCannotTouchPersonal", gA, yMem.ID},
		{"UserCannotTouchServer", uX, bMem.ID},
	} {
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
			if slices.Contains(listIDs(t, s, c.owner, memory.ListOptions{}), c.id) {
				t.Fatalf("List of %v shows #%d", c.owner, c.id)
			}
			if ids := searchIDs(t, s, "secret plan cat Miso", c.owner); len(ids) != 0 {
				t.Fatalf("Search of %v found %v", c.owner, ids)
			}
			hist, err := s.Memories.ScopeHistory(ctx, c.owner, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range hist {
				if ev.MemoryID == c.id {
					t.Fatalf("ScopeHistory of %v shows a row of #%d", c.owner, c.id)
				}
			}
		})
	}
	t.Run("OwnersStillSeeTheirsUnchanged", func(t *testing.T) {
		if m, err := s.Memories.Get(ctx, gB, bMem.ID); err != nil || m.Content != bMem.Content || m.Version != 1 {
			t.Errorf("guild B's memory: %+v %v", m, err)
		}
		if m, err := s.Memories.Get(ctx, uY, yMem.ID); err != nil || m.Content != yMem.Content || m.Version != 1 {
			t.Errorf("Y's memory: %+v %v", m, err)
		}
	})
	t.Run("TombstoneOfAnotherScopeIsNotFound", func(t *testing.T) {
		gone := mustRemember(t, s, server("gB", "guild B old plan"))
		mustForget(t, s, gB, gone.ID)
		_, err := s.Memories.Recover(ctx, gA, gone.ID, 0, "attacker")
		wantCode(t, err, memory.ENOTFOUND)
		_, err = s.Memories.History(ctx, gA, gone.ID)
		wantCode(t, err, memory.ENOTFOUND)
		if slices.Contains(listIDs(t, s, gA, memory.ListOptions{Deleted: true}), gone.ID) {
			t.Fatal("another guild's forgotten memory is listed")
		}
	})
	t.Run("MixedForgetChangesNothing", func(t *testing.T) {
		own := mustRemember(t, s, server("gA", "guild A fact"))
		_, err := s.Memories.Forget(ctx, gA, []int64{own.ID, bMem.ID}, "attacker", "")
		wantCode(t, err, memory.ENOTFOUND)
		if !isLive(t, s, gA, own.ID) {
			t.Fatal("an all-or-nothing forget deleted the caller's own memory")
		}
	})
	t.Run("SearchAcrossOwnedScopesOnly", func(t *testing.T) {
		a := mustRemember(t, s, server("gA", "the lighthouse opens at dawn"))
		x := mustRemember(t, s, personal("uX", "", "my lighthouse key is blue"))
		mustRemember(t, s, server("gB", "the lighthouse closes at dusk"))
		mustRemember(t, s, personal("uY", "", "my lighthouse key is red"))
		got := searchIDs(t, s, "lighthouse", gA, uX)
		slices.Sort(got)
		if want := []int64{a.ID, x.ID}; !slices.Equal(got, want) {
			t.Fatalf("search of guild A and user X found %v, want %v", got, want)
		}
	})
	t.Run("PersonalOriginRestrictsVisibility", func(t *testing.T) {
		mustRemember(t, s, personal("uZ", "gB", "Z plays the oboe"))
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "oboe", KeywordOnly: true,
			Visible: []memory.Visible{{Owner: memory.PersonalOwner("uZ"), OriginGuildID: "gA"}}})
		if err != nil || len(res) != 0 {
			t.Fatalf("a personal memory from guild B was recalled in guild A without opt-in: %v %v", res, err)
		}
		res, err = s.Recall.Search(ctx, memory.SearchQuery{Text: "oboe", KeywordOnly: true,
			Visible: []memory.Visible{{Owner: memory.PersonalOwner("uZ"), OriginGuildID: "gB"}}})
		if err != nil || len(res) != 1 {
			t.Fatalf("search in the origin guild found %d (%v), want 1", len(res), err)
		}
	})
	t.Run("ErrSearchWithoutScope", func(t *testing.T) {
		_, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "plan", KeywordOnly: true})
		wantCode(t, err, memory.EINVALID)
	})
	t.Run("ErrOwnerWithoutID", func(t *testing.T) {
		_, err := s.Memories.Get(ctx, memory.Owner{Scope: memory.ScopeServer}, bMem.ID)
		wantCode(t, err, memory.EINVALID)
		_, _, err = s.Memories.List(ctx, memory.Owner{Scope: memory.ScopePersonal}, memory.ListOptions{})
		wantCode(t, err, memory.EINVALID)
	})
}

// testImportanceDecay: importance_min filters on the importance decayed to the store's
// clock (memory.Memory.EffectiveImportance), pinned memories and decisions keep their base,
// and the stored importance is never rewritten.
func testImportanceDecay(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	g := memory.ServerOwner("gD")
	mk := func(content string, typ memory.Type, pinned bool) *memory.Memory {
		m := server("gD", content)
		m.Type, m.Pinned, m.Importance = typ, pinned, 0.8
		return mustRemember(t, s, m)
	}
	plain := mk("the lantern hangs in the shed", memory.TypeFact, false)
	pinned := mk("the lantern is lit at dusk", memory.TypeFact, true)
	decision := mk("we decided the lantern stays outside", memory.TypeDecision, false)
	important := func() []int64 {
		t.Helper()
		res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "lantern", Owners: []memory.Owner{g}, KeywordOnly: true, ImportanceMin: 0.7})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, len(res))
		for i, r := range res {
			ids[i] = r.Memory.ID
		}
		slices.Sort(ids)
		return ids
	}
	if got, want := important(), []int64{plain.ID, pinned.ID, decision.ID}; !slices.Equal(got, want) {
		t.Fatalf("day 0, importance_min 0.7: found %v, want %v", got, want)
	}
	// 0.8 × 0.95^3 ≈ 0.686.
	s.Clock.Advance(3 * 24 * time.Hour)
	if got, want := important(), []int64{pinned.ID, decision.ID}; !slices.Equal(got, want) {
		t.Fatalf("day 3, importance_min 0.7: found %v, want %v (the fact decayed, the pin and the decision did not)", got, want)
	}
	got, err := s.Memories.Get(ctx, g, plain.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Importance != 0.8 {
		t.Fatalf("stored importance %v after decay, want the base 0.8", got.Importance)
	}
}

// testDedup: the same content twice in a scope is one memory; in two scopes it is two.
func testDedup(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	t.Run("SameScopeReturnsTheExistingMemory", func(t *testing.T) {
		a, err := s.Memories.Remember(ctx, server("g1", "The raid is on Friday."), "test")
		if err != nil || !a.Created {
			t.Fatalf("first remember: %+v %v", a, err)
		}
		b, err := s.Memories.Remember(ctx, server("g1", "  the RAID is on friday "), "test")
		if err != nil {
			t.Fatal(err)
		}
		if b.Created || b.Memory.ID != a.Memory.ID {
			t.Fatalf("duplicate created a new memory: first #%d, second #%d created=%v", a.Memory.ID, b.Memory.ID, b.Created)
		}
		if _, n, _ := s.Memories.List(ctx, memory.ServerOwner("g1"), memory.ListOptions{}); n != 1 {
			t.Fatalf("%d memories listed, want 1", n)
		}
	})
	t.Run("TwoGuildsTwoMemories", func(t *testing.T) {
		a := mustRemember(t, s, server("g1", "Pizza night is Tuesday"))
		b := mustRemember(t, s, server("g2", "Pizza night is Tuesday"))
		if a.ID == b.ID {
			t.Fatal("the same fact in two guilds shared one memory")
		}
	})
	t.Run("TwoUsersTwoMemories", func(t *testing.T) {
		a := mustRemember(t, s, personal("u1", "", "I prefer tea"))
		b := mustRemember(t, s, personal("u2", "", "I prefer tea"))
		if a.ID == b.ID {
			t.Fatal("two users' identical personal memories shared one memory")
		}
	})
	t.Run("PersonalAndServerAreDistinctScopes", func(t *testing.T) {
		a := mustRemember(t, s, server("g1", "likes green tea"))
		b := mustRemember(t, s, personal("u1", "g1", "likes green tea"))
		if a.ID == b.ID {
			t.Fatal("a personal memory was deduplicated into server memory")
		}
	})
	t.Run("PersonalDedupIgnoresOrigin", func(t *testing.T) {
		a := mustRemember(t, s, personal("u3", "g1", "I am learning Go"))
		b, err := s.Memories.Remember(ctx, personal("u3", "g2", "I am learning Go"), "test")
		if err != nil || b.Created || b.Memory.ID != a.ID {
			t.Fatalf("the same personal memory from another guild: %+v %v, want #%d", b, err, a.ID)
		}
	})
	t.Run("ForgottenDoesNotBlockRememberingAgain", func(t *testing.T) {
		a := mustRemember(t, s, server("g1", "temporary fact"))
		mustForget(t, s, memory.ServerOwner("g1"), a.ID)
		b, err := s.Memories.Remember(ctx, server("g1", "temporary fact"), "test")
		if err != nil || !b.Created || b.Memory.ID == a.ID {
			t.Fatalf("remembering a forgotten fact: %+v %v, want a new memory", b, err)
		}
	})
	t.Run("ErrInvalidContent", func(t *testing.T) {
		for name, m := range map[string]memory.Memory{
			"Empty":   server("g1", "   "),
			"Secret":  server("g1", "the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123"),
			"NoGuild": server("", "a fact without a guild"),
			"BadType": {Scope: memory.ScopeServer, GuildID: "g1", Content: "typed", Type: "gossip"},
		} {
			_, err := s.Memories.Remember(ctx, m, "test")
			if memory.ErrorCode(err) != memory.EINVALID {
				t.Errorf("%s: %v, want invalid", name, err)
			}
		}
	})
}

// testWriterVisibility: a writer in a place deduplicates only against memories it can see
// there; an identical memory it cannot see neither absorbs its write nor blocks its edit.
func testWriterVisibility(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	const alice, bob = "100", "200"
	hidden := mustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: alice,
		Content: "Alice is allergic to peanuts", Provenance: memory.Provenance{AuthorID: alice}})
	bobInGuild := memory.WriteContext{WriterID: bob, GuildID: "g1", ChannelID: "c1"}
	about := memory.Memory{Scope: memory.ScopePersonal, UserID: alice, GuildID: "g1", Content: "alice is allergic to peanuts.",
		Source: memory.SourceTool, Provenance: memory.Provenance{AuthorID: bob, ChannelID: "c1"}}

	var fresh memory.WriteResult
	t.Run("HiddenDuplicateGivesAFreshMemory", func(t *testing.T) {
		var err error
		fresh, err = s.Memories.RememberAs(ctx, bobInGuild, about, memory.ModelActor(bob))
		if err != nil {
			t.Fatal(err)
		}
		if !fresh.Created || fresh.Memory.ID == hidden.ID {
			t.Fatalf("Bob's save = %+v, want a new memory (not #%d, which Bob cannot see)", fresh, hidden.ID)
		}
	})
	t.Run("VisibleDuplicateIsReturned", func(t *testing.T) {
		again, err := s.Memories.RememberAs(ctx, bobInGuild, about, memory.ModelActor(bob))
		if err != nil || again.Created || again.Memory.ID != fresh.Memory.ID {
			t.Fatalf("Bob's second save = %+v %v, want #%d (he authored it)", again, err, fresh.Memory.ID)
		}
		own, err := s.Memories.RememberAs(ctx, memory.WriteContext{WriterID: alice, ChannelID: "dm"},
			personal(alice, "", "Alice is allergic to peanuts"), memory.UserActor(alice))
		if err != nil || own.Created || own.Memory.ID != hidden.ID {
			t.Fatalf("Alice's save in a DM = %+v %v, want the oldest, #%d", own, err, hidden.ID)
		}
	})
	t.Run("WriterWithoutAPlaceSeesTheWholeScope", func(t *testing.T) {
		plain, err := s.Memories.Remember(ctx, about, memory.ActorCLI)
		if err != nil || plain.Created || plain.Memory.ID != hidden.ID {
			t.Fatalf("Remember = %+v %v, want #%d", plain, err, hidden.ID)
		}
	})
	t.Run("ModifyAsIgnoresHiddenDuplicate", func(t *testing.T) {
		draft := mustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: alice, GuildID: "g1",
			Content: "Alice likes hiking", Provenance: memory.Provenance{AuthorID: bob}})
		content := "Alice is allergic to peanuts"
		_, err := s.Memories.Modify(ctx, memory.PersonalOwner(alice), draft.ID, memory.Change{Content: &content}, memory.ActorCLI)
		wantCode(t, err, memory.ECONFLICT)
		carol := memory.WriteContext{WriterID: "300", GuildID: "g1"}
		if _, err := s.Memories.ModifyAs(ctx, carol, memory.PersonalOwner(alice), draft.ID, memory.Change{Content: &content},
			memory.ModelActor("300")); err != nil {
			t.Fatalf("ModifyAs = %v, want the change (the duplicates are not Carol's to see)", err)
		}
	})
	t.Run("RecoverAsIgnoresHiddenDuplicate", func(t *testing.T) {
		g1 := memory.ServerOwner("g1")
		m := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raid at nine",
			Provenance: memory.Provenance{ChannelID: "general"}})
		mustForget(t, s, g1, m.ID)
		mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raid at nine",
			Provenance: memory.Provenance{ChannelID: "mods"}})
		_, err := s.Memories.Recover(ctx, g1, m.ID, 0, memory.ActorCLI)
		wantCode(t, err, memory.ECONFLICT)
		w := memory.WriteContext{WriterID: bob, GuildID: "g1", ChannelID: "general",
			Audience: &memory.Audience{Channels: map[string]bool{"general": true}}}
		if _, err := s.Memories.RecoverAs(ctx, w, g1, m.ID, 0, memory.UserActor(bob)); err != nil {
			t.Fatalf("RecoverAs = %v, want the recovery (the #mods copy is hidden from #general)", err)
		}
	})
}

// testVersions: every change bumps the version, and a change made from a stale view fails
// with a conflict instead of overwriting.
func testVersions(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	m := mustRemember(t, s, server("g1", "Meetings are on Monday"))
	other := mustRemember(t, s, server("g1", "Meetings are on Tuesday"))
	if m.Version != 1 {
		t.Fatalf("a new memory has version %d, want 1", m.Version)
	}
	wed := "Meetings are on Wednesday"
	t.Run("ModifyBumpsTheVersion", func(t *testing.T) {
		got, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &wed, IfVersion: 1}, "user:1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 2 || got.Content != wed || got.Hash != memory.Hash(wed) {
			t.Fatalf("modified %+v", got)
		}
		if ids := searchIDs(t, s, "wednesday", owner); !slices.Equal(ids, []int64{m.ID}) {
			t.Errorf("search for the new words found %v", ids)
		}
		if ids := searchIDs(t, s, "monday", owner); len(ids) != 0 {
			t.Errorf("search for the old words found %v", ids)
		}
	})
	t.Run("ErrStaleVersion", func(t *testing.T) {
		thu := "Meetings are on Thursday"
		_, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &thu, IfVersion: 1}, "user:1")
		wantCode(t, err, memory.ECONFLICT)
		if got, _ := s.Memories.Get(ctx, owner, m.ID); got.Content != wed || got.Version != 2 {
			t.Fatalf("a stale change was applied: %+v", got)
		}
	})
	t.Run("FieldsWithoutContent", func(t *testing.T) {
		pin, imp, typ, tags := true, 0.9, memory.TypeDecision, []string{"Schedule", "schedule", "team"}
		got, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Pinned: &pin, Importance: &imp, Type: &typ, Tags: &tags}, "user:1")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Pinned || got.Importance != 0.9 || got.Type != memory.TypeDecision || !slices.Equal(got.Tags, []string{"schedule", "team"}) ||
			got.Content != wed || got.Version != 3 {
			t.Fatalf("modified %+v", got)
		}
		list := listIDs(t, s, owner, memory.ListOptions{Tag: "team"})
		if !slices.Equal(list, []int64{m.ID}) {
			t.Errorf("list by tag = %v", list)
		}
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
	t.Run("ForgetAndRecoverBumpTheVersion", func(t *testing.T) {
		forgotten, err := s.Memories.Forget(ctx, owner, []int64{other.ID}, "user:1", "")
		if err != nil || len(forgotten) != 1 || forgotten[0].Version != 2 || !forgotten[0].Deleted() {
			t.Fatalf("forget = %+v %v, want version 2, deleted", forgotten, err)
		}
		_, err = s.Memories.Recover(ctx, owner, other.ID, 1, "user:1")
		wantCode(t, err, memory.ECONFLICT)
		got, err := s.Memories.Recover(ctx, owner, other.ID, 2, "user:1")
		if err != nil || got.Version != 3 || got.Deleted() {
			t.Fatalf("recover = %+v %v, want version 3, live", got, err)
		}
	})
	t.Run("ErrModifyForgotten", func(t *testing.T) {
		gone := mustRemember(t, s, server("g1", "soon gone"))
		mustForget(t, s, owner, gone.ID)
		c := "revived by an edit"
		_, err := s.Memories.Modify(ctx, owner, gone.ID, memory.Change{Content: &c}, "user:1")
		wantCode(t, err, memory.ENOTFOUND)
	})
}

// testSoftDelete: forget hides a memory everywhere but keeps it recoverable for the
// recover window and not after it.
func testSoftDelete(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	m := mustRemember(t, s, server("g1", "The wiki lives at wiki.example.org"))
	forgotten, err := s.Memories.Forget(ctx, owner, []int64{m.ID}, "user:1", "outdated")
	if err != nil || len(forgotten) != 1 || forgotten[0].ID != m.ID || !forgotten[0].DeletedAt.Equal(s.Clock.Now()) {
		t.Fatalf("forget = %+v %v, want #%d deleted now", forgotten, err, m.ID)
	}
	t.Run("HiddenFromGetListSearch", func(t *testing.T) {
		_, err := s.Memories.Get(ctx, owner, m.ID)
		wantCode(t, err, memory.ENOTFOUND)
		if ids := listIDs(t, s, owner, memory.ListOptions{}); len(ids) != 0 {
			t.Errorf("List shows forgotten memories %v", ids)
		}
		if ids := searchIDs(t, s, "wiki", owner); len(ids) != 0 {
			t.Errorf("Search returned forgotten memories %v", ids)
		}
		if ids := listIDs(t, s, owner, memory.ListOptions{Deleted: true}); !slices.Equal(ids, []int64{m.ID}) {
			t.Errorf("List(Deleted) = %v, want [%d]", ids, m.ID)
		}
	})
	t.Run("ErrForgetTwice", func(t *testing.T) {
		_, err := s.Memories.Forget(ctx, owner, []int64{m.ID}, "user:1", "")
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("RecoverWithinTheWindowRestores", func(t *testing.T) {
		s.Clock.Advance(s.RecoverWindow - time.Hour)
		got, err := s.Memories.Recover(ctx, owner, m.ID, 0, "user:1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != m.Content || got.Deleted() {
			t.Fatalf("recovered %+v", got)
		}
		if ids := searchIDs(t, s, "wiki", owner); !slices.Equal(ids, []int64{m.ID}) {
			t.Errorf("recovered memory not searchable: %v", ids)
		}
	})
	t.Run("ErrNotDeleted", func(t *testing.T) {
		_, err := s.Memories.Recover(ctx, owner, m.ID, 0, "user:1")
		wantCode(t, err, memory.ENOTDELETED)
	})
	t.Run("ErrExpiredAfterTheWindow", func(t *testing.T) {
		mustForget(t, s, owner, m.ID)
		s.Clock.Advance(s.RecoverWindow + time.Hour)
		_, err := s.Memories.Recover(ctx, owner, m.ID, 0, "user:1")
		wantCode(t, err, memory.EEXPIRED)
		if isLive(t, s, owner, m.ID) {
			t.Fatal("an expired recover restored the memory")
		}
	})
	t.Run("ErrRememberedAgain", func(t *testing.T) {
		x := mustRemember(t, s, server("g1", "the gate code changes monthly"))
		mustForget(t, s, owner, x.ID)
		mustRemember(t, s, server("g1", "The gate code changes monthly!"))
		_, err := s.Memories.Recover(ctx, owner, x.ID, 0, "user:1")
		wantCode(t, err, memory.ECONFLICT)
	})
	t.Run("ErrForgetNothing", func(t *testing.T) {
		_, err := s.Memories.Forget(ctx, owner, nil, "user:1", "")
		wantCode(t, err, memory.EINVALID)
	})
}

// testHistory: every mutation leaves a row naming who did it and why, oldest first per
// memory and newest first per scope, readable after forget.
func testHistory(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	owner := memory.PersonalOwner("u1")
	t0 := s.Clock.Now().UTC()
	res, err := s.Memories.Remember(ctx, personal("u1", "", "I live in Osaka"), memory.UserActor("u1"))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Memory
	kyoto := "I live in Kyoto"
	s.Clock.Advance(time.Minute)
	if _, err := s.Memories.Modify(ctx, owner, m.ID, memory.Change{Content: &kyoto, Reason: "moved"}, memory.ModelActor("u1")); err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(time.Minute)
	if _, err := s.Memories.Forget(ctx, owner, []int64{m.ID}, memory.UserActor("u1"), "outdated"); err != nil {
		t.Fatal(err)
	}
	t.Run("ReadableAfterForget", func(t *testing.T) {
		if _, err := s.Memories.History(ctx, owner, m.ID); err != nil {
			t.Fatal(err)
		}
	})
	s.Clock.Advance(time.Minute)
	if _, err := s.Memories.Recover(ctx, owner, m.ID, 0, memory.ActorCLI); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Action   memory.Action
		Old, New string
		Version  int
		Actor    memory.Actor
		Reason   string
		At       time.Time
	}
	t.Run("EveryMutationWithActorAndReason", func(t *testing.T) {
		events, err := s.Memories.History(ctx, owner, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []row
		for _, e := range events {
			if e.MemoryID != m.ID || e.ScopeKey != owner.Key() {
				t.Errorf("history row of #%d in %s, want #%d in %s", e.MemoryID, e.ScopeKey, m.ID, owner.Key())
			}
			got = append(got, row{e.Action, e.OldContent, e.NewContent, e.Version, e.Actor, e.Reason, e.CreatedAt.UTC()})
		}
		want := []row{
			{memory.ActionCreate, "", "I live in Osaka", 1, memory.UserActor("u1"), "", t0},
			{memory.ActionUpdate, "I live in Osaka", "I live in Kyoto", 2, memory.ModelActor("u1"), "moved", t0.Add(time.Minute)},
			{memory.ActionDelete, "I live in Kyoto", "", 3, memory.UserActor("u1"), "outdated", t0.Add(2 * time.Minute)},
			{memory.ActionRecover, "", "I live in Kyoto", 4, memory.ActorCLI, "", t0.Add(3 * time.Minute)},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
	})
	t.Run("ScopeHistoryNewestFirst", func(t *testing.T) {
		other := mustRemember(t, s, personal("u1", "", "I like trains"))
		mustRemember(t, s, personal("u2", "", "I like planes"))
		hist, err := s.Memories.ScopeHistory(ctx, owner, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []memory.Action
		for _, ev := range hist {
			if ev.ScopeKey != owner.Key() {
				t.Fatalf("scope history of %s shows a row of %s", owner.Key(), ev.ScopeKey)
			}
			got = append(got, ev.Action)
		}
		want := []memory.Action{memory.ActionCreate, memory.ActionRecover, memory.ActionDelete, memory.ActionUpdate, memory.ActionCreate}
		if !slices.Equal(got, want) || hist[0].MemoryID != other.ID {
			t.Fatalf("scope history actions %v (first of #%d), want %v (first of #%d)", got, hist[0].MemoryID, want, other.ID)
		}
		if limited, err := s.Memories.ScopeHistory(ctx, owner, 2); err != nil || len(limited) != 2 || limited[0].ID != hist[0].ID {
			t.Fatalf("scope history with limit 2: %+v %v", limited, err)
		}
	})
}
