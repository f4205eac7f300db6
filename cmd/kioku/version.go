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

// readBuildVersion reads the module version and VCS commit the Go toolchain stamped into the
// binary. `go run` and test binaries carry neither, hence "(devel)" and "unknown".
func readBuildVersion() buildVersion {
	v := buildVersion{Version: "(devel)", Commit: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			v.Commit = s.Value
		}
	}
	return v
}

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
	return nil
}
