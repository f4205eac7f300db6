package bot_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// update rewrites the golden payloads under testdata/golden (go test ./bot -run Golden
// -update) instead of comparing against them; the README's rendered embeds follow with
// TestReadmeShowsGoldenEmbeds -update.
var update = flag.Bool("update", false, "rewrite golden files in testdata/golden and the README's embed excerpts")

// assertGolden compares the JSON document Discord received with testdata/golden/name,
// both indented the same way, so a diff shows which field changed.
func assertGolden(t *testing.T, name string, got json.RawMessage) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("%s: payload is not JSON: %v", name, err)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run with -update to create it)", name, err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("%s: the payload Discord receives changed (run with -update if intended)\ngot:\n%s\nwant:\n%s", name, pretty.Bytes(), want)
	}
}

// renderEmbeds renders the embeds of a golden payload (a message, or an interaction
// response whose data is one) as text, the way the README shows them: title, description,
// then each field as "Name: value" (inline fields marked), then the footer, and the
// message's select menus by placeholder and options.
func renderEmbeds(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Embeds     []*discordgo.MessageEmbed `json:"embeds"`
		Components []json.RawMessage         `json:"components"`
		Data       *struct {
			Embeds     []*discordgo.MessageEmbed `json:"embeds"`
			Components []json.RawMessage         `json:"components"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	embeds, components := doc.Embeds, doc.Components
	if doc.Data != nil {
		embeds, components = doc.Data.Embeds, doc.Data.Components
	}
	var sb strings.Builder
	for _, e := range embeds {
		fmt.Fprintf(&sb, "**%s**\n", e.Title)
		if e.Description != "" {
			fmt.Fprintf(&sb, "%s\n", e.Description)
		}
		for _, f := range e.Fields {
			fmt.Fprintf(&sb, "\n%s\n", f.Name)
			for line := range strings.SplitSeq(f.Value, "\n") {
				fmt.Fprintf(&sb, "> %s\n", line)
			}
		}
		if e.Footer != nil {
			fmt.Fprintf(&sb, "\n— %s\n", e.Footer.Text)
		}
	}
	for _, row := range components {
		var r struct {
			Components []struct {
				Placeholder string `json:"placeholder"`
				Options     []struct {
					Label   string `json:"label"`
					Default bool   `json:"default"`
				} `json:"options"`
			} `json:"components"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range r.Components {
			opts := make([]string, 0, len(c.Options))
			for _, o := range c.Options {
				if o.Default {
					opts = append(opts, "["+o.Label+"]")
				} else {
					opts = append(opts, o.Label)
				}
			}
			line := "[▾ " + c.Placeholder + "]"
			if len(opts) > 0 {
				line += " " + strings.Join(opts, " · ")
			}
			fmt.Fprintf(&sb, "\n%s", line)
		}
	}
	if len(components) > 0 {
		sb.WriteByte('\n')
	}
	return sb.String()
}
