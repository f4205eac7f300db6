package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
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

// A memory the model saves into another participant's personal memory is learned only from
// the speaker's message, so the speaker's forget-me removes it (SPEC §2: every memory whose
// only evidence is the member's messages). Saves into the speaker's own memory and the
// server's keep their rules: the first goes with the speaker's scope, the second stays.
func TestSaveAboutOtherGoesWithSpeakersForgetMe(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	tb := f.box(guildConv()) // Aiko speaks, Ben takes part
	about := mustCall(t, tb, tools.NameCreateLTM, `{"memory_content":"Ben plays chess on Tuesdays","memory_scope":"target_user","target_user":"222"}`)
	server := mustCall(t, tb, tools.NameCreateLTM, `{"memory_content":"The raid is on Friday","memory_scope":"server_wide"}`)

	ev, err := f.store.Memories.Evidence(ctx, about.MemoryID)
	if err != nil || len(ev) != 1 || ev[0].MessageID != "m1" || ev[0].AuthorID != aiko.UserID {
		t.Fatalf("evidence of the save about Ben = %+v, %v; want Aiko's message m1", ev, err)
	}
	sum, err := f.store.Confirmations.PreviewForgetMe(ctx, aiko.UserID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Confirmations.ConfirmForgetMe(ctx, aiko.UserID, sum.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Memories.Get(ctx, memory.PersonalOwner(ben.UserID), about.MemoryID); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Fatalf("Aiko's save about Ben after her forget-me: err = %v, want not found", err)
	}
	if m, err := f.store.Memories.Get(ctx, memory.ServerOwner("g1"), server.MemoryID); err != nil || m.Provenance.AuthorID != "" {
		t.Fatalf("Aiko's server memory after her forget-me = %+v, %v; want it kept without her id", m, err)
	}
}

// Words the model writes into a memory in a DM were said where only the speaker reads them:
// a guild-origin personal memory updated in a DM becomes DM-origin, so it no longer reaches
// that guild's prompts (SPEC §2 channel-aware memory; a DM counts as read by its one
// recipient).
func TestDMUpdateMovesOriginToDM(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	mem := testkit.MustRemember(t, f.store, memory.Memory{Scope: memory.ScopePersonal, UserID: aiko.UserID, GuildID: "g1",
		Content: "Aiko plays the cello", Provenance: memory.Provenance{AuthorID: aiko.UserID, ChannelID: "c1"}})
	args, _ := json.Marshal(map[string]any{"memory_id": mem.ID, "memory_content": "Aiko plays the cello in the hospital orchestra"})
	mustCall(t, f.box(dmConv()), tools.NameUpdateLTM, string(args))

	got, err := f.store.Memories.Get(ctx, memory.PersonalOwner(aiko.UserID), mem.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.GuildID != "" || got.Provenance.ChannelID != "dm1" {
		t.Fatalf("after the DM update the memory originates in guild %q channel %q; want the DM (\"\", dm1)", got.GuildID, got.Provenance.ChannelID)
	}
	r := mustCall(t, f.box(guildConv()), tools.NameSearch, `{"query":"cello orchestra"}`)
	for _, hit := range r.Results {
		if hit.ID == mem.ID {
			t.Fatalf("the guild conversation still finds the memory updated in a DM: %+v", r.Results)
		}
	}
}

// A summary is written from the whole prompt: the message being answered (captured into
// short-term memory only after the turn) and the older turns of its history. Deleting any
// of those messages drops the summary, as SPEC §2 asks of a deleted message.
func TestSummaryGoesWithDeletedPromptMessages(t *testing.T) {
	for _, deleted := range []string{"m1", "m0"} {
		t.Run(deleted, func(t *testing.T) {
			f := newFixture(t)
			c := guildConv() // answering message m1
			c.PromptMessages = []string{"m0"}
			mustCall(t, f.box(c), tools.NameUpdateSTM, `{"summary":"Aiko said the raid moves to Friday."}`)
			f.short.RemoveMessages("g1", "c1", deleted)
			if got := f.short.Context(stm.ChannelKey("g1", "c1")).Summary; got != "" {
				t.Fatalf("summary after message %s was deleted = %q, want none", deleted, got)
			}
		})
	}
}

// Memories shown to the model carry their people's words: a summary written after a search
// that showed one is dropped by the forget-me of the memory's author (SPEC §2: forget-me
// removes summaries that quote the member).
func TestSummaryGoesWithQuotedMemoryAuthor(t *testing.T) {
	f := newFixture(t)
	testkit.MustRemember(t, f.store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
		Content: "Cleo moved the raid to Friday", Provenance: memory.Provenance{AuthorID: "333", ChannelID: "c1"}})
	tb := f.box(guildConv()) // Aiko and Ben talk; Cleo is not here
	if r := mustCall(t, tb, tools.NameSearch, `{"query":"raid Friday"}`); len(r.Results) != 1 {
		t.Fatalf("search = %+v, want Cleo's memory", r.Results)
	}
	mustCall(t, tb, tools.NameUpdateSTM, `{"summary":"Cleo moved the raid to Friday."}`)
	f.short.ClearUser("333")
	if got := f.short.Context(stm.ChannelKey("g1", "c1")).Summary; got != "" {
		t.Fatalf("summary after the memory author's forget-me = %q, want none", got)
	}
}
