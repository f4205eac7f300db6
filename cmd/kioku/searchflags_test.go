package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// `kioku memories search` takes the same filters as /memory search, and refuses bad values
// with a message naming the flag.
func TestMemoriesSearchFilterFlags(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"KIOKU_DB": filepath.Join(dir, "k.db")}
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := runApp(t, env, "", args...)
		if code != 0 {
			t.Fatalf("kioku %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	// Written through the store: add and import record the one adding as the author.
	store, err := sqlite.Open(context.Background(), env["KIOKU_DB"])
	if err != nil {
		t.Fatal(err)
	}
	at := func(month int) time.Time { return time.Date(2025, time.Month(month), 1, 10, 0, 0, 0, time.UTC) }
	for _, m := range []memory.Memory{
		{Content: "glider club meets early", CreatedAt: at(1), Provenance: memory.Provenance{AuthorID: "501"}},
		{Content: "glider club decided on the north field", Type: memory.TypeDecision, CreatedAt: at(2), Provenance: memory.Provenance{AuthorID: "502"}},
		{Content: "glider club gear list", Tags: []string{"gear"}, Pinned: true, CreatedAt: at(3), Provenance: memory.Provenance{AuthorID: "501"}},
	} {
		m.Scope, m.GuildID = memory.ScopeServer, "g1"
		if _, err := store.Memories.Remember(context.Background(), m, memory.ActorCLI); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	mustRun("memories", "add", "--guild", "g2", "glider club in another server")

	search := func(flags ...string) []string {
		t.Helper()
		var hits []struct {
			Memory struct {
				Content string `json:"content"`
			} `json:"memory"`
		}
		out := mustRun(append([]string{"memories", "search", "glider", "--guild", "g1", "--json"}, flags...)...)
		if err := json.Unmarshal([]byte(out), &hits); err != nil {
			t.Fatalf("search %v: %v: %q", flags, err, out)
		}
		var got []string
		for _, h := range hits {
			got = append(got, strings.TrimPrefix(h.Memory.Content, "glider club "))
		}
		slices.Sort(got)
		return got
	}
	cases := []struct {
		flags []string
		want  []string
	}{
		{nil, []string{"decided on the north field", "gear list", "meets early"}},
		{[]string{"--type", "decision"}, []string{"decided on the north field"}},
		{[]string{"--tag", "GEAR"}, []string{"gear list"}},
		{[]string{"--since", "2025-01-15"}, []string{"decided on the north field", "gear list"}},
		{[]string{"--until", "2025-02-01"}, []string{"decided on the north field", "meets early"}},
		{[]string{"--pinned"}, []string{"gear list"}},
		{[]string{"--author", "501"}, []string{"gear list", "meets early"}},
		{[]string{"--author", "501", "--until", "2025-02-15"}, []string{"meets early"}},
		{[]string{"--min-score", "1"}, nil},
	}
	for _, c := range cases {
		if got := search(c.flags...); !slices.Equal(got, c.want) {
			t.Errorf("search %v: %q, want %q", c.flags, got, c.want)
		}
	}

	bad := map[string][]string{
		"--since":     {"--since", "someday"},
		"is after":    {"--since", "2025-03-01", "--until", "2025-01-01"},
		"min_score":   {"--min-score", "1.5"},
		"gossip":      {"--type", "gossip"},
		"author must": {"--author", "Aiko"},
	}
	for mention, flags := range bad {
		code, _, errOut := runApp(t, env, "", append([]string{"memories", "search", "glider", "--guild", "g1"}, flags...)...)
		if code == 0 || !strings.Contains(errOut, mention) {
			t.Errorf("search %v: exit %d, %q; want a failure mentioning %q", flags, code, errOut, mention)
		}
	}
}
