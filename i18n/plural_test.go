package i18n_test

import (
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/i18n"
)

// TestN picks the singular for one and the plural otherwise, in every language, and every
// counted message has both forms.
func TestN(t *testing.T) {
	for n, want := range map[int]string{0: "0 memories", 1: "1 memory", 2: "2 memories"} {
		if got := i18n.N(i18n.English, "count.memory", n); got != want {
			t.Errorf("N(en, %d) = %q, want %q", n, got, want)
		}
	}
	if got := i18n.N(i18n.Japanese, "count.memory", 1); got != "記憶 1件" {
		t.Errorf("N(ja, 1) = %q", got)
	}
	for _, k := range i18n.Keys() {
		base, ok := strings.CutSuffix(string(k), ".one")
		if !ok {
			continue
		}
		if _, ok := i18n.Lookup(i18n.Key(base + ".other")); !ok {
			t.Errorf("%s has no .other form", base)
		}
	}
}
