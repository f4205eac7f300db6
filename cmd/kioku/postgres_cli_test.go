package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

// TestPostgresCLI: with KIOKU_DB a PostgreSQL URL, migrate, the memories and jobs commands
// and doctor work on it as on SQLite, doctor names the store and its pool, and the
// SQLite-only commands say what to use instead without touching anything.
func TestPostgresCLI(t *testing.T) {
	url := testPostgresURL(t)
	env := map[string]string{"KIOKU_DB": url, "KIOKU_HTTP_ADDR": ""}
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := runApp(t, env, "", args...)
		if code != 0 {
			t.Fatalf("kioku %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	// Before migrate, doctor finds no kioku tables and creates none.
	if code, out, _ := runApp(t, env, "", "doctor", "--offline"); code != 1 || !strings.Contains(out, "no kioku database") {
		t.Errorf("doctor on an empty PostgreSQL schema: exit %d, %q", code, out)
	}
	if code, out, _ := runApp(t, env, "", "doctor", "--offline"); code != 1 || !strings.Contains(out, "no kioku database") {
		t.Errorf("second doctor on an empty PostgreSQL schema (the first created tables?): exit %d, %q", code, out)
	}
	if out := mustRun("migrate"); !strings.Contains(out, "is up to date") || strings.Contains(out, "backed up") {
		t.Errorf("migrate on PostgreSQL: %q", out)
	}
	mustRun("memories", "add", "--guild", "g1", "The raid is on Friday")
	mustRun("memories", "add", "--guild", "g1", "東京タワーで集合する")
	if out := mustRun("memories", "add", "--guild", "g1", "the raid is on friday."); !strings.Contains(out, "already remembered as #1") {
		t.Errorf("duplicate add: %q", out)
	}
	if out := mustRun("memories", "search", "raid", "--guild", "g1"); !strings.Contains(out, "Friday") {
		t.Errorf("search: %q", out)
	}
	if out := mustRun("memories", "search", "東京タワー", "--guild", "g1"); !strings.Contains(out, "集合") {
		t.Errorf("Japanese search: %q", out)
	}
	mustRun("memories", "forget", "--guild", "g1", "1")
	mustRun("memories", "recover", "--guild", "g1", "1")
	if out := mustRun("memories", "history", "--guild", "g1", "1"); !strings.Contains(out, "recover") {
		t.Errorf("history: %q", out)
	}
	// The terminal chat runs a turn on the store and queues its extraction there.
	ai := fakeopenai.New(t)
	chatEnv := map[string]string{"KIOKU_DB": url, "KIOKU_HTTP_ADDR": "", "KIOKU_LLM_BASE_URL": ai.URL(), "KIOKU_LLM_API_KEY": fakeopenai.APIKey}
	if code, _, errOut := runApp(t, chatEnv, "We decided to raid on Fridays from now on\n/quit\n", "chat", "--user", "kai"); code != 0 {
		t.Fatalf("chat on PostgreSQL: exit %d: %s", code, errOut)
	}
	if out := mustRun("jobs", "list"); !strings.Contains(out, "extract") {
		t.Errorf("jobs list after a chat turn lists no extraction: %q", out)
	}
	mustRun("guilds", "list")
	if out := mustRun("reindex"); !strings.Contains(out, "reindexed 2 memories") {
		t.Errorf("reindex on PostgreSQL: %q", out)
	}

	code, out, errOut := runApp(t, env, "", "doctor", "--offline", "--json")
	var doc struct {
		Store  string `json:"store"`
		Checks []check
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("doctor (exit %d): %v\n%s%s", code, err, out, errOut)
	}
	if doc.Store != "postgres" {
		t.Errorf("doctor store %q, want postgres", doc.Store)
	}
	found := map[string]check{}
	for _, c := range doc.Checks {
		found[c.Name] = c
	}
	if c := found["database"]; c.Status != "ok" || !strings.Contains(c.Detail, "PostgreSQL") || !strings.Contains(c.Detail, "2 memories") {
		t.Errorf("doctor database check %+v", c)
	}
	if c := found["pool"]; c.Status != "ok" || !strings.Contains(c.Detail, "connections open") {
		t.Errorf("doctor pool check %+v", c)
	}

	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", filepath.Join(dir, "b.db")}, "pg_dump"},
	} {
		code, _, errOut := runApp(t, env, "", tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("kioku %v on PostgreSQL: exit %d, %q; want exit 1 naming %s", tc.args, code, errOut, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("backup on PostgreSQL wrote %v", entries)
	}
	// Scheduled backups are SQLite's too: `kioku run` refuses KIOKU_BACKUP_DIR at start.
	runEnv := map[string]string{"KIOKU_DB": url, "KIOKU_HTTP_ADDR": "", "KIOKU_DISCORD_TOKEN": "x", "KIOKU_BACKUP_DIR": dir}
	if code, _, errOut := runApp(t, runEnv, "", "run"); code != 1 || !strings.Contains(errOut, "pg_dump") {
		t.Errorf("run with KIOKU_BACKUP_DIR on PostgreSQL: exit %d, %q; want a refusal naming pg_dump", code, errOut)
	}
}
