package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// TestLifecycleCLI: `memories list --lifecycle` lists the memories in one state, default
// listing and search leave superseded and archived ones out, `search --include` brings them
// back, and `show --json` says the lifecycle and the memory that superseded it.
func TestLifecycleCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "k.db")
	env := map[string]string{"KIOKU_DB": db}
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := runApp(t, env, "", args...)
		if code != 0 {
			t.Fatalf("kioku %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	mustRun("memories", "add", "--guild", "g1", "Katherine's home is Osaka")
	mustRun("memories", "add", "--guild", "g1", "Kate relocated to Tokyo")
	mustRun("memories", "add", "--guild", "g1", "The old raid roster lives in the pinned post")
	s, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	g1 := memory.ServerOwner("g1")
	if _, err := s.Review.Supersede(t.Context(), g1, 1, 2, memory.ActorCLI, "moved"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Review.SetState(t.Context(), g1, 3, memory.StateArchived, memory.ActorCLI, ""); err != nil {
		t.Fatal(err)
	}
	s.Close()

	ids := func(args ...string) []int64 {
		t.Helper()
		var list struct {
			Memories []memory.Memory `json:"memories"`
		}
		if err := json.Unmarshal([]byte(mustRun(append([]string{"memories", "list", "--guild", "g1", "--json"}, args...)...)), &list); err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, m := range list.Memories {
			out = append(out, m.ID)
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want string
	}{{nil, "[2]"}, {[]string{"--lifecycle", "superseded"}, "[1]"}, {[]string{"--lifecycle", "archived"}, "[3]"}, {[]string{"--lifecycle", "active"}, "[2]"}} {
		if got := jsonOf(ids(c.args...)); got != c.want {
			t.Errorf("list %v = %s, want %s", c.args, got, c.want)
		}
	}
	if code, _, errOut := runApp(t, env, "", "memories", "list", "--guild", "g1", "--lifecycle", "stale"); code == 0 || !strings.Contains(errOut, "--lifecycle takes") {
		t.Errorf("a bad lifecycle: exit %d, %q", code, errOut)
	}
	if out := mustRun("memories", "search", "Osaka", "--guild", "g1"); strings.Contains(out, "Osaka") {
		t.Errorf("default search returned a superseded memory: %q", out)
	}
	if out := mustRun("memories", "search", "Osaka", "--guild", "g1", "--include", "superseded", "--explain"); !strings.Contains(out, "Osaka") || !strings.Contains(out, "lifecycle superseded") {
		t.Errorf("search --include superseded --explain: %q", out)
	}
	var shown struct {
		Lifecycle string `json:"lifecycle"`
		StateRef  int64  `json:"state_ref"`
	}
	if err := json.Unmarshal([]byte(mustRun("memories", "show", "1", "--guild", "g1", "--json")), &shown); err != nil ||
		shown.Lifecycle != "superseded" || shown.StateRef != 2 {
		t.Errorf("show --json: %+v %v", shown, err)
	}
	if out := mustRun("memories", "show", "1", "--guild", "g1"); !strings.Contains(out, "superseded by #2") {
		t.Errorf("show: %q", out)
	}
	if out := mustRun("memories", "history", "1", "--guild", "g1"); !strings.Contains(out, "lifecycle active → superseded (#2)") {
		t.Errorf("history: %q", out)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestReviewCLI: `memories review --json` lists what waits in one scope, and --settle with
// --choice settles an item through the versioned write path.
func TestReviewCLI(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	env := map[string]string{"KIOKU_DB": db}
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := runApp(t, env, "", args...)
		if code != 0 {
			t.Fatalf("kioku %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	mustRun("memories", "add", "--guild", "g1", "The raid leader is Mika")
	mustRun("memories", "add", "--guild", "g1", "Ren leads every raid now")
	s, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Review.Dispute(t.Context(), memory.ServerOwner("g1"), 1, 2, memory.ActorCLI, "two leaders"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var queue struct {
		Total int                 `json:"total"`
		Items []memory.ReviewItem `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustRun("memories", "review", "--guild", "g1", "--json")), &queue); err != nil {
		t.Fatal(err)
	}
	if queue.Total != 1 || queue.Items[0].Ref != "d1" || queue.Items[0].Kind != memory.ReviewDisputed || queue.Items[0].Other.ID != 2 {
		t.Fatalf("review --json: %+v", queue)
	}
	if out := mustRun("memories", "review", "--guild", "g2"); !strings.Contains(out, "0 of 0 waiting") {
		t.Errorf("another server's queue: %q", out)
	}
	if code, _, errOut := runApp(t, env, "", "memories", "review", "--guild", "g1", "--settle", "d1", "--choice", "maybe"); code == 0 || !strings.Contains(errOut, "Unknown choice") {
		t.Errorf("a bad choice: exit %d, %q", code, errOut)
	}
	mustRun("memories", "review", "--guild", "g1", "--settle", "d1", "--choice", "replace")
	if out := mustRun("memories", "show", "1", "--guild", "g1"); !strings.Contains(out, "superseded by #2") {
		t.Errorf("after replace: %q", out)
	}
	if out := mustRun("memories", "review", "--guild", "g1"); !strings.Contains(out, "0 of 0 waiting") {
		t.Errorf("the settled item still waits: %q", out)
	}
}
