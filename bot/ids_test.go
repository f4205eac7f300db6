package bot_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// TestOldButtonsOfAPurgedMemory: the Undo and Edit buttons of a save notice name the
// memory's id. Once that memory is gone for good (here its server was purged), new
// memories never take its number, so pressing the old buttons reads "not found" and
// touches nothing, however many memories were written since.
func TestOldButtonsOfAPurgedMemory(t *testing.T) {
	tb := newTestBot(t)
	alice := tb.fake.NewUser("alice")
	server := memory.ServerOwner(uxGuild)
	ctx := context.Background()
	msg, _ := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor,
		memorySub("add", strOpt("content", "The old server's raid night is Friday"))))
	buttons := customIDs(msg)
	if len(buttons) != 1 || len(buttons[0]) != 2 {
		t.Fatalf("the save notice's buttons = %v, want Undo and Edit", buttons)
	}
	mems, _, err := tb.store.Memories.List(ctx, server, memory.ListOptions{})
	if err != nil || len(mems) != 1 {
		t.Fatalf("add made %d memories (%v)", len(mems), err)
	}
	purged := mems[0].ID
	if _, err := tb.store.Guilds.PurgeGuild(ctx, uxGuild); err != nil {
		t.Fatal(err)
	}

	var written []int64
	for i := range 3 {
		res, err := tb.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild,
			Type: memory.TypeFact, Content: fmt.Sprintf("New rule number %d", i)}, memory.UserActor(alice.ID))
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, res.Memory.ID)
	}
	want := "There is no memory #" + strconv.FormatInt(purged, 10) + " that you can see here."
	for _, id := range buttons[0] {
		if got, _ := tb.press(t, uxGuild, alice, permEditor, id); got.Content != want {
			t.Errorf("old button %s answered %q, want %q", id, got.Content, want)
		}
	}
	for _, id := range written {
		if m := tb.current(t, server, id); m.Deleted() || m.Version != 1 || id == purged {
			t.Errorf("new memory #%d after the old buttons: deleted %v, version %d (purged was #%d)", id, m.Deleted(), m.Version, purged)
		}
	}
}
