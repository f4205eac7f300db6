package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// Updating or forgetting server memory through the model needs the speaker to have
// authored it or to hold the server-memory permission; adding needs neither.
func TestServerMemoryChangeRule(t *testing.T) {
	ctx := context.Background()
	args := func(id int64, content string) string {
		b, _ := json.Marshal(map[string]any{"memory_id": id, "memory_content": content})
		return string(b)
	}
	seed := func(t *testing.T, f *fixture) (bens, aikos *memory.Memory) {
		bens = testkit.MustRemember(t, f.store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
			Content: "The raid is on Friday", Provenance: memory.Provenance{AuthorID: ben.UserID}})
		aikos = testkit.MustRemember(t, f.store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
			Content: "Aiko runs the book club", Provenance: memory.Provenance{AuthorID: aiko.UserID}})
		return bens, aikos
	}

	t.Run("ErrNotAuthorNotEditor", func(t *testing.T) {
		f := newFixture(t)
		bens, _ := seed(t, f)
		tb := f.box(guildConv()) // Aiko speaks, no permission
		for _, content := range []string{"The raid is cancelled", ""} {
			r := wantRefused(t, tb, tools.NameUpdateLTM, args(bens.ID, content), memory.EFORBIDDEN, "only its author")
			if r.MemoryID != 0 {
				t.Fatalf("refusal carries a memory id: %+v", r)
			}
		}
		assertUnchanged(t, f.store, bens)
		if n := tb.Notices(); len(n) != 0 {
			t.Fatalf("notices after refusals: %+v", n)
		}
	})

	t.Run("AuthorMayChange", func(t *testing.T) {
		f := newFixture(t)
		_, aikos := seed(t, f)
		tb := f.box(guildConv())
		mustCall(t, tb, tools.NameUpdateLTM, args(aikos.ID, "Aiko runs the chess club"))
		if r := mustCall(t, tb, tools.NameUpdateLTM, args(aikos.ID, "")); !r.Forgotten {
			t.Fatalf("forget by the author = %+v", r)
		}
	})

	t.Run("EditorMayChange", func(t *testing.T) {
		f := newFixture(t)
		bens, _ := seed(t, f)
		c := guildConv()
		c.ServerEditor = true
		tb := f.box(c)
		mustCall(t, tb, tools.NameUpdateLTM, args(bens.ID, "The raid is on Saturday"))
		got, err := f.store.Memories.Get(ctx, memory.ServerOwner("g1"), bens.ID)
		if err != nil || got.Content != "The raid is on Saturday" {
			t.Fatalf("after the editor's update: %+v, %v", got, err)
		}
		mustCall(t, tb, tools.NameUpdateLTM, args(bens.ID, ""))
	})

	t.Run("AnyoneMayAdd", func(t *testing.T) {
		f := newFixture(t)
		r := mustCall(t, f.box(guildConv()), tools.NameCreateLTM, `{"memory_content":"Movie night is on Sunday","memory_scope":"server_wide"}`)
		if r.MemoryID == 0 || r.Scope != "server" {
			t.Fatalf("create = %+v", r)
		}
	})

	t.Run("ErrOtherChannelNotFound", func(t *testing.T) {
		f := newFixture(t)
		mods := testkit.MustRemember(t, f.store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
			Content: "Ban list review on Monday", Provenance: memory.Provenance{AuthorID: aiko.UserID, ChannelID: "mods"}})
		c := guildConv()
		c.ServerEditor = true
		c.Audience = &memory.Audience{Channels: map[string]bool{"c1": true}}
		wantRefused(t, f.box(c), tools.NameUpdateLTM, args(mods.ID, ""), memory.ENOTFOUND, "no memory")
		assertUnchanged(t, f.store, mods)
	})
}

// Saving what only someone else holds looks exactly like a fresh save; saving what the
// speaker can see is deduplicated.
func TestCreateDedupsOnlyVisible(t *testing.T) {
	f := newFixture(t)
	hidden := testkit.MustRemember(t, f.store, memory.Memory{Scope: memory.ScopePersonal, UserID: ben.UserID,
		Content: "Ben is allergic to peanuts", Provenance: memory.Provenance{AuthorID: ben.UserID}})
	tb := f.box(guildConv())
	args := `{"memory_content":"Ben is allergic to peanuts","memory_scope":"target_user","target_user":"222"}`
	first := mustCall(t, tb, tools.NameCreateLTM, args)
	if first.AlreadyKnown || first.MemoryID == hidden.ID || first.MemoryID == 0 {
		t.Fatalf("save over a hidden duplicate = %+v, want a new memory", first)
	}
	if n := tb.Notices(); len(n) != 1 || n[0].MemoryID != first.MemoryID {
		t.Fatalf("notices = %+v, want one for #%d", n, first.MemoryID)
	}
	// Aiko authored the new one: saving it again is a visible duplicate.
	second := mustCall(t, f.box(guildConv()), tools.NameCreateLTM, args)
	if !second.AlreadyKnown || second.MemoryID != first.MemoryID {
		t.Fatalf("second save = %+v, want already known as #%d", second, first.MemoryID)
	}
}
