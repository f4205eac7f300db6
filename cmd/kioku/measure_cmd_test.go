//go:build measure

// Measurement tests run whole evals and benchmark runs: minutes under -race on a small
// machine, so they leave the default `go test ./...` path. CI runs them without -race:
// go test -tags measure ./internal/bench ./internal/eval ./cmd/kioku

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvalRetrievalCommand(t *testing.T) {
	env := map[string]string{"KIOKU_DB": filepath.Join(t.TempDir(), "unused.db")}
	dataset := filepath.Join("..", "..", "testdata", "eval", "dev-ja.json")

	t.Run("JSONHasTheSpecKeys", func(t *testing.T) {
		code, stdout, stderr := runApp(t, env, "", "eval", "retrieval", "--dataset", dataset, "--k", "1,5,10", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(stdout), &obj); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
		}
		for _, key := range []string{"queries", "skipped", "recall@1", "recall@5", "recall@10", "mrr", "ndcg@10", "p50_ms", "p95_ms", "by_category"} {
			if _, ok := obj[key]; !ok {
				t.Errorf("missing key %q", key)
			}
		}
		if obj["queries"] != 54.0 {
			t.Errorf("queries = %v, want the dataset's 54", obj["queries"])
		}
	})
	t.Run("TextIsATable", func(t *testing.T) {
		code, stdout, stderr := runApp(t, env, "", "eval", "retrieval", "--dataset", dataset)
		if code != 0 || !strings.Contains(stdout, "overall") || !strings.Contains(stdout, "recall@10") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
	t.Run("UsageErrors", func(t *testing.T) {
		for _, args := range [][]string{
			{"eval"},
			{"eval", "retrieval"},
			{"eval", "retrieval", "--dataset", dataset, "--k", "0"},
		} {
			if code, _, _ := runApp(t, env, "", args...); code != 2 {
				t.Errorf("%v: exit %d, want 2", args, code)
			}
		}
	})
	t.Run("MissingDatasetFails", func(t *testing.T) {
		code, _, stderr := runApp(t, env, "", "eval", "retrieval", "--dataset", filepath.Join(t.TempDir(), "nope.json"))
		if code != 1 || !strings.Contains(stderr, "nope.json") {
			t.Fatalf("exit %d, stderr %q: want 1 and the file named", code, stderr)
		}
	})
}

func TestBenchCommand(t *testing.T) {
	env := map[string]string{"KIOKU_DB": filepath.Join(t.TempDir(), "unused.db")}
	code, stdout, stderr := runApp(t, env, "", "bench", "--memories", "400", "--dims", "16", "--queries", "20", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(stdout), &obj); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	for _, key := range []string{"memories", "dims", "write_per_s", "recall_p50_ms", "recall_p99_ms", "vector_p50_ms",
		"keyword_p50_ms", "bruteforce_p50_ms", "fts_only_p50_ms"} {
		if _, ok := obj[key]; !ok {
			t.Errorf("missing key %q", key)
		}
	}
	if obj["memories"] != 400.0 || obj["dims"] != 16.0 {
		t.Errorf("memories %v dims %v, want 400 and 16", obj["memories"], obj["dims"])
	}
	if code, _, _ := runApp(t, env, "", "bench", "--memories", "0"); code != 2 {
		t.Errorf("--memories 0: exit %d, want 2", code)
	}
	for _, args := range [][]string{{"--scopes", "0"}, {"--memories", "100", "--scopes", "10"}, {"--turns", "-1"}} {
		if code, _, stderr := runApp(t, env, "", append([]string{"bench"}, args...)...); code != 2 || !strings.Contains(stderr, args[len(args)-2]) {
			t.Errorf("bench %v: exit %d, stderr %q; want 2 naming the flag", args, code, stderr)
		}
	}

	// Many scopes, chat turns and a CPU profile of the timed queries.
	profile := filepath.Join(t.TempDir(), "cpu.pprof")
	code, stdout, stderr = runApp(t, env, "", "bench", "--memories", "400", "--dims", "16", "--queries", "20", "--scopes", "5",
		"--turns", "3", "--cpuprofile", profile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"scopes 5 guild(s)", "shared / alone", "cold / fts", "chat turn (3)", "start-up"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, stdout)
		}
	}
	if fi, err := os.Stat(profile); err != nil || fi.Size() == 0 {
		t.Errorf("CPU profile %s: %v, want a non-empty file", profile, err)
	}
}
