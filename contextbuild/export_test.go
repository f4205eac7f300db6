package contextbuild

import "strings"

// Escape exposes writeEscaped to the external tests, which check its guarantees directly.
func Escape(s string, limit int) string {
	var b strings.Builder
	writeEscaped(&text{b: &b}, s, limit)
	return b.String()
}
