package contextbuild

import (
	"strings"
	"unicode/utf8"
)

// The turns of the conversation: who speaks, with which role, at what token cost.

// speaker returns the name that prefixes turn t, or "" when it goes out unprefixed: in a
// DM, and for the bot's own turns.
func speaker(in *Input, t Turn) string {
	if in.DM || chatRole(t.Role) != RoleUser {
		return ""
	}
	return displayName(t)
}

// displayName returns the author's display name, else their ID, made safe to start a line:
// control characters and line breaks become spaces and the length is capped.
func displayName(t Turn) string {
	name := strings.TrimSpace(t.AuthorName)
	if name == "" {
		name = strings.TrimSpace(t.AuthorID)
	}
	clean, n := true, 0
	for _, r := range name {
		n++
		if isBreak(r) {
			clean = false
		}
	}
	if clean && n <= maxNameRunes {
		return name // the usual case: no allocation
	}
	var b strings.Builder
	b.Grow(len(name))
	n = 0
	for _, r := range name {
		if n == maxNameRunes {
			break
		}
		if isBreak(r) {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimSpace(b.String())
}

// isBreak reports whether r could end a line or hide text: control characters and the
// Unicode line and paragraph separators.
func isBreak(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029
}

// chatRole maps a turn's role to the role it is sent with: assistant, or user for anything
// else, so no caller data is ever sent with system authority.
func chatRole(role string) string {
	if role == RoleAssistant {
		return RoleAssistant
	}
	return RoleUser
}

// turnTokens estimates a conversation message, its name prefix and overhead included.
func turnTokens(name, content string) int {
	runes := utf8.RuneCountInString(content)
	if name != "" {
		runes += utf8.RuneCountInString(name) + len(namePrefixSep)
	}
	return (runes+3)/4 + MessageOverheadTokens
}

// sysTokens estimates a system message of the given runes; no runes means no message.
func sysTokens(runes int) int {
	if runes == 0 {
		return 0
	}
	return (runes+3)/4 + MessageOverheadTokens
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }
