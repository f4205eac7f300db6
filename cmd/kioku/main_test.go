package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory/maintenance"
)

// runApp runs kioku in-process with the given environment and returns exit code and output.
func runApp(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	app := &App{
		Stdin:  strings.NewReader(stdin),
		Stdout: &stdout,
		Stderr: &stderr,
		LookupEnv: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		},
	}
	code := app.Main(context.Background(), args)
	return code, stdout.String(), stderr.String()
}

func TestConfigErrorsNameTheSetting(t *testing.T) {
	cases := map[string]string{
		"KIOKU_DISCORD_API_URL":   "not a url",
		"KIOKU_CONTEXT_WINDOW":    "-5",
		"KIOKU_HTTP_ADDR":         "nope",
		"KIOKU_LOG_LEVEL":         "loud",
		"KIOKU_LLM_TIMEOUT":       "soon",
		"KIOKU_MAX_OUTPUT_TOKENS": "999999",
		"KIOKU_MEMORY_LIMIT_MB":   "lots",
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := runApp(t, map[string]string{name: value, "KIOKU_DB": filepath.Join(t.TempDir(), "k.db")}, "", "migrate")
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], name) {
				t.Fatalf("code %d, stderr %q: want exit 2 and one line naming %s", code, stderr, name)
			}
		})
	}
}

func TestConfigFileAndEnvironmentPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kioku.env")
	os.WriteFile(file, []byte("# comment\nKIOKU_CHAT_MODEL=from-file\nKIOKU_EMBED_MODEL=embed-file\n"), 0o600)
	cfg, err := LoadConfig(func(k string) (string, bool) {
		v, ok := map[string]string{"KIOKU_CONFIG": file, "KIOKU_CHAT_MODEL": "from-env"}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ChatModel != "from-env" || cfg.EmbedModel != "embed-file" || cfg.DB != "./kioku.db" {
		t.Errorf("config = %+v", cfg)
	}
	os.WriteFile(file, []byte("KIOKU_UNKNOWN=1\n"), 0o600)
	if _, err := LoadConfig(func(k string) (string, bool) { return map[string]string{"KIOKU_CONFIG": file}[k], k == "KIOKU_CONFIG" }); err == nil ||
		!strings.Contains(err.Error(), "KIOKU_CONFIG") {
		t.Errorf("unknown key in config file: err = %v", err)
	}
}

// TestMigrateTwiceIsANoOp: the first migrate creates the database and reports the
// migrations, and no repairs (a new database holds nothing older versions wrote); the
// second does nothing.
func TestMigrateTwiceIsANoOp(t *testing.T) {
	env := map[string]string{"KIOKU_DB": filepath.Join(t.TempDir(), "k.db")}
	code, out, errOut := runApp(t, env, "", "migrate")
	if code != 0 || !strings.Contains(out, "applied 0001") || strings.Contains(out, "repaired") {
		t.Fatalf("first migrate: %d %q %q", code, out, errOut)
	}
	code, out, _ = runApp(t, env, "", "migrate")
	if code != 0 || strings.Contains(out, "applied") || strings.Contains(out, "repaired") {
		t.Fatalf("second migrate applied again: %q", out)
	}
}

func TestMemoriesCLI(t *testing.T) {
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
	mustRun("memories", "add", "The", "raid", "is", "on", "Friday", "--guild", "g1", "--type", "event")
	mustRun("memories", "add", "--guild", "g1", "Minecraft night is Saturday")
	mustRun("memories", "add", "--guild", "g2", "Guild two raids on Monday")
	if out := mustRun("memories", "add", "--guild", "g1", "the raid is on friday."); !strings.Contains(out, "already remembered as #1") {
		t.Errorf("duplicate add: %q", out)
	}
	var list struct {
		Total int `json:"total"`
	}
	json.Unmarshal([]byte(mustRun("memories", "list", "--guild", "g1", "--json")), &list)
	if list.Total != 2 {
		t.Errorf("list total = %d, want 2", list.Total)
	}
	if out := mustRun("memories", "search", "raid", "--guild", "g1"); !strings.Contains(out, "Friday") || strings.Contains(out, "Monday") {
		t.Errorf("search crossed scopes or missed: %q", out)
	}
	if out := mustRun("memories", "search", "raid", "--guild", "g1", "--explain"); !regexp.MustCompile(`↳ keyword 0\.\d{3} · vector 0\.000`).MatchString(out) {
		t.Errorf("search --explain: %q", out)
	}
	var explained []struct {
		Keyword *float64 `json:"keyword"`
	}
	if err := json.Unmarshal([]byte(mustRun("memories", "search", "raid", "--guild", "g1", "--explain", "--json")), &explained); err != nil ||
		len(explained) != 1 || explained[0].Keyword == nil || *explained[0].Keyword <= 0 {
		t.Errorf("search --explain --json: %+v %v", explained, err)
	}
	// A plan for tomorrow is upcoming, with its day; what was two days ago is past; a
	// memory naming no time is neither.
	mustRun("memories", "add", "--guild", "g9", "Board game night is tomorrow")
	mustRun("memories", "add", "--guild", "g9", "The meetup was two days ago")
	mustRun("memories", "add", "--guild", "g9", "Kenji hosts the meetups")
	tomorrow := time.Now().AddDate(0, 0, 1).Format("Mon 2006-01-02")
	if out := mustRun("memories", "list", "--guild", "g9", "--when", "upcoming"); !strings.Contains(out, "[about "+tomorrow+"] Board game night") ||
		strings.Contains(out, "meetup") || !strings.Contains(out, "1 of 1") {
		t.Errorf("list --when upcoming: %q", out)
	}
	if out := mustRun("memories", "list", "--guild", "g9", "--when", "past"); !strings.Contains(out, "The meetup was") ||
		strings.Contains(out, "Board game") || strings.Contains(out, "Kenji") {
		t.Errorf("list --when past: %q", out)
	}
	if code, _, errOut := runApp(t, env, "", "memories", "list", "--guild", "g9", "--when", "someday"); code != 2 || !strings.Contains(errOut, "upcoming or past") {
		t.Errorf("list --when someday: exit %d, %q", code, errOut)
	}
	// show: one memory in full; its JSON has its lifecycle and, for a time-bound one, the
	// day it is about in RFC 3339.
	var listed struct {
		Memories []struct {
			ID      int64  `json:"id"`
			Content string `json:"content"`
		} `json:"memories"`
	}
	json.Unmarshal([]byte(mustRun("memories", "list", "--guild", "g9", "--json")), &listed)
	shown := map[string]struct {
		Lifecycle string `json:"lifecycle"`
		RefersTo  string `json:"refers_to"`
	}{}
	for _, m := range listed.Memories {
		var got struct {
			Lifecycle string `json:"lifecycle"`
			RefersTo  string `json:"refers_to"`
		}
		if err := json.Unmarshal([]byte(mustRun("memories", "show", strconv.FormatInt(m.ID, 10), "--guild", "g9", "--json")), &got); err != nil {
			t.Fatal(err)
		}
		shown[m.Content] = got
	}
	for content, want := range map[string][2]string{"Board game night is tomorrow": {"active", "T00:00:00Z"},
		"The meetup was two days ago": {"past", "T00:00:00Z"}, "Kenji hosts the meetups": {"active", ""}} {
		got := shown[content]
		if got.Lifecycle != want[0] || !strings.HasSuffix(got.RefersTo, want[1]) || (want[1] == "") != (got.RefersTo == "") {
			t.Errorf("show %q: %+v, want lifecycle %s and refers_to ending %q", content, got, want[0], want[1])
		}
	}
	if out := mustRun("memories", "show", strconv.FormatInt(listed.Memories[0].ID, 10), "--guild", "g9"); !strings.Contains(out, "#") ||
		!strings.Contains(out, "saved ") {
		t.Errorf("show: %q", out)
	}
	if code, _, _ := runApp(t, env, "", "memories", "show", "999", "--guild", "g9"); code == 0 {
		t.Error("show of a memory that does not exist succeeded")
	}

	preview := mustRun("memories", "forget", "--guild", "g1", "--query", "minecraft")
	token := regexp.MustCompile(`--confirm ([0-9a-f]+)`).FindStringSubmatch(preview)
	if token == nil {
		t.Fatalf("preview printed no token: %q", preview)
	}
	// One match is "this memory", and the deadline a 24-hour time with its zone.
	if !regexp.MustCompile(`To forget this memory, run before [0-2]\d:[0-5]\d [A-Z+\-0-9]+:\n`).MatchString(preview) {
		t.Errorf("preview does not name one memory and a 24-hour deadline with its zone: %q", preview)
	}
	if out := mustRun("memories", "list", "--guild", "g1"); !strings.Contains(out, "Minecraft") {
		t.Fatal("preview deleted before confirmation")
	}
	if out := mustRun("memories", "forget", "--guild", "g1", "--confirm", token[1]); !strings.Contains(out, "forgot #2") {
		t.Errorf("confirm: %q", out)
	}
	if out := mustRun("memories", "recover", "--guild", "g1", "2"); !strings.Contains(out, "recovered #2") {
		t.Errorf("recover: %q", out)
	}
	if out := mustRun("memories", "history", "--guild", "g1", "2"); !strings.Contains(out, "delete") || !strings.Contains(out, "recover") {
		t.Errorf("history: %q", out)
	}

	exportFile := filepath.Join(dir, "g1.json")
	mustRun("memories", "export", "--guild", "g1", "--out", exportFile)
	if out := mustRun("memories", "import", exportFile, "--guild", "g3"); !strings.Contains(out, "imported 2 memories") {
		t.Errorf("import: %q", out)
	}

	t.Run("ErrNoScope", func(t *testing.T) {
		code, _, errOut := runApp(t, env, "", "memories", "list")
		if code != 2 || !strings.Contains(errOut, "--guild") {
			t.Errorf("exit %d, %q", code, errOut)
		}
	})
	t.Run("ErrOtherScopeID", func(t *testing.T) {
		code, _, errOut := runApp(t, env, "", "memories", "forget", "3", "--guild", "g1")
		if code != 1 || !strings.Contains(errOut, "no memory #3") {
			t.Errorf("exit %d, %q", code, errOut)
		}
	})
	t.Run("ErrBadImport", func(t *testing.T) {
		code, _, errOut := runApp(t, env, "{not json", "memories", "import", "-", "--guild", "g1")
		if code != 1 || !strings.Contains(errOut, "not a kioku export") {
			t.Errorf("exit %d, %q", code, errOut)
		}
	})
}

// KIOKU_DB names a SQLite file, as a path or sqlite:PATH; a PostgreSQL URL is refused with
// one line naming the setting, and no file of that name is created.
func TestConfigDatabase(t *testing.T) {
	for v, want := range map[string]string{"/var/lib/kioku/kioku.db": "/var/lib/kioku/kioku.db", "sqlite:data/k.db": "data/k.db",
		"postgres://kioku:secret@db:5432/kioku": "postgres://kioku:secret@db:5432/kioku", "POSTGRESQL://db/kioku": "postgresql://db/kioku"} {
		cfg, err := LoadConfig(only("KIOKU_DB", v))
		if err != nil || cfg.DB != want {
			t.Errorf("KIOKU_DB=%s: %q %v, want %q", v, cfg.DB, err, want)
		}
	}
	dir := t.TempDir()
	t.Chdir(dir)
	for _, v := range []string{"postgres://kioku:secret@db:port/kioku", "sqlite:"} {
		code, _, stderr := runApp(t, map[string]string{"KIOKU_DB": v}, "", "migrate")
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "KIOKU_DB") {
			t.Errorf("KIOKU_DB=%s: code %d, stderr %q; want exit 2 and one line naming KIOKU_DB", v, code, stderr)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("KIOKU_DB=%s: the error shows the password: %q", v, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused KIOKU_DB left files: %v", entries)
	}
}

// TestDescribeRepairs: the repairs line names only what was found, in the right number.
func TestDescribeRepairs(t *testing.T) {
	for rep, want := range map[*maintenance.RepairReport]string{
		{Memories: 1, Jobs: 3, Duplicates: 1, Finished: []string{"redact-secrets"}}: "credentials redacted in 1 memory, 3 jobs (1 of the memories forgotten as a duplicate); finished redact-secrets",
		{Stripped: 1, Vacuumed: true}: "1 finished job stripped to its id; freed space cleared",
		{SearchText: 2, Linked: 1}:    "2 memories given their search text; 1 memory linked to the knowledge graph",
	} {
		if got := describeRepairs(*rep); got != want {
			t.Errorf("describeRepairs(%+v) = %q, want %q", *rep, got, want)
		}
	}
	if repairsChanged(maintenance.RepairReport{Vacuumed: true, Finished: []string{"vacuum-freed-pages"}}) {
		t.Error("a vacuum of nothing counts as changed data")
	}
}
