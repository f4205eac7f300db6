package pipeline

import (
	"encoding/json"
	"strconv"
	"strings"
)

// cleanModelJSON turns a model's reply into the JSON object it was asked for: reasoning
// blocks (<think>…</think>, which reasoning models put before their answer) and Markdown
// code fences are removed, and the text from the first "{" to the last "}" is returned.
// It returns "" when no object is left.
func cleanModelJSON(s string) string {
	s = stripThink(s)
	s = stripFences(s)
	start := strings.IndexByte(s, '{')
	if start < 0 {
		return ""
	}
	end := strings.LastIndexByte(s, '}')
	if end < start {
		// A reply cut off by the token limit has no closing brace; keep what there is so
		// the salvage can still read the complete facts.
		return s[start:]
	}
	return s[start : end+1]
}

// stripThink removes <think>…</think> blocks, case-insensitively. An unclosed <think>
// swallows the rest of the reply (there is no answer after it); a lone </think> (the
// opening tag was part of the prompt template) drops everything before it.
func stripThink(s string) string {
	const open, closeTag = "<think>", "</think>"
	for {
		i := indexFoldASCII(s, open)
		j := indexFoldASCII(s, closeTag)
		switch {
		case i < 0 && j < 0:
			return s
		case i < 0 || (j >= 0 && j < i):
			s = s[j+len(closeTag):]
		default:
			k := indexFoldASCII(s[i:], closeTag)
			if k < 0 {
				return s[:i]
			}
			s = s[:i] + s[i+k+len(closeTag):]
		}
	}
}

// indexFoldASCII returns the offset in s of the first match of the lowercase ASCII tag,
// ignoring ASCII case, or -1. It searches s itself: offsets found in strings.ToLower(s)
// are wrong wherever lowercasing changes a character's length ("İ", "Ⱥ", invalid UTF-8).
func indexFoldASCII(s, tag string) int {
	for i := 0; i+len(tag) <= len(s); i++ {
		if equalFoldASCII(s[i:i+len(tag)], tag) {
			return i
		}
	}
	return -1
}

// equalFoldASCII reports whether s equals the lowercase ASCII tag, ignoring ASCII case.
func equalFoldASCII(s, tag string) bool {
	for i := 0; i < len(tag); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != tag[i] {
			return false
		}
	}
	return true
}

// stripFences removes Markdown code fence lines (```json, ```), keeping what they enclose.
func stripFences(s string) string {
	if !strings.Contains(s, "```") {
		return s
	}
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// jsonString reads a JSON string, or a number as its text (models send ids either way).
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), true
	}
	return "", false
}

// jsonNumber reads a JSON number, or a string holding one ("0.9").
func jsonNumber(raw json.RawMessage) (float64, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return f, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f, true
		}
	}
	return 0, false
}
