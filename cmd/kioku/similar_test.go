package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoriesAddSimilar: `kioku memories add` of a memory that says again what one of the
// same scope says saves nothing, exits 0 and names it ("similar to #N", "similar_to" with
// --json); --force saves it anyway; a near miss, an exact repeat and another scope save (or
// answer) as before.
func TestMemoriesAddSimilar(t *testing.T) {
	env := map[string]string{"KIOKU_DB": filepath.Join(t.TempDir(), "k.db")}
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := runApp(t, env, "", args...)
		if code != 0 {
			t.Fatalf("kioku %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	total := func(scope ...string) int {
		t.Helper()
		var list struct {
			Total int `json:"total"`
		}
		if err := json.Unmarshal([]byte(mustRun(append([]string{"memories", "list", "--json"}, scope...)...)), &list); err != nil {
			t.Fatal(err)
		}
		return list.Total
	}
	mustRun("memories", "add", "--guild", "g1", "Kenji is allergic to peanuts")
	if out := mustRun("memories", "add", "--guild", "g1", "Kenji has a peanut allergy"); !strings.Contains(out, "similar to #1") {
		t.Errorf("paraphrase: %q, want similar to #1", out)
	}
	var asJSON struct {
		Created   bool  `json:"created"`
		SimilarTo int64 `json:"similar_to"`
		Memory    struct {
			Content string `json:"content"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(mustRun("memories", "add", "--guild", "g1", "--json", "Kenji has a peanut allergy")), &asJSON); err != nil ||
		asJSON.Created || asJSON.SimilarTo != 1 || asJSON.Memory.Content != "Kenji is allergic to peanuts" {
		t.Errorf("paraphrase --json: %+v %v, want similar_to 1", asJSON, err)
	}
	if n := total("--guild", "g1"); n != 1 {
		t.Fatalf("after two paraphrases the scope holds %d memories, want 1", n)
	}
	if out := mustRun("memories", "add", "--guild", "g1", "kenji is allergic to peanuts."); !strings.Contains(out, "already remembered as #1") {
		t.Errorf("exact repeat: %q, want already remembered", out)
	}
	for _, add := range [][]string{
		{"memories", "add", "--guild", "g1", "Kenji is not allergic to peanuts"}, // a negation is no paraphrase
		{"memories", "add", "--guild", "g2", "Kenji has a peanut allergy"},       // another scope
		{"memories", "add", "--guild", "g1", "--force", "Kenji has a peanut allergy"},
	} {
		if out := mustRun(add...); !strings.Contains(out, "remembered #") || strings.Contains(out, "similar") {
			t.Errorf("kioku %v: %q, want it saved", add, out)
		}
	}
	if n := total("--guild", "g1"); n != 3 {
		t.Errorf("g1 holds %d memories, want 3 (the first, the negation, the forced paraphrase)", n)
	}
}
