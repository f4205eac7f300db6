package main

// Reading the command lines of the docs for TestDocs: fenced blocks, the commands in them,
// and what a console block shows.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// docBlock is one fenced block of a Markdown file.
type docBlock struct {
	file string
	line int    // of the opening fence, from 1
	lang string // the info string: sh, console, text or ""
	body []string
}

func (b docBlock) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// readDocBlocks returns the fenced blocks of a Markdown file of the repository, in order,
// their lines without the fence's indentation.
func readDocBlocks(path string) ([]docBlock, error) {
	raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		return nil, err
	}
	var blocks []docBlock
	var cur *docBlock
	indent := ""
	for i, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(trimmed, "```") {
			if cur != nil {
				cur.body = append(cur.body, strings.TrimPrefix(line, indent))
			}
			continue
		}
		if cur != nil {
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
		cur = &docBlock{file: path, line: i + 1, lang: strings.TrimPrefix(trimmed, "```")}
	}
	return blocks, nil
}

// docCommand is one command line of a block.
type docCommand struct {
	where string
	// env holds the assignments written before the command (VAR=value kioku …), export
	// the ones of an export line, which last for the rest of the file as in a shell.
	env, export map[string]string
	// args are the words after `kioku` (or `go run ./cmd/kioku`); tool is "kioku", or the
	// first word of any other command (go, docker, ollama), which TestDocs checks or skips.
	tool string
	args []string
	// background is set for a line ending in &: it runs until the block ends.
	background bool
	// stdin and output are a console block's: the lines typed after "> ", and the lines
	// shown, "" when the block shows none.
	stdin  []string
	output []string
}

// parseShellBlock reads the commands of an sh block (or a bare one): comments and
// continuation lines (indented) are description, not commands.
func parseShellBlock(b docBlock) ([]docCommand, error) {
	var cmds []docCommand
	for i, line := range b.body {
		if line == "" || unicode.IsSpace(rune(line[0])) || strings.HasPrefix(line, "#") {
			continue
		}
		if k := strings.Index(line, " #"); k >= 0 {
			line = line[:k]
		}
		words, err := shellWords(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", b.file, b.line+1+i, err)
		}
		if len(words) == 0 {
			continue
		}
		c := docCommand{where: fmt.Sprintf("%s:%d", b.file, b.line+1+i), env: map[string]string{}, export: map[string]string{}}
		if words[len(words)-1] == "&" {
			c.background, words = true, words[:len(words)-1]
		}
		if words[0] == "export" {
			for _, w := range words[1:] {
				k, v, _ := strings.Cut(w, "=")
				c.export[k] = v
			}
			cmds = append(cmds, c)
			continue
		}
		for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
			k, v, _ := strings.Cut(words[0], "=")
			c.env[k] = v
			words = words[1:]
		}
		switch {
		case len(words) == 0:
			continue
		case words[0] == "kioku":
			c.tool, c.args = "kioku", words[1:]
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/kioku":
			c.tool, c.args = "kioku", words[3:]
		default:
			c.tool, c.args = words[0], words[1:]
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

// parseConsoleBlock reads a console block: "$ " starts a command, "> " lines after it are
// what is typed into it, and the other lines what it prints.
func parseConsoleBlock(b docBlock) ([]docCommand, error) {
	var cmds []docCommand
	for i, line := range b.body {
		switch {
		case strings.HasPrefix(line, "$ "):
			sh, err := parseShellBlock(docBlock{file: b.file, line: b.line + i, body: []string{strings.TrimPrefix(line, "$ ")}})
			if err != nil || len(sh) != 1 {
				return nil, fmt.Errorf("%s:%d: not one command (%v)", b.file, b.line+1+i, err)
			}
			cmds = append(cmds, sh[0])
		case len(cmds) == 0:
			return nil, fmt.Errorf("%s:%d: output before any $ command", b.file, b.line+1+i)
		case strings.HasPrefix(line, "> "):
			cmds[len(cmds)-1].stdin = append(cmds[len(cmds)-1].stdin, strings.TrimPrefix(line, "> "))
		case strings.TrimSpace(line) != "":
			cmds[len(cmds)-1].output = append(cmds[len(cmds)-1].output, line)
		}
	}
	return cmds, nil
}

// shellWords splits a line as a shell would, for the quoting the docs use: single and
// double quotes, no expansions.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// withoutOptional drops the [optional] parts of a synopsis, keeps the first of a|b
// alternatives, and reads ID... as ID.
func withoutOptional(args []string) []string {
	var out []string
	depth := 0
	for _, a := range args {
		if strings.HasPrefix(a, "[") {
			depth += strings.Count(a, "[")
		}
		if depth > 0 {
			depth -= strings.Count(a, "]")
			continue
		}
		if alt, _, ok := strings.Cut(a, "|"); ok && !strings.Contains(a, "://") {
			a = alt
		}
		out = append(out, strings.TrimSuffix(a, "..."))
	}
	return out
}

// outputMatches compares what a command printed with what a console block shows, line by
// line. Runs of spaces count as one, so tables need not be aligned by hand; dates and
// times match any date and time; "…" in the doc matches any text; the input echo of a
// REPL's "> " prompt is dropped.
func outputMatches(got string, want []string) error {
	var lines []string
	for _, l := range strings.Split(got, "\n") {
		for strings.HasPrefix(l, "> ") {
			l = strings.TrimPrefix(l, "> ")
		}
		if l = normalizeOutput(l); l != "" && l != ">" {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(want) {
		return fmt.Errorf("printed %d lines, the doc shows %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		parts := strings.Split(normalizeOutput(w), "…")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		if !regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(lines[i]) {
			return fmt.Errorf("line %d is %q, the doc shows %q", i+1, lines[i], w)
		}
	}
	return nil
}

var (
	outputDate  = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	outputTime  = regexp.MustCompile(`\b\d{2}:\d{2}( [A-Z][A-Z0-9+-]{1,5})?\b`)
	outputSpace = regexp.MustCompile(`\s+`)
)

func normalizeOutput(s string) string {
	s = outputDate.ReplaceAllString(s, "DATE")
	s = outputTime.ReplaceAllString(s, "TIME")
	return strings.TrimSpace(outputSpace.ReplaceAllString(s, " "))
}

// TestDocParsing: the synopsis and output rules TestDocs reads the docs by.
func TestDocParsing(t *testing.T) {
	words, err := shellWords(`kioku memories forget --query 'raid night' --guild "g 1"`)
	if err != nil || strings.Join(words, "|") != "kioku|memories|forget|--query|raid night|--guild|g 1" {
		t.Errorf("shellWords = %q, %v", words, err)
	}
	got := withoutOptional(strings.Fields("jobs purge --state dead|done [--older-than 30d] [--guild G] ID... [--a [b]] x"))
	if strings.Join(got, " ") != "jobs purge --state dead ID x" {
		t.Errorf("withoutOptional = %q", got)
	}
	cmds, err := parseShellBlock(docBlock{file: "f.md", line: 1, body: []string{
		"# a comment", "export A=1 B=2", "X=y kioku run &   # two shards", "                # more description",
		"kioku chat --user U   # chat", "docker build -t kioku ."}})
	if err != nil || len(cmds) != 4 || cmds[0].export["B"] != "2" || !cmds[1].background || cmds[1].env["X"] != "y" ||
		strings.Join(cmds[2].args, " ") != "chat --user U" || cmds[3].tool != "docker" {
		t.Errorf("parseShellBlock = %+v, %v", cmds, err)
	}
	out := "Hello.\n> kioku: hi\n> ID  TYPE   CREATED\n1   fact   2026-11-28\nbefore 23:47 CET.\n> \n"
	if err := outputMatches(out, []string{"Hello.", "kioku: …", "ID TYPE CREATED", "1 fact 2025-01-01", "before 09:00 UTC."}); err != nil {
		t.Error(err)
	}
	if err := outputMatches(out, []string{"Hello.", "kioku: bye", "ID TYPE CREATED", "1 fact 2025-01-01", "before 09:00 UTC."}); err == nil {
		t.Error("a different line matched")
	}
}
