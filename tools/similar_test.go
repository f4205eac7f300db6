package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// nearResult decodes the fields of a create_long_term_memory result that a near-duplicate
// sets.
type nearResult struct {
	OK             bool   `json:"ok"`
	Saved          *bool  `json:"saved"`
	SimilarTo      int64  `json:"similar_to"`
	SimilarContent string `json:"similar_content"`
	MemoryID       int64  `json:"memory_id"`
	Note           string `json:"note"`
}

func createRaw(t *testing.T, tb *tools.Toolbox, args string) nearResult {
	t.Helper()
	content, err := tb.Call(context.Background(), tools.NameCreateLTM, args)
	if err != nil {
		t.Fatalf("create(%s): %v", args, err)
	}
	var r nearResult
	if err := json.Unmarshal([]byte(content), &r); err != nil {
		t.Fatalf("tool result is not JSON: %q", content)
	}
	return r
}

// TestCreateNearDuplicate: create_long_term_memory of content that a memory the speaker can
// see here says in other words saves nothing, shows no notice and names that memory; a near
// miss, and a paraphrase of a memory the speaker cannot see (another member's personal
// memory, a server memory of a channel the conversation's readers cannot read), are saved
// as any fresh save.
func TestCreateNearDuplicate(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	remember := func(m memory.Memory) *memory.Memory {
		t.Helper()
		res, err := f.store.Memories.Remember(ctx, m, memory.ActorCLI)
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	peanuts := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Kenji is allergic to peanuts",
		Provenance: memory.Provenance{ChannelID: "c1"}})
	remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The raid starts at 9pm on Friday",
		Provenance: memory.Provenance{ChannelID: "mods"}})
	remember(memory.Memory{Scope: memory.ScopePersonal, UserID: ben.UserID, Content: "Ben prefers green tea in the morning",
		Provenance: memory.Provenance{AuthorID: ben.UserID, ChannelID: "dm-ben"}})
	conv := guildConv()
	conv.Audience = &memory.Audience{Channels: map[string]bool{"c1": true}}

	t.Run("ParaphraseSavesNothing", func(t *testing.T) {
		tb := f.box(conv)
		r := createRaw(t, tb, `{"memory_content":"Kenji has a peanut allergy","memory_scope":"server_wide"}`)
		if !r.OK || r.Saved == nil || *r.Saved || r.SimilarTo != peanuts.ID || r.SimilarContent != peanuts.Content || r.MemoryID != 0 {
			t.Fatalf("result %+v, want nothing saved and similar_to #%d", r, peanuts.ID)
		}
		if !strings.Contains(r.Note, fmt.Sprintf("#%d", peanuts.ID)) {
			t.Errorf("note %q does not name #%d", r.Note, peanuts.ID)
		}
		if n := tb.Notices(); len(n) != 0 {
			t.Errorf("notices %+v, want none", n)
		}
		if _, total, _ := f.store.Memories.List(ctx, memory.ServerOwner("g1"), memory.ListOptions{}); total != 2 {
			t.Errorf("g1 holds %d memories, want the 2 it had", total)
		}
	})
	saved := func(t *testing.T, args string) {
		t.Helper()
		tb := f.box(conv)
		r := createRaw(t, tb, args)
		if !r.OK || r.SimilarTo != 0 || r.MemoryID == 0 || len(tb.Notices()) != 1 {
			t.Fatalf("create(%s) = %+v with %d notices, want a fresh save", args, r, len(tb.Notices()))
		}
	}
	t.Run("NearMissIsSaved", func(t *testing.T) {
		saved(t, `{"memory_content":"Kenji is not allergic to peanuts","memory_scope":"server_wide"}`)
	})
	t.Run("HiddenChannelIsSavedAsNew", func(t *testing.T) {
		saved(t, `{"memory_content":"Friday's raid begins at 9pm","memory_scope":"server_wide"}`)
	})
	t.Run("OtherMembersPersonalIsSavedAsNew", func(t *testing.T) {
		saved(t, `{"memory_content":"Ben really prefers green tea in the morning","memory_scope":"target_user","target_user":"222"}`)
	})
	t.Run("ExactRepeatIsAlreadyKnown", func(t *testing.T) {
		r := mustCall(t, f.box(conv), tools.NameCreateLTM, `{"memory_content":"kenji is allergic to peanuts.","memory_scope":"server_wide"}`)
		if !r.AlreadyKnown || r.MemoryID != peanuts.ID {
			t.Errorf("exact repeat = %+v, want already known as #%d", r, peanuts.ID)
		}
	})
}
