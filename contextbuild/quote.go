package contextbuild

import "strings"

// Quote returns s as quoted prompt data, the way memory lines are written: between double
// quotes, on one line, escaped so it cannot end the quotation, start a new line, or pass for
// a role marker, a chat-template token or a forged "[id:N]" memory line (see writeEscaped).
// Other prompts that show memories to a model (the pipeline's decision stage) use it so
// every prompt quotes memory content the same way.
func Quote(s string) string {
	var b strings.Builder
	t := text{b: &b}
	t.byte('"')
	writeEscaped(&t, s, -1)
	t.byte('"')
	return b.String()
}
