//go:build ignore

// build assembles the conversational dev sets (dev-conv-en.json, dev-conv-ja.json) from the
// hand-written sources beside it. It only numbers the messages and queries and stamps each
// message with a time; every word of the content is in the sources.
//
//	go run testdata/eval/conv/build.go
//
// A source directory holds one file per scope, NN-<guild_id>.txt, in this form:
//
//	# comment
//	#zone Europe/London            session times are local times there (default UTC)
//	## 2024-02-01 19:40            a session starts
//	Katherine Liu: hiii ^label      one message: author, ": ", text, an optional ^label
//	+25 tomtom: back                +N: N minutes after the previous message (default 1-3)
//	?? single-hop | text | label label          a query
//	?? temporal @2024-04-15T10:00:00Z | text | label label
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata"
)

type memoryEntry struct {
	ID        string `json:"id"`
	Content   string `json:"content"`
	Author    string `json:"author"`
	CreatedAt string `json:"created_at"`
}

type query struct {
	ID       string   `json:"id"`
	Text     string   `json:"text"`
	Relevant []string `json:"relevant"`
	Category string   `json:"category"`
	AskedAt  string   `json:"asked_at,omitempty"`
}

type scope struct {
	GuildID  string        `json:"guild_id"`
	Memories []memoryEntry `json:"memories"`
	Queries  []query       `json:"queries"`
}

type dataset struct {
	Name   string  `json:"name"`
	Scopes []scope `json:"scopes"`
}

func main() {
	dir := filepath.Join("testdata", "eval", "conv")
	for _, set := range []struct{ name, src, out string }{
		{"dev-conv-en", "en", "dev-conv-en.json"},
		{"dev-conv-ja", "ja", "dev-conv-ja.json"},
	} {
		files, _ := filepath.Glob(filepath.Join(dir, set.src, "*.txt"))
		if len(files) == 0 {
			continue
		}
		sort.Strings(files)
		d := dataset{Name: set.name}
		for _, f := range files {
			sc, err := parseScope(f)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			d.Scopes = append(d.Scopes, sc)
		}
		out, err := json.MarshalIndent(d, "", " ")
		if err != nil {
			panic(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "eval", set.out), append(out, '\n'), 0o644); err != nil {
			panic(err)
		}
	}
}

func parseScope(path string) (scope, error) {
	base := strings.TrimSuffix(filepath.Base(path), ".txt")
	sc := scope{GuildID: base[strings.Index(base, "-")+1:]}
	prefix := strings.TrimPrefix(sc.GuildID, "g-")[:1]
	f, err := os.Open(path)
	if err != nil {
		return sc, err
	}
	defer f.Close()
	labels := map[string]string{}
	var at time.Time
	zone := time.UTC
	type pending struct {
		line int
		q    query
		refs []string
	}
	var qs []pending
	s := bufio.NewScanner(f)
	n := 0
	for s.Scan() {
		n++
		line := strings.TrimSpace(s.Text())
		fail := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s", path, n, fmt.Sprintf(format, a...))
		}
		switch {
		case strings.HasPrefix(line, "#zone "):
			z, err := time.LoadLocation(strings.TrimSpace(line[6:]))
			if err != nil {
				return sc, fail("bad zone: %v", err)
			}
			zone = z
		case line == "" || (strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "## ")):
		case strings.HasPrefix(line, "## "):
			t, err := time.ParseInLocation("2006-01-02 15:04", strings.TrimSpace(line[3:]), zone)
			if err != nil {
				return sc, fail("bad session time: %v", err)
			}
			if !t.After(at) {
				return sc, fail("session starts before the previous message")
			}
			at = t
			at = at.Add(-time.Minute) // the first message is at the session time
		case strings.HasPrefix(line, "??"):
			parts := strings.Split(strings.TrimSpace(line[2:]), "|")
			if len(parts) != 3 {
				return sc, fail("a query is: category [@asked_at] | text | labels")
			}
			head := strings.Fields(parts[0])
			q := query{Category: head[0], Text: strings.TrimSpace(parts[1])}
			if len(head) > 1 {
				q.AskedAt = strings.TrimPrefix(head[1], "@")
			}
			qs = append(qs, pending{line: n, q: q, refs: strings.Fields(parts[2])})
		default:
			gap := time.Duration(0)
			if strings.HasPrefix(line, "+") {
				sp := strings.IndexByte(line, ' ')
				m, err := strconv.Atoi(line[1:sp])
				if err != nil {
					return sc, fail("bad gap: %v", err)
				}
				gap = time.Duration(m) * time.Minute
				line = strings.TrimSpace(line[sp:])
			}
			author, text, ok := strings.Cut(line, ": ")
			if !ok {
				return sc, fail("a message is Author: text")
			}
			label := ""
			if i := strings.LastIndex(text, " ^"); i >= 0 {
				label = text[i+2:]
				text = strings.TrimSpace(text[:i])
			}
			if gap == 0 {
				h := fnv.New32a()
				h.Write([]byte(text))
				gap = time.Duration(1+h.Sum32()%3) * time.Minute
			}
			at = at.Add(gap)
			id := fmt.Sprintf("%s%03d", prefix, len(sc.Memories)+1)
			if label != "" {
				if _, dup := labels[label]; dup {
					return sc, fail("label %s used twice", label)
				}
				labels[label] = id
			}
			sc.Memories = append(sc.Memories, memoryEntry{ID: id, Content: text, Author: author,
				CreatedAt: at.UTC().Format(time.RFC3339)})
		}
	}
	if err := s.Err(); err != nil {
		return sc, err
	}
	for i, p := range qs {
		p.q.ID = fmt.Sprintf("%sq%03d", prefix, i+1)
		for _, r := range p.refs {
			id, ok := labels[r]
			if !ok {
				return sc, fmt.Errorf("%s:%d: unknown label %s", path, p.line, r)
			}
			p.q.Relevant = append(p.q.Relevant, id)
		}
		sc.Queries = append(sc.Queries, p.q)
	}
	return sc, nil
}
