package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kioku eval retrieval finishes a dataset holding memories the write path refuses: the
// JSON counts them, stderr says why in one line per reason, and nothing else changes.
func TestEvalRetrievalSkipsRefusedMemories(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"KIOKU_DB": filepath.Join(dir, "unused.db")}
	dataset := filepath.Join(dir, "bad-items.json")
	long := strings.Repeat("board games ", 200)
	body := `{"name":"bad items","scopes":[{"guild_id":"g1","memories":[
		{"id":"m1","content":"Kate went bouldering again on Saturday","author":"Katherine","created_at":"2023-05-08T13:56:00Z"},
		{"id":"m2","content":"","author":"Tom","created_at":"2023-05-08T13:57:00Z"},
		{"id":"m3","content":"` + long + `","author":"Tom","created_at":"2023-05-08T13:58:00Z"},
		{"id":"m4","content":"our bot token MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.FAKEfakeFAKEfakeFAKEfake0123456","author":"Tom","created_at":"2023-05-08T13:59:00Z"}],
		"queries":[{"id":"q1","text":"what are Kate's hobbies","relevant":["m1"],"category":"single-hop","asked_at":"2023-05-09T10:00:00Z"},
		{"id":"q2","text":"what did Tom say about board games","relevant":["m3"],"category":"single-hop"}]}]}`
	if err := os.WriteFile(dataset, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runApp(t, env, "", "eval", "retrieval", "--dataset", dataset, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var obj struct {
		Queries        int            `json:"queries"`
		Skipped        int            `json:"skipped"`
		SkippedReasons map[string]int `json:"skipped_reasons"`
		SkippedQueries int            `json:"skipped_queries"`
	}
	if err := json.Unmarshal([]byte(stdout), &obj); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	if obj.Queries != 1 || obj.Skipped != 3 || obj.SkippedQueries != 1 ||
		obj.SkippedReasons["empty"] != 1 || obj.SkippedReasons["too_long"] != 1 || obj.SkippedReasons["secret"] != 1 {
		t.Errorf("report %+v, want 1 query scored, 3 memories skipped (empty, too_long, secret), 1 query left out", obj)
	}
	if n := strings.Count(stderr, "eval: skipped 1 memory"); n != 3 || !strings.Contains(stderr, "left out 1 query") {
		t.Errorf("stderr %q, want one line per reason and one for the query", stderr)
	}
}
