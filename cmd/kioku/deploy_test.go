package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDeployFilesNameRealCommands: the container image, the compose file and the systemd
// unit start kioku subcommands by name (the HEALTHCHECK's healthcheck, run, migrate); a
// renamed command must fail here, not in a container that never turns healthy.
func TestDeployFilesNameRealCommands(t *testing.T) {
	known := map[string]bool{}
	for _, c := range commands() {
		known[c.name] = true
	}
	for file, patterns := range map[string][]string{
		"Dockerfile": {
			`(?m)^HEALTHCHECK .*CMD \["/kioku", "(\w+)"\]$`,
			`(?m)^ENTRYPOINT \["/kioku"\]\nCMD \["(\w+)"\]$`,
		},
		"deploy/compose.yaml": {
			`(?m)^  migrate:\n(?:    .*\n)*?    command: \["(\w+)"\]$`,
			`(?m)^  kioku:\n(?:    .*\n)*?    command: \["(\w+)"\]$`,
		},
		"deploy/compose-postgres.yaml": {
			`(?m)^  migrate:\n(?:    .*\n)*?    command: \["(\w+)"\]$`,
			`(?m)^  shard0:\n(?:    .*\n)*?    command: \["(\w+)"\]$`,
			`(?m)^  shard1:\n(?:    .*\n)*?    command: \["(\w+)"\]$`,
		},
		"deploy/kioku.service": {
			`(?m)^ExecStartPre=/usr/local/bin/kioku (\w+)$`,
			`(?m)^ExecStart=/usr/local/bin/kioku (\w+)$`,
		},
	} {
		body, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range patterns {
			m := regexp.MustCompile(p).FindSubmatch(body)
			if m == nil {
				t.Errorf("%s: nothing matches %s", file, p)
				continue
			}
			if !known[string(m[1])] {
				t.Errorf("%s starts `kioku %s`, which is not a kioku command", file, m[1])
			}
		}
	}
}

// TestComposePostgresShards: the PostgreSQL compose example runs each shard once, every
// process with the same shard count and the database URL; two services given the same
// shard id would answer that shard's servers twice.
func TestComposePostgresShards(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "deploy", "compose-postgres.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	// The services that run the bot (command run), and the shard each is; migrate and
	// migrate-store name a shard only because the count is set for every service.
	var shards []string
	for _, m := range regexp.MustCompile(`(?ms)^  (\w[\w-]*):\n(.*?)\n\n`).FindAllStringSubmatch(text, -1) {
		if !strings.Contains(m[2], `command: ["run"]`) {
			continue
		}
		id := regexp.MustCompile(`(?m)^      KIOKU_SHARD_ID: "(\d+)"$`).FindStringSubmatch(m[2])
		if id == nil {
			t.Fatalf("service %s runs the bot without a shard id", m[1])
		}
		shards = append(shards, m[1]+"="+id[1])
	}
	if !slices.Equal(shards, []string{"shard0=0", "shard1=1"}) {
		t.Errorf("bot services and their shards %v: want shard0 with 0 and shard1 with 1", shards)
	}
	for _, want := range []string{`KIOKU_SHARD_COUNT: "2"`, "KIOKU_DB: postgres://", "--locale=C.UTF-8", "condition: service_healthy"} {
		if !strings.Contains(text, want) {
			t.Errorf("compose-postgres.yaml lacks %q", want)
		}
	}
}

// readRepoFile reads a file by its path from the repository root.
func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestDeployImagesArePinned: every image the Dockerfile builds from and the compose files
// run names a version, so a rebuild months later gets the same software; the Dockerfile's Go
// is go.mod's. Two exceptions, each for a reason: the image compose builds here (kioku:local)
// and distroless, which publishes no version tags (README says how to pin its digest).
func TestDeployImagesArePinned(t *testing.T) {
	versioned := regexp.MustCompile(`^[^:@\s]+(:[^@\s]*\d[^@\s]*)?(@sha256:[0-9a-f]{64})?$`)
	exempt := map[string]bool{"kioku:local": true, "gcr.io/distroless/static-debian12:nonroot": true}
	dockerfile := readRepoFile(t, "Dockerfile")
	goVersion := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindStringSubmatch(dockerfile)
	goMod := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	if goVersion == nil || goMod == nil || goVersion[1] != goMod[1] {
		t.Errorf("the Dockerfile builds with Go %v, go.mod says %v", goVersion, goMod)
	}
	var images []string
	for _, m := range regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(dockerfile, -1) {
		images = append(images, strings.ReplaceAll(m[1], "${GO_VERSION}", goVersion[1]))
	}
	for _, file := range []string{"deploy/compose.yaml", "deploy/compose-postgres.yaml"} {
		for _, m := range regexp.MustCompile(`(?m)^\s+image: (\S+)$`).FindAllStringSubmatch(readRepoFile(t, file), -1) {
			images = append(images, m[1])
		}
	}
	if len(images) < 5 {
		t.Fatalf("found only %v; the patterns no longer match the files", images)
	}
	for _, image := range images {
		tagged := versioned.MatchString(image) && (strings.Contains(image, ":") || strings.Contains(image, "@"))
		if !exempt[image] && (!tagged || strings.HasSuffix(image, ":latest")) {
			t.Errorf("image %s is not pinned to a version", image)
		}
	}
}

// TestComposeMoveToPostgres: the recipe for moving the compose SQLite bot to PostgreSQL can
// work as written: a service of compose-postgres.yaml mounts the volume that compose.yaml
// keeps its database in, under the name compose gives it, and copies the file that volume
// holds into KIOKU_DB.
func TestComposeMoveToPostgres(t *testing.T) {
	sqlite := readRepoFile(t, "deploy/compose.yaml")
	project := regexp.MustCompile(`(?m)^name: (\S+)$`).FindStringSubmatch(sqlite)
	dataVolume := regexp.MustCompile(`(?m)^    - (\S+):/data$`).FindStringSubmatch(sqlite)
	dbPath := regexp.MustCompile(`KIOKU_DB=/data/(\S+)`).FindStringSubmatch(readRepoFile(t, "Dockerfile"))
	if project == nil || dataVolume == nil || dbPath == nil {
		t.Fatalf("compose.yaml's project %v, data volume %v, the image's database %v", project, dataVolume, dbPath)
	}
	pg := readRepoFile(t, "deploy/compose-postgres.yaml")
	service := regexp.MustCompile(`(?ms)^  migrate-store:\n(.*?)\n\n`).FindStringSubmatch(pg)
	if service == nil {
		t.Fatal("compose-postgres.yaml has no migrate-store service")
	}
	mount := regexp.MustCompile(`(?m)^      - (\S+):(/\S+)$`).FindStringSubmatch(service[1])
	cmd := regexp.MustCompile(`(?m)^    command: \["migrate-store", "--from", "(\S+)"\]$`).FindStringSubmatch(service[1])
	if mount == nil || cmd == nil {
		t.Fatalf("migrate-store mounts %v and runs %v", mount, cmd)
	}
	if want := mount[2] + "/" + dbPath[1]; cmd[1] != want {
		t.Errorf("migrate-store copies %s, but the SQLite database is at %s in its mount", cmd[1], want)
	}
	name := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(mount[1]) + `:\n    name: (\S+)$`).FindStringSubmatch(pg)
	if want := project[1] + "_" + dataVolume[1]; name == nil || name[1] != want {
		t.Errorf("migrate-store's volume %s is named %v; compose.yaml's database volume is %s", mount[1], name, want)
	}
	if !strings.Contains(service[1], `profiles: ["move"]`) {
		t.Error("migrate-store would start on every `up`; it is a one-shot run by name")
	}
	if strings.Contains(pg, "--to") {
		t.Error("the recipe passes --to; KIOKU_DB names the target, keeping the password off the command line")
	}
}

// dockerIgnored reports whether a .dockerignore pattern excludes path (slash-separated, from
// the context root), as Docker matches them: "**" spans directories, "*" and "?" stay within
// one, and a pattern that matches a directory excludes everything below it.
func dockerIgnored(pattern, path string) bool {
	pattern = strings.TrimSuffix(strings.TrimPrefix(pattern, "/"), "/")
	var re strings.Builder
	re.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case strings.HasPrefix(pattern[i:], "**/"):
			re.WriteString("(.*/)?")
			i += 2
		case strings.HasPrefix(pattern[i:], "**"):
			re.WriteString(".*")
			i++
		case c == '*':
			re.WriteString("[^/]*")
		case c == '?':
			re.WriteString("[^/]")
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re.WriteString("(/.*)?$")
	return regexp.MustCompile(re.String()).MatchString(path)
}

// TestDockerIgnore: the image's build context leaves out the repository's history, the
// docs, the test data and tests, and keeps every file the build reads: the Go sources,
// go.mod and go.sum, and what they embed (the migrations).
func TestDockerIgnore(t *testing.T) {
	var patterns []string
	for _, line := range strings.Split(readRepoFile(t, ".dockerignore"), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			if strings.HasPrefix(line, "!") {
				t.Fatalf("exception %q: dockerIgnored does not handle exceptions", line)
			}
			patterns = append(patterns, line)
		}
	}
	ignored := func(path string) bool {
		for _, p := range patterns {
			if dockerIgnored(p, path) {
				return true
			}
		}
		return false
	}
	for _, out := range []string{".git/HEAD", "README.md", "SECURITY.md", "docs/commands.md", "testdata/eval/dev-en.json",
		"testdata/eval/README.md", "bot/testdata/golden/status.en.json", "cmd/kioku/main_test.go", "deploy/.env", "kioku.db"} {
		if !ignored(out) {
			t.Errorf("%s is in the build context", out)
		}
	}
	root := filepath.Join("..", "..")
	kept := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		needed := !strings.Contains(rel, "testdata/") && (rel == "go.mod" || rel == "go.sum" || strings.HasSuffix(rel, ".sql") ||
			(strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go")))
		if needed {
			kept++
			if ignored(rel) {
				t.Errorf("%s is needed by the build but .dockerignore leaves it out", rel)
			}
		}
		return nil
	})
	if err != nil || kept < 100 {
		t.Fatalf("walked %d needed files: %v", kept, err)
	}
}
