package main

import (
	"os"
	"path/filepath"
	"regexp"
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
