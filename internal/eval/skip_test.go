package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/eval"
)

// A memory the write path refuses is skipped and counted by reason; the run goes on, a
// query that lost every relevant memory is left out of scoring, and one that lost some is
// scored on the rest.
func TestRefusedMemoriesAreSkipped(t *testing.T) {
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	fakeKey := "-----BEGIN RSA PRIVATE KEY-----\nMIIEFAKEbodyLINEone0123\n-----END RSA PRIVATE KEY-----"
	d := eval.Dataset{Name: "bad items", Scopes: []eval.Scope{{
		GuildID: "g1",
		Memories: []eval.MemoryEntry{
			{ID: "tea", Content: "Mika drinks green tea every morning", Author: "Mika", CreatedAt: at},
			{ID: "long", Content: strings.Repeat("green tea is lovely ", 120), Author: "Mika", CreatedAt: at},
			{ID: "empty", Content: "  \n ", Author: "Ren", CreatedAt: at},
			{ID: "key", Content: "my key is " + fakeKey, Author: "Ren", CreatedAt: at},
			{ID: "bike", Content: "Ren rides a red bicycle to work", Author: "Ren", CreatedAt: at},
		},
		Queries: []eval.Query{
			{ID: "q-tea", Text: "what does mika drink", Relevant: []string{"tea", "long"}, Category: "single-hop"},
			{ID: "q-bike", Text: "how does ren get to work", Relevant: []string{"bike"}, Category: "single-hop"},
			{ID: "q-key", Text: "what is ren's key", Relevant: []string{"key", "empty"}, Category: "single-hop"},
		},
	}}}
	rep, err := eval.RunDataset(context.Background(), d, eval.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("a refused memory aborted the run: %v", err)
	}
	if rep.Skipped != 3 || rep.Memories != 5 || rep.Stored != 2 {
		t.Errorf("skipped %d, memories %d, stored %d; want 3 skipped of 5, 2 stored", rep.Skipped, rep.Memories, rep.Stored)
	}
	for reason, n := range map[string]int{"too_long": 1, "empty": 1, "secret": 1} {
		if rep.SkippedReasons[reason] != n {
			t.Errorf("skipped reasons %v, want %s: %d", rep.SkippedReasons, reason, n)
		}
	}
	if rep.SkippedQueries != 1 || rep.Overall.Queries != 2 {
		t.Errorf("skipped queries %d, scored %d; want q-key left out and 2 scored", rep.SkippedQueries, rep.Overall.Queries)
	}
	// q-tea is scored on "tea" alone, which recall finds: recall@10 is 1, not 1/2.
	if !near(rep.Overall.Recall[10], 1) {
		t.Errorf("recall@10 %.4f, want 1 (a skipped relevant memory is not counted against recall)", rep.Overall.Recall[10])
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Skipped        int            `json:"skipped"`
		SkippedReasons map[string]int `json:"skipped_reasons"`
		SkippedQueries int            `json:"skipped_queries"`
	}
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Skipped != 3 || len(obj.SkippedReasons) != 3 || obj.SkippedQueries != 1 {
		t.Errorf("JSON skipped %d reasons %v queries %d, want 3, three reasons, 1: %s", obj.Skipped, obj.SkippedReasons, obj.SkippedQueries, js.String())
	}

	var msg bytes.Buffer
	if err := rep.WriteSkipped(&msg); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(msg.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("skip notice %q, want one line per reason and one for the queries", msg.String())
	}
	for _, want := range []string{"1 memory the write path refuses: empty", "secret", "too_long (over 2000 characters)", "left out 1 query"} {
		if !strings.Contains(msg.String(), want) {
			t.Errorf("skip notice %q lacks %q", msg.String(), want)
		}
	}
	if strings.Contains(msg.String(), "MIIEFAKE") || strings.Contains(msg.String(), "green tea") {
		t.Errorf("skip notice %q repeats memory content", msg.String())
	}
}

// A query's asked_at reaches recall as it is given; without one it is the newest memory of
// the scope, whatever day the eval runs.
func TestAskedAt(t *testing.T) {
	first := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	last := time.Date(2023, 5, 20, 9, 0, 0, 0, time.UTC)
	sc := eval.Scope{GuildID: "g1",
		Memories: []eval.MemoryEntry{
			{ID: "m1", Content: "we climbed at the gym on monday", Author: "Kate", CreatedAt: last},
			{ID: "m2", Content: "first session at the new climbing gym", Author: "Kate", CreatedAt: first},
		},
		Queries: []eval.Query{
			{ID: "q-given", Text: "when did kate go climbing last week", Relevant: []string{"m1"}, Category: "temporal", AskedAt: "2023-05-22T19:00:00+09:00"},
			{ID: "q-default", Text: "where did kate climb", Relevant: []string{"m2"}, Category: "single-hop"},
		}}
	want := map[string]time.Time{
		"q-given":   time.Date(2023, 5, 22, 10, 0, 0, 0, time.UTC),
		"q-default": last,
	}
	for _, q := range sc.Queries {
		got, err := sc.AskedAt(q)
		if err != nil || !got.Equal(want[q.ID]) {
			t.Errorf("%s: asked at %v (%v), want %v", q.ID, got, err, want[q.ID])
		}
	}
	rep, err := eval.RunDataset(context.Background(), eval.Dataset{Name: "asked", Scopes: []eval.Scope{sc}}, eval.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outcomes) != 2 {
		t.Fatalf("outcomes %+v, want 2", rep.Outcomes)
	}
	for _, o := range rep.Outcomes {
		if !o.AskedAt.Equal(want[o.QueryID]) {
			t.Errorf("%s ran as asked at %v, want %v", o.QueryID, o.AskedAt, want[o.QueryID])
		}
	}
}

// A malformed asked_at fails the load with an error naming the query, before anything runs.
func TestBadAskedAtNamesTheQuery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	body := `{"name":"x","scopes":[{"guild_id":"g","memories":[{"id":"m1","content":"kate went bouldering","created_at":"2023-05-08T13:56:00Z"}],
		"queries":[{"id":"q-ok","text":"kate","relevant":["m1"]},{"id":"q-late","text":"what did kate do last weekend","relevant":["m1"],"asked_at":"last tuesday"}]}]}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := eval.Load(path)
	if err == nil || !strings.Contains(err.Error(), `"q-late"`) || !strings.Contains(err.Error(), "asked_at") {
		t.Fatalf("error %v, want one naming query q-late and asked_at", err)
	}
	if strings.Contains(err.Error(), "q-ok") {
		t.Errorf("error %v names the good query", err)
	}
}
