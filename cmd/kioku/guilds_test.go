package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// TestGuildsCLI: `kioku guilds list` shows each server's data and departure; `kioku guilds
// purge ID` previews, refuses a --confirm that does not repeat the id, and with it deletes
// that server's data at once, leaving other servers and DM memories alone.
func TestGuildsCLI(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	env := map[string]string{"KIOKU_DB": db, "KIOKU_HTTP_ADDR": ""}
	store, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, m := range []memory.Memory{
		{Scope: memory.ScopeServer, GuildID: "111", Content: "Raids are on Friday"},
		{Scope: memory.ScopePersonal, UserID: "42", GuildID: "111", Content: "Kai plays healer"},
		{Scope: memory.ScopeServer, GuildID: "222", Content: "Standup at nine"},
		{Scope: memory.ScopePersonal, UserID: "42", Content: "Kai likes green tea"},
	} {
		if _, err := store.Memories.Remember(ctx, m, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "111", ChannelID: "1", UserID: "42", Role: memory.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Guilds.RecordDeparture(ctx, "111", 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	store.Close()

	code, out, stderr := runApp(t, env, "", "guilds", "list")
	if code != 0 {
		t.Fatalf("guilds list: exit %d: %s", code, stderr)
	}
	mustContain(t, "guilds list", out, "111", "222", "purge after")
	code, out, _ = runApp(t, env, "", "guilds", "list", "--json")
	var listed struct{ Guilds []memory.GuildSummary }
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Guilds) != 2 ||
		listed.Guilds[0].ServerMemories != 1 || listed.Guilds[0].PersonalMemories != 1 || listed.Guilds[0].Departure == nil {
		t.Fatalf("guilds list --json: exit %d, %s", code, out)
	}

	memoriesOf := func() string {
		_, out, _ := runApp(t, env, "", "memories", "list", "--user", "42")
		_, srv, _ := runApp(t, env, "", "memories", "list", "--guild", "111")
		_, other, _ := runApp(t, env, "", "memories", "list", "--guild", "222")
		return out + srv + other
	}
	code, out, _ = runApp(t, env, "", "guilds", "purge", "111")
	if code != 0 {
		t.Fatalf("preview: exit %d", code)
	}
	mustContain(t, "preview", out, "1 server memories", "1 personal memories", "1 transcript turns", "Nothing is deleted yet",
		"kioku guilds purge 111 --confirm 111")
	mustContain(t, "memories after the preview", memoriesOf(), "Raids", "healer")

	code, _, stderr = runApp(t, env, "", "guilds", "purge", "111", "--confirm", "222")
	if code != 2 || !strings.Contains(stderr, "nothing was deleted") {
		t.Fatalf("mismatched --confirm: exit %d, %q", code, stderr)
	}
	mustContain(t, "memories after a refused purge", memoriesOf(), "Raids", "healer")

	code, out, stderr = runApp(t, env, "", "guilds", "purge", "111", "--confirm", "111")
	if code != 0 {
		t.Fatalf("purge: exit %d: %s", code, stderr)
	}
	mustContain(t, "purge", out, "Purged guild 111: 2 memories", "1 transcript turns")
	left := memoriesOf()
	mustNotContain(t, "memories after the purge", left, "Raids", "healer")
	mustContain(t, "memories after the purge", left, "green tea", "Standup")
	_, out, _ = runApp(t, env, "", "guilds", "list")
	mustNotContain(t, "guilds list after the purge", out, "111")

	if code, _, _ := runApp(t, env, "", "guilds", "purge"); code != 2 {
		t.Errorf("purge without an id: exit %d, want 2", code)
	}
	if code, _, _ := runApp(t, env, "", "guilds", "nope"); code != 2 {
		t.Errorf("unknown subcommand: exit %d, want 2", code)
	}
}

func TestGuildPurgeAfterSetting(t *testing.T) {
	for value, want := range map[string]time.Duration{"": 30 * 24 * time.Hour, "7d": 7 * 24 * time.Hour, "72h": 72 * time.Hour} {
		cfg, err := LoadConfig(func(k string) (string, bool) {
			if k == "KIOKU_GUILD_PURGE_AFTER" && value != "" {
				return value, true
			}
			return "", false
		})
		if err != nil || cfg.GuildPurgeAfter != want {
			t.Errorf("KIOKU_GUILD_PURGE_AFTER=%q: %s, %v; want %s", value, cfg.GuildPurgeAfter, err, want)
		}
	}
	for _, bad := range []string{"soon", "0", "-3d", "30", "0h", "1.5d"} {
		code, _, stderr := runApp(t, map[string]string{"KIOKU_GUILD_PURGE_AFTER": bad, "KIOKU_DB": filepath.Join(t.TempDir(), "k.db")}, "", "migrate")
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "KIOKU_GUILD_PURGE_AFTER") {
			t.Errorf("KIOKU_GUILD_PURGE_AFTER=%q: exit %d, %q; want exit 2 and one line naming the setting", bad, code, stderr)
		}
	}
}
