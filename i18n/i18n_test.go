package i18n_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/i18n"
)

var verb = regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[a-zA-Z%]`)

// TestEveryKeyInEveryLanguage fails when a message misses a language or its languages format
// different arguments: a Japanese member must never get an English fallback or a garbled
// %!s(MISSING).
func TestEveryKeyInEveryLanguage(t *testing.T) {
	keys := i18n.Keys()
	if len(keys) == 0 {
		t.Fatal("the catalogue is empty")
	}
	for _, k := range keys {
		text, _ := i18n.Lookup(k)
		if text.EN == "" || text.JA == "" {
			t.Errorf("%s: missing a language (en %q, ja %q)", k, text.EN, text.JA)
			continue
		}
		en, ja := verbs(text.EN), verbs(text.JA)
		if !slices.Equal(en, ja) {
			t.Errorf("%s: format verbs differ: en %v, ja %v", k, en, ja)
		}
	}
}

// verbs lists a format's verbs in argument order (explicit indexes sorted in).
func verbs(format string) []string {
	out := verb.FindAllString(format, -1)
	out = slices.DeleteFunc(out, func(v string) bool { return v == "%%" })
	slices.Sort(out)
	return out
}

func TestParse(t *testing.T) {
	for code, want := range map[string]i18n.Locale{"ja": i18n.Japanese, "JA": i18n.Japanese, "en-US": i18n.English,
		"en-GB": i18n.English, "fr": i18n.English, "": i18n.English} {
		if got := i18n.Parse(code); got != want {
			t.Errorf("Parse(%q) = %s, want %s", code, got, want)
		}
	}
}

func TestTFallsBackToEnglishAndShowsUnknownKeys(t *testing.T) {
	if got := i18n.T(i18n.Japanese, "no.such.key"); got != "no.such.key" {
		t.Errorf("unknown key = %q", got)
	}
}
