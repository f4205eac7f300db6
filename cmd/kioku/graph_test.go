package main

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

func TestMemoriesGraph(t *testing.T) {
	env := map[string]string{"KIOKU_DB": filepath.Join(t.TempDir(), "kioku.db")}
	for _, add := range [][]string{
		{"Kate leads Project Falcon", "--guild", "g1"},
		{"Katie moved the Falcon standup to Tuesdays", "--guild", "g1"},
		{"Bob plays Valheim with Kate", "--guild", "g2"},
	} {
		if code, _, errOut := runApp(t, env, "", append([]string{"memories", "add"}, add...)...); code != 0 {
			t.Fatalf("add %v: %s", add, errOut)
		}
	}
	t.Run("TopEntities", func(t *testing.T) {
		code, out, errOut := runApp(t, env, "", "memories", "graph", "--guild", "g1")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, want := range []string{"ENTITY", "Katherine", "person", "Falcon", "project"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "Valheim") || strings.Contains(out, "Robert") {
			t.Errorf("g1's graph shows g2's entities:\n%s", out)
		}
	})
	t.Run("Neighbourhood", func(t *testing.T) {
		code, out, errOut := runApp(t, env, "", "memories", "graph", "--guild", "g1", "--entity", "kate", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var nb struct {
			Entity struct {
				Name     string `json:"name"`
				Kind     string `json:"kind"`
				Mentions int    `json:"mentions"`
			} `json:"entity"`
			Aliases   []string `json:"aliases"`
			Relations []any    `json:"relations"`
			Memories  []int64  `json:"memories"`
			With      []struct {
				Entity struct {
					Name string `json:"name"`
				} `json:"entity"`
				Count int `json:"count"`
			} `json:"mentioned_with"`
		}
		if err := json.Unmarshal([]byte(out), &nb); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if nb.Entity.Name != "Katherine" || nb.Entity.Kind != "person" || nb.Entity.Mentions != 2 || len(nb.Memories) != 2 ||
			nb.Relations == nil {
			t.Errorf("neighbourhood %+v", nb)
		}
		// Falcon shares both of Kate's memories; g2's Valheim and Robert are another scope's.
		if len(nb.With) != 1 || nb.With[0].Entity.Name != "Falcon" || nb.With[0].Count != 2 {
			t.Errorf("Kate is mentioned with %+v, want Falcon in 2 memories", nb.With)
		}
		code, out, _ = runApp(t, env, "", "memories", "graph", "--guild", "g1", "--entity", "Falcon")
		if code != 0 || !strings.Contains(out, "Falcon (project), 2 mentions") || !strings.Contains(out, "memories: #2 #1") ||
			!strings.Contains(out, "mentioned with:\n  Katherine (person)  ×2\n") {
			t.Errorf("text neighbourhood (exit %d):\n%s", code, out)
		}
		code, out, _ = runApp(t, env, "", "memories", "graph", "--guild", "g2", "--entity", "Valheim")
		if code != 0 || !strings.Contains(out, "mentioned with:\n  Katherine (person)  ×1\n  Robert (person)  ×1\n") ||
			strings.Contains(out, "Falcon") {
			t.Errorf("g2's Valheim (exit %d):\n%s", code, out)
		}
	})
	t.Run("OtherGuildNotFound", func(t *testing.T) {
		code, _, errOut := runApp(t, env, "", "memories", "graph", "--guild", "g2", "--entity", "Falcon")
		if code == 0 || !strings.Contains(errOut, `There is no entity "Falcon"`) {
			t.Errorf("g1's project from g2: exit %d, %s", code, errOut)
		}
	})
	t.Run("NeedsAScope", func(t *testing.T) {
		if code, _, _ := runApp(t, env, "", "memories", "graph"); code == 0 {
			t.Error("graph without --guild or --user succeeded")
		}
	})
}

// TestMigrateLinksExistingMemories: a database whose memories were written before the
// knowledge graph existed is linked by `kioku migrate`, to the end, before it returns.
func TestMigrateLinksExistingMemories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	env := map[string]string{"KIOKU_DB": path}
	for _, text := range []string{"Kate leads Project Falcon", "Bill moved to Osaka", "the ferry leaves at noon"} {
		if code, _, errOut := runApp(t, env, "", "memories", "add", text, "--guild", "g1"); code != 0 {
			t.Fatalf("add: %s", errOut)
		}
	}
	// As an older kioku left it: no graph rows, the backfill pending.
	db, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DELETE FROM entities`, `UPDATE store_repairs SET cursor = 0, done_at = NULL WHERE name = 'link-graph'`} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if code, out, _ := runApp(t, env, "", "memories", "graph", "--guild", "g1"); code != 0 || !strings.Contains(out, "No entities") {
		t.Fatalf("before the migration the graph should be empty:\n%s", out)
	}
	code, out, errOut := runApp(t, env, "", "migrate", "--no-backup")
	if code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "3 memories linked to the knowledge graph") || !strings.Contains(out, "link-graph") {
		t.Errorf("migrate output:\n%s", out)
	}
	_, out, _ = runApp(t, env, "", "memories", "graph", "--guild", "g1")
	for _, want := range []string{"Katherine", "Falcon", "William", "Osaka"} {
		if !strings.Contains(out, want) {
			t.Errorf("after the migration the graph lacks %s:\n%s", want, out)
		}
	}
}
