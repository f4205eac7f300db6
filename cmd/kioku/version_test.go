package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	// A broken setting must not stop version: it is the first thing asked in a bug report.
	env := map[string]string{"KIOKU_CONTEXT_WINDOW": "-5"}
	want := readBuildVersion()

	code, out, errOut := runApp(t, env, "", "version")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, want.Version) || !strings.Contains(out, want.Commit) {
		t.Errorf("version printed %q, want %s and %s", out, want.Version, want.Commit)
	}

	code, out, errOut = runApp(t, env, "", "version", "--json")
	if code != 0 {
		t.Fatalf("--json exit %d, stderr %q", code, errOut)
	}
	var got buildVersion
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	if got != want || got.Version == "" || got.Commit == "" {
		t.Errorf("--json = %+v, want %+v", got, want)
	}

	_, helpOut, _ := runApp(t, env, "", "help")
	if !strings.Contains(helpOut, "version") {
		t.Errorf("help does not list version:\n%s", helpOut)
	}
}
