package main

import (
	"os"
	"path/filepath"
	"regexp"
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
	ids := regexp.MustCompile(`(?m)^      KIOKU_SHARD_ID: "(\d+)"$`).FindAllStringSubmatch(text, -1)
	// migrate, shard0 and shard1; migrate runs no gateway session.
	if len(ids) != 3 || ids[1][1] != "0" || ids[2][1] != "1" {
		t.Errorf("shard ids %v: want migrate, then shard0 with 0 and shard1 with 1", ids)
	}
	for _, want := range []string{`KIOKU_SHARD_COUNT: "2"`, "KIOKU_DB: postgres://", "--locale=C.UTF-8", "condition: service_healthy"} {
		if !strings.Contains(text, want) {
			t.Errorf("compose-postgres.yaml lacks %q", want)
		}
	}
}
