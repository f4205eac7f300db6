package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// buildVersion is what `kioku version` reports: enough for an operator to tell which build
// is running and to match a bug report to a commit.
type buildVersion struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

// stampedVersion and stampedCommit, when set at link time
// (-ldflags "-X main.stampedCommit=…"), name a build the toolchain could not stamp itself:
// the container image is built without .git, so the Dockerfile passes its KIOKU_COMMIT
// build argument here.
var stampedVersion, stampedCommit string

// Unknown parts of a build's version.
const (
	develVersion  = "(devel)"
	unknownCommit = "unknown"
)

// readBuildVersion reads the module version and VCS commit the Go toolchain stamped into the
// binary, or the link-time stamps. `go run`, test binaries and builds with
// -buildvcs=false carry no commit, hence "unknown"; only a module download (`go install
// …@v1.2.3`) has a version.
func readBuildVersion() buildVersion {
	v := buildVersion{Version: develVersion, Commit: unknownCommit}
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			v.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				v.Commit = s.Value
			}
		}
	}
	if stampedVersion != "" {
		v.Version = stampedVersion
	}
	if stampedCommit != "" {
		v.Commit = stampedCommit
	}
	return v
}

// unstampedHint says how to build a binary whose version names its commit.
const unstampedHint = "this build names no commit (`go run`, and builds with -buildvcs=false, carry none). " +
	"Build from a git checkout with GOFLAGS=-buildvcs=true, or stamp the commit yourself:\n" +
	"  go build -ldflags \"-X main.stampedCommit=$(git rev-parse HEAD)\" -o kioku ./cmd/kioku\n" +
	"  docker build --build-arg KIOKU_COMMIT=$(git rev-parse HEAD) -t kioku ."

func runVersion(_ context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "version")
	asJSON := fs.Bool("json", false, "print as JSON")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	v := readBuildVersion()
	if *asJSON {
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("couldn't encode the version: %w", err)
		}
		fmt.Fprintln(app.Stdout, string(out))
		return nil
	}
	fmt.Fprintf(app.Stdout, "kioku %s (commit %s)\n", v.Version, v.Commit)
	if v.Version == develVersion && v.Commit == unknownCommit {
		// On stderr, so scripts reading the version line still read one line.
		fmt.Fprintln(app.Stderr, unstampedHint)
	}
	return nil
}
