package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// doctorReport is `kioku doctor --json`.
type doctorReport struct {
	Healthy  bool            `json:"healthy"`
	Status   string          `json:"status"`
	Score    int             `json:"score"`
	Domains  map[string]*int `json:"domains"`
	Findings []struct {
		Domain, Severity, Detail, Fix string
	} `json:"findings"`
	Checks []check `json:"checks"`
}

func doctorJSON(t *testing.T, env map[string]string) (int, doctorReport, map[string]json.RawMessage) {
	t.Helper()
	code, out, stderr := runApp(t, env, "", "doctor", "--offline", "--json")
	var rep doctorReport
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, out, stderr)
	}
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatal(err)
	}
	return code, rep, keys
}

// migrated is a fresh database at a temporary path, migrated by `kioku migrate`.
func migrated(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{"KIOKU_DB": filepath.Join(t.TempDir(), "k.db")}
	if code, out, stderr := runApp(t, env, "", "migrate"); code != 0 {
		t.Fatalf("migrate: %d %s%s", code, out, stderr)
	}
	return env
}

func TestDoctorHealthyJSON(t *testing.T) {
	env := migrated(t)
	store, err := sqlite.Open(context.Background(), env["KIOKU_DB"])
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := store.Memories.Remember(context.Background(), memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
			Content: fmt.Sprintf("Standup is at %d o'clock", 9+i)}, "cli"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Review.Dispute(context.Background(), memory.ServerOwner("g1"), 1, 2, memory.ActorCLI, "which hour?"); err != nil {
		t.Fatal(err)
	}
	store.Close()
	code, rep, keys := doctorJSON(t, env)
	// What waits for review is counted, and is no fault.
	if i := slices.IndexFunc(rep.Checks, func(c check) bool { return c.Name == "review" }); i < 0 ||
		rep.Checks[i].Status != "ok" || !strings.HasPrefix(rep.Checks[i].Detail, "2 waiting for review") {
		t.Errorf("review check: %+v", rep.Checks)
	}
	for _, k := range []string{"healthy", "status", "score", "domains", "findings", "checks"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("doctor --json lacks %q", k)
		}
	}
	if code != 0 || !rep.Healthy || rep.Status != "healthy" || rep.Score != 100 || len(rep.Findings) != 0 {
		t.Fatalf("exit %d, report %+v", code, rep)
	}
	for _, d := range []string{"queue", "storage", "index", "mutations"} {
		if s := rep.Domains[d]; s == nil || *s != 100 {
			t.Errorf("domain %s = %v, want 100", d, s)
		}
	}
	// doctor is its own process: it cannot know the bot's provider numbers.
	if s, ok := rep.Domains["provider"]; !ok || s != nil {
		t.Errorf("provider domain %v (present %v), want null", s, ok)
	}
}

// TestDoctorUnhealthy: a database whose full-text indexes lost their rows and whose jobs
// mostly died is unhealthy: exit 1, and each finding names the command that fixes it.
func TestDoctorUnhealthy(t *testing.T) {
	ctx := context.Background()
	env := migrated(t)
	store, err := sqlite.Open(ctx, env["KIOKU_DB"])
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
			Content: fmt.Sprintf("Release train number %d leaves on Friday (金曜日)", i)}, "cli"); err != nil {
			t.Fatal(err)
		}
	}
	var newestDead int64
	for i := range 3 {
		id, _, err := store.Jobs.Enqueue(ctx, "extract", fmt.Sprint("c", i), nil, memory.EnqueueOptions{MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Jobs.Lease(ctx, "w", nil, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Jobs.Fail(ctx, id, "w", errors.New("provider returned 503"), 0); err != nil {
			t.Fatal(err)
		}
		newestDead = id
	}
	store.Close()
	raw, err := sql.Open("sqlite", sqlite.DSN(env["KIOKU_DB"]))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DELETE FROM memories_fts`, `INSERT INTO memories_tri (memories_tri) VALUES ('delete-all')`} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	code, rep, _ := doctorJSON(t, env)
	if code != 1 || rep.Healthy || rep.Status != "unhealthy" || rep.Score >= 50 {
		t.Fatalf("exit %d, healthy %v, status %s, score %d: want exit 1 and unhealthy", code, rep.Healthy, rep.Status, rep.Score)
	}
	if s := rep.Domains["index"]; s == nil || *s != 0 {
		t.Errorf("index domain %v, want 0", s)
	}
	fixes := map[string]string{}
	for _, f := range rep.Findings {
		fixes[f.Domain+" "+f.Severity] = f.Fix
	}
	if fixes["index critical"] != "kioku reindex" || fixes["queue warn"] != fmt.Sprintf("kioku jobs requeue %d", newestDead) {
		t.Fatalf("fixes %v", fixes)
	}
	code, out, _ := runApp(t, env, "", "doctor", "--offline")
	if code != 1 {
		t.Fatalf("readable doctor exit %d", code)
	}
	mustContain(t, "doctor", out, "health 30/100: unhealthy", "fix: kioku reindex", "index        0", "provider     -  not known here")
}

// A mistyped KIOKU_DB is a clear failure, and no file appears at it.
func TestDoctorMissingDatabaseCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kiok.db")
	env := map[string]string{"KIOKU_DB": path}
	code, out, _ := runApp(t, env, "", "doctor", "--offline")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	mustContain(t, "doctor", out, "fail  database   no database at "+path+"; check KIOKU_DB")
	code, rep, _ := doctorJSON(t, env)
	if code != 1 || rep.Healthy || rep.Status != "unhealthy" {
		t.Fatalf("--json: exit %d, %+v", code, rep)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("doctor created %v", entries)
	}
}

// A database behind this kioku's migrations is reported, and left exactly as it was.
func TestDoctorPendingMigrationIsNotApplied(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	names, _ := fs.Glob(sqlite.Migrations(), "*.sql")
	slices.Sort(names)
	older := fstest.MapFS{}
	for _, name := range names[:len(names)-1] {
		body, _ := fs.ReadFile(sqlite.Migrations(), name)
		older[name] = &fstest.MapFile{Data: body}
	}
	if _, err := sqlite.Migrate(ctx, raw, older); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before := fileSum(t, path)

	newest := names[len(names)-1]
	code, out, stderr := runApp(t, map[string]string{"KIOKU_DB": path}, "", "doctor", "--offline")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	mustContain(t, "doctor", out, "warn  database   1 migrations behind this kioku ("+newest+")", "fix: kioku migrate")
	if fileSum(t, path) != before {
		t.Fatal("doctor changed the database file")
	}
	raw, _ = sql.Open("sqlite", sqlite.DSN(path))
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM schema_migrations WHERE name = ?`, newest).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%s applied by doctor (%d, %v)", newest, n, err)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// KIOKU_MAINTENANCE_MODE takes the three modes and names itself when wrong.
func TestMaintenanceModeSetting(t *testing.T) {
	for in, want := range map[string]string{"execute": "execute", "Observe": "observe", "off": "off"} {
		cfg, err := LoadConfig(only("KIOKU_MAINTENANCE_MODE", in))
		if err != nil || string(cfg.MaintenanceMode) != want {
			t.Errorf("%s: %q, %v", in, cfg.MaintenanceMode, err)
		}
	}
	if cfg, err := LoadConfig(only("KIOKU_LOG_LEVEL", "info")); err != nil || cfg.MaintenanceMode != "execute" {
		t.Errorf("default: %q, %v", cfg.MaintenanceMode, err)
	}
	if _, err := LoadConfig(only("KIOKU_MAINTENANCE_MODE", "sometimes")); err == nil || !strings.Contains(err.Error(), "KIOKU_MAINTENANCE_MODE") {
		t.Errorf("bad mode: %v", err)
	}
}

// TestDoctorOneVerdict: a failed check makes doctor's one verdict unhealthy, whatever the
// store scores: the verdict line names the failed check and the store's score beside it,
// never "healthy", and --json agrees.
func TestDoctorOneVerdict(t *testing.T) {
	env := migrated(t)
	env["KIOKU_LLM_BASE_URL"] = "http://" + closedPort(t) + "/v1"
	code, out, stderr := runApp(t, env, "", "doctor")
	if code != 1 {
		t.Fatalf("doctor with the model endpoint down: exit %d, want 1\n%s%s", code, out, stderr)
	}
	mustContain(t, "doctor", out, "fail  llm", "check KIOKU_LLM_BASE_URL and KIOKU_LLM_API_KEY",
		"health: unhealthy: the llm check failed (the store alone scores 100/100; healthy from 80, degraded from 50)")
	mustNotContain(t, "doctor", out, ": healthy")

	code, out, _ = runApp(t, env, "", "doctor", "--json")
	var rep struct {
		Healthy bool     `json:"healthy"`
		Status  string   `json:"status"`
		Score   int      `json:"score"`
		Failed  []string `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("doctor --json: exit %d, %v\n%s", code, err, out)
	}
	if rep.Healthy || rep.Status != "unhealthy" || rep.Score != 100 || !slices.Equal(rep.Failed, []string{"llm"}) {
		t.Errorf("doctor --json = %+v, want unhealthy with the llm check failed and the store's score 100", rep)
	}

	// No database at all: the verdict names it.
	env["KIOKU_DB"] = filepath.Join(t.TempDir(), "missing.db")
	code, out, _ = runApp(t, env, "", "doctor", "--offline")
	if code != 1 || !strings.HasSuffix(strings.TrimSpace(out), "health: unhealthy: the database check failed") {
		t.Errorf("doctor without a database: exit %d\n%s", code, out)
	}
}
