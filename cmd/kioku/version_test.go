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

// TestVersionSaysHowToStampTheCommit: a build without a commit (test binaries, `go run`)
// says on stderr how to get one into a build, and a commit stamped at link time is reported.
func TestVersionSaysHowToStampTheCommit(t *testing.T) {
	if v := readBuildVersion(); v.Commit != unknownCommit || v.Version != develVersion {
		t.Skipf("this test binary carries a version (%+v); the hint is for builds without one", v)
	}
	code, out, errOut := runApp(t, nil, "", "version")
	if code != 0 || out != "kioku (devel) (commit unknown)\n" {
		t.Fatalf("exit %d, stdout %q: want the one version line", code, out)
	}
	mustContain(t, "the hint", errOut, "-buildvcs", "-X main.stampedCommit=$(git rev-parse HEAD)", "--build-arg KIOKU_COMMIT=")

	stampedCommit = "0123abc"
	t.Cleanup(func() { stampedCommit = "" })
	code, out, errOut = runApp(t, nil, "", "version")
	if code != 0 || out != "kioku (devel) (commit 0123abc)\n" || errOut != "" {
		t.Errorf("stamped build: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestHelpColumnsAlign: every command's and every setting's description starts in the same
// column, however long the longest name.
func TestHelpColumnsAlign(t *testing.T) {
	_, out, _ := runApp(t, nil, "", "help")
	col := -1
	for _, c := range commands() {
		i := strings.Index(out, "  "+c.name+" ")
		if i < 0 {
			t.Fatalf("help lacks %s:\n%s", c.name, out)
		}
		line := out[i:]
		line = line[:strings.IndexByte(line, '\n')]
		at := strings.Index(line, c.usage)
		if col == -1 {
			col = at
		}
		if at != col {
			t.Errorf("%s's description starts at column %d, the others at %d:\n%s", c.name, at, col, out)
		}
	}
	_, out, _ = runApp(t, nil, "", "help", "config")
	col = -1
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		at := strings.Index(line, " default ")
		if col == -1 {
			col = at
		}
		if at != col {
			t.Errorf("help config: %q has its default at column %d, the others at %d", line, at, col)
		}
	}
}
