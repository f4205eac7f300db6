package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// TestMemoriesUndoCLI: `kioku memories undo` reverts an edit, a forget and a creation, each
// recorded as a change of its own; it refuses when the memory moved past the version named,
// and a memory of another scope reads exactly like a missing id.
func TestMemoriesUndoCLI(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "k.db")
	env := map[string]string{"KIOKU_DB": db, "KIOKU_HTTP_ADDR": ""}
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	g := memory.ServerOwner("111")
	res, err := store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "111", Content: "Raid night is Friday"}, "user:7")
	if err != nil {
		t.Fatal(err)
	}
	raid := res.Memory.ID
	content := "Raid night is Saturday"
	if _, err := store.Memories.Modify(ctx, g, raid, memory.Change{Content: &content}, "user:7"); err != nil {
		t.Fatal(err)
	}
	store.Close()

	run := func(args ...string) string {
		t.Helper()
		code, out, stderr := runApp(t, env, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return out
	}
	lastChange := func(id int64) memory.HistoryEvent {
		t.Helper()
		var events []memory.HistoryEvent
		if err := json.Unmarshal([]byte(run("memories", "history", fmt.Sprint(id), "--guild", "111", "--json")), &events); err != nil {
			t.Fatal(err)
		}
		return events[len(events)-1]
	}
	listed := func() string { return run("memories", "list", "--guild", "111") }

	t.Run("Edit", func(t *testing.T) {
		edit := lastChange(raid)
		out := run("memories", "undo", fmt.Sprint(raid), "--guild", "111")
		mustContain(t, "undo", out, fmt.Sprintf("undid the edit of #%d (change %d): now version 3: Raid night is Friday", raid, edit.ID))
		undo := lastChange(raid)
		if undo.Action != memory.ActionUpdate || undo.Actor != memory.ActorCLI || undo.Reason != fmt.Sprintf("undo of change %d", edit.ID) {
			t.Errorf("history of the undo = %+v", undo)
		}
		mustContain(t, "search after undo", run("memories", "search", "friday", "--guild", "111"), "Raid night is Friday")
	})

	t.Run("ErrChangedSince", func(t *testing.T) {
		code, _, stderr := runApp(t, env, "", "memories", "undo", fmt.Sprint(raid), "--guild", "111", "--version", "2")
		want := fmt.Sprintf("kioku: Memory #%d changed since; see kioku memories history %d --guild 111.\n", raid, raid)
		if code != 1 || stderr != want {
			t.Errorf("undo of version 2 at version 3: exit %d, %q; want %q", code, stderr, want)
		}
		mustContain(t, "list after a refused undo", listed(), "Raid night is Friday")
	})

	t.Run("Forget", func(t *testing.T) {
		run("memories", "forget", fmt.Sprint(raid), "--guild", "111")
		mustNotContain(t, "list after forget", listed(), "Raid night")
		out := run("memories", "undo", fmt.Sprint(raid), "--guild", "111", "--version", "4")
		mustContain(t, "undo of the forget", out, fmt.Sprintf("undid the forget of #%d", raid), "recovered, now version 5")
		mustContain(t, "list after undo", listed(), "Raid night is Friday")
		if h := lastChange(raid); h.Action != memory.ActionRecover || !strings.HasPrefix(h.Reason, "undo of change ") {
			t.Errorf("history of the undo = %+v", h)
		}
	})

	t.Run("Create", func(t *testing.T) {
		var added struct{ Memory memory.Memory }
		if err := json.Unmarshal([]byte(run("memories", "add", "Snacks on Fridays", "--guild", "111", "--json")), &added); err != nil {
			t.Fatal(err)
		}
		var res memory.Undone
		if err := json.Unmarshal([]byte(run("memories", "undo", fmt.Sprint(added.Memory.ID), "--guild", "111", "--json")), &res); err != nil {
			t.Fatal(err)
		}
		if res.Action != memory.ActionDelete || res.Change.Action != memory.ActionCreate || res.Memory == nil || !res.Memory.Deleted() {
			t.Errorf("undo of a creation --json = %+v", res)
		}
		mustNotContain(t, "list after undoing the creation", listed(), "Snacks")
	})

	t.Run("OtherScopeReadsAsMissing", func(t *testing.T) {
		for _, scope := range [][]string{{"--guild", "222"}, {"--user", "7"}} {
			_, _, other := runApp(t, env, "", append([]string{"memories", "undo", fmt.Sprint(raid)}, scope...)...)
			_, _, missing := runApp(t, env, "", append([]string{"memories", "undo", "9999"}, scope...)...)
			if want := strings.ReplaceAll(missing, "#9999", fmt.Sprintf("#%d", raid)); other != want || !strings.Contains(other, "There is no memory") {
				t.Errorf("undo from %v = %q, want the missing-id answer %q", scope, other, want)
			}
		}
		mustContain(t, "list after refused undos", listed(), "Raid night is Friday")
	})

	if code, _, _ := runApp(t, env, "", "memories", "undo", "--guild", "111"); code != 2 {
		t.Errorf("undo without an id: exit %d, want 2", code)
	}
}
